#include "serving_records.hpp"

#include <skyfabric/workloads/training.hpp>

#include <algorithm>
#include <cmath>

namespace skyfabric::workloads::detail {

void RequestTally::add(const RequestRecord& r) {
    const bool has_first = std::isfinite(r.first_token_s);
    if (has_first) ttft_s_.push_back(r.ttft_s());
    switch (r.status) {
        case RequestStatus::completed: {
            ++completed_;
            const double tp = r.tpot_s();
            if (std::isfinite(tp)) tpot_s_.push_back(tp);
            ++decided_;
            if (r.ttft_s() <= ttft_slo_s_ && !(tp > tpot_slo_s_)) ++met_;
            break;
        }
        case RequestStatus::unservable: ++unservable_; ++decided_; break;
        case RequestStatus::lost: ++lost_; ++decided_; break;
        case RequestStatus::unfinished: {
            ++unfinished_;
            const double waited = has_first ? r.ttft_s() : end_s_ - r.request.arrival_s;
            if (waited > ttft_slo_s_) ++decided_;  // a miss already
            break;
        }
    }
}

void RequestTally::fill(ServingSummary& s) {
    s.completed = completed_;
    s.unfinished = unfinished_;
    s.unservable = unservable_;
    s.lost = lost_;
    s.ttft_s = percentiles_of(ttft_s_);
    s.tpot_s = percentiles_of(tpot_s_);
    // Dropped requests (s.dropped, counted by the engine: they have no record) are misses.
    const std::int64_t decided = decided_ + s.dropped;
    s.slo_attainment = decided > 0 ? static_cast<double>(met_) / static_cast<double>(decided) : 0.0;
}

Percentiles percentiles_of(std::vector<double>& values) {
    std::sort(values.begin(), values.end());
    return Percentiles{nearest_rank_percentile(values, 0.5), nearest_rank_percentile(values, 0.9),
                       nearest_rank_percentile(values, 0.99)};
}

}  // namespace skyfabric::workloads::detail
