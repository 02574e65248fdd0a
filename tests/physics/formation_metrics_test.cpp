#include <skyfabric/physics/formation_metrics.hpp>

#include <gtest/gtest.h>

#include <cmath>

using namespace skyfabric::physics;

TEST(FormationMetrics, NearestNeighbourAndMinimumSeparationOfAKnownSet) {
    const std::vector<Eigen::Vector3d> p{{0, 0, 0}, {100, 0, 0}, {0, 250, 0}, {103, 40, 0}};
    const auto nn = nearest_neighbour_distances_m(p);
    ASSERT_EQ(nn.size(), 4u);
    EXPECT_NEAR(nn[0], 100.0, 1e-12);
    EXPECT_NEAR(nn[1], std::hypot(3.0, 40.0), 1e-12);
    EXPECT_NEAR(nn[2], std::hypot(103.0, 210.0), 1e-12);
    const MinimumSeparation m = minimum_separation(p);
    EXPECT_EQ(m.first, 1);
    EXPECT_EQ(m.second, 3);
    EXPECT_NEAR(m.distance_m, std::hypot(3.0, 40.0), 1e-12);
}

TEST(FormationMetrics, MinimumSeparationOfOneSatelliteIsInfinite) {
    const std::vector<Eigen::Vector3d> p{{1, 2, 3}};
    EXPECT_TRUE(std::isinf(minimum_separation(p).distance_m));
}

TEST(FormationMetrics, EnvelopeIsTheLargestAbsoluteLvlhComponent) {
    std::vector<RelativeState> s(3);
    s[0].position_m = {-500, 20, 1};
    s[1].position_m = {300, -1000, -7};
    s[2].position_m = {10, 999, 3};
    const FormationEnvelope e = formation_envelope(s);
    EXPECT_EQ(e.max_abs_radial_m, 500.0);
    EXPECT_EQ(e.max_abs_along_track_m, 1000.0);
    EXPECT_EQ(e.max_abs_cross_track_m, 7.0);
}

TEST(FormationMetrics, KNearestDistancesAreSortedAndExcludeSelf) {
    std::vector<Eigen::Vector3d> p;
    for (int i = 0; i < 10; ++i) p.emplace_back(10.0 * i, 0, 0);
    const auto d = k_nearest_distances_m(p, 4, 3);
    ASSERT_EQ(d.size(), 3u);
    EXPECT_EQ(d[0], 10.0);
    EXPECT_EQ(d[1], 10.0);
    EXPECT_EQ(d[2], 20.0);
    EXPECT_EQ(k_nearest_distances_m(p, 0, 20).size(), 9u);
}
