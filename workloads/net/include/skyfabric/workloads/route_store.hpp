#pragma once
// Route tables shared between the engines that run on equal networks. A constellation runs each
// algorithm, each local-SGD round and each trial's undamaged step on an engine of its own, over the
// same timeline keyframes: each searched the same pairs on the same network again (the stressed
// 4×81 made 3× as many disjoint-path searches as there were distinct ones; docs/benchmarks.md).
// A network is known by its content (nodes, edge ends, capacities, latencies), so a table is only
// ever shared by engines that would have found the same paths. Thread-safe. Pure: no I/O.

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include <skyfabric/workloads/network.hpp>

namespace skyfabric::workloads {

class RouteStore {
public:
    // Tables kept past this estimate (RouteTable::bytes) are dropped, the least recently asked for
    // first; their holders keep them, and an engine asking again searches again.
    static constexpr std::size_t default_budget_bytes = std::size_t{1} << 30;
    explicit RouteStore(std::size_t budget_bytes = default_budget_bytes) : budget_bytes_(budget_bytes) {}
    // With the nodes' regions (a constellation's cluster per node): each table routes by `model`,
    // two-level across the clusters (two_level_routing.hpp) or flat with its multipath searches
    // guided towards their targets (SearchGuide, the same paths in fewer steps).
    explicit RouteStore(std::vector<std::int32_t> region_of, RoutingModel model = RoutingModel::flat,
                        std::size_t budget_bytes = default_budget_bytes)
        : regions_(std::make_shared<const std::vector<std::int32_t>>(std::move(region_of))), model_(model), budget_bytes_(budget_bytes) {}
    // A table of one engine's own (a trial's damaged network), routed by the store's model; flat: a
    // plain one (its searches take the guide of the undamaged network's table, RouteCache::seed).
    std::shared_ptr<RouteTable> private_table() const {
        return model_ == RoutingModel::two_level ? std::make_shared<RouteTable>(false, regions_, model_) : std::make_shared<RouteTable>();
    }

    // The table of routes found by policy, with `paths` disjoint paths per pair, on networks with
    // this one's content: an empty one the first time.
    // `shared`: the same network as an object held by its keyframe (a timeline hands one object to
    // every engine on that keyframe), if it is one: asked again with that object, while it lives, its
    // fingerprint is taken without comparing content (a constant object is unchanged).
    std::shared_ptr<RouteTable> table_for(const Network& network, RoutingPolicy policy, std::int32_t paths,
                                          const std::shared_ptr<const Network>& shared = nullptr);
    std::size_t tables() const;
    std::size_t bytes() const;  // the kept tables' estimate

    // Two independent 64-bit hashes of everything routing reads from a network (node count, edge
    // ends, capacities, latencies), bit for bit: equal fingerprints are taken as equal networks.
    struct Fingerprint {
        std::uint64_t a = 0, b = 0;
        bool operator==(const Fingerprint&) const = default;
    };
    static Fingerprint fingerprint(const Network& network, RoutingPolicy policy, std::int32_t paths);

private:
    struct Hash {
        std::size_t operator()(const Fingerprint& f) const { return static_cast<std::size_t>(f.a ^ (f.b * 0x9e3779b97f4a7c15ull)); }
    };
    struct Entry {
        std::shared_ptr<RouteTable> table;
        std::list<Fingerprint>::iterator recent;  // its place in recent_
    };
    void drop_past_budget();  // under mutex_
    // The networks fingerprinted last, whole, with their fingerprints: an engine asking with a network
    // equal to one of them (compared word for word, several times faster than hashing it again) takes
    // its fingerprint. A constellation's replica rounds and syncs each build the keyframe's network
    // anew and asked with it; hashing it was a seventh of a 64-cluster run.
    struct Known {
        Network network;  // node_count, edge ends, capacities and latencies (no adjacency)
        std::weak_ptr<const Network> object;  // the shared object it was asked with, if any
        RoutingPolicy policy = RoutingPolicy::shortest_latency;
        std::int32_t paths = 1;
        Fingerprint fingerprint;
    };
    static constexpr std::size_t known_keep = 4;
    // Under mutex_: the fingerprint of a kept network equal to this one (nullopt: none), and keeping one.
    std::optional<Fingerprint> known_fingerprint(const Network& network, RoutingPolicy policy, std::int32_t paths,
                                                 const std::shared_ptr<const Network>& shared);
    void remember(const Network& network, RoutingPolicy policy, std::int32_t paths, Fingerprint f,
                  const std::shared_ptr<const Network>& shared);
    std::list<Known> known_;  // most recent first
    mutable std::mutex mutex_;
    std::unordered_map<Fingerprint, Entry, Hash> entries_;
    std::list<Fingerprint> recent_;  // most recently asked for first
    std::shared_ptr<const std::vector<std::int32_t>> regions_;
    RoutingModel model_ = RoutingModel::flat;
    std::size_t budget_bytes_;
};

}  // namespace skyfabric::workloads
