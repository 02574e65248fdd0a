#include "serving_records.hpp"

#include <skyfabric/workloads/training.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>

namespace skyfabric::workloads::detail {

std::size_t arrival_section(double arrival_s, double start_s, double end_s) {
    const double span = end_s - start_s;
    const double k = span > 0.0 ? std::floor((arrival_s - start_s) / span * serving_interval_sections) : 0.0;
    return static_cast<std::size_t>(std::clamp(k, 0.0, static_cast<double>(serving_interval_sections - 1)));
}

std::size_t RequestTally::section_of(double arrival_s) const { return arrival_section(arrival_s, start_s_, end_s_); }

void RequestTally::add(const RequestRecord& r) {
    const bool has_first = std::isfinite(r.first_token_s);
    const std::size_t section = section_of(r.request.arrival_s);
    if (has_first) {
        ttft_s_.push_back(r.ttft_s());
        ttft_section_.push_back(static_cast<std::uint8_t>(section));
    }
    bool decided = false, met = false;
    switch (r.status) {
        case RequestStatus::completed: {
            ++completed_;
            const double tp = r.tpot_s();
            if (std::isfinite(tp)) {
                tpot_s_.push_back(tp);
                tpot_section_.push_back(static_cast<std::uint8_t>(section));
            }
            decided = true;
            met = r.ttft_s() <= ttft_slo_s_ && !(tp > tpot_slo_s_);
            break;
        }
        case RequestStatus::unservable: ++unservable_; decided = true; break;
        case RequestStatus::lost: ++lost_; decided = true; break;
        case RequestStatus::unfinished: {
            ++unfinished_;
            const double waited = has_first ? r.ttft_s() : end_s_ - r.request.arrival_s;
            decided = waited > ttft_slo_s_;  // a miss already
            break;
        }
    }
    decided_ += decided;
    met_ += met;
    decided_in_[section] += decided;
    met_in_[section] += met;
}

std::array<std::vector<double>, 3> section_percentiles(const std::vector<double>& values, const std::vector<std::uint8_t>& section) {
    std::vector<std::vector<double>> by(serving_interval_sections);
    for (std::size_t i = 0; i < values.size(); ++i) by[section[i]].push_back(values[i]);
    std::array<std::vector<double>, 3> out;
    for (auto& v : by) {
        if (v.empty()) continue;
        const Percentiles p = percentiles_of(v);
        out[0].push_back(p.p50);
        out[1].push_back(p.p90);
        out[2].push_back(p.p99);
    }
    return out;
}

PercentileIntervals percentile_intervals(const Percentiles& whole, const std::array<std::vector<double>, 3>& sections) {
    // Times (TTFT, TPOT): at least 0.
    constexpr double no_limit = std::numeric_limits<double>::infinity();
    return {sectioning_interval(whole.p50, sections[0], 0.0, no_limit),
            sectioning_interval(whole.p90, sections[1], 0.0, no_limit),
            sectioning_interval(whole.p99, sections[2], 0.0, no_limit)};
}

void RequestTally::fill(ServingSummary& s) {
    s.completed = completed_;
    s.unfinished = unfinished_;
    s.unservable = unservable_;
    s.lost = lost_;
    // The spans' percentiles first: percentiles_of sorts the whole list, and the spans go with its order.
    const auto ttft_sections = section_percentiles(ttft_s_, ttft_section_);
    const auto tpot_sections = section_percentiles(tpot_s_, tpot_section_);
    s.ttft_s = percentiles_of(ttft_s_);
    s.tpot_s = percentiles_of(tpot_s_);
    s.ttft_ci95 = percentile_intervals(s.ttft_s, ttft_sections);
    s.tpot_ci95 = percentile_intervals(s.tpot_s, tpot_sections);
    s.interval_sections = static_cast<std::int32_t>(ttft_sections[0].size());
    // Dropped requests (s.dropped, counted by the engine: they have no record) are misses.
    const std::int64_t decided = decided_ + s.dropped;
    s.slo_attainment = decided > 0 ? static_cast<double>(met_) / static_cast<double>(decided) : 0.0;
    std::vector<double> attainment;
    for (std::size_t k = 0; k < met_in_.size(); ++k)
        if (decided_in_[k] > 0) attainment.push_back(static_cast<double>(met_in_[k]) / static_cast<double>(decided_in_[k]));
    s.slo_attainment_ci95 = attainment_interval(s.slo_attainment, attainment);
}

Interval95 sectioning_interval(double whole, const std::vector<double>& sections, double lowest, double highest) {
    // Student's t, 0.975 quantile, by degrees of freedom 1 … 19 (n − 1 for n ≤ serving_interval_sections).
    static constexpr double t975[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                      2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093};
    static_assert(std::size(t975) >= serving_interval_sections - 1);
    const std::size_t n = sections.size();
    if (n < 2 || n > std::size(t975) + 1) return {};
    double mean = 0.0;
    for (const double x : sections) mean += x;
    mean /= static_cast<double>(n);
    double ss = 0.0;
    for (const double x : sections) ss += (x - mean) * (x - mean);
    const double half = t975[n - 2] * std::sqrt(ss / static_cast<double>(n - 1)) / std::sqrt(static_cast<double>(n));
    return {std::clamp(whole - half, lowest, highest), std::clamp(whole + half, lowest, highest)};
}

Percentiles percentiles_of(std::vector<double>& values) {
    // By selection, not a sort: the p99's rank first, then the p90's below it, the p50's below that
    // (O(n) each: a run's million TTFTs, and each span's again for the intervals). The same values.
    if (values.empty()) return {};
    const std::size_t n = values.size();
    const auto at = [&](double q) { return values.begin() + static_cast<std::ptrdiff_t>(nearest_rank_index(n, q)); };
    const auto p99 = at(0.99), p90 = at(0.9), p50 = at(0.5);
    std::nth_element(values.begin(), p99, values.end());
    std::nth_element(values.begin(), p90, p99 + 1);
    std::nth_element(values.begin(), p50, p90 + 1);
    return Percentiles{*p50, *p90, *p99};
}

}  // namespace skyfabric::workloads::detail
