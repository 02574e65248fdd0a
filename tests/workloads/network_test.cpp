// Routing against a plain Dijkstra written the textbook way (fresh labels per search, no
// direct-edge shortcut): the same edges, latency and bottleneck for every pair, on
// graphs with ties, uneven latencies, triangle-inequality violations, parallel links and
// links that are down.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <queue>
#include <thread>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include <skyfabric/workloads/idle_helpers.hpp>
#include <skyfabric/workloads/network.hpp>
#include <skyfabric/workloads/route_store.hpp>

#include "test_helpers.hpp"

namespace sw = skyfabric::workloads;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

std::optional<sw::Path> reference_route(const sw::Network& n, std::int32_t s, std::int32_t t,
                                        sw::RoutingPolicy policy, const std::vector<char>* banned = nullptr) {
    if (s == t) return sw::Path{};
    const auto nn = static_cast<std::size_t>(n.node_count);
    struct Label {
        double a = inf, b = inf;
    };
    std::vector<Label> best(nn);
    std::vector<std::int32_t> via(nn, -1);
    std::vector<char> done(nn, 0);
    using Item = std::tuple<double, double, std::int32_t>;
    std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
    best[s] = policy == sw::RoutingPolicy::widest ? Label{-inf, 0.0} : Label{0.0, 0.0};
    heap.emplace(best[s].a, best[s].b, s);
    while (!heap.empty()) {
        auto [a, b, v] = heap.top();
        heap.pop();
        if (done[v]) continue;
        done[v] = 1;
        if (v == t) break;
        for (std::int32_t k = n.adjacency_offsets[v]; k < n.adjacency_offsets[v + 1]; ++k) {
            const std::int32_t e = n.adjacency_edges[k];
            const std::int32_t w = n.edge_to[e];
            if (done[w] || (banned && (*banned)[e])) continue;
            Label cand;
            if (policy == sw::RoutingPolicy::widest) {
                cand.a = std::max(a, -n.capacity_Bps[e]);
                cand.b = b + n.latency_s[e];
            } else {
                cand.a = a + n.latency_s[e];
                cand.b = b + 1.0;
            }
            if (cand.a < best[w].a || (cand.a == best[w].a && cand.b < best[w].b)) {
                best[w] = cand;
                via[w] = e;
                heap.emplace(cand.a, cand.b, w);
            }
        }
    }
    if (via[t] < 0) return std::nullopt;
    sw::Path p;
    p.bottleneck_Bps = inf;
    for (std::int32_t v = t; v != s; v = n.edge_from[via[v]]) p.edges.push_back(via[v]);
    std::reverse(p.edges.begin(), p.edges.end());
    for (auto e : p.edges) {
        p.latency_s += n.latency_s[e];
        p.bottleneck_Bps = std::min(p.bottleneck_Bps, n.capacity_Bps[e]);
    }
    return p;
}

// k disjoint paths the textbook way: each path's edges banned from the searches after it.
std::vector<sw::Path> reference_disjoint(const sw::Network& n, std::int32_t s, std::int32_t t,
                                         sw::RoutingPolicy policy, std::int32_t k) {
    std::vector<sw::Path> paths;
    std::vector<char> banned(n.edge_to.size(), 0);
    for (std::int32_t i = 0; i < k; ++i) {
        auto p = reference_route(n, s, t, policy, &banned);
        if (!p) break;
        for (auto e : p->edges) banned[e] = 1;
        paths.push_back(std::move(*p));
        if (s == t) break;
    }
    return paths;
}

skyfabric::links::Topology graph(int variant) {
    auto t = sw::testing::lattice(5, 6, 100e9, 1e-6);
    const auto base = t.links.size();
    // Diagonals and long chords: shortcuts and triangle-inequality violations.
    for (std::int32_t v = 0; v + 7 < 30; v += 3) t.links.push_back(sw::testing::make_link(v, v + 7, 50e9, 1.5e-6));
    for (std::int32_t v = 0; v + 13 < 30; v += 5) t.links.push_back(sw::testing::make_link(v, v + 13, 80e9, 0.5e-6));
    if (variant % 2 == 1) t.links.push_back(t.links[2]);  // a parallel link
    for (std::size_t i = 0; i < t.links.size(); ++i) {
        const auto h = (i * 11 + static_cast<std::size_t>(variant) * 7) % 6;
        if (variant >= 2) t.links[i].latency_s = 1e-6 * (0.5 + 0.5 * static_cast<double>(h));  // ties too
        if (variant >= 3) t.links[i].capacity_bps = 1e9 * (10.0 + 20.0 * static_cast<double>(h % 4));
        if (variant >= 4 && i < base && h == 0) t.links[i].capacity_bps = 0.0;  // down
    }
    return t;
}

}  // namespace

TEST(Routing, SameRoutesAsAPlainDijkstra) {
    for (int variant = 0; variant < 6; ++variant) {
        SCOPED_TRACE(variant);
        const auto net = sw::build_network(graph(variant));
        for (auto policy : {sw::RoutingPolicy::shortest_latency, sw::RoutingPolicy::widest})
            for (std::int32_t s = 0; s < net.node_count; ++s)
                for (std::int32_t t = 0; t < net.node_count; ++t) {
                    const auto got = sw::route(net, s, t, policy);
                    const auto want = reference_route(net, s, t, policy);
                    ASSERT_EQ(got.has_value(), want.has_value()) << s << "→" << t;
                    if (!got) continue;
                    EXPECT_EQ(got->edges, want->edges) << s << "→" << t;
                    EXPECT_EQ(got->latency_s, want->latency_s) << s << "→" << t;
                    EXPECT_EQ(got->bottleneck_Bps, want->bottleneck_Bps) << s << "→" << t;
                }
    }
}

TEST(Routing, RouteCacheTreesGiveTheSameRoutesAsAPlainDijkstra) {
    // Asked for every target of every source (an all-to-all), the cache builds each source's
    // shortest-path tree once: its paths must be the textbook search's, pair by pair, on the
    // same graphs (ties, parallel and down links) and on a switch star (the p³ case).
    std::vector<skyfabric::links::Topology> graphs;
    for (int variant = 0; variant < 6; ++variant) graphs.push_back(graph(variant));
    skyfabric::links::Topology star;  // 24 leaves on switch node 24
    star.node_count = 25;
    for (std::int32_t v = 0; v < 24; ++v) star.links.push_back(sw::testing::make_link(v, 24, 400e9, 5e-7));
    graphs.push_back(star);
    for (std::size_t g = 0; g < graphs.size(); ++g) {
        SCOPED_TRACE(g);
        const auto net = sw::build_network(graphs[g]);
        for (auto policy : {sw::RoutingPolicy::shortest_latency, sw::RoutingPolicy::widest}) {
            sw::RouteCache cache;
            for (std::int32_t s = 0; s < net.node_count; ++s)
                for (std::int32_t t = 0; t < net.node_count; ++t) {
                    const auto& got = cache.get(net, s, t, policy, 1);
                    const auto want = reference_route(net, s, t, policy);
                    ASSERT_EQ(got.size(), want ? 1u : 0u) << s << "→" << t;
                    if (!want) continue;
                    EXPECT_EQ(got[0].edges, want->edges) << s << "→" << t;
                    EXPECT_EQ(got[0].latency_s, want->latency_s) << s << "→" << t;
                    EXPECT_EQ(got[0].bottleneck_Bps, want->bottleneck_Bps) << s << "→" << t;
                }
        }
    }
}

namespace {

// The graphs above with dead ends hung on: single leaves (a switch's ports), two-node chains
// whose inner node is no dead end, a leaf whose only link is down and a node left a dead end
// by a parallel link being down — at equal latencies (ties) and uneven ones.
skyfabric::links::Topology graph_with_dead_ends(int variant) {
    auto t = graph(variant);
    const std::int32_t base = t.node_count;
    auto add = [&](std::int32_t a, std::int32_t b, double cap, double lat) {
        t.links.push_back(sw::testing::make_link(a, b, cap, lat));
        t.node_count = std::max(t.node_count, std::max(a, b) + 1);
    };
    const double lat = variant % 2 == 0 ? 1e-6 : 0.7e-6;
    for (std::int32_t v = 0; v < base; v += 4) add(v, base + v / 4, 40e9, lat);  // leaves
    const std::int32_t chain = t.node_count;
    add(3, chain, 40e9, lat);
    add(chain, chain + 1, 40e9, lat);
    add(9, chain + 2, 0.0, lat);            // a leaf cut off
    add(11, chain + 3, 40e9, lat);          // a dead end once its parallel twin is down
    add(11, chain + 3, 0.0, lat);
    return t;
}

}  // namespace

TEST(Routing, DeadEndsSettleAsTheyWouldFromTheFrontier) {
    // route() settles a node whose one usable link leads back where it came from as soon as it
    // is reached; RouteCache trees and per-target searches must still give the textbook
    // search's paths for every pair, both policies.
    for (int variant = 0; variant < 6; ++variant) {
        SCOPED_TRACE(variant);
        const auto net = sw::build_network(graph_with_dead_ends(variant));
        for (auto policy : {sw::RoutingPolicy::shortest_latency, sw::RoutingPolicy::widest}) {
            sw::RouteCache cache;
            for (std::int32_t s = 0; s < net.node_count; ++s)
                for (std::int32_t t = 0; t < net.node_count; ++t) {
                    const auto want = reference_route(net, s, t, policy);
                    const auto got = sw::route(net, s, t, policy);
                    ASSERT_EQ(got.has_value(), want.has_value()) << s << "→" << t;
                    const auto& cached = cache.get(net, s, t, policy, 1);
                    ASSERT_EQ(cached.size(), want ? 1u : 0u) << s << "→" << t;
                    if (!want) continue;
                    EXPECT_EQ(got->edges, want->edges) << s << "→" << t;
                    EXPECT_EQ(cached[0].edges, want->edges) << s << "→" << t;
                    EXPECT_EQ(cached[0].latency_s, want->latency_s) << s << "→" << t;
                    EXPECT_EQ(cached[0].bottleneck_Bps, want->bottleneck_Bps) << s << "→" << t;
                }
        }
    }
}

namespace {
// A cache that has asked for every pair (paths disjoint paths each): a damaged copy's seed.
std::shared_ptr<sw::RouteCache> seed_every_pair(const sw::Network& net, sw::RoutingPolicy policy, std::int32_t paths) {
    auto seed = std::make_shared<sw::RouteCache>();
    for (std::int32_t s = 0; s < net.node_count; ++s)
        for (std::int32_t t = 0; t < net.node_count; ++t) (void)seed->get(net, s, t, policy, paths);
    return seed;
}
// The fabric with two of its links down.
skyfabric::links::Topology with_links_down(skyfabric::links::Topology t, std::size_t a, std::size_t b) {
    t.links[a].capacity_bps = 0.0;
    t.links[b].capacity_bps = 0.0;
    return t;
}
}  // namespace

TEST(Routing, ASeedServesItsTreesPathsThatSurviveTheDamage) {
    // The undamaged cache asked for every pair (trees for every source, its paths not stored
    // per pair); a damaged copy seeded with it must route every pair as the textbook search
    // does on the damaged fabric, whether the seed's path survived or not.
    const auto whole = graph_with_dead_ends(2);
    const auto net = sw::build_network(whole);
    const auto seed = seed_every_pair(net, sw::RoutingPolicy::shortest_latency, 1);
    for (std::size_t cut : {std::size_t{0}, std::size_t{5}, std::size_t{17}, whole.links.size() - 7}) {
        SCOPED_TRACE(cut);
        const auto dnet = sw::build_network(with_links_down(whole, cut, (cut * 7 + 3) % whole.links.size()));
        sw::RouteCache cache;
        cache.seed(seed);
        for (int pass = 0; pass < 2; ++pass)  // the second asks again: cached, tree or seed
            for (std::int32_t s = 0; s < dnet.node_count; ++s)
                for (std::int32_t t = 0; t < dnet.node_count; ++t) {
                    const auto want = reference_route(dnet, s, t, sw::RoutingPolicy::shortest_latency);
                    const auto& got = cache.get(dnet, s, t, sw::RoutingPolicy::shortest_latency, 1);
                    ASSERT_EQ(got.size(), want ? 1u : 0u) << s << "→" << t;
                    if (!want) continue;
                    EXPECT_EQ(got[0].edges, want->edges) << s << "→" << t;
                    EXPECT_EQ(got[0].latency_s, want->latency_s) << s << "→" << t;
                    EXPECT_EQ(got[0].bottleneck_Bps, want->bottleneck_Bps) << s << "→" << t;
                }
    }
}

namespace {
// The same paths, edge for edge, with the same latency and bottleneck.
void expect_paths(const std::vector<sw::Path>& got, const std::vector<sw::Path>& want, std::int32_t s, std::int32_t t) {
    ASSERT_EQ(got.size(), want.size()) << s << "→" << t;
    for (std::size_t q = 0; q < got.size(); ++q) {
        EXPECT_EQ(got[q].edges, want[q].edges) << s << "→" << t << " path " << q;
        EXPECT_EQ(got[q].latency_s, want[q].latency_s) << s << "→" << t << " path " << q;
        EXPECT_EQ(got[q].bottleneck_Bps, want[q].bottleneck_Bps) << s << "→" << t << " path " << q;
    }
}
}  // namespace

TEST(Routing, ASeedKeepsTheDisjointPathsThatSurviveAndSearchesTheRest) {
    // Disjoint paths on a damaged copy seeded with the undamaged ones: every pair as a fresh
    // search of the damaged fabric gives them, whether all, the first few or none survived.
    const auto policy = sw::RoutingPolicy::shortest_latency;
    for (int variant : {0, 2, 3}) {
        const auto whole = graph(variant);
        const auto net = sw::build_network(whole);
        const auto seed = seed_every_pair(net, policy, 3);
        for (std::size_t cut : {std::size_t{1}, std::size_t{8}, std::size_t{23}}) {
            SCOPED_TRACE(testing::Message() << "variant " << variant << ", cut " << cut);
            const auto dnet = sw::build_network(with_links_down(whole, cut, (cut * 5 + 11) % whole.links.size()));
            sw::RouteCache cache;
            cache.seed(seed);
            int kept_some = 0;
            for (std::int32_t s = 0; s < dnet.node_count; ++s)
                for (std::int32_t t = 0; t < dnet.node_count; ++t) {
                    const auto want = sw::route_disjoint(dnet, s, t, policy, 3);
                    expect_paths(cache.get(dnet, s, t, policy, 3), want, s, t);
                    // A pair whose first path survived but not all of its paths: the case kept in part.
                    const auto& before = seed->get(net, s, t, policy, 3);
                    if (!before.empty() && !want.empty() && before.front().edges == want.front().edges && before.size() > 1 &&
                        (before.size() != want.size() || before.back().edges != want.back().edges))
                        ++kept_some;
                }
            EXPECT_GT(kept_some, 0) << "no pair kept a surviving first path and searched the rest";
        }
    }
}

TEST(Routing, ASeedWithItsNetworkSearchesThePairsItLacksThereFirst) {
    // The seed knows only the pairs s < t; with the undamaged network, a damaged copy searches a
    // pair it lacks there (into the seed's table, for every copy it seeds) and keeps what survives:
    // every pair still as a fresh search of the damaged fabric gives it.
    const auto policy = sw::RoutingPolicy::shortest_latency;
    const auto whole = graph(3);
    auto net = std::make_shared<const sw::Network>(sw::build_network(whole));
    auto table = std::make_shared<sw::RouteTable>(/*shared_while_growing=*/true);
    auto seed = std::make_shared<sw::RouteCache>();
    seed->share(table);
    for (std::int32_t s = 0; s < net->node_count; ++s)
        for (std::int32_t t = s + 1; t < net->node_count; ++t) (void)seed->get(*net, s, t, policy, 3);
    const std::size_t seeded_bytes = table->bytes();
    const auto dnet = sw::build_network(with_links_down(whole, 8, 21));
    sw::RouteCache cache;
    cache.seed(seed, net);
    for (std::int32_t s = 0; s < dnet.node_count; ++s)
        for (std::int32_t t = 0; t < dnet.node_count; ++t)
            expect_paths(cache.get(dnet, s, t, policy, 3), sw::route_disjoint(dnet, s, t, policy, 3), s, t);
    EXPECT_GT(table->bytes(), seeded_bytes) << "the pairs s >= t were not added to the seed";

    // A seed whose table takes no lock (one cache's own, read by trials on several threads) is only
    // read: the same paths, searched on the damaged fabric.
    auto own = std::make_shared<sw::RouteCache>();
    for (std::int32_t s = 0; s < net->node_count; ++s)
        for (std::int32_t t = s + 1; t < net->node_count; ++t) (void)own->get(*net, s, t, policy, 3);
    sw::RouteCache reader;
    reader.seed(own, net);
    for (std::int32_t s = 0; s < dnet.node_count; ++s)
        for (std::int32_t t = 0; t < dnet.node_count; ++t)
            expect_paths(reader.get(dnet, s, t, policy, 3), sw::route_disjoint(dnet, s, t, policy, 3), s, t);
}

namespace {
// Four 4×4 lattices in a row, each corner a gateway linked to the same corner of every other
// cluster, the link's latency growing with the clusters' distance: a path through the clusters in
// between is as short as the direct one, or nearly (1e-4 + 1e-4 == 2e-4 exactly, 3e-4 differs by
// rounding), so the searches meet ties and near ties across clusters as well as within them.
skyfabric::links::Topology clusters(int variant) {
    skyfabric::links::Topology t;
    t.node_count = 64;
    for (std::int32_t c = 0; c < 4; ++c) {
        auto one = sw::testing::lattice(4, 4, 100e9, 1e-6);
        for (std::size_t i = 0; i < one.links.size(); ++i) {
            auto l = one.links[i];
            l.source += 16 * c;
            l.target += 16 * c;
            if (variant >= 1) l.latency_s = 1e-6 * (1.0 + 0.37 * static_cast<double>((i * 5 + c) % 3));
            t.links.push_back(l);
        }
    }
    for (std::int32_t a = 0; a < 4; ++a)
        for (std::int32_t b = a + 1; b < 4; ++b)
            for (std::int32_t corner : {0, 3, 12, 15}) {
                const double hops = b - a;
                const double extra = variant >= 2 ? 1e-6 * static_cast<double>((corner + a) % 3) : 0.0;
                t.links.push_back(sw::testing::make_link(16 * a + corner, 16 * b + corner, 50e9, 1e-4 * hops + extra));
            }
    return t;
}
}  // namespace

TEST(Routing, DisjointPathsAsTheTextbookSearchFindsThem) {
    // route_disjoint (the scratch-label search, dead ends settled on reach) must give the textbook
    // paths, edge for edge, on the graphs with ties, chords, parallel and down links, dead ends, two
    // links cut, and on clusters joined by long links where the clusters in between offer paths as
    // short as the direct one.
    std::vector<skyfabric::links::Topology> graphs;
    for (int variant = 0; variant < 6; ++variant) graphs.push_back(graph(variant));
    graphs.push_back(graph_with_dead_ends(3));
    graphs.push_back(with_links_down(graph(2), 4, 19));
    for (int variant = 0; variant < 3; ++variant) graphs.push_back(clusters(variant));
    graphs.push_back(with_links_down(clusters(1), 3, 100));
    const auto policy = sw::RoutingPolicy::shortest_latency;
    for (std::size_t g = 0; g < graphs.size(); ++g) {
        const auto net = sw::build_network(graphs[g]);
        for (std::int32_t k : {2, 4}) {
            SCOPED_TRACE(testing::Message() << "graph " << g << ", " << k << " paths");
            for (std::int32_t s = 0; s < net.node_count; ++s)
                for (std::int32_t t = 0; t < net.node_count; ++t)
                    expect_paths(sw::route_disjoint(net, s, t, policy, k), reference_disjoint(net, s, t, policy, k), s, t);
        }
    }
}

namespace {
// clusters()' nodes by lattice: 16 per cluster.
std::vector<std::int32_t> cluster_regions() {
    std::vector<std::int32_t> regions(64);
    for (std::int32_t v = 0; v < 64; ++v) regions[static_cast<std::size_t>(v)] = v / 16;
    return regions;
}
}  // namespace

TEST(Routing, GuidedSearchesFindTheTextbookPaths) {
    // The searches guided towards their targets (A* on the clusters' gateway bounds) give the
    // textbook Dijkstra's paths, edge for edge, tie breaks included: on equal-latency lattices (ties
    // everywhere), uneven ones, clusters where going through the ones in between ties or nearly
    // ties the direct link, and on damaged copies guided by the undamaged network's bounds.
    const auto policy = sw::RoutingPolicy::shortest_latency;
    const auto regions = cluster_regions();
    for (int variant = 0; variant < 3; ++variant) {
        const auto whole = clusters(variant);
        const auto net = sw::build_network(whole);
        const auto guide = sw::build_search_guide(net, regions);
        ASSERT_TRUE(guide.has_value()) << "variant " << variant;
        // Four corner gateways per cluster: 16 border rows of 64 distances.
        EXPECT_EQ(guide->border_offsets.back(), 16);
        std::vector<sw::Network> fabrics{net};
        fabrics.push_back(sw::build_network(with_links_down(whole, 3, 100)));  // a lattice link, a gateway link
        fabrics.push_back(sw::build_network(with_links_down(whole, 7, whole.links.size() - 1)));
        for (std::size_t f = 0; f < fabrics.size(); ++f)
            for (std::int32_t k : {1, 2, 4}) {
                SCOPED_TRACE(testing::Message() << "variant " << variant << ", fabric " << f << ", " << k << " paths");
                for (std::int32_t s = 0; s < net.node_count; ++s)
                    for (std::int32_t t = 0; t < net.node_count; ++t)
                        expect_paths(sw::route_disjoint(fabrics[f], s, t, policy, k, &*guide),
                                     reference_disjoint(fabrics[f], s, t, policy, k), s, t);
            }
    }
}

TEST(Routing, AGuideBoundsEveryLatencyAndIsExactOutsideTheTargetsCluster) {
    // Every path into a cluster enters by one of the links into it, u → w, so from outside it the
    // least of d(u, v) + l + d(w, t) over those links is the distance itself; with some of them
    // down, the least over the others still bounds the distance, and more tightly. Inside, the
    // landmark bound |d(g, v) − d(g, t)| over its border nodes never exceeds the distance (the
    // triangle inequality).
    const auto whole = clusters(1);
    const auto net = sw::build_network(whole);
    const auto guide = sw::build_search_guide(net, cluster_regions());
    ASSERT_TRUE(guide.has_value());
    const auto nn = static_cast<std::size_t>(net.node_count);
    const auto row = [&](std::int32_t node) { return guide->distance.data() + static_cast<std::size_t>(guide->row_of[node]) * nn; };
    // The first gateway link (the lattices' links come first) down, both ways.
    const std::size_t gateway = 4 * 24;
    ASSERT_GT(whole.links[gateway].latency_s, 1e-5);
    const auto down = sw::build_network(with_links_down(whole, gateway, gateway));
    int tighter = 0;
    for (std::int32_t t = 0; t < net.node_count; ++t) {
        const auto exact = sw::latency_distances(net, t);
        const auto exact_down = sw::latency_distances(down, t);
        const auto region = guide->region_of[static_cast<std::size_t>(t)];
        for (std::int32_t v = 0; v < net.node_count; ++v) {
            const auto vi = static_cast<std::size_t>(v);
            if (guide->region_of[vi] != region) {
                double through = inf, through_up = inf;
                for (auto i = guide->entry_offsets[region]; i < guide->entry_offsets[region + 1]; ++i) {
                    const auto e = guide->entries[static_cast<std::size_t>(i)];
                    const double via = row(net.edge_from[e])[v] + net.latency_s[e] + row(net.edge_to[e])[t];
                    through = std::min(through, via);
                    if (down.capacity_Bps[e] > 0.0) through_up = std::min(through_up, via);
                }
                EXPECT_NEAR(through, exact[vi], 1e-15) << v << "→" << t;
                EXPECT_LE(through_up, exact_down[vi] * (1.0 + 1e-12)) << v << "→" << t << " with a gateway down";
                if (through_up > exact[vi] * (1.0 + 1e-9)) ++tighter;
            } else {
                double landmark = 0.0;
                for (auto r = guide->border_offsets[region]; r < guide->border_offsets[region + 1]; ++r) {
                    const double* d = guide->distance.data() + static_cast<std::size_t>(r) * nn;
                    landmark = std::max(landmark, std::abs(d[v] - d[t]));
                }
                EXPECT_LE(landmark, exact[vi] * (1.0 + 1e-12)) << v << "→" << t;
            }
        }
    }
    EXPECT_GT(tighter, 0) << "a gateway down never tightened the bound";
}

TEST(Routing, NoGuideWhereItWouldNotPayOrCouldNotBeTrusted) {
    const auto net = sw::build_network(clusters(1));
    EXPECT_TRUE(sw::build_search_guide(net, cluster_regions()).has_value());
    // One region: nothing to guide towards.
    EXPECT_FALSE(sw::build_search_guide(net, std::vector<std::int32_t>(64, 0)).has_value());
    // A region with more border nodes than max_border_nodes: a line of 68 in alternate regions.
    const auto line = sw::build_network(sw::testing::lattice(1, 68, 100e9, 1e-6));
    std::vector<std::int32_t> alternate(68);
    for (std::int32_t v = 0; v < 68; ++v) alternate[static_cast<std::size_t>(v)] = v % 2;
    EXPECT_FALSE(sw::build_search_guide(line, alternate).has_value());
    // More distances than max_guide_distances: every node of a 40 x 40 lattice a region of its own
    // (unlabelled), 1,600 rows of 1,600.
    const auto big = sw::build_network(sw::testing::lattice(40, 40, 100e9, 1e-6));
    EXPECT_FALSE(sw::build_search_guide(big, {}).has_value());
    // A link so short beside the total latency that rounding could reach the margin, or none at all.
    for (const double latency : {1e-18, 0.0}) {
        auto shortened = clusters(1);
        shortened.links[5].latency_s = latency;
        EXPECT_FALSE(sw::build_search_guide(sw::build_network(shortened), cluster_regions()).has_value()) << latency;
    }
}

TEST(RouteCache, IdleThreadsPrefetchTheRoutesAGetWouldSearch) {
    // RouteCache::prefetch puts in the shared table, for every pair asked, the disjoint paths the
    // textbook search gives (those get() would search), with a helper thread taking a share; with no
    // helper idle it searches nothing (get() searches each pair as it comes, as before).
    const auto net = sw::build_network(clusters(1));
    const auto policy = sw::RoutingPolicy::shortest_latency;
    std::vector<std::pair<std::int32_t, std::int32_t>> pairs;
    for (std::int32_t s = 0; s < net.node_count; ++s)
        for (std::int32_t t = 0; t < net.node_count; ++t) pairs.emplace_back(s, t);
    const auto key = [&](std::int32_t s, std::int32_t t) { return static_cast<std::int64_t>(s) * net.node_count + t; };

    sw::IdleHelpers none;
    sw::RouteStore lone_store;
    const auto lone = lone_store.table_for(net, policy, 4);
    sw::RouteCache unhelped;
    unhelped.share(lone);
    unhelped.prefetch(net, pairs, policy, 4, none);
    EXPECT_EQ(lone->bytes(), 0u);

    sw::IdleHelpers helpers;
    std::thread helper([&] { helpers.serve(); });
    while (!helpers.any_idle()) std::this_thread::yield();
    sw::RouteStore store;
    const auto table = store.table_for(net, policy, 4);
    sw::RouteCache cache;
    cache.share(table);
    cache.prefetch(net, pairs, policy, 4, helpers);
    helpers.close();
    helper.join();
    for (const auto& [s, t] : pairs) {
        if (s == t) continue;
        const auto* found = table->find(key(s, t));
        ASSERT_NE(found, nullptr) << s << "→" << t;
        expect_paths(*found, reference_disjoint(net, s, t, policy, 4), s, t);
        EXPECT_EQ(&cache.get(net, s, t, policy, 4), found) << s << "→" << t;  // served, not searched again
    }
}

TEST(RouteStore, GuidedTablesAndTheirDamagedCopiesGiveTheTextbookPaths) {
    // A store told the clusters guides its tables' searches (the guide built once per table, its
    // bytes counted); a damaged copy seeded from such a table searches its broken pairs, and the
    // pairs the seed lacks, guided by the undamaged network's bounds: every pair as the textbook
    // search of the damaged fabric.
    const auto policy = sw::RoutingPolicy::shortest_latency;
    const auto whole = clusters(2);
    const auto net = std::make_shared<const sw::Network>(sw::build_network(whole));
    sw::RouteStore plain;
    EXPECT_EQ(plain.table_for(*net, policy, 4)->guide(net.get()), nullptr);
    sw::RouteStore store(cluster_regions());
    const auto table = store.table_for(*net, policy, 4);
    EXPECT_EQ(table->guide(nullptr), nullptr) << "not built before it is asked with its network";
    const sw::SearchGuide* guide = table->guide(net.get());
    ASSERT_NE(guide, nullptr);
    EXPECT_EQ(table->guide(net.get()), guide);
    EXPECT_EQ(table->guide(nullptr), guide);
    EXPECT_EQ(table->bytes(), guide->bytes());
    auto seed = std::make_shared<sw::RouteCache>();
    seed->share(table);
    for (std::int32_t s = 0; s < net->node_count; ++s)
        for (std::int32_t t = s + 1; t < net->node_count; ++t)
            expect_paths(seed->get(*net, s, t, policy, 4), reference_disjoint(*net, s, t, policy, 4), s, t);
    for (std::size_t cut : {std::size_t{2}, std::size_t{50}, whole.links.size() - 3}) {
        SCOPED_TRACE(testing::Message() << "cut " << cut);
        const auto dnet = sw::build_network(with_links_down(whole, cut, (cut * 7 + 5) % whole.links.size()));
        sw::RouteCache cache;
        cache.seed(seed, net);
        for (std::int32_t s = 0; s < dnet.node_count; ++s)
            for (std::int32_t t = 0; t < dnet.node_count; ++t)
                expect_paths(cache.get(dnet, s, t, policy, 4), reference_disjoint(dnet, s, t, policy, 4), s, t);
    }
}
