#pragma once
// The physical network seen by the workload: a Topology turned into directed edges
// (two per full-duplex link) with routing over them.

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <shared_mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include <skyfabric/links/topology.hpp>
#include <skyfabric/physics/enum_names.hpp>

namespace skyfabric::workloads {

class IdleHelpers;
struct ClusterOverlay;

// How routes are searched on a network split into clusters (docs/routing.md). Both give the same
// shortest-path distances; ties and UCMP's later disjoint paths may differ.
enum class RoutingModel : std::uint8_t {
    two_level = 0,  // inside the end clusters, across the others by their gateways (two_level_routing.hpp)
    flat = 1,       // one search over every node (the reference)
};
inline constexpr auto routing_model_names = physics::enum_names<RoutingModel>({
    {RoutingModel::two_level, "two_level"}, {RoutingModel::flat, "flat"}});
inline constexpr const char* to_string(RoutingModel m) { return routing_model_names.name(m); }

enum class RoutingPolicy : std::uint8_t {
    shortest_latency = 0,  // Dijkstra on latency_s (ties: fewer hops, lower node id)
    widest = 1,            // maximise the bottleneck capacity (ties: lower latency)
};
inline constexpr auto routing_policy_names = physics::enum_names<RoutingPolicy>({
    {RoutingPolicy::shortest_latency, "shortest_latency"}, {RoutingPolicy::widest, "widest"}});

// Link budgets speak bits per second (capacity_bps), flows bytes: the one conversion.
inline constexpr double bits_per_byte = 8.0;
inline constexpr double bytes_per_s(double bits_per_s) { return bits_per_s / bits_per_byte; }

// Directed edge 2i is links[i] source→target, 2i+1 is target→source.
struct Network {
    std::int32_t node_count = 0;
    std::vector<double> capacity_Bps;  // bytes/s per directed edge (capacity_bps / 8)
    std::vector<double> latency_s;
    std::vector<std::int32_t> edge_from;
    std::vector<std::int32_t> edge_to;
    std::vector<std::int32_t> adjacency_offsets;  // CSR by node: usable edges only
    std::vector<std::int32_t> adjacency_edges;
};

// Links with capacity_bps <= 0 (down, re-acquiring) keep their edges but are not routed over.
Network build_network(const links::Topology& topology);

struct Path {
    std::vector<std::int32_t> edges;  // directed edge indices, source to destination
    double latency_s = 0.0;
    double bottleneck_Bps = 0.0;
};

// nullopt when no path exists. source == target gives an empty path.
std::optional<Path> route(const Network& network, std::int32_t source, std::int32_t target,
                          RoutingPolicy policy);

// Up to k edge-disjoint paths (each found by the policy after removing the previous
// paths' edges), for splitting one transfer over several paths.
//
// A guide (shortest latency only) makes each search go towards its target (A*) and settle fewer
// nodes, with the same paths: it must have been built on this network or on one this one is the
// same as but for links down (RouteCache::seed's undamaged network).
struct SearchGuide;
std::vector<Path> route_disjoint(const Network& network, std::int32_t source,
                                 std::int32_t target, RoutingPolicy policy, std::int32_t k,
                                 const SearchGuide* guide = nullptr);

// Lower bounds on the latency from any node to any other, for the disjoint-path searches between a
// constellation's clusters: most of a search from one cluster to another otherwise settles every
// node of the source cluster (all nearer than the target) before it crosses. The nodes are split
// into regions (the clusters); a region's border nodes (those linked to another region: its
// gateways) are few, and their latency distances d to every node are kept. Every path into the
// target's region enters by one of the links into it, u → w, so from outside that region the
// latency left is at least the least over those links not banned or down of d(u, v) + l + d(w, t)
// (exact with none banned or down; a later disjoint path, whose predecessors took the best gateway
// links, is bounded through the ones left); inside, it is the landmark bound max |d(g, v) − d(g, t)| over
// the region's border nodes g. Both are consistent (never fall by more than an edge's latency
// along it), scaled down by 1 − 2^−16 so that rounding cannot break that: the searches then settle
// every node with its exact label, and a tie between two ways into a node is broken as Dijkstra's
// order breaks it (see network.cpp), so the paths are Dijkstra's. Links down and banned edges only
// lengthen distances, so a guide built on the undamaged network serves its damaged copies.
struct SearchGuide {
    std::int32_t node_count = 0;
    std::size_t edge_count = 0;                // directed edges of the network it was built on
    std::vector<std::int32_t> region_of;       // per node: dense region index
    std::vector<std::int32_t> border_offsets;  // per region: its border nodes' rows, [r, r + 1)
    std::vector<std::int32_t> row_of;          // per node: its row, −1 for a node not on a border
    std::vector<std::int32_t> entry_offsets;   // per region: the links into it, [r, r + 1) of entries
    std::vector<std::int32_t> entries;         // directed edges from another region into the region
    std::vector<double> distance;              // per border row: the latency distance to every node
    std::size_t bytes() const {
        return distance.size() * sizeof(double) +
               (region_of.size() + border_offsets.size() + row_of.size() + entry_offsets.size() + entries.size()) * sizeof(std::int32_t);
    }
};
// nullopt where a guide would not pay or could not be trusted to give Dijkstra's paths: one region,
// a region with more than max_border_nodes border nodes or max_entries links into it (each node
// the search labels reads them all), more than max_guide_distances distances kept (8 MB), or a
// link so short beside the total latency that rounding could reach the 2^−16 margin. region_of:
// any labels, per node (missing or negative: a region of their own).
inline constexpr std::int32_t max_border_nodes = 32;
inline constexpr std::int32_t max_entries = 64;
inline constexpr std::size_t max_guide_distances = std::size_t{1} << 20;
std::optional<SearchGuide> build_search_guide(const Network& network, std::span<const std::int32_t> region_of);

// The paths found on one network, per (source, target), by the RouteCaches that use it. Paths are
// added, never changed or removed, so a reference to them stays valid while the table lives. A
// table shared between threads while it grows (RouteStore's) takes a lock; one cache's own does not
// (read by other threads only once its cache is done: a trial's seed).
class RouteTable {
public:
    // regions: the node partition (a constellation's clusters) its network's SearchGuide (flat
    // model) or ClusterOverlay (two-level) is built on; none: plain flat searches.
    explicit RouteTable(bool shared_while_growing = false, std::shared_ptr<const std::vector<std::int32_t>> regions = nullptr,
                        RoutingModel model = RoutingModel::flat)
        : locked_(shared_while_growing), regions_(std::move(regions)), model_(model) {}
    bool locked() const { return locked_; }
    // Two-level: the overlay of this table's network, built from `network` the first time (as
    // guide()); null under the flat model, without regions or with fewer than two clusters.
    const ClusterOverlay* overlay(const Network& network) const;
    // `paths` routes from source to target on `network` (this table's) by the table's model, not
    // kept: get() and prefetch() keep them.
    std::vector<Path> search(const Network& network, std::int32_t source, std::int32_t target, RoutingPolicy policy,
                             std::int32_t paths) const;
    // The guide for this table's network, built from `network` (which must be that network) the
    // first time one is passed; null when the table has no regions, when no guide pays
    // (build_search_guide) or, passed none, when none was built yet.
    const SearchGuide* guide(const Network* network) const;
    const std::vector<Path>* find(std::int64_t key) const {
        if (!locked_) return find_unlocked(key);
        const std::shared_lock lock(mutex_);
        return find_unlocked(key);
    }
    // Keeps the first paths added under a key (two threads may search the same pair: the same
    // network gives the same paths) and returns them.
    const std::vector<Path>& add(std::int64_t key, std::vector<Path> paths);
    std::size_t bytes() const { return bytes_.load(std::memory_order_relaxed); }  // an estimate

private:
    const std::vector<Path>* find_unlocked(std::int64_t key) const {
        const auto it = paths_.find(key);
        return it == paths_.end() ? nullptr : &it->second;
    }
    const bool locked_;
    const std::shared_ptr<const std::vector<std::int32_t>> regions_;
    const RoutingModel model_;
    mutable std::once_flag overlay_once_;
    mutable std::shared_ptr<const ClusterOverlay> overlay_;
    mutable std::once_flag guide_once_;
    mutable std::atomic<bool> guide_tried_{false};
    mutable std::optional<SearchGuide> guide_;
    mutable std::shared_mutex mutex_;
    std::unordered_map<std::int64_t, std::vector<Path>> paths_;
    mutable std::atomic<std::size_t> bytes_{0};
};

// Routes per (source, target), valid for one Network; clear() when the network changes.
class RouteCache {
public:
    // The reference stays valid until the next get() on this cache (paths read off a
    // source's shortest-path tree share one scratch slot); copy what must outlive it.
    const std::vector<Path>& get(const Network& network, std::int32_t source,
                                 std::int32_t target, RoutingPolicy policy, std::int32_t paths);
    void clear() { share(std::make_shared<RouteTable>()); }
    // Clears, and takes the paths from (and adds those it finds to) a table that other caches on a
    // network equal to the next one share (RouteStore::table_for). Trees stay this cache's own.
    void share(std::shared_ptr<RouteTable> table) {
        table_ = std::move(table);
        lookups_.clear();
        trees_.clear();
        scratch_.clear();
    }
    // Routes found on the same fabric with no link down (its links in the same order, so the same
    // edge indices, and the same capacities but for the links down, at zero): a pair whose cached
    // paths all survive the links down here takes them instead of a search. The same paths a search
    // gives: removing links cannot shorten any other path, and every path found before is still
    // there. With the undamaged network too, and a seed whose table takes a lock (a RouteStore's), a
    // pair the seed lacks is searched there first, for several disjoint paths (new pairs of a ring
    // re-formed round a lost rank recur across trials), and added to the seed's table, shared by
    // every cache it seeds; else the seed is only read.
    void seed(std::shared_ptr<const RouteCache> before_damage, std::shared_ptr<const Network> undamaged = nullptr) {
        seed_ = std::move(before_damage);
        seed_network_ = std::move(undamaged);
    }
    // The pairs (source, target) the shared table lacks, searched as get() searches them (`paths` > 1
    // disjoint paths) on this thread and the helpers idle now, and added to the table: get() then finds
    // them. Only on a table shared while growing (a RouteStore's) with no seed; else nothing is done.
    // With `stop` set (a user's Ctrl-C) no further pair is searched and Interrupted is thrown.
    void prefetch(const Network& network, std::span<const std::pair<std::int32_t, std::int32_t>> pairs,
                  RoutingPolicy policy, std::int32_t paths, IdleHelpers& helpers,
                  const std::atomic<bool>* stop = nullptr);

private:
    // Single paths: a source asking for more targets than this (an all-to-all asks p-1) gets its
    // whole shortest-path tree, built once (the same paths, one search instead of one per target).
    // A ring asks 2 (its neighbours) and keeps one search per target, which stops at the target:
    // on 10k satellites two full trees per rank cost 4x the whole run; 2 rather than more so that
    // an all-to-all through a p-port switch, where every search touches p nodes anyway, pays for
    // only one extra search per source (docs/benchmarks.md).
    static constexpr std::int32_t tree_after_lookups = 2;
    std::shared_ptr<RouteTable> table_ = std::make_shared<RouteTable>();
    // Per source node, sized on first use (flat: a hash map here allocated on every lookup).
    std::vector<std::int32_t> lookups_;
    std::vector<std::vector<std::int32_t>> trees_;  // via edge per node; empty: not built
    std::vector<Path> scratch_;                     // the last path read off a tree
    std::shared_ptr<const RouteCache> seed_;
    std::shared_ptr<const Network> seed_network_;  // the network the seed's routes were found on
};

// Shortest-latency distances from one node to all (inf where unreachable).
std::vector<double> latency_distances(const Network& network, std::int32_t source);
// Hop counts from one node to all (-1 where unreachable).
std::vector<std::int32_t> hop_distances(const Network& network, std::int32_t source);

}  // namespace skyfabric::workloads
