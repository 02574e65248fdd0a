// Two-level routing (docs/routing.md) against the flat search, itself checked against a textbook
// Dijkstra in network_test.cpp: the same shortest-path distances on random multi-cluster fabrics
// (links down, clusters cut off, short links between clusters that make a path leave its own
// cluster and come back), valid and disjoint paths, and a hand-built case whose paths are known.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include <skyfabric/workloads/network.hpp>
#include <skyfabric/workloads/route_store.hpp>
#include <skyfabric/workloads/two_level_routing.hpp>

#include "test_helpers.hpp"

namespace sw = skyfabric::workloads;

namespace {

struct Fabric {
    skyfabric::links::Topology topology;
    std::vector<std::int32_t> cluster_of;
};

// `clusters` clusters of 5–12 nodes, each a chain with random chords (1–2 µs links), joined by
// random links between clusters (50–300 µs, and every fifth one as short as 0.1 µs, shorter than
// the way round inside a cluster); one link in nine down; with `cut`, the last cluster has no link
// to the others.
Fabric random_fabric(std::uint32_t seed, std::int32_t clusters, bool cut = false) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    Fabric f;
    std::vector<std::int32_t> first{0};
    for (std::int32_t c = 0; c < clusters; ++c) {
        const std::int32_t size = 5 + static_cast<std::int32_t>(rng() % 8);
        for (std::int32_t i = 0; i < size; ++i) f.cluster_of.push_back(c);
        first.push_back(first.back() + size);
    }
    f.topology.node_count = first.back();
    const auto link = [&](std::int32_t a, std::int32_t b, double latency_s) {
        f.topology.links.push_back(sw::testing::make_link(a, b, 1e9 * (10.0 + 90.0 * unit(rng)), latency_s));
        if (rng() % 9 == 0) f.topology.links.back().capacity_bps = 0.0;
    };
    for (std::int32_t c = 0; c < clusters; ++c) {
        for (std::int32_t v = first[c]; v + 1 < first[c + 1]; ++v) link(v, v + 1, 1e-6 * (1.0 + unit(rng)));
        const std::int32_t size = first[c + 1] - first[c];
        for (std::int32_t k = 0; k < size; ++k) {
            const std::int32_t a = first[c] + static_cast<std::int32_t>(rng() % size);
            const std::int32_t b = first[c] + static_cast<std::int32_t>(rng() % size);
            if (a != b) link(a, b, 1e-6 * (1.0 + unit(rng)));
        }
    }
    const std::int32_t joined = cut ? clusters - 1 : clusters;
    for (std::int32_t k = 0; k < 3 * joined; ++k) {
        const std::int32_t ca = static_cast<std::int32_t>(rng() % joined), cb = static_cast<std::int32_t>(rng() % joined);
        if (ca == cb) continue;
        const std::int32_t a = first[ca] + static_cast<std::int32_t>(rng() % (first[ca + 1] - first[ca]));
        const std::int32_t b = first[cb] + static_cast<std::int32_t>(rng() % (first[cb + 1] - first[cb]));
        link(a, b, k % 5 == 0 ? 1e-7 : 1e-6 * (50.0 + 250.0 * unit(rng)));
    }
    return f;
}

// A path is a walk from s to t over usable edges, its latency summed in order and its bottleneck
// the least capacity.
void expect_valid(const sw::Network& n, const sw::Path& p, std::int32_t s, std::int32_t t) {
    ASSERT_FALSE(p.edges.empty());
    EXPECT_EQ(n.edge_from[p.edges.front()], s);
    EXPECT_EQ(n.edge_to[p.edges.back()], t);
    double latency = 0.0, bottleneck = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < p.edges.size(); ++i) {
        const auto e = p.edges[i];
        EXPECT_GT(n.capacity_Bps[e], 0.0) << "edge " << e << " is down";
        if (i > 0) {
            EXPECT_EQ(n.edge_from[e], n.edge_to[p.edges[i - 1]]) << "the walk breaks at edge " << i;
        }
        latency += n.latency_s[e];
        bottleneck = std::min(bottleneck, n.capacity_Bps[e]);
    }
    EXPECT_EQ(p.latency_s, latency);
    EXPECT_EQ(p.bottleneck_Bps, bottleneck);
}

}  // namespace

// check(net, overlay, s, t, the flat search's path) on every ordered pair s ≠ t of a fabric.
template <class Check>
void for_every_pair(const Fabric& f, Check check) {
    const auto net = sw::build_network(f.topology);
    const auto overlay = sw::build_cluster_overlay(net, f.cluster_of);
    ASSERT_TRUE(overlay.has_value());
    for (std::int32_t s = 0; s < net.node_count; ++s)
        for (std::int32_t t = 0; t < net.node_count; ++t) {
            if (s == t) continue;
            SCOPED_TRACE(testing::Message() << s << "→" << t);
            check(net, *overlay, s, t, sw::route(net, s, t, sw::RoutingPolicy::shortest_latency));
        }
}

TEST(TwoLevelRouting, ShortestDistancesEqualTheFlatSearchOnRandomClusterFabrics) {
    std::int32_t pairs = 0, reachable = 0, leaving_own_cluster = 0;
    for (std::uint32_t seed = 0; seed < 12; ++seed) {
        SCOPED_TRACE(testing::Message() << "seed " << seed);
        const Fabric f = random_fabric(seed, 3 + static_cast<std::int32_t>(seed % 4), seed % 3 == 2);
        for_every_pair(f, [&](const sw::Network& net, const sw::ClusterOverlay& overlay, std::int32_t s, std::int32_t t,
                              const std::optional<sw::Path>& flat) {
            ++pairs;
            const auto two = sw::route_two_level(net, overlay, s, t, 1);
            ASSERT_EQ(two.empty(), !flat.has_value());
            if (!flat) return;
            ++reachable;
            ASSERT_EQ(two.size(), 1u);
            expect_valid(net, two[0], s, t);
            EXPECT_NEAR(two[0].latency_s, flat->latency_s, 1e-12 * flat->latency_s);
            if (f.cluster_of[s] == f.cluster_of[t] &&
                std::any_of(two[0].edges.begin(), two[0].edges.end(), [&](std::int32_t e) { return f.cluster_of[net.edge_to[e]] != f.cluster_of[s]; }))
                ++leaving_own_cluster;
        });
    }
    // The fabrics exercise what the test is for: pairs cut off, and pairs inside one cluster whose
    // shortest path leaves it.
    EXPECT_LT(reachable, pairs);
    EXPECT_GT(leaving_own_cluster, 0);
}

// Between clusters the paths share no link joining two clusters (the stretches inside the end
// clusters are each cluster's own shortest way to or from its border, and may be shared); inside one
// cluster they share no link at all.
TEST(TwoLevelRouting, DisjointPathsShareNoLinkBetweenClustersNorInsideOneCluster) {
    std::int32_t several = 0;
    for (std::uint32_t seed = 20; seed < 28; ++seed) {
        SCOPED_TRACE(testing::Message() << "seed " << seed);
        const Fabric f = random_fabric(seed, 4);
        for_every_pair(f, [&](const sw::Network& net, const sw::ClusterOverlay& overlay, std::int32_t s, std::int32_t t,
                              const std::optional<sw::Path>& flat) {
            const auto paths = sw::route_two_level(net, overlay, s, t, 4);
            ASSERT_EQ(paths.empty(), !flat.has_value());
            if (paths.empty()) return;
            EXPECT_LE(paths.size(), 4u);
            several += paths.size() > 1;
            EXPECT_NEAR(paths[0].latency_s, flat->latency_s, 1e-12 * flat->latency_s);
            std::set<std::int32_t> used;
            for (std::size_t i = 0; i < paths.size(); ++i) {
                expect_valid(net, paths[i], s, t);
                if (i > 0) {
                    EXPECT_GE(paths[i].latency_s, paths[i - 1].latency_s * (1.0 - 1e-12));
                }
                for (const auto e : paths[i].edges) {
                    const auto cf = f.cluster_of[net.edge_from[e]], ct = f.cluster_of[net.edge_to[e]];
                    const bool inside_one = f.cluster_of[s] == f.cluster_of[t] && cf == ct && cf == f.cluster_of[s];
                    if (cf != ct || inside_one) {
                        EXPECT_TRUE(used.insert(e).second) << "edge " << e << " in two paths";
                    }
                }
            }
        });
    }
    EXPECT_GT(several, 0);
}

TEST(TwoLevelRouting, AHandBuiltConstellationTakesTheGatewaysAndThenTheDirectLink) {
    // Cluster A: 0 — 1 — 2, cluster X: 3 — 4, cluster B: 5 — 6 — 7 (1 µs links inside). Gateway
    // links 2 — 3 and 4 — 5 (100 µs each), and a direct 0 — 7 of 500 µs. The shortest path from
    // 0 to 7 crosses X, 0→1→2→3→4→5→6→7 in 205 µs; the second, with the first one's links banned,
    // is the direct one.
    skyfabric::links::Topology t;
    t.node_count = 8;
    for (auto [a, b] : {std::pair{0, 1}, {1, 2}, {3, 4}, {5, 6}, {6, 7}}) t.links.push_back(sw::testing::make_link(a, b, 100e9, 1e-6));
    t.links.push_back(sw::testing::make_link(2, 3, 50e9, 100e-6));
    t.links.push_back(sw::testing::make_link(4, 5, 40e9, 100e-6));
    t.links.push_back(sw::testing::make_link(0, 7, 10e9, 500e-6));
    const auto net = sw::build_network(t);
    const std::vector<std::int32_t> cluster_of{0, 0, 0, 1, 1, 2, 2, 2};
    const auto overlay = sw::build_cluster_overlay(net, cluster_of);
    ASSERT_TRUE(overlay.has_value());
    EXPECT_EQ(overlay->border_node, (std::vector<std::int32_t>{0, 2, 3, 4, 5, 7}));
    // X's border-to-border distance is its one link; the whole network's distance from 2 to 5, 201 µs.
    EXPECT_DOUBLE_EQ(overlay->virtual_latency_s[overlay->virtual_index(1, 2, 3)], 1e-6);
    EXPECT_DOUBLE_EQ(sw::border_distances_to(net, *overlay, 4)[1], 201e-6);
    EXPECT_DOUBLE_EQ(sw::border_distances_to(net, *overlay, 1)[4], 201e-6);
    const auto paths = sw::route_two_level(net, *overlay, 0, 7, 4);
    ASSERT_EQ(paths.size(), 2u);
    std::vector<std::int32_t> nodes{0};
    for (const auto e : paths[0].edges) nodes.push_back(net.edge_to[e]);
    EXPECT_EQ(nodes, (std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_NEAR(paths[0].latency_s, 205e-6, 1e-18);
    EXPECT_DOUBLE_EQ(paths[0].bottleneck_Bps, 40e9 / 8);
    ASSERT_EQ(paths[1].edges.size(), 1u);
    EXPECT_EQ(net.edge_to[paths[1].edges[0]], 7);
    EXPECT_DOUBLE_EQ(paths[1].latency_s, 500e-6);
    // Unreachable and trivial pairs.
    EXPECT_EQ(sw::route_two_level(net, *overlay, 3, 3, 4).size(), 1u);
    EXPECT_TRUE(sw::route_two_level(net, *overlay, 3, 3, 4)[0].edges.empty());
}

TEST(TwoLevelRouting, NoOverlayForOneCluster) {
    const auto net = sw::build_network(sw::testing::lattice(3, 3, 100e9, 1e-6));
    EXPECT_FALSE(sw::build_cluster_overlay(net, std::vector<std::int32_t>(9, 0)).has_value());
    // Unlabelled nodes are clusters of their own.
    EXPECT_TRUE(sw::build_cluster_overlay(net, std::vector<std::int32_t>(4, 0)).has_value());
}

TEST(RouteStore, TwoLevelTablesAndTheirDamagedCopiesFindShortestPaths) {
    // A store routing two-level gives every engine's table the overlay, and a damaged copy's own
    // table (private_table, seeded from the undamaged routes) searches its broken pairs two-level on
    // the damaged fabric: first paths as short as the flat search's there, valid, over no link down.
    const auto policy = sw::RoutingPolicy::shortest_latency;
    const Fabric f = random_fabric(7, 4);
    const auto net = std::make_shared<const sw::Network>(sw::build_network(f.topology));
    sw::RouteStore store(f.cluster_of, sw::RoutingModel::two_level);
    const auto table = store.table_for(*net, policy, 4);
    ASSERT_NE(table->overlay(*net), nullptr);
    EXPECT_EQ(table->guide(net.get()), nullptr) << "the flat model's guide is not built under two-level";
    auto seed = std::make_shared<sw::RouteCache>();
    seed->share(table);
    for (std::int32_t s = 0; s < net->node_count; ++s)
        for (std::int32_t t = 0; t < net->node_count; ++t) {
            const auto& got = seed->get(*net, s, t, policy, 4);
            const auto want = sw::route_two_level(*net, *table->overlay(*net), s, t, 4);
            ASSERT_EQ(got.size(), want.size());
            for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].edges, want[i].edges);
        }
    auto damaged = f.topology;
    for (std::size_t i = 0; i < damaged.links.size(); i += 4) damaged.links[i].capacity_bps = 0.0;
    const auto dnet = sw::build_network(damaged);
    sw::RouteCache cache;
    cache.share(store.private_table());
    cache.seed(seed, net);
    for (std::int32_t s = 0; s < dnet.node_count; ++s)
        for (std::int32_t t = 0; t < dnet.node_count; ++t) {
            if (s == t) continue;
            SCOPED_TRACE(testing::Message() << s << "→" << t);
            const auto& got = cache.get(dnet, s, t, policy, 4);
            const auto flat = sw::route(dnet, s, t, policy);
            ASSERT_EQ(got.empty(), !flat.has_value());
            if (got.empty()) continue;
            EXPECT_NEAR(got[0].latency_s, flat->latency_s, 1e-12 * flat->latency_s);
            for (const auto& p : got) expect_valid(dnet, p, s, t);
        }
}
