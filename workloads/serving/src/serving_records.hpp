#pragma once
// The serving run's per-request state (serving.cpp): a window of the requests not yet handed over,
// indexed by id, and the tally of those handed over, from which the summary's counts and
// percentiles come. Memory then grows with the requests in flight, not with the run.

#include <skyfabric/workloads/serving.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace skyfabric::workloads::detail {

// Items by request id, from the first one not yet handed over (ids arrive in order, without gaps).
template <class T>
class IdWindow {
public:
    T& operator[](std::size_t id) { return items_[id - first_id_]; }
    const T& operator[](std::size_t id) const { return items_[id - first_id_]; }
    void push_back(const T& item) { items_.push_back(item); }
    bool holds(std::size_t id) const { return id >= first_id_; }  // not handed over yet
    std::size_t size() const { return items_.size(); }
    const T& at(std::size_t k) const { return items_[k]; }  // the k-th in the window
    std::span<const T> front(std::size_t count) const { return {items_.data(), count}; }
    // The first `count` leave the window. The rest move down: few (in flight), so the move is cheap.
    void pop_front(std::size_t count) {
        items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(count));
        first_id_ += count;
    }
    std::vector<T> release() && { return std::move(items_); }

private:
    std::vector<T> items_;
    std::size_t first_id_ = 0;
};

// What the summary needs of each request, added as requests are handed over (in any order: the
// percentiles sort). The exact percentiles keep a double per request with a first token (TTFT) and
// one per completed request (TPOT): 16 B a request, against the ~110 B of its record.
class RequestTally {
public:
    RequestTally(double ttft_slo_s, double tpot_slo_s, double start_s, double end_s)
        : ttft_slo_s_(ttft_slo_s), tpot_slo_s_(tpot_slo_s), start_s_(start_s), end_s_(end_s),
          met_in_(serving_interval_sections, 0), decided_in_(serving_interval_sections, 0) {}
    void add(const RequestRecord& r);
    // A request dropped on arrival (no record): a miss of its span.
    void drop(double arrival_s) { ++decided_in_[section_of(arrival_s)]; }
    // Counts by status, TTFT and TPOT percentiles and SLO attainment (s.dropped, already set, as misses),
    // and their intervals (ServingSummary), into `s`.
    void fill(ServingSummary& s);

private:
    std::size_t section_of(double arrival_s) const;
    double ttft_slo_s_, tpot_slo_s_, start_s_, end_s_;
    std::vector<double> ttft_s_, tpot_s_;
    std::vector<std::uint8_t> ttft_section_, tpot_section_;  // each value's span of arrival time
    std::int64_t completed_ = 0, unfinished_ = 0, unservable_ = 0, lost_ = 0;
    std::int64_t met_ = 0, decided_ = 0;
    std::vector<std::int64_t> met_in_, decided_in_;  // per span (decided_in_ with the drops)
};

// The span of arrival time (0 … serving_interval_sections − 1) of a request arriving at arrival_s in [start_s, end_s).
std::size_t arrival_section(double arrival_s, double start_s, double end_s);

// Each span's percentiles of the values (by their spans), as three lists (p50, p90, p99) over the spans
// that have any.
std::array<std::vector<double>, 3> section_percentiles(const std::vector<double>& values, const std::vector<std::uint8_t>& section);
// The sectioning intervals of `whole`'s percentiles from section_percentiles.
PercentileIntervals percentile_intervals(const Percentiles& whole, const std::array<std::vector<double>, 3>& sections);

// The sectioning interval of `whole` (the whole run's estimate) from the spans' own estimates, kept within
// the values the figure can take, [lowest, highest]: a fraction near 0 or 1 (an SLO attainment) would
// otherwise reach below 0 or above 1, a time below 0.
Interval95 sectioning_interval(double whole, const std::vector<double>& sections, double lowest, double highest);
// An SLO attainment's: within [0, 1].
inline Interval95 attainment_interval(double whole, const std::vector<double>& sections) {
    return sectioning_interval(whole, sections, 0.0, 1.0);
}

// Nearest-rank p50, p90, p99 of the values (reordered: selected, not sorted).
Percentiles percentiles_of(std::vector<double>& values);

}  // namespace skyfabric::workloads::detail
