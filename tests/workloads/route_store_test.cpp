// RouteStore (route_store.hpp): which networks share a table (equal content, the same policy and
// number of paths), when it starts a new one, what a shared table serves, what it keeps past its
// budget, and the tables of its own a damaged copy gets. The paths themselves are checked against
// the textbook searches in network_test.cpp and two_level_routing_test.cpp.

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include <skyfabric/workloads/network.hpp>
#include <skyfabric/workloads/route_store.hpp>

#include "test_helpers.hpp"

namespace sw = skyfabric::workloads;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// A 5 × 6 lattice with diagonals, so that pairs have several paths; `variant` scales one link's
// capacity, so each variant is another network of the same shape.
skyfabric::links::Topology fabric(int variant = 0) {
    auto t = sw::testing::lattice(5, 6, 100e9, 1e-6);
    for (std::int32_t v = 0; v + 7 < 30; v += 3) t.links.push_back(sw::testing::make_link(v, v + 7, 50e9, 1.5e-6));
    t.links[4].capacity_bps *= 1.0 + variant;
    return t;
}

// Fills the store's table for net with the routes from node 0 to every node.
void fill(sw::RouteStore& store, const sw::Network& net, sw::RoutingPolicy policy, std::int32_t paths) {
    sw::RouteCache cache;
    cache.share(store.table_for(net, policy, paths));
    for (std::int32_t t = 1; t < net.node_count; ++t) (void)cache.get(net, 0, t, policy, paths);
}

}  // namespace

TEST(RouteStore, EqualNetworksShareATableAndAnyDifferenceGetsItsOwn) {
    const auto topology = fabric();
    const auto net = sw::build_network(topology);
    const auto policy = sw::RoutingPolicy::shortest_latency;
    sw::RouteStore store;
    const auto table = store.table_for(net, policy, 2);
    EXPECT_TRUE(table->locked()) << "a store's table is shared while it grows";
    EXPECT_EQ(store.table_for(sw::build_network(topology), policy, 2), table);  // rebuilt: equal content
    // One capacity, one latency, the disjoint paths asked for or the policy: another table.
    auto slower = topology;
    slower.links[3].capacity_bps *= 0.5;
    auto longer = topology;
    longer.links[3].latency_s = std::nextafter(longer.links[3].latency_s, inf);
    EXPECT_NE(store.table_for(sw::build_network(slower), policy, 2), table);
    EXPECT_NE(store.table_for(sw::build_network(longer), policy, 2), table);
    EXPECT_NE(store.table_for(net, policy, 3), table);
    EXPECT_NE(store.table_for(net, sw::RoutingPolicy::widest, 2), table);
    EXPECT_EQ(store.tables(), 5u);

    // Asked with a keyframe's shared object: the same table (first by content, then by the object),
    // and another object with equal content still shares it; an object that is not the network, refused.
    const auto object = std::make_shared<const sw::Network>(sw::build_network(topology));
    EXPECT_EQ(store.table_for(*object, policy, 2, object), table);
    EXPECT_EQ(store.table_for(*object, policy, 2, object), table);
    EXPECT_EQ(store.table_for(net, policy, 2), table);
    EXPECT_NE(store.table_for(*object, policy, 3, object), table);  // the object, other paths: another table
    const auto slower_object = std::make_shared<const sw::Network>(sw::build_network(slower));
    EXPECT_NE(store.table_for(*slower_object, policy, 2, slower_object), table);
    EXPECT_THROW((void)store.table_for(net, policy, 2, object), std::invalid_argument);
    EXPECT_EQ(store.tables(), 5u);

    // A second cache sharing the table is served the paths the first found (the same objects: no
    // search), and they are the paths a cache of its own finds.
    sw::RouteCache first, second, alone;
    first.share(table);
    second.share(store.table_for(net, policy, 2));
    for (std::int32_t s = 0; s < net.node_count; ++s)
        for (std::int32_t t = 0; t < net.node_count; ++t) {
            const auto& found = first.get(net, s, t, policy, 2);
            const auto& served = second.get(net, s, t, policy, 2);
            EXPECT_EQ(&served, &found) << s << "→" << t;
            const auto& own = alone.get(net, s, t, policy, 2);
            ASSERT_EQ(own.size(), found.size()) << s << "→" << t;
            for (std::size_t q = 0; q < own.size(); ++q) {
                EXPECT_EQ(found[q].edges, own[q].edges) << s << "→" << t;
                EXPECT_EQ(found[q].latency_s, own[q].latency_s) << s << "→" << t;
            }
        }
    EXPECT_GT(table->bytes(), 0u);
    EXPECT_EQ(store.bytes(), table->bytes());  // the others were never filled
}

TEST(RouteStore, AFingerprintReadsEverythingRoutingReadsAndNothingElse) {
    const auto topology = fabric();
    const auto net = sw::build_network(topology);
    const auto policy = sw::RoutingPolicy::shortest_latency;
    const auto f = sw::RouteStore::fingerprint(net, policy, 1);
    EXPECT_EQ(sw::RouteStore::fingerprint(sw::build_network(topology), policy, 1), f);
    // Routing reads neither the topology's time nor a link's distance (latency is what it reads).
    auto later = topology;
    later.time_s = 60.0;
    for (auto& l : later.links) l.distance_m *= 2.0;
    EXPECT_EQ(sw::RouteStore::fingerprint(sw::build_network(later), policy, 1), f);
    // Every input it does read changes both halves.
    auto one_more_node = topology;
    ++one_more_node.node_count;
    auto swapped = topology;  // the same links in another order: other edge indices, other paths' edges
    std::swap(swapped.links[0], swapped.links[1]);
    auto moved = topology;
    moved.links.back().target = 29;
    for (const auto& other : {sw::RouteStore::fingerprint(sw::build_network(one_more_node), policy, 1),
                              sw::RouteStore::fingerprint(sw::build_network(swapped), policy, 1),
                              sw::RouteStore::fingerprint(sw::build_network(moved), policy, 1),
                              sw::RouteStore::fingerprint(net, sw::RoutingPolicy::widest, 1),
                              sw::RouteStore::fingerprint(net, policy, 2)}) {
        EXPECT_NE(other.a, f.a);
        EXPECT_NE(other.b, f.b);
    }
}

TEST(RouteStore, ANetworkAskedForAgainAfterOthersStillFindsItsTable) {
    // The store remembers the last few networks whole (known_keep) to skip hashing them again; one
    // asked for after more than that many others is hashed again and must find the same table.
    const auto policy = sw::RoutingPolicy::shortest_latency;
    sw::RouteStore store;
    const auto first = store.table_for(sw::build_network(fabric(0)), policy, 1);
    for (int v = 1; v <= 6; ++v) (void)store.table_for(sw::build_network(fabric(v)), policy, 1);
    EXPECT_EQ(store.tables(), 7u);
    EXPECT_EQ(store.table_for(sw::build_network(fabric(0)), policy, 1), first);
    EXPECT_EQ(store.tables(), 7u);
}

TEST(RouteStore, DropsTheLeastRecentlyAskedTablesPastItsBudget) {
    const auto policy = sw::RoutingPolicy::shortest_latency;
    std::vector<sw::Network> nets;
    for (int v = 0; v < 3; ++v) nets.push_back(sw::build_network(fabric(v)));
    sw::RouteStore unbounded;
    for (const auto& net : nets) fill(unbounded, net, policy, 2);
    ASSERT_EQ(unbounded.tables(), 3u);
    // A budget that holds the first two tables but not the third as well.
    sw::RouteStore store(unbounded.bytes() - 1);
    fill(store, nets[0], policy, 2);
    const auto held = store.table_for(nets[1], policy, 2);  // a holder of net 1's table
    fill(store, nets[1], policy, 2);
    const std::size_t held_bytes = held->bytes();
    (void)store.table_for(nets[0], policy, 2);  // asked again: net 1's is now the least recent
    fill(store, nets[2], policy, 2);
    (void)store.table_for(nets[2], policy, 2);  // asked again: counts what the third one now holds
    EXPECT_LE(store.bytes(), unbounded.bytes() - 1);
    const auto kept0 = store.table_for(nets[0], policy, 2);
    EXPECT_GT(kept0->bytes(), 0u) << "the most recently asked table is kept";
    const auto again = store.table_for(nets[1], policy, 2);
    EXPECT_EQ(again->bytes(), 0u) << "the least recent is dropped: a new, empty one";
    EXPECT_NE(again, held);
    EXPECT_EQ(held->bytes(), held_bytes) << "its holder keeps the dropped table and its routes";
    EXPECT_NE(held->find(1), nullptr);
}

TEST(RouteStore, ADamagedCopyGetsATableOfItsOwnRoutedByTheStoresModel) {
    const auto net = sw::build_network(fabric());
    std::vector<std::int32_t> halves(30);
    for (std::int32_t v = 0; v < 30; ++v) halves[static_cast<std::size_t>(v)] = v < 15 ? 0 : 1;
    sw::RouteStore flat;
    const auto plain = flat.private_table();
    EXPECT_FALSE(plain->locked()) << "one engine's own: no lock";
    EXPECT_NE(flat.private_table(), plain) << "a new one each time";
    EXPECT_EQ(plain->overlay(net), nullptr);
    EXPECT_EQ(flat.tables(), 0u) << "not kept by the store";
    sw::RouteStore two_level(halves, sw::RoutingModel::two_level);
    const auto own = two_level.private_table();
    EXPECT_FALSE(own->locked());
    EXPECT_NE(own->overlay(net), nullptr) << "routed two-level across the clusters, as the store's tables";
    EXPECT_NE(two_level.table_for(net, sw::RoutingPolicy::shortest_latency, 1)->overlay(net), nullptr);
    EXPECT_EQ(flat.table_for(net, sw::RoutingPolicy::shortest_latency, 1)->overlay(net), nullptr);
}
