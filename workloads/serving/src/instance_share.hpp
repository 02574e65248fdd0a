#pragma once
// A serving instance's compute share over time (serving.hpp ComputeThrottle): its slowest
// satellite's share in each throttle sample, when work started at some instant ends at those
// shares, and the time it spent below full speed. Internal to the serving engine.

#include <skyfabric/workloads/serving.hpp>

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace skyfabric::workloads::detail {

// [instance][sample]: the lowest share of the instance's satellites (instance_of: node -> instance);
// empty when the throttle has no samples (full speed). Throws std::invalid_argument for a throttle
// whose shares are not sample_count × satellite_count, or whose step_s is not positive.
std::vector<std::vector<double>> instance_shares(const ComputeThrottle& throttle, std::span<const std::int32_t> nodes,
                                                 const std::unordered_map<std::int32_t, std::int32_t>& instance_of,
                                                 std::int32_t instances);

// When `work_s` of full-speed compute started at start_s ends at the series' shares: the work
// stretches by 1/share; +inf when the share is held at 0.
double throttled_work_end_s(std::span<const double> series, const ComputeThrottle& throttle, double start_s, double work_s);

// Instance-seconds below full speed within [start_s, end_s): each sample's span (the last one held).
double throttled_time_s(const std::vector<std::vector<double>>& shares, const ComputeThrottle& throttle, double start_s,
                        double end_s);

}  // namespace skyfabric::workloads::detail
