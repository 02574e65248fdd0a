// Topology-aware ring embedding against random placement.

#include <gtest/gtest.h>

#include <skyfabric/workloads/flow_simulation.hpp>
#include <skyfabric/workloads/placement.hpp>

#include "test_helpers.hpp"

namespace sw = skyfabric::workloads;

TEST(Placement, TopologyAwareBeatsRandomOnLattice) {
    const auto topo = sw::testing::lattice(8, 8, 100e9, 1e-6);
    const auto net = sw::build_network(topo);
    const auto aware = sw::ring_placement(net, 64);
    // Snake over 8×8: 63 one-hop steps + the way back to the start.
    EXPECT_LE(sw::ring_hops(net, aware), 64 + 7);
    const double n = 1e9;
    const auto t_aware = sw::run_collective(topo, sw::CollectiveOp::all_reduce, sw::Algorithm::ring, n, aware);
    for (std::uint64_t seed : {1u, 2u, 3u}) {
        const auto rnd = sw::random_placement(64, 64, seed);
        EXPECT_GT(sw::ring_hops(net, rnd), 3 * 64);
        const auto t_rnd = sw::run_collective(topo, sw::CollectiveOp::all_reduce, sw::Algorithm::ring, n, rnd);
        EXPECT_GT(t_rnd.duration_s(), 1.5 * t_aware.duration_s()) << "seed " << seed;
    }
}

TEST(Placement, RandomIsDeterministicAndDistinct) {
    const auto a = sw::random_placement(81, 40, 42);
    EXPECT_EQ(a, sw::random_placement(81, 40, 42));
    EXPECT_NE(a, sw::random_placement(81, 40, 43));
    std::vector<int> seen(81, 0);
    for (auto v : a) EXPECT_EQ(seen[v]++, 0);
}

TEST(Placement, RingOnRingIsEmbedded) {
    const auto net = sw::build_network(sw::testing::ring(11, 1e9, 1e-6));
    const auto p = sw::ring_placement(net, 11);
    EXPECT_TRUE(sw::ring_is_embedded(net, p));
    EXPECT_EQ(sw::ring_hops(net, p), 11);
}
