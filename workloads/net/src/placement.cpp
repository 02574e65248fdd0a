#include <skyfabric/workloads/placement.hpp>

#include <algorithm>
#include <limits>
#include <numeric>
#include <queue>
#include <stdexcept>

namespace skyfabric::workloads {

namespace {

// The unvisited node nearest to `source` by routed latency (ties: lower node id; none
// reachable: the lowest-id unvisited node) — what a full latency_distances() scan gives,
// from a Dijkstra that stops once no closer node can appear and resets only what it
// touched, so a dead end costs the neighbourhood it searches, not O(node_count).
class NearestUnvisited {
public:
    // A new tour: the cursor below starts again (the storage is kept).
    void start() { lowest_unvisited_ = 0; }
    // The nearest unvisited node; with `path`, the edges of the path the search found to it are
    // appended (none when nothing is reachable).
    std::int32_t operator()(const Network& n, std::int32_t source, const std::vector<char>& used,
                            std::vector<std::int32_t>* path = nullptr) {
        if (dist_.size() < static_cast<std::size_t>(n.node_count)) {
            dist_.resize(static_cast<std::size_t>(n.node_count), inf());
            via_.resize(static_cast<std::size_t>(n.node_count), -1);
        }
        // A min-heap of (distance, node): popped in that order, as a priority_queue would.
        const auto later = std::greater<Item>{};
        heap_.clear();
        set(source, 0.0);
        heap_.emplace_back(0.0, source);
        std::int32_t found = -1;
        double found_d = inf();
        while (!heap_.empty()) {
            std::pop_heap(heap_.begin(), heap_.end(), later);
            const auto [d, v] = heap_.back();
            heap_.pop_back();
            if (d > dist_[v]) continue;
            if (d > found_d) break;  // every node at found_d has been popped
            if (!used[v] && (found < 0 || d < found_d || v < found)) {
                found = v;
                found_d = d;
            }
            for (std::int32_t k = n.adjacency_offsets[v]; k < n.adjacency_offsets[v + 1]; ++k) {
                const std::int32_t e = n.adjacency_edges[k];
                const std::int32_t w = n.edge_to[e];
                const double nd = d + n.latency_s[e];
                if (nd < dist_[w]) {
                    set(w, nd);
                    via_[w] = e;
                    heap_.emplace_back(nd, w);
                    std::push_heap(heap_.begin(), heap_.end(), later);
                }
            }
        }
        if (path && found >= 0)
            for (std::int32_t v = found; v != source; v = n.edge_from[via_[v]]) path->push_back(via_[v]);
        for (auto v : touched_) dist_[v] = inf();
        touched_.clear();
        if (found < 0) {
            // Nodes only ever become used during a tour, so the lowest unvisited id only grows:
            // a cursor keeps a fabric of many isolated nodes linear (a scan from 0 was quadratic).
            while (lowest_unvisited_ < n.node_count && used[lowest_unvisited_]) ++lowest_unvisited_;
            if (lowest_unvisited_ < n.node_count) return lowest_unvisited_;
        }
        return found;
    }

private:
    static double inf() { return std::numeric_limits<double>::infinity(); }
    void set(std::int32_t v, double d) {
        if (dist_[v] == inf()) touched_.push_back(v);
        dist_[v] = d;
    }
    using Item = std::pair<double, std::int32_t>;
    std::vector<double> dist_;
    std::vector<std::int32_t> via_;  // the edge into each node on its best path so far
    std::vector<std::int32_t> touched_;
    std::vector<Item> heap_;
    std::int32_t lowest_unvisited_ = 0;
};

}  // namespace

namespace {

// The first of `before`'s hops from `hop` on whose decisive edges lost their capacity on `damaged`
// (before.order.size() when none did).
std::size_t first_broken_hop(const RingTour& before, const Network& damaged, std::size_t hop) {
    for (; hop < before.order.size(); ++hop)
        for (auto k = before.hop_ends[hop - 1]; k < before.hop_ends[hop]; ++k)
            if (!(damaged.capacity_Bps[static_cast<std::size_t>(before.decisive_edges[static_cast<std::size_t>(k)])] > 0.0))
                return hop;
    return before.order.size();
}

// A tour on a damaged fabric rejoins the undamaged one once both stand on the same node with the
// same nodes left to place: from that state the greedy choices are the same as before, up to the
// next hop the damage breaks. The undamaged tour may list more nodes (ranks lost since): it has
// placed those too by then, so it is compared `lost` hops further on. Tracks the two unplaced sets'
// symmetric difference hop by hop.
class Rejoin {
public:
    // `prefix` hops of `before` are taken; `listed` marks the nodes the damaged tour places.
    Rejoin(const RingTour& before, const Network& damaged, std::size_t prefix, const std::vector<char>& listed)
        : before_(before), damaged_(damaged), old_placed_(prefix) {
        left_.assign(static_cast<std::size_t>(damaged.node_count), 0);
        for (std::size_t i = prefix; i < before.order.size(); ++i) flip(before.order[i], theirs);
        for (std::size_t v = 0; v < listed.size(); ++v)
            if (listed[v]) {
                flip(static_cast<std::int32_t>(v), ours);
                ++listed_count_;
            }
        for (std::size_t i = 0; i < prefix; ++i) flip(before.order[i], ours);  // placed: no longer left
        lost_ = before.order.size() - listed_count_;
    }
    // After `order` gained a node: when the states match, extends it (and `used`) with the undamaged
    // tour's hops up to its next broken one. True when the tour is then complete.
    bool extend(Placement& order, std::vector<char>& used) {
        flip(order.back(), ours);
        while (old_placed_ < order.size() + lost_) flip(before_.order[old_placed_++], theirs);
        if (differing_ != 0 || order.back() != before_.order[old_placed_ - 1]) return false;
        const std::size_t broken = first_broken_hop(before_, damaged_, old_placed_);
        for (; old_placed_ < broken; ++old_placed_) {
            const std::int32_t v = before_.order[old_placed_];
            order.push_back(v);
            used[static_cast<std::size_t>(v)] = 1;
            flip(v, ours | theirs);
        }
        return broken == before_.order.size();
    }

private:
    static constexpr unsigned char ours = 1, theirs = 2;
    // Toggles v's membership of our / their unplaced set(s), keeping count of the nodes in one only.
    void flip(std::int32_t v, unsigned char sides) {
        unsigned char& l = left_[static_cast<std::size_t>(v)];
        const bool differed = l == ours || l == theirs;
        l ^= sides;
        differing_ += (l == ours || l == theirs) - static_cast<int>(differed);
    }
    const RingTour& before_;
    const Network& damaged_;
    std::vector<unsigned char> left_;  // per node: in our unplaced set (ours), in theirs (theirs)
    std::size_t old_placed_ = 0;       // hops of `before_` accounted
    std::size_t listed_count_ = 0;
    std::size_t lost_ = 0;             // nodes `before_` places that this tour does not
    std::int32_t differing_ = 0;
};

// The greedy tour continued from `order` (its nodes marked `used`, the first one the start) over
// the nodes not yet used, until `ranks` are placed; with `record`, each hop's decisive edges (see
// RingTour) are appended.
// With `rejoin`, the undamaged tour's hops are taken wherever the two tours meet in the same state.
Placement tour(const Network& network, std::vector<char> used, Placement order, std::int32_t ranks,
               RingTour* record = nullptr, Rejoin* rejoin = nullptr) {
    order.reserve(static_cast<std::size_t>(ranks));
    // Per thread, so that the damaged fabric's many tours (one per solve) reuse the storage.
    thread_local NearestUnvisited nearest_unvisited;
    nearest_unvisited.start();
    std::vector<std::int32_t>* decisive = record ? &record->decisive_edges : nullptr;
    std::int32_t v = order.back();
    while (static_cast<std::int32_t>(order.size()) < ranks) {
        // Cheapest unvisited direct neighbour (ties: lower node id).
        std::int32_t next = -1, taken = -1;
        double best = std::numeric_limits<double>::infinity();
        for (std::int32_t k = network.adjacency_offsets[v]; k < network.adjacency_offsets[v + 1]; ++k) {
            const std::int32_t e = network.adjacency_edges[k];
            const std::int32_t w = network.edge_to[e];
            if (used[w]) continue;
            const double c = network.latency_s[e];
            if (c < best || (c == best && w < next)) {
                best = c;
                next = w;
                taken = e;
            }
        }
        if (next >= 0) {
            if (decisive) decisive->push_back(taken);
        } else {
            // Dead end: jump to the nearest unvisited node by routed latency.
            next = nearest_unvisited(network, v, used, decisive);
        }
        if (record) record->hop_ends.push_back(static_cast<std::int32_t>(record->decisive_edges.size()));
        used[next] = 1;
        order.push_back(next);
        if (rejoin && rejoin->extend(order, used)) break;
        v = order.back();
    }
    return order;
}

}  // namespace

Placement ring_placement(const Network& network, std::int32_t ranks) {
    const std::int32_t n = network.node_count;
    if (ranks < 1 || ranks > n) throw std::invalid_argument("ring_placement: ranks must be in 1..node_count");
    std::vector<char> used(static_cast<std::size_t>(n), 0);
    used[0] = 1;
    return tour(network, std::move(used), Placement{0}, ranks);
}

namespace {

// Every node but the listed ones marked used (each listed node checked), and how many are listed.
std::int32_t mark_unlisted(const Network& network, std::span<const std::int32_t> nodes, std::vector<char>& used) {
    if (nodes.empty()) throw std::invalid_argument("ring_placement: no nodes to place ranks on");
    used.assign(static_cast<std::size_t>(network.node_count), 1);
    for (const std::int32_t v : nodes) {
        if (v < 0 || v >= network.node_count) throw std::invalid_argument("ring_placement: node out of range");
        used[static_cast<std::size_t>(v)] = 0;
    }
    return static_cast<std::int32_t>(std::count(used.begin(), used.end(), 0));
}

Placement tour_over(const Network& network, std::span<const std::int32_t> nodes, RingTour* record) {
    std::vector<char> used;
    const std::int32_t ranks = mark_unlisted(network, nodes, used);
    const std::int32_t start = *std::min_element(nodes.begin(), nodes.end());
    used[static_cast<std::size_t>(start)] = 1;
    if (record) record->hop_ends.assign(1, 0);
    return tour(network, std::move(used), Placement{start}, ranks, record);
}

}  // namespace

Placement ring_placement(const Network& network, std::span<const std::int32_t> nodes) {
    return tour_over(network, nodes, nullptr);
}

RingTour ring_tour(const Network& network, std::span<const std::int32_t> nodes) {
    RingTour t;
    t.order = tour_over(network, nodes, &t);
    return t;
}

Placement ring_placement_after_damage(const RingTour& before, const Network& damaged, std::span<const std::int32_t> nodes) {
    std::vector<char> used;
    const std::int32_t ranks = mark_unlisted(damaged, nodes, used);
    // Nodes listed now, each among the tour's (some of its own may be gone), from the same start.
    std::vector<char> listed(used.size());
    for (std::size_t v = 0; v < used.size(); ++v) listed[v] = !used[v];
    bool among = before.hop_ends.size() == before.order.size() && static_cast<std::size_t>(ranks) <= before.order.size() &&
                 !before.order.empty() && before.order[0] == *std::min_element(nodes.begin(), nodes.end());
    std::size_t found = 0;
    for (std::size_t i = 0; among && i < before.order.size(); ++i) {
        const std::int32_t v = before.order[i];
        among = v >= 0 && v < damaged.node_count;
        if (among && listed[static_cast<std::size_t>(v)]) ++found;
    }
    if (!among || found != static_cast<std::size_t>(ranks)) return ring_placement(damaged, nodes);
    // The tour's hops up to the first whose decisive edges lost their capacity, or that places a node
    // no longer listed, are taken as they were (each from the same state, over the same candidates
    // less some that were not chosen); from there it tours on, and rejoins the tour where the two
    // meet in the same state.
    std::size_t hop = 1;
    const std::size_t broken = first_broken_hop(before, damaged, 1);
    while (hop < broken && listed[static_cast<std::size_t>(before.order[hop])]) ++hop;
    if (hop == before.order.size()) return before.order;
    Placement prefix(before.order.begin(), before.order.begin() + static_cast<std::ptrdiff_t>(hop));
    for (const std::int32_t v : prefix) used[static_cast<std::size_t>(v)] = 1;
    Rejoin rejoin(before, damaged, hop, listed);
    return tour(damaged, std::move(used), std::move(prefix), ranks, nullptr, &rejoin);
}

Placement random_placement(std::int32_t node_count, std::int32_t ranks, std::uint64_t seed) {
    if (ranks < 1 || ranks > node_count) throw std::invalid_argument("random_placement: ranks must be in 1..node_count");
    Placement nodes(static_cast<std::size_t>(node_count));
    std::iota(nodes.begin(), nodes.end(), 0);
    // Fisher–Yates with splitmix64 on a counter: the same seed gives the same placement everywhere.
    auto draw = [seed](std::uint64_t counter) {
        std::uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (counter + 1);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    };
    for (std::int32_t i = node_count - 1; i > 0; --i) {
        const auto j = static_cast<std::int32_t>(draw(static_cast<std::uint64_t>(i)) % static_cast<std::uint64_t>(i + 1));
        std::swap(nodes[i], nodes[j]);
    }
    nodes.resize(static_cast<std::size_t>(ranks));
    return nodes;
}

Placement identity_placement(std::int32_t ranks) {
    Placement p(static_cast<std::size_t>(ranks));
    std::iota(p.begin(), p.end(), 0);
    return p;
}

std::int32_t ring_hops(const Network& network, const Placement& placement) {
    std::int32_t total = 0;
    const auto p = placement.size();
    if (p < 2) return 0;
    for (std::size_t i = 0; i < p; ++i) {
        const auto hops = hop_distances(network, placement[i]);
        const auto h = hops[placement[(i + 1) % p]];
        if (h < 0) return -1;
        total += h;
    }
    return total;
}

bool ring_is_embedded(const Network& network, const Placement& placement) {
    const auto p = placement.size();
    if (p < 2) return true;
    for (std::size_t i = 0; i < p; ++i) {
        const std::int32_t a = placement[i];
        const std::int32_t b = placement[(i + 1) % p];
        bool linked = false;
        for (std::int32_t k = network.adjacency_offsets[a]; k < network.adjacency_offsets[a + 1]; ++k)
            if (network.edge_to[network.adjacency_edges[k]] == b) { linked = true; break; }
        if (!linked) return false;
    }
    return true;
}

double single_link_bandwidth_Bps(const Network& net, const Placement& placement, std::int32_t ranks) {
    double bound = std::numeric_limits<double>::infinity();
    for (std::int32_t r = 0; r < ranks; ++r) {
        const std::int32_t v = placement[r];
        double fastest = 0.0;
        for (std::int32_t q = net.adjacency_offsets[v]; q < net.adjacency_offsets[v + 1]; ++q)
            fastest = std::max(fastest, net.capacity_Bps[net.adjacency_edges[q]]);
        bound = std::min(bound, fastest);
    }
    return bound;
}

}  // namespace skyfabric::workloads
