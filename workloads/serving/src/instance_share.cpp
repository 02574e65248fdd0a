#include "instance_share.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace skyfabric::workloads::detail {

namespace {
constexpr double inf = std::numeric_limits<double>::infinity();
}  // namespace

std::vector<std::vector<double>> instance_shares(const ComputeThrottle& th, std::span<const std::int32_t> nodes,
                                                 const std::unordered_map<std::int32_t, std::int32_t>& instance_of,
                                                 std::int32_t instances) {
    if (th.sample_count <= 0) return {};
    if (!(th.step_s > 0.0) || th.share.size() != static_cast<std::size_t>(th.sample_count) * static_cast<std::size_t>(th.satellite_count))
        throw std::invalid_argument("serving: the compute throttle needs step_s > 0 and sample_count x satellite_count shares");
    std::vector<std::vector<double>> shares(static_cast<std::size_t>(instances),
                                            std::vector<double>(static_cast<std::size_t>(th.sample_count), 1.0));
    for (const std::int32_t node : nodes) {
        if (node >= th.satellite_count) continue;  // not throttled
        auto& series = shares[static_cast<std::size_t>(instance_of.at(node))];
        for (std::int64_t j = 0; j < th.sample_count; ++j)
            series[static_cast<std::size_t>(j)] =
                std::min(series[static_cast<std::size_t>(j)], th.share[static_cast<std::size_t>(j * th.satellite_count + node)]);
    }
    return shares;
}

double throttled_work_end_s(std::span<const double> series, const ComputeThrottle& th, double start_s, double work_s) {
    const auto n = static_cast<std::int64_t>(series.size());
    auto k = static_cast<std::int64_t>(std::floor((start_s - th.start_s) / th.step_s));
    k = std::clamp<std::int64_t>(k, 0, n - 1);
    double t = start_s, left = work_s;
    while (true) {
        const double end = k + 1 < n ? th.start_s + static_cast<double>(k + 1) * th.step_s : inf;
        const double rate = series[static_cast<std::size_t>(k)];
        if (rate > 0.0 && t + left / rate <= end) return t + left / rate;
        if (!std::isfinite(end)) return inf;  // held at 0: never
        if (end > t) {
            left -= rate * (end - t);
            t = end;
        }
        ++k;
    }
}

double throttled_time_s(const std::vector<std::vector<double>>& shares, const ComputeThrottle& th, double start_s, double end_s) {
    double total = 0.0;
    for (const auto& series : shares)
        for (std::size_t j = 0; j < series.size(); ++j) {
            if (!(series[j] < 1.0)) continue;
            const double from = j == 0 ? -inf : th.start_s + static_cast<double>(j) * th.step_s;
            const double to = j + 1 < series.size() ? th.start_s + static_cast<double>(j + 1) * th.step_s : inf;
            total += std::max(0.0, std::min(to, end_s) - std::max(from, start_s));
        }
    return total;
}

}  // namespace skyfabric::workloads::detail
