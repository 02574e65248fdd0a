#pragma once
// Capacity at SLO (docs/inference.md "Capacity at SLO"): the largest arrival rate at which a serving
// run still meets its objective, by bisection on the rate. The run at a rate is the caller's (the CLI
// runs the scenario); this is the search alone. Pure: no I/O.

#include <cstdint>
#include <functional>
#include <vector>

namespace skyfabric::workloads {

struct CapacitySearch {
    double start_rate_per_s = 1.0;  // the first rate tried (> 0)
    double resolution = 0.02;       // stop once high / low ≤ 1 + this (relative)
    std::int32_t max_doublings = 40;  // bracketing: the most halvings or doublings from the start
};

struct CapacityResult {
    double capacity_per_s = 0.0;  // the largest rate found to meet (0: none did, down to start / 2^max_doublings)
    double failing_rate_per_s = 0.0;  // the smallest rate found to miss (inf: none did, up to start · 2^max_doublings)
    std::int32_t evaluations = 0;
};

// `meets(rate)`: whether a run at `rate` requests/s meets the objective. Assumed monotone (meets below
// the capacity, misses above): brackets the capacity by halving or doubling from start_rate_per_s, then
// bisects geometrically until failing / capacity ≤ 1 + resolution. Throws std::invalid_argument for a
// start rate or resolution ≤ 0.
CapacityResult find_capacity(const std::function<bool(double rate_per_s)>& meets, const CapacitySearch& search);

}  // namespace skyfabric::workloads
