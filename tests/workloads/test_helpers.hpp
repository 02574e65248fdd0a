#pragma once
// Small topologies for the workload tests.

#include <cstdint>
#include <vector>

#include <skyfabric/links/topology.hpp>

namespace skyfabric::workloads::testing {

inline links::Link make_link(std::int32_t a, std::int32_t b, double capacity_bps, double latency_s) {
    links::Link l;
    l.source = a < b ? a : b;
    l.target = a < b ? b : a;
    l.capacity_bps = capacity_bps;
    l.latency_s = latency_s;
    l.distance_m = latency_s * 299792458.0;
    return l;
}

// p nodes joined i — i+1 (mod p).
inline links::Topology ring(std::int32_t p, double capacity_bps, double latency_s, double time_s = 0.0) {
    links::Topology t;
    t.time_s = time_s;
    t.node_count = p;
    for (std::int32_t i = 0; i < p; ++i) {
        if (p == 2 && i == 1) break;
        t.links.push_back(make_link(i, (i + 1) % p, capacity_bps, latency_s));
    }
    return t;
}

// Every pair linked (the α–β model's fully connected network).
inline links::Topology complete(std::int32_t p, double capacity_bps, double latency_s) {
    links::Topology t;
    t.node_count = p;
    for (std::int32_t i = 0; i < p; ++i)
        for (std::int32_t j = i + 1; j < p; ++j) t.links.push_back(make_link(i, j, capacity_bps, latency_s));
    return t;
}

// rows × cols grid, node r·cols + c, 4-neighbour links.
inline links::Topology lattice(std::int32_t rows, std::int32_t cols, double capacity_bps, double latency_s) {
    links::Topology t;
    t.node_count = rows * cols;
    for (std::int32_t r = 0; r < rows; ++r)
        for (std::int32_t c = 0; c < cols; ++c) {
            const std::int32_t v = r * cols + c;
            if (c + 1 < cols) t.links.push_back(make_link(v, v + 1, capacity_bps, latency_s));
            if (r + 1 < rows) t.links.push_back(make_link(v, v + cols, capacity_bps, latency_s));
        }
    return t;
}

}  // namespace skyfabric::workloads::testing
