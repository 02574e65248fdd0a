// The event engine over changing topologies: piecewise capacities, rerouting, stalls.

#include <cmath>

#include <gtest/gtest.h>

#include <skyfabric/workloads/collective_table.hpp>
#include <skyfabric/workloads/collective_engine.hpp>

#include "test_helpers.hpp"

namespace sw = skyfabric::workloads;
using skyfabric::links::Topology;

TEST(PiecewiseCapacity, CapacityChangeMidTransferGivesExactTime) {
    // One link: 80 Gbps (10 GB/s) until t1 = 0.3 s, then 16 Gbps (2 GB/s). 5 GB point to
    // point: 3 GB by t1, the remaining 2 GB take 1 s → drained at 1.3 s, plus α.
    const double alpha = 1e-3;
    std::vector<Topology> series{sw::testing::ring(2, 80e9, alpha, 0.0), sw::testing::ring(2, 16e9, alpha, 0.3)};
    sw::NetworkClock clock(sw::topology_source(series));
    sw::CollectiveEngine engine(clock, {});
    const auto s = sw::build_schedule(sw::CollectiveOp::point_to_point, sw::Algorithm::direct, 2, 5e9);
    const auto r = engine.run(s, sw::identity_placement(2), 0.0);
    ASSERT_TRUE(r.completed);
    EXPECT_NEAR(r.end_s, 1.3 + alpha, 1e-12);
    EXPECT_EQ(r.topology_changes, 1);
    EXPECT_NEAR(r.lost_s, 1.3 + alpha - (0.5 + alpha), 1e-12);
    EXPECT_DOUBLE_EQ(r.stalled_s, 0.0);
}

TEST(Rerouting, LinkRemovedMidCollectiveReroutesAndCompletes) {
    // Ring of 6; at t = 0.05 s the link 0–1 disappears. Ring all-reduce of 1 GB must
    // still complete, its 0→1 transfers going the long way round (5 hops) on the reverse
    // direction of the ring's links, which the ring leaves idle (full duplex): no
    // contention, so each later step costs 4α more. 0.05 s falls inside step 3 of 10.
    const int p = 6;
    const double cap = 100e9, alpha = 1e-6, n = 1e9;
    Topology before = sw::testing::ring(p, cap, alpha, 0.0);
    Topology after = before;
    after.time_s = 0.05;
    after.links.erase(after.links.begin());  // (0,1)
    std::vector<Topology> series{before, after};
    sw::NetworkClock clock(sw::topology_source(series));
    sw::CollectiveEngine engine(clock, {});
    const auto s = sw::build_schedule(sw::CollectiveOp::all_reduce, sw::Algorithm::ring, p, n);
    const auto r = engine.run(s, sw::identity_placement(p), 0.0);
    ASSERT_TRUE(r.completed);
    const double undisturbed = 2.0 * (p - 1) * alpha + 2.0 * (p - 1.0) / p * n / (cap / 8);
    const double step = alpha + n / p / (cap / 8);
    const int rerouted_steps = 2 * (p - 1) - static_cast<int>(0.05 / step);
    EXPECT_NEAR(r.duration_s(), undisturbed + rerouted_steps * 4 * alpha, 1e-9);
    EXPECT_NEAR(r.lost_s, rerouted_steps * 4 * alpha, 1e-9);
    EXPECT_EQ(r.topology_changes, 1);
    EXPECT_DOUBLE_EQ(r.stalled_s, 0.0);
}

TEST(Rerouting, StallsUntilAPathReturnsAndCountsTheWait) {
    // Two nodes; link down (capacity 0) from 0.1 s to 0.4 s. 2 GB at 10 GB/s: 1 GB sent
    // before the outage, the rest after it → drained at 0.5 s; 0.3 s stalled.
    std::vector<Topology> series{sw::testing::ring(2, 80e9, 0.0, 0.0), sw::testing::ring(2, 0.0, 0.0, 0.1),
                                 sw::testing::ring(2, 80e9, 0.0, 0.4)};
    sw::NetworkClock clock(sw::topology_source(series));
    sw::CollectiveEngine engine(clock, {});
    const auto s = sw::build_schedule(sw::CollectiveOp::point_to_point, sw::Algorithm::direct, 2, 2e9);
    const auto r = engine.run(s, sw::identity_placement(2), 0.0);
    ASSERT_TRUE(r.completed);
    EXPECT_NEAR(r.end_s, 0.5, 1e-12);
    EXPECT_NEAR(r.stalled_s, 0.3, 1e-12);
    EXPECT_EQ(r.topology_changes, 2);
}

TEST(Rerouting, NoPathEverMeansIncomplete) {
    std::vector<Topology> series{sw::testing::ring(2, 80e9, 0.0, 0.0), sw::testing::ring(2, 0.0, 0.0, 0.1)};
    sw::NetworkClock clock(sw::topology_source(series));
    sw::CollectiveEngine engine(clock, {});
    const auto s = sw::build_schedule(sw::CollectiveOp::point_to_point, sw::Algorithm::direct, 2, 2e9);
    const auto r = engine.run(s, sw::identity_placement(2), 0.0);
    EXPECT_FALSE(r.completed);
}

TEST(Routing, MultiHopLatencyAddsUp) {
    // Point to point across 3 hops of a line (ring with the closing link removed).
    Topology t = sw::testing::ring(4, 80e9, 1e-3);
    t.links.pop_back();  // (0,3)
    const auto r = sw::run_collective(t, sw::CollectiveOp::point_to_point, sw::Algorithm::direct, 1e9,
                                      sw::Placement{0, 3});
    EXPECT_NEAR(r.duration_s(), 0.1 + 3e-3, 1e-12);
}

TEST(Routing, WidestPathPrefersCapacityOverLatency) {
    // 0–1 direct but slow; 0–2–1 fast but longer.
    Topology t;
    t.node_count = 3;
    t.links = {sw::testing::make_link(0, 1, 1e9, 1e-6), sw::testing::make_link(0, 2, 100e9, 1e-3),
               sw::testing::make_link(1, 2, 100e9, 1e-3)};
    const auto net = sw::build_network(t);
    EXPECT_EQ(sw::route(net, 0, 1, sw::RoutingPolicy::shortest_latency)->edges.size(), 1u);
    EXPECT_EQ(sw::route(net, 0, 1, sw::RoutingPolicy::widest)->edges.size(), 2u);
    // Split over both disjoint paths: 1.01 Gbps total instead of 1.
    const auto paths = sw::route_disjoint(net, 0, 1, sw::RoutingPolicy::shortest_latency, 2);
    EXPECT_EQ(paths.size(), 2u);
}

TEST(LinkUtilisation, CountsBytesAndCapacityTime) {
    // p = 2 all-reduce of 2 GB: each rank sends 2(p−1)/p·n = 2 GB, so 4 GB cross the one
    // 80 Gbps link (both directions) within 1 s of accounted time.
    std::vector<Topology> series{sw::testing::ring(2, 80e9, 0.0, 0.0)};
    sw::NetworkClock clock(sw::topology_source(series));
    sw::CollectiveEngine engine(clock, {});
    const auto s = sw::build_schedule(sw::CollectiveOp::all_reduce, sw::Algorithm::ring, 2, 2e9);
    engine.run(s, sw::identity_placement(2), 0.0);
    const auto u = clock.link_utilisation(1.0);
    ASSERT_EQ(u.size(), 1u);
    EXPECT_DOUBLE_EQ(u[0].bytes, 4e9);
    EXPECT_DOUBLE_EQ(u[0].capacity_bytes, 20e9);  // 10 GB/s × 2 directions × 1 s
    EXPECT_DOUBLE_EQ(u[0].utilisation, 0.2);
}

namespace {

// A = 0 and B = 1 joined by two disjoint two-hop paths, A–X–B (X = 2) at C₁ and A–Y–B
// (Y = 3) at C₂ = 3 C₁, zero latency: the max-flow from A to B is C₁ + C₂.
constexpr double ucmp_c1_bps = 10e9, ucmp_c2_bps = 30e9, ucmp_bytes = 10e9;

Topology two_path_topology(double time_s = 0.0) {
    Topology t;
    t.time_s = time_s;
    t.node_count = 4;
    t.links = {sw::testing::make_link(0, 2, ucmp_c1_bps, 0.0), sw::testing::make_link(0, 3, ucmp_c2_bps, 0.0),
               sw::testing::make_link(1, 2, ucmp_c1_bps, 0.0), sw::testing::make_link(1, 3, ucmp_c2_bps, 0.0)};
    return t;
}

struct PointToPoint {
    double duration_s = 0.0;
    double bytes_via_x = 0.0;  // on A–X (and again on X–B)
    double bytes_via_y = 0.0;
};

// n bytes from A to B over `series`; the link bytes are read at the end.
PointToPoint point_to_point(const std::vector<Topology>& series, sw::FlowOptions flow) {
    sw::NetworkClock clock(sw::topology_source(series));
    sw::CollectiveEngine engine(clock, flow);
    const auto s = sw::build_schedule(sw::CollectiveOp::point_to_point, sw::Algorithm::direct, 2, ucmp_bytes);
    const auto r = engine.run(s, sw::Placement{0, 1}, 0.0);
    EXPECT_TRUE(r.completed);
    PointToPoint out;
    out.duration_s = r.duration_s();
    for (const auto& u : clock.link_utilisation(r.end_s)) {
        if (u.source == 0 && u.target == 2) out.bytes_via_x = u.bytes;
        if (u.source == 0 && u.target == 3) out.bytes_via_y = u.bytes;
        if (u.source == 1) {  // X–B and Y–B carry what A–X and A–Y carried
            EXPECT_DOUBLE_EQ(u.bytes, u.target == 2 ? out.bytes_via_x : out.bytes_via_y);
        }
    }
    return out;
}

sw::FlowOptions multipath(sw::MultipathSplit split, sw::RoutingPolicy routing) {
    sw::FlowOptions f;
    f.routing = routing;
    f.paths_per_transfer = 2;
    f.split = split;
    return f;
}

}  // namespace

TEST(Multipath, CapacitySplitTakesTheMaxFlowTimeAndLoadsPathsInProportion) {
    const double c1 = ucmp_c1_bps / 8, c2 = ucmp_c2_bps / 8;
    for (auto routing : {sw::RoutingPolicy::shortest_latency, sw::RoutingPolicy::widest}) {
        const auto r = point_to_point({two_path_topology()}, multipath(sw::MultipathSplit::capacity, routing));
        EXPECT_NEAR(r.duration_s, ucmp_bytes / (c1 + c2), 1e-12 * r.duration_s);
        EXPECT_NEAR(r.bytes_via_x, ucmp_bytes * c1 / (c1 + c2), 1e-12 * ucmp_bytes);
        EXPECT_NEAR(r.bytes_via_y, ucmp_bytes * c2 / (c1 + c2), 1e-12 * ucmp_bytes);
    }
}

TEST(Multipath, EqualSplitWaitsForTheSlowerPath) {
    const auto r = point_to_point({two_path_topology()},
                                  multipath(sw::MultipathSplit::equal, sw::RoutingPolicy::shortest_latency));
    EXPECT_NEAR(r.duration_s, ucmp_bytes / 2 / (ucmp_c1_bps / 8), 1e-12 * r.duration_s);
    EXPECT_DOUBLE_EQ(r.bytes_via_x, ucmp_bytes / 2);
    EXPECT_DOUBLE_EQ(r.bytes_via_y, ucmp_bytes / 2);
}

TEST(Multipath, SinglePathTakesTheWidestPath) {
    sw::FlowOptions f;
    f.routing = sw::RoutingPolicy::widest;
    f.split = sw::MultipathSplit::capacity;  // no effect on one path
    const auto r = point_to_point({two_path_topology()}, f);
    EXPECT_NEAR(r.duration_s, ucmp_bytes / (ucmp_c2_bps / 8), 1e-12 * r.duration_s);
    EXPECT_DOUBLE_EQ(r.bytes_via_x, 0.0);
    EXPECT_DOUBLE_EQ(r.bytes_via_y, ucmp_bytes);
}

TEST(Multipath, SplitsHoldAcrossATopologyChangeMidTransfer) {
    // The same topology again at 1 s: the transfer crosses an epoch, so the event engine
    // (not the one-epoch solution) carries it, with the same times and bytes.
    const std::vector<Topology> series{two_path_topology(0.0), two_path_topology(1.0)};
    const double c1 = ucmp_c1_bps / 8, c2 = ucmp_c2_bps / 8;
    const auto ucmp = point_to_point(series, multipath(sw::MultipathSplit::capacity, sw::RoutingPolicy::widest));
    EXPECT_NEAR(ucmp.duration_s, ucmp_bytes / (c1 + c2), 1e-12 * ucmp.duration_s);
    EXPECT_NEAR(ucmp.bytes_via_x, ucmp_bytes * c1 / (c1 + c2), 1e-12 * ucmp_bytes);
    EXPECT_NEAR(ucmp.bytes_via_y, ucmp_bytes * c2 / (c1 + c2), 1e-12 * ucmp_bytes);
    const auto ecmp = point_to_point(series, multipath(sw::MultipathSplit::equal, sw::RoutingPolicy::widest));
    EXPECT_NEAR(ecmp.duration_s, ucmp_bytes / 2 / c1, 1e-12 * ecmp.duration_s);
    EXPECT_NEAR(ecmp.bytes_via_x, ucmp_bytes / 2, 1e-12 * ucmp_bytes);
}

TEST(NetworkClock, BytesOnlyAccountingCarriesLinkUtilisationsBytesToTheBit) {
    // A ring all-reduce across three topology changes (a link's capacity halved, then the link
    // gone, then back), beside a chord too slow to be taken: a clock accounting bytes only lists
    // exactly the links that carried bytes, with link_utilisation's sums to the bit, and the bytes
    // add up to what the ring moved.
    const int p = 6;
    const double cap = 100e9, alpha = 1e-6, n = 1e9;
    std::vector<Topology> series{sw::testing::ring(p, cap, alpha, 0.0)};
    series.back().links.push_back(sw::testing::make_link(0, 3, cap, 1.0));
    series.push_back(series.back());
    series.back().time_s = 0.01;
    series.back().links[2].capacity_bps = cap / 2;
    series.push_back(series.back());
    series.back().time_s = 0.02;
    series.back().links.erase(series.back().links.begin());
    series.push_back(sw::testing::ring(p, cap, alpha, 0.03));
    series.back().links.push_back(sw::testing::make_link(0, 3, cap, 1.0));
    const auto s = sw::build_schedule(sw::CollectiveOp::all_reduce, sw::Algorithm::ring, p, n);
    const auto run = [&](bool bytes_only) {
        sw::NetworkClock clock(sw::topology_source(series));
        if (bytes_only) clock.account_bytes_only();
        sw::CollectiveEngine engine(clock, {});
        const auto r = engine.run(s, sw::identity_placement(p), 0.0);
        EXPECT_TRUE(r.completed);
        EXPECT_GE(r.topology_changes, 2);
        return std::pair{r.end_s, bytes_only ? clock.carried_links() : clock.link_utilisation(r.end_s)};
    };
    const auto [full_end, full] = run(false);
    const auto [bytes_end, carried] = run(true);
    EXPECT_EQ(full_end, bytes_end);
    std::vector<sw::LinkUtilisation> nonzero;
    double total = 0.0;
    for (const auto& l : full)
        if (l.bytes != 0.0) nonzero.push_back(l);
    ASSERT_EQ(carried.size(), nonzero.size());
    for (std::size_t i = 0; i < carried.size(); ++i) {
        EXPECT_EQ(carried[i].source, nonzero[i].source);
        EXPECT_EQ(carried[i].target, nonzero[i].target);
        EXPECT_EQ(carried[i].bytes, nonzero[i].bytes);  // to the bit
        total += carried[i].bytes;
    }
    EXPECT_LT(carried.size(), full.size());  // links that carried nothing are left out
    // A ring all-reduce sends 2(p − 1)/p · n from each rank; a rerouted transfer crosses more links.
    EXPECT_GE(total, 2.0 * (p - 1) * n * (1.0 - 1e-12));
}
