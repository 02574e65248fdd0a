// Fault events: Lewis–Shedler thinning of each satellite's dose-driven stream (and the
// link-outage stream), one trial or a batch, on the CPU or the GPU.
#include <skyfabric/workloads/faults.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <future>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include "faults_cuda.hpp"
#include "fault_streams.hpp"

namespace skyfabric::workloads {

using detail::check_series;
using detail::kind_index;
using detail::per_rad;

namespace {

// Satellite-major copy of the [sample][satellite] series: each stream then reads contiguously.
std::vector<double> satellite_major(const DoseRateSeries& s) {
    std::vector<double> out(s.dose_rate_rad_s.size());
    const auto n = static_cast<std::size_t>(s.sample_count);
    const auto m = static_cast<std::size_t>(s.satellite_count);
    for (std::size_t j = 0; j < n; ++j)
        for (std::size_t k = 0; k < m; ++k) out[k * n + j] = s.dose_rate_rad_s[j * m + k];
    return out;
}

core::FaultMarks fault_marks(const FaultModel& model) {
    physics::throw_problems("fault model", check(model));
    const std::array<double, fault_kind_count> k = per_rad(model);
    core::FaultMarks marks;
    for (int kind = 0; kind < 4; ++kind)
        marks.cumulative_per_rad[kind] = (marks.total_per_rad += k[static_cast<std::size_t>(kind)]);
    marks.sdc_detection_probability = model.sdc_detection_probability;
    marks.link_outage_rate_per_s = detail::link_outage_rate_per_s(model);
    return marks;
}

void sort_events(std::vector<FaultEvent>& events) {
    std::sort(events.begin(), events.end(), [](const FaultEvent& a, const FaultEvent& b) {
        return std::tie(a.time_s, a.satellite, a.kind) < std::tie(b.time_s, b.satellite, b.kind);
    });
}

// The gateway terminals' outages of one trial: a constant-rate stream per gateway satellite,
// fault_stream_id(trial, satellite, 5), drawn on the host for either backend (a few streams).
void append_gateway_outages(const detail::FaultStreams& f, std::uint64_t trial, std::vector<FaultEvent>& events) {
    if (!(f.gateway_outage_rate_per_s > 0.0) || !(f.end_s > f.start_s)) return;
    constexpr std::uint32_t gateway_stream = 5;
    for (const std::int32_t sat : f.gateway_satellites) {
        std::uint64_t c = 0;
        const double none = 0.0;
        core::thin_window(core::ThinningWindow{f.start_s, f.end_s, f.gateway_outage_rate_per_s, 0, 0}, &none, 1, 1.0,
                          f.start_s, f.step_s, f.key, core::fault_stream_id(trial, static_cast<std::uint32_t>(sat), gateway_stream),
                          c, [&](double t, double mark) {
                              events.push_back(FaultEvent{t, sat, FaultKind::link_outage, false, mark, /*gateway=*/true});
                          });
    }
}

// One operational event of cause c at t on sat: its kind is the one its effect plays as; u, a fresh
// uniform (the mark rescaled within the cause's share), picks a link for link_down and decides
// whether the automatic retry chain succeeds.
FaultEvent operational_event(const OperationalFaults& o, double t, std::int32_t sat, int c, double u) {
    const OperationalCause& cause = o.causes[static_cast<std::size_t>(c)];
    FaultEvent e{t, sat, FaultKind::chip_crash};
    e.cause = static_cast<std::int16_t>(c);
    e.mark = u;
    double hold = 0.0;
    switch (cause.effect) {
        case OperationalEffect::restart: e.kind = FaultKind::hbm_uecc; break;
        case OperationalEffect::reboot: break;
        case OperationalEffect::manual: hold = cause.manual_s; break;
        case OperationalEffect::link_down: e.kind = FaultKind::link_outage; break;
    }
    if (cause.effect != OperationalEffect::link_down && !(u < o.retry_success_probability))
        hold += o.retry_attempts * o.retry_interval_s + o.manual_recovery_s;
    e.hold_s = static_cast<float>(hold);
    return e;
}

// Every satellite's operational stream of one trial: constant rate, fault_stream_id(trial, sat, 6),
// each event marked with its cause by the causes' shares (Poisson marking, as the dose-driven kinds).
void append_operational(const detail::FaultStreams& f, std::uint64_t trial, std::vector<FaultEvent>& events) {
    if (f.operational_rate_per_s.empty() || !(f.end_s > f.start_s)) return;
    const double none = 0.0;
    const auto& cum = f.operational_cumulative;
    for (std::int32_t sat = 0; sat < f.satellite_count; ++sat) {
        const double rate = f.operational_rate_per_s[static_cast<std::size_t>(sat)];
        if (!(rate > 0.0)) continue;
        std::uint64_t c = 0;
        core::thin_window(core::ThinningWindow{f.start_s, f.end_s, rate, 0, 0}, &none, 1, 1.0, f.start_s, f.step_s, f.key,
                          core::fault_stream_id(trial, static_cast<std::uint32_t>(sat), detail::operational_stream), c,
                          [&](double t, double mark) {
                              std::size_t k = 0;
                              while (k + 1 < cum.size() && mark >= cum[k]) ++k;
                              const double below = k > 0 ? cum[k - 1] : 0.0;
                              const double u = std::clamp((mark - below) / (cum[k] - below), 0.0, std::nextafter(1.0, 0.0));
                              events.push_back(operational_event(f.operational, t, sat, static_cast<int>(k), u));
                          });
    }
}

std::vector<FaultEvent> sample_trial(const detail::FaultStreams& f, std::uint64_t trial) {
    std::vector<FaultEvent> events;
    const auto n = static_cast<std::size_t>(f.sample_count);
    for (std::int32_t sat = 0; sat < f.satellite_count; ++sat) {
        const auto first = f.window_offsets[static_cast<std::size_t>(sat)];
        core::sample_satellite_faults(f.dose_rate_by_satellite.data() + static_cast<std::size_t>(sat) * n,
                                      f.windows.data() + first, f.window_offsets[static_cast<std::size_t>(sat) + 1] - first,
                                      f.start_s, f.step_s, f.end_s, f.marks, f.key, trial, sat,
                                      [&](const FaultEvent& e) { events.push_back(e); });
    }
    append_gateway_outages(f, trial, events);
    append_operational(f, trial, events);
    sort_events(events);
    return events;
}

}  // namespace

namespace detail {

std::vector<std::vector<FaultEvent>> sample_batch(const detail::FaultStreams& f, std::uint64_t first_trial,
                                                  std::int32_t trials, Backend backend) {
    std::vector<std::vector<FaultEvent>> out;
    if (trials <= 0) return out;
    if (resolve_backend(backend) == Backend::cuda) {
        out = detail::cuda_sample_fault_events_batch(f, first_trial, trials);
        for (std::size_t i = 0; i < out.size(); ++i) {
            append_gateway_outages(f, first_trial + i, out[i]);
            append_operational(f, first_trial + i, out[i]);
            sort_events(out[i]);
        }
        return out;
    }
    out.reserve(static_cast<std::size_t>(trials));
    for (std::int32_t i = 0; i < trials; ++i) out.push_back(sample_trial(f, first_trial + static_cast<std::uint64_t>(i)));
    return out;
}


FaultStreams prepare_fault_streams(const DoseRateSeries& series, const FaultModel& model, double duration_s,
                                   std::uint64_t seed) {
    check_series(series);
    FaultStreams f;
    f.satellite_count = series.satellite_count;
    f.sample_count = series.sample_count;
    f.start_s = series.start_s;
    f.step_s = series.step_s;
    f.end_s = duration_s;
    f.dose_rate_by_satellite = satellite_major(series);
    f.marks = fault_marks(model);
    for (const std::int32_t g : model.gateway_satellites)
        if (g < 0 || g >= series.satellite_count) throw std::invalid_argument("gateway satellite out of range");
    f.gateway_satellites = model.gateway_satellites;
    f.gateway_outage_rate_per_s = detail::gateway_outage_rate_per_s(model);
    f.key = physics::rng::derive_seed(seed, core::faults_seed_tag);
    if (model.operational.enabled()) {
        const OperationalFaults& o = model.operational;
        physics::throw_problems("operational faults", check(o));
        f.operational = o;
        const double per_rank = operational_rate_per_rank_s(o);  // radiation's rate_scale is not theirs
        double total = 0.0;
        for (const OperationalCause& c : o.causes) f.operational_cumulative.push_back(total += c.rate_per_gpu_s);
        for (double& x : f.operational_cumulative) x = total > 0.0 ? x / total : 1.0;
        const double ranks = series.satellite_count;
        for (std::int32_t sat = 0; sat < series.satellite_count; ++sat)
            f.operational_rate_per_s.push_back(per_rank * ranks * operational_rank_weight(o, sat, series.satellite_count));
    }
    const auto n = static_cast<std::size_t>(f.sample_count);
    f.window_offsets.push_back(0);
    for (std::int32_t sat = 0; sat < f.satellite_count; ++sat) {
        core::thinning_windows(f.dose_rate_by_satellite.data() + static_cast<std::size_t>(sat) * n, f.sample_count, 1,
                               f.marks.total_per_rad, f.start_s, f.step_s, f.end_s,
                               [&](const core::ThinningWindow& w) { f.windows.push_back(w); });
        f.window_offsets.push_back(static_cast<std::int64_t>(f.windows.size()));
    }
    return f;
}

}  // namespace detail

void for_each_drawn_trial(const DoseRateSeries& series, const FaultModel& model, double duration_s, std::uint64_t seed,
                          std::int32_t trials, Backend backend, std::int32_t threads,
                          const std::function<void(std::int32_t, std::span<const FaultEvent>)>& play,
                          const std::atomic<bool>* stop, const TrialShare* share) {
    if (trials <= 0) return;
    const TrialShare whole;
    const TrialShare& mine = share ? *share : whole;
    const detail::FaultStreams streams = detail::prepare_fault_streams(series, model, duration_s, seed);
    if (resolve_backend(backend) != Backend::cuda) {
        for_each_trial(threads, mine.own_count(trials), [&](std::int32_t j) {
            const std::int32_t k = mine.own_trial(j);
            const std::vector<FaultEvent> events = sample_trial(streams, static_cast<std::uint64_t>(k));
            play(k, events);
        }, stop);
        return;
    }
    using Batch = std::vector<std::vector<FaultEvent>>;
    const auto draw = [&](std::int32_t first) {
        const std::int32_t count = std::min(monte_carlo_batch_trials, trials - first);
        return std::async(std::launch::async, [&streams, first, count] {
            return detail::sample_batch(streams, static_cast<std::uint64_t>(first), count, Backend::cuda);
        });
    };
    std::future<Batch> next = draw(0);
    for (std::int32_t first = 0; first < trials; first += monte_carlo_batch_trials) {
        const Batch drawn = next.get();
        if (first + monte_carlo_batch_trials < trials) next = draw(first + monte_carlo_batch_trials);
        for_each_trial(threads, static_cast<std::int32_t>(drawn.size()), [&](std::int32_t b) {
            if (mine.plays(first + b)) play(first + b, drawn[static_cast<std::size_t>(b)]);  // the device draws every trial
        }, stop);
    }
}

std::vector<FaultEvent> sample_fault_events(const DoseRateSeries& series, const FaultModel& model, double duration_s,
                                            std::uint64_t seed, std::uint64_t trial) {
    return sample_trial(detail::prepare_fault_streams(series, model, duration_s, seed), trial);
}

std::vector<std::vector<FaultEvent>> sample_fault_events_batch(const DoseRateSeries& series, const FaultModel& model,
                                                               double duration_s, std::uint64_t seed,
                                                               std::uint64_t first_trial, std::int32_t trials,
                                                               Backend backend) {
    return detail::sample_batch(detail::prepare_fault_streams(series, model, duration_s, seed), first_trial, trials, backend);
}

}  // namespace skyfabric::workloads
