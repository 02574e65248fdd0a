// Topology-aware ring embedding against random placement.

#include <limits>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include <skyfabric/workloads/collective_table.hpp>
#include <skyfabric/workloads/collective_engine.hpp>
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

namespace {

// ring_placement as first written: at a dead end, a full latency_distances() scan for
// the nearest unvisited node (ties: lower id; none reachable: lowest unvisited id).
sw::Placement reference_ring_placement(const sw::Network& network, std::int32_t ranks) {
    sw::Placement order;
    std::vector<char> used(static_cast<std::size_t>(network.node_count), 0);
    std::int32_t v = 0;
    order.push_back(v);
    used[v] = 1;
    while (static_cast<std::int32_t>(order.size()) < ranks) {
        std::int32_t next = -1;
        double best = std::numeric_limits<double>::infinity();
        for (std::int32_t k = network.adjacency_offsets[v]; k < network.adjacency_offsets[v + 1]; ++k) {
            const std::int32_t e = network.adjacency_edges[k];
            const std::int32_t w = network.edge_to[e];
            if (used[w]) continue;
            const double c = network.latency_s[e];
            if (c < best || (c == best && w < next)) {
                best = c;
                next = w;
            }
        }
        if (next < 0) {
            const auto dist = sw::latency_distances(network, v);
            for (std::int32_t w = 0; w < network.node_count; ++w) {
                if (used[w]) continue;
                if (next < 0 || dist[w] < dist[next]) next = w;
            }
        }
        used[next] = 1;
        order.push_back(next);
        v = next;
    }
    return order;
}

}  // namespace

TEST(Placement, DeadEndJumpsMatchAFullDistanceScan) {
    // Lattices with holes, equal and unequal latencies, and pieces cut off entirely: the
    // early-stopping search at a dead end picks the node a full scan picks.
    for (int variant = 0; variant < 12; ++variant) {
        SCOPED_TRACE(variant);
        auto topo = sw::testing::lattice(9, 11, 100e9, 1e-6);
        std::vector<skyfabric::links::Link> kept;
        for (std::size_t i = 0; i < topo.links.size(); ++i) {
            auto l = topo.links[i];
            if ((i * 13 + static_cast<std::size_t>(variant) * 5) % 7 == 0) continue;  // holes
            if (variant % 2 == 1) l.latency_s = 1e-6 * static_cast<double>(1 + (i * 3 + variant) % 4);
            if (variant % 3 == 2 && (l.source == 40 || l.target == 40)) l.capacity_bps = 0.0;  // isolate a node
            kept.push_back(l);
        }
        topo.links = kept;
        const auto net = sw::build_network(topo);
        for (std::int32_t ranks : {1, 2, 30, 77, topo.node_count})
            EXPECT_EQ(sw::ring_placement(net, ranks), reference_ring_placement(net, ranks)) << ranks;
    }
}

TEST(Placement, NodesWithoutLinksAreTakenInIdOrder) {
    // An edge list naming a high node id leaves every id below it without links: after the linked
    // ring 0-1-2-3, each dead end finds nothing reachable and takes the lowest unvisited id.
    auto topo = sw::testing::ring(4, 1e9, 1e-6);
    topo.node_count = 40;
    const auto net = sw::build_network(topo);
    sw::Placement expected(40);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(sw::ring_placement(net, 40), expected);
    EXPECT_EQ(sw::ring_placement(net, 40), reference_ring_placement(net, 40));
}

TEST(Placement, TourAfterDamageIsTheTourOfTheDamagedFabric) {
    // A damaged copy (links without capacity) tours from the undamaged tour's first broken hop on:
    // it must give what touring the damaged copy from scratch gives, for damage on the tour's own
    // hops and jumps, elsewhere, with ties (equal and zero latencies) and with other node sets.
    std::uint64_t state = 12345;
    const auto next = [&state](std::uint64_t n) {  // splitmix64, reduced
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return (z ^ (z >> 31)) % n;
    };
    int unchanged = 0, retoured = 0;
    for (int variant = 0; variant < 8; ++variant) {
        SCOPED_TRACE(variant);
        auto topo = sw::testing::lattice(7, 9, 100e9, 1e-6);
        std::vector<skyfabric::links::Link> kept;
        for (std::size_t i = 0; i < topo.links.size(); ++i) {
            auto l = topo.links[i];
            if (variant >= 4 && (i * 13 + static_cast<std::size_t>(variant) * 5) % 7 == 0) continue;  // holes: dead ends
            if (variant % 2 == 1) l.latency_s = 1e-6 * static_cast<double>((i * 3 + static_cast<std::size_t>(variant)) % 4);
            kept.push_back(l);
        }
        topo.links = kept;
        const auto net = sw::build_network(topo);
        std::vector<std::int32_t> nodes;
        for (std::int32_t v = 0; v < topo.node_count; ++v)
            if (variant % 4 != 3 || v % 5 != 2) nodes.push_back(v);
        const sw::RingTour before = sw::ring_tour(net, nodes);
        ASSERT_EQ(before.order, sw::ring_placement(net, nodes));
        for (int draw = 0; draw < 60; ++draw) {
            auto damaged = topo;
            const auto down = 1 + next(4);
            for (std::uint64_t j = 0; j < down; ++j) {
                // Half the outages on an edge the tour rests on, half anywhere.
                const std::int32_t e = j % 2 == 0 && !before.decisive_edges.empty()
                                           ? before.decisive_edges[next(before.decisive_edges.size())]
                                           : static_cast<std::int32_t>(next(net.edge_to.size()));
                damaged.links[static_cast<std::size_t>(e / 2)].capacity_bps = 0.0;  // edges 2i, 2i+1: link i
            }
            std::vector<std::int32_t> ranks = nodes;
            if (draw % 3 == 2) {  // ranks lost: one to three, half of the time with their satellites' links
                const auto lost = 1 + next(3);
                for (std::uint64_t j = 0; j < lost; ++j) {
                    const auto at = ranks.begin() + static_cast<std::ptrdiff_t>(next(ranks.size()));
                    if (draw % 2 == 0)
                        for (auto& l : damaged.links)
                            if (l.source == *at || l.target == *at) l.capacity_bps = 0.0;
                    ranks.erase(at);
                }
            }
            const auto damaged_net = sw::build_network(damaged);
            const auto expected = sw::ring_placement(damaged_net, ranks);
            EXPECT_EQ(sw::ring_placement_after_damage(before, damaged_net, ranks), expected) << "draw " << draw;
            (expected == before.order ? unchanged : retoured) += 1;
        }
    }
    // Both kinds of answer were exercised (a third of the draws lose ranks, so change the tour).
    EXPECT_GT(unchanged, 8);
    EXPECT_GT(retoured, 200);
}
