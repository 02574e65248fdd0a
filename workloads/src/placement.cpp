#include <skyfabric/workloads/placement.hpp>

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace skyfabric::workloads {

Placement ring_placement(const Network& network, std::int32_t ranks) {
    const std::int32_t n = network.node_count;
    if (ranks < 1 || ranks > n) throw std::invalid_argument("ring_placement: ranks must be in 1..node_count");
    Placement order;
    order.reserve(static_cast<std::size_t>(ranks));
    std::vector<char> used(static_cast<std::size_t>(n), 0);
    std::int32_t v = 0;
    order.push_back(v);
    used[v] = 1;
    while (static_cast<std::int32_t>(order.size()) < ranks) {
        // Cheapest unvisited direct neighbour (ties: lower node id).
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
        if (next < 0) {  // dead end: jump to the nearest unvisited node by routed latency
            const auto dist = latency_distances(network, v);
            for (std::int32_t w = 0; w < n; ++w) {
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

}  // namespace skyfabric::workloads
