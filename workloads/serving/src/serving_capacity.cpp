#include <skyfabric/workloads/serving_capacity.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace skyfabric::workloads {

CapacityResult find_capacity(const std::function<bool(double rate_per_s)>& meets, const CapacitySearch& search) {
    if (!(search.start_rate_per_s > 0.0) || !std::isfinite(search.start_rate_per_s))
        throw std::invalid_argument("capacity search: the start rate must be a positive number");
    if (!(search.resolution > 0.0)) throw std::invalid_argument("capacity search: the resolution must be > 0");
    CapacityResult r;
    r.failing_rate_per_s = std::numeric_limits<double>::infinity();
    const auto try_rate = [&](double rate) {
        ++r.evaluations;
        return meets(rate);
    };
    // Bracket: low meets, high misses.
    double rate = search.start_rate_per_s;
    if (try_rate(rate)) {
        r.capacity_per_s = rate;
        for (std::int32_t k = 0; k < search.max_doublings; ++k) {
            rate *= 2.0;
            if (!try_rate(rate)) {
                r.failing_rate_per_s = rate;
                break;
            }
            r.capacity_per_s = rate;
        }
        if (std::isinf(r.failing_rate_per_s)) return r;
    } else {
        r.failing_rate_per_s = rate;
        for (std::int32_t k = 0; k < search.max_doublings; ++k) {
            rate *= 0.5;
            if (try_rate(rate)) {
                r.capacity_per_s = rate;
                break;
            }
            r.failing_rate_per_s = rate;
        }
        if (r.capacity_per_s == 0.0) return r;
    }
    // Geometric bisection: the resolution is relative.
    while (r.failing_rate_per_s > r.capacity_per_s * (1.0 + search.resolution)) {
        const double mid = std::sqrt(r.capacity_per_s * r.failing_rate_per_s);
        (try_rate(mid) ? r.capacity_per_s : r.failing_rate_per_s) = mid;
    }
    return r;
}

}  // namespace skyfabric::workloads
