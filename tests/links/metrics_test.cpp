#include <skyfabric/links/metrics.hpp>

#include <gtest/gtest.h>

using namespace skyfabric::links;

namespace {
Link link(int s, int t, double c) {
    Link l;
    l.source = s;
    l.target = t;
    l.capacity_bps = c;
    return l;
}
}  // namespace

TEST(TopologyMetrics, ComponentsDegreesAndBisectionOfAHandBuiltGraph) {
    // 0-1-2-3 in a line along y, plus isolated 4 at the end; 5 nodes.
    Topology t;
    t.node_count = 5;
    t.links = {link(0, 1, 1.0), link(1, 2, 2.0), link(2, 3, 4.0)};
    std::vector<Eigen::Vector3d> pos{{0, 0, 0}, {0, 100, 0}, {0, 200, 0}, {0, 300, 0}, {0, 400, 0}};
    EXPECT_EQ(connected_components(t), 2);
    int axis = -1;
    // Lower ⌊5/2⌋ = 2 along y: {0, 1} | {2, 3, 4}; only link 1-2 crosses.
    EXPECT_DOUBLE_EQ(bisection_capacity_bps(t, pos, &axis), 2.0);
    EXPECT_EQ(axis, 1);
    const auto m = summarize(t, pos);
    EXPECT_EQ(m.link_count, 3);
    EXPECT_DOUBLE_EQ(m.capacity_min_bps, 1.0);
    EXPECT_DOUBLE_EQ(m.capacity_max_bps, 4.0);
    EXPECT_DOUBLE_EQ(m.capacity_mean_bps, 7.0 / 3.0);
    EXPECT_EQ(m.links_per_satellite_min, 0);
    EXPECT_EQ(m.links_per_satellite_max, 2);
    EXPECT_DOUBLE_EQ(m.links_per_satellite_mean, 6.0 / 5.0);
    t.links.push_back(link(3, 4, 8.0));
    EXPECT_EQ(connected_components(t), 1);
}
