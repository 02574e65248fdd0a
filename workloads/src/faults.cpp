#include <skyfabric/physics/radiation.hpp>
#include <skyfabric/workloads/faults.hpp>
#include <skyfabric/workloads/job.hpp>

#include <boost/math/special_functions/gamma.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include "cuda_backend.hpp"

namespace skyfabric::workloads {

namespace {

constexpr std::size_t kind_index(FaultKind k) { return static_cast<std::size_t>(k); }

void check_series(const DoseRateSeries& s) {
    if (s.satellite_count <= 0) throw std::invalid_argument("dose-rate series needs >= 1 satellite");
    if (s.sample_count <= 0) throw std::invalid_argument("dose-rate series needs >= 1 sample");
    if (s.sample_count > 1 && !(s.step_s > 0.0)) throw std::invalid_argument("dose-rate series step_s must be > 0");
    if (static_cast<std::int64_t>(s.dose_rate_rad_s.size()) != s.sample_count * s.satellite_count)
        throw std::invalid_argument("dose-rate series size != sample_count * satellite_count");
}

// Per-rad event multipliers n_k / D_k (1/rad) for the dose-driven kinds.
std::array<double, fault_kind_count> per_rad(const FaultModel& m) {
    const DeviceCrossSections& d = m.device;
    std::array<double, fault_kind_count> k{};
    k[kind_index(FaultKind::sdc)] = m.chips_per_satellite / d.sdc_rad_per_event;
    k[kind_index(FaultKind::hbm_uecc)] = m.chips_per_satellite / d.hbm_uecc_rad_per_event;
    k[kind_index(FaultKind::chip_crash)] = m.chips_per_satellite / d.chip_crash_rad_per_event;
    k[kind_index(FaultKind::host_crash)] =
        m.hosts_per_satellite * (1.0 / d.host_cpu_rad_per_event + 1.0 / d.host_ram_rad_per_event);
    k[kind_index(FaultKind::link_outage)] = 0.0;
    return k;
}

// ∫ of the piecewise-linear (then held) series of one satellite over [start, T), rad.
double integrate_dose(const DoseRateSeries& s, std::int32_t sat, double duration_s) {
    double total = 0.0;
    const auto v = [&](std::int64_t j) { return s.dose_rate_rad_s[static_cast<std::size_t>(j * s.satellite_count + sat)]; };
    const double end = duration_s;
    for (std::int64_t j = 0; j < s.sample_count; ++j) {
        const double t0 = s.start_s + static_cast<double>(j) * s.step_s;
        if (t0 >= end) break;
        const bool last = j + 1 == s.sample_count;
        const double t1 = std::min(last ? end : t0 + s.step_s, end);
        const double a = v(j);
        const double b = last ? a : v(j + 1);
        const double rb = last ? a : a + (b - a) * ((t1 - t0) / s.step_s);
        total += 0.5 * (a + rb) * (t1 - t0);
    }
    return total;
}

}  // namespace

const char* fault_kind_name(FaultKind kind) {
    switch (kind) {
        case FaultKind::sdc: return "sdc";
        case FaultKind::hbm_uecc: return "hbm_uecc";
        case FaultKind::chip_crash: return "chip_crash";
        case FaultKind::host_crash: return "host_crash";
        case FaultKind::link_outage: return "link_outage";
    }
    return "unknown";
}

const char* fault_effect_name(FaultEffect e) {
    switch (e) {
        case FaultEffect::none: return "none";
        case FaultEffect::step_recomputed: return "step_recomputed";
        case FaultEffect::silent_corruption: return "silent_corruption";
        case FaultEffect::rollback: return "rollback";
        case FaultEffect::reboot: return "reboot";
        case FaultEffect::link_down: return "link_down";
        case FaultEffect::after_end: return "after_end";
    }
    return "unknown";
}

const char* job_phase_name(JobPhase p) {
    switch (p) {
        case JobPhase::step: return "step";
        case JobPhase::step_corrupted: return "step_corrupted";
        case JobPhase::step_recomputed: return "step_recomputed";
        case JobPhase::step_rolled_back: return "step_rolled_back";
        case JobPhase::step_interrupted: return "step_interrupted";
        case JobPhase::checkpoint: return "checkpoint";
        case JobPhase::checkpoint_interrupted: return "checkpoint_interrupted";
        case JobPhase::recovery: return "recovery";
        case JobPhase::unfinished: return "unfinished";
    }
    return "unknown";
}

DeviceCrossSections trillium_v6e() { return DeviceCrossSections{}; }

DeviceCrossSections device_preset(const std::string& name) {
    if (name == "trillium_v6e" || name == "tpu_v6e" || name == "trillium") return trillium_v6e();
    throw std::invalid_argument("unknown device preset '" + name + "' (known: trillium_v6e)");
}

double cross_section_cm2(double d) { return 1.0 / (physics::protons_per_cm2_per_rad * d); }
double rad_per_event(double sigma) { return 1.0 / (physics::protons_per_cm2_per_rad * sigma); }

std::array<double, fault_kind_count> fault_rates_per_s(double dose_rate_rad_s, const FaultModel& model) {
    std::array<double, fault_kind_count> r = per_rad(model);
    for (double& x : r) x *= dose_rate_rad_s;
    r[kind_index(FaultKind::link_outage)] = model.link_outage_rate_per_s;
    return r;
}

std::array<double, fault_kind_count> fault_rates_from_flux_per_s(double flux, const FaultModel& m) {
    const DeviceCrossSections& d = m.device;
    std::array<double, fault_kind_count> r{};
    r[kind_index(FaultKind::sdc)] = m.chips_per_satellite * cross_section_cm2(d.sdc_rad_per_event) * flux;
    r[kind_index(FaultKind::hbm_uecc)] = m.chips_per_satellite * cross_section_cm2(d.hbm_uecc_rad_per_event) * flux;
    r[kind_index(FaultKind::chip_crash)] = m.chips_per_satellite * cross_section_cm2(d.chip_crash_rad_per_event) * flux;
    r[kind_index(FaultKind::host_crash)] =
        m.hosts_per_satellite *
        (cross_section_cm2(d.host_cpu_rad_per_event) + cross_section_cm2(d.host_ram_rad_per_event)) * flux;
    r[kind_index(FaultKind::link_outage)] = m.link_outage_rate_per_s;
    return r;
}

DoseRateSeries constant_dose_rate(std::int32_t satellite_count, double dose_rate_rad_s) {
    DoseRateSeries s;
    s.sample_count = 1;
    s.satellite_count = satellite_count;
    s.dose_rate_rad_s.assign(static_cast<std::size_t>(satellite_count), dose_rate_rad_s);
    return s;
}

std::array<double, fault_kind_count> expected_fault_counts(const DoseRateSeries& series, const FaultModel& model,
                                                           double duration_s) {
    check_series(series);
    double dose = 0.0;
    for (std::int32_t s = 0; s < series.satellite_count; ++s) dose += integrate_dose(series, s, duration_s);
    std::array<double, fault_kind_count> n = per_rad(model);
    for (double& x : n) x *= dose;
    n[kind_index(FaultKind::link_outage)] =
        model.link_outage_rate_per_s * series.satellite_count * std::max(0.0, duration_s - series.start_s);
    return n;
}

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
    if (!(model.sdc_detection_probability >= 0.0 && model.sdc_detection_probability <= 1.0))
        throw std::invalid_argument("sdc_detection_probability must be in [0, 1]");
    if (!(model.link_outage_rate_per_s >= 0.0)) throw std::invalid_argument("link_outage_rate_per_s must be >= 0");
    const std::array<double, fault_kind_count> k = per_rad(model);
    core::FaultMarks marks;
    for (int kind = 0; kind < 4; ++kind)
        marks.cumulative_per_rad[kind] = (marks.total_per_rad += k[static_cast<std::size_t>(kind)]);
    marks.sdc_detection_probability = model.sdc_detection_probability;
    marks.link_outage_rate_per_s = model.link_outage_rate_per_s;
    return marks;
}

void sort_events(std::vector<FaultEvent>& events) {
    std::sort(events.begin(), events.end(), [](const FaultEvent& a, const FaultEvent& b) {
        return std::tie(a.time_s, a.satellite, a.kind) < std::tie(b.time_s, b.satellite, b.kind);
    });
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
    sort_events(events);
    return events;
}

std::vector<std::vector<FaultEvent>> sample_batch(const detail::FaultStreams& f, std::uint64_t first_trial,
                                                  std::int32_t trials, Backend backend) {
    std::vector<std::vector<FaultEvent>> out;
    if (trials <= 0) return out;
    if (resolve_backend(backend) == Backend::cuda) {
        out = detail::cuda_sample_fault_events_batch(f, first_trial, trials);
        for (auto& events : out) sort_events(events);
        return out;
    }
    out.reserve(static_cast<std::size_t>(trials));
    for (std::int32_t i = 0; i < trials; ++i) out.push_back(sample_trial(f, first_trial + static_cast<std::uint64_t>(i)));
    return out;
}

}  // namespace

namespace detail {

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
    f.key = physics::rng::derive_seed(seed, core::faults_seed_tag);
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

std::vector<FaultEvent> sample_fault_events(const DoseRateSeries& series, const FaultModel& model, double duration_s,
                                            std::uint64_t seed, std::uint64_t trial) {
    return sample_trial(detail::prepare_fault_streams(series, model, duration_s, seed), trial);
}

std::vector<std::vector<FaultEvent>> sample_fault_events_batch(const DoseRateSeries& series, const FaultModel& model,
                                                               double duration_s, std::uint64_t seed,
                                                               std::uint64_t first_trial, std::int32_t trials,
                                                               Backend backend) {
    return sample_batch(detail::prepare_fault_streams(series, model, duration_s, seed), first_trial, trials, backend);
}

double resolve_checkpoint_interval_s(const RecoveryConfig& c) {
    if (c.checkpoint_interval_s > 0.0) return c.checkpoint_interval_s;
    if (!(c.mtbf_s > 0.0))
        throw std::invalid_argument("auto checkpoint interval needs mtbf_s > 0 (see interruption_mtbf_s)");
    if (!(c.checkpoint_cost_s > 0.0)) throw std::invalid_argument("auto checkpoint interval needs checkpoint_cost_s > 0");
    return daly_interval_s(c.checkpoint_cost_s, c.mtbf_s);
}

double interruption_rate_per_s(const DoseRateSeries& series, const FaultModel& model, std::int32_t active,
                               double duration_s) {
    check_series(series);
    const double span = duration_s - series.start_s;
    if (!(span > 0.0)) throw std::invalid_argument("interruption rate needs duration_s > start_s");
    const std::array<double, fault_kind_count> k = per_rad(model);
    const double per_rad_interrupts = k[kind_index(FaultKind::hbm_uecc)] + k[kind_index(FaultKind::chip_crash)] +
                                      k[kind_index(FaultKind::host_crash)];
    double dose = 0.0;
    for (std::int32_t s = 0; s < std::min(active, series.satellite_count); ++s) dose += integrate_dose(series, s, duration_s);
    return per_rad_interrupts * dose / span;
}

double interruption_mtbf_s(const DoseRateSeries& series, const FaultModel& model, std::int32_t active,
                           double duration_s) {
    const double r = interruption_rate_per_s(series, model, active, duration_s);
    return r > 0.0 ? 1.0 / r : std::numeric_limits<double>::infinity();
}

double step_duration_at_s(const StepDurations& s, double t) {
    if (s.start_s.empty()) return s.nominal_s;
    if (s.start_s.size() != s.duration_s.size())
        throw std::invalid_argument("step duration series: start_s and duration_s differ in length");
    if (s.period_s > 0.0) {
        t = std::fmod(t, s.period_s);
        if (t < 0.0) t += s.period_s;
    }
    const auto it = std::upper_bound(s.start_s.begin(), s.start_s.end(), t);
    const std::size_t i = it == s.start_s.begin() ? 0 : static_cast<std::size_t>(it - s.start_s.begin()) - 1;
    return s.duration_s[i];
}

double expected_goodput_constant_rate(double w, double delta, double r, double m) {
    // Renewal argument: a segment of w work + δ checkpoint succeeds with prob e^{-(w+δ)/M}; each
    // failure costs E[s | s < w+δ] plus a restart that itself completes in M (e^{R/M} − 1) on
    // average; summing gives E[T_segment] = M e^{R/M} (e^{(w+δ)/M} − 1), goodput = w / E[T].
    return w / (m * std::exp(r / m) * std::expm1((w + delta) / m));
}

double first_order_waste_fraction(double tau, double delta, double r, double m) {
    return delta / tau + (tau + delta) / (2.0 * m) + r / m;
}

GoodputResult simulate_training_with_faults(std::span<const FaultEvent> events, std::int32_t satellite_count,
                                            double duration_s, const StepDurations& steps,
                                            const RecoveryConfig& config, bool record_timeline) {
    const std::int32_t n_sat = satellite_count;
    const std::int32_t spares = config.spare_satellites;
    if (n_sat <= 0 || spares < 0 || spares >= n_sat)
        throw std::invalid_argument("need satellite_count > spare_satellites >= 0");
    if (!(duration_s > 0.0)) throw std::invalid_argument("duration_s must be > 0");
    if (config.checkpoint_cost_s < 0.0 || config.restart_s < 0.0 || config.reboot_s < 0.0)
        throw std::invalid_argument("checkpoint cost, restart and reboot times must be >= 0");
    const double tau = resolve_checkpoint_interval_s(config);
    const double delta = config.checkpoint_cost_s;
    const double T = duration_s;
    const std::int32_t active_count = n_sat - spares;

    GoodputResult res;
    res.elapsed_s = T;
    res.checkpoint_interval_s = tau;
    res.effects.assign(events.size(), FaultEffect::after_end);

    std::vector<std::int32_t> rank_sat(static_cast<std::size_t>(active_count));
    std::iota(rank_sat.begin(), rank_sat.end(), 0);
    std::vector<std::int32_t> spare_sats;
    for (std::int32_t s = active_count; s < n_sat; ++s) spare_sats.push_back(s);
    std::vector<char> is_active(static_cast<std::size_t>(n_sat), 0);
    for (std::int32_t s = 0; s < active_count; ++s) is_active[static_cast<std::size_t>(s)] = 1;
    std::vector<double> down_until(static_cast<std::size_t>(n_sat), -std::numeric_limits<double>::infinity());

    std::size_t i = 0;  // next event
    double t = 0.0;
    double since_ckpt_s = 0.0;
    std::int64_t steps_since = 0, corrupt_since = 0;
    std::int64_t steps_committed = 0, corrupt_committed = 0;
    double useful_committed = 0.0;

    // Timeline (record_timeline): steps since the last checkpoint start at kept_from.
    std::size_t kept_from = 0;
    const auto log = [&](double a, double b, JobPhase phase) {
        if (record_timeline && b > a) res.timeline.push_back({a, b, phase});
    };

    const auto check_event = [&](const FaultEvent& e) {
        if (e.satellite < 0 || e.satellite >= n_sat) throw std::invalid_argument("fault event satellite out of range");
        if (i > 0 && e.time_s < events[i - 1].time_s) throw std::invalid_argument("fault events must be sorted by time");
    };
    // An event that does not interrupt training.
    const auto passive = [&](const FaultEvent& e) {
        const auto s = static_cast<std::size_t>(e.satellite);
        if (fault_crashes(e.kind)) {
            down_until[s] = std::max(down_until[s], e.time_s + config.reboot_s);
            res.effects[i] = is_active[s] ? FaultEffect::rollback : FaultEffect::reboot;
        } else if (e.kind == FaultKind::link_outage) {
            res.effects[i] = FaultEffect::link_down;
        } else {
            res.effects[i] = FaultEffect::none;
        }
    };
    // Recovery from an interrupt at t_fail; returns when training resumes (may exceed T).
    const auto recover = [&](double t_fail, const FaultEvent& first) -> double {
        double begin = t_fail;
        std::int32_t failed = fault_crashes(first.kind) ? first.satellite : -1;
        for (;;) {
            if (failed >= 0) {
                const auto f = static_cast<std::size_t>(failed);
                down_until[f] = std::max(down_until[f], begin + config.reboot_s);
            }
            double ready = begin;
            for (std::int32_t& sat : rank_sat) {
                const auto s = static_cast<std::size_t>(sat);
                if (down_until[s] <= begin) continue;
                // Earliest-available spare; swap if it is up before this satellite is.
                std::size_t best = spare_sats.size();
                for (std::size_t k = 0; k < spare_sats.size(); ++k)
                    if (best == spare_sats.size() || down_until[static_cast<std::size_t>(spare_sats[k])] <
                                                         down_until[static_cast<std::size_t>(spare_sats[best])])
                        best = k;
                double avail = down_until[s];
                if (best < spare_sats.size() && down_until[static_cast<std::size_t>(spare_sats[best])] < down_until[s]) {
                    const std::int32_t replacement = spare_sats[best];
                    spare_sats[best] = sat;
                    is_active[s] = 0;
                    is_active[static_cast<std::size_t>(replacement)] = 1;
                    res.swaps.push_back({begin, sat, replacement});
                    sat = replacement;
                    ++res.replacements;
                    avail = std::max(begin, down_until[static_cast<std::size_t>(replacement)]);
                }
                ready = std::max(ready, avail);
            }
            const double restart_end = ready + config.restart_s;
            bool again = false;
            while (i < events.size() && events[i].time_s < std::min(restart_end, T)) {
                const FaultEvent& e = events[i];
                check_event(e);
                ++res.events_by_kind[kind_index(e.kind)];
                const bool active = is_active[static_cast<std::size_t>(e.satellite)] != 0;
                if (active && fault_interrupts(e.kind) && (e.time_s >= ready || fault_crashes(e.kind))) {
                    res.effects[i] = FaultEffect::rollback;
                    ++res.rollbacks;
                    begin = e.time_s;
                    failed = fault_crashes(e.kind) ? e.satellite : -1;
                    ++i;
                    again = true;
                    break;
                }
                passive(e);
                ++i;
            }
            if (!again) return restart_end;
        }
    };
    // Interrupt at event i during [t, ...) (a step or a checkpoint: cut): lose the partial phase and
    // the uncommitted work.
    const auto interrupt = [&](JobPhase cut) {
        const FaultEvent& e = events[i];
        const std::size_t k = kind_index(e.kind);
        log(t, e.time_s, cut);
        for (std::size_t j = kept_from; j < res.timeline.size(); ++j)
            if (res.timeline[j].phase == JobPhase::step || res.timeline[j].phase == JobPhase::step_corrupted)
                res.timeline[j].phase = JobPhase::step_rolled_back;
        res.effects[i] = FaultEffect::rollback;
        ++res.rollbacks;
        res.rework_s[k] += (e.time_s - t) + since_ckpt_s;
        since_ckpt_s = 0.0;
        steps_since = 0;
        corrupt_since = 0;
        ++i;
        const double resume = recover(e.time_s, e);
        res.recovery_s[k] += std::min(resume, T) - e.time_s;
        log(e.time_s, std::min(resume, T), JobPhase::recovery);
        kept_from = res.timeline.size();
        t = resume;
    };

    while (t < T) {
        if (since_ckpt_s > 0.0 && since_ckpt_s >= tau * (1.0 - 1e-12)) {
            // Checkpoint [t, t + δ).
            const double end = t + delta;
            bool interrupted = false;
            while (i < events.size() && events[i].time_s < std::min(end, T)) {
                const FaultEvent& e = events[i];
                check_event(e);
                ++res.events_by_kind[kind_index(e.kind)];
                if (is_active[static_cast<std::size_t>(e.satellite)] && fault_interrupts(e.kind)) {
                    interrupt(JobPhase::checkpoint_interrupted);
                    interrupted = true;
                    break;
                }
                passive(e);
                ++i;
            }
            if (interrupted) continue;
            if (end > T) {
                res.tail_s += T - t;
                log(t, T, JobPhase::unfinished);
                t = T;
                break;
            }
            log(t, end, JobPhase::checkpoint);
            kept_from = res.timeline.size();
            ++res.checkpoints;
            res.checkpoint_s += delta;
            useful_committed += since_ckpt_s;
            steps_committed += steps_since;
            corrupt_committed += corrupt_since;
            since_ckpt_s = 0.0;
            steps_since = 0;
            corrupt_since = 0;
            t = end;
            continue;
        }
        const double d = step_duration_at_s(steps, t);
        if (!(d > 0.0)) throw std::invalid_argument("step duration must be > 0");
        const double end = t + d;
        bool redo = false, corrupt = false, interrupted = false;
        while (i < events.size() && events[i].time_s < std::min(end, T)) {
            const FaultEvent& e = events[i];
            check_event(e);
            ++res.events_by_kind[kind_index(e.kind)];
            const bool active = is_active[static_cast<std::size_t>(e.satellite)] != 0;
            if (active && fault_interrupts(e.kind)) {
                interrupt(JobPhase::step_interrupted);
                interrupted = true;
                break;
            }
            if (active && e.kind == FaultKind::sdc) {
                res.effects[i] = e.detected ? FaultEffect::step_recomputed : FaultEffect::silent_corruption;
                (e.detected ? redo : corrupt) = true;
            } else {
                passive(e);
            }
            ++i;
        }
        if (interrupted) continue;
        if (end > T) {
            res.tail_s += T - t;
            log(t, T, JobPhase::unfinished);
            t = T;
            break;
        }
        log(t, end, redo ? JobPhase::step_recomputed : corrupt ? JobPhase::step_corrupted : JobPhase::step);
        t = end;
        if (redo) {
            res.sdc_recompute_s += d;
            ++res.recomputed_steps;
            continue;
        }
        since_ckpt_s += d;
        ++steps_since;
        if (corrupt) ++corrupt_since;
    }
    res.useful_s = useful_committed + since_ckpt_s;
    res.steps_completed = steps_committed + steps_since;
    res.corrupted_steps = corrupt_committed + corrupt_since;
    res.goodput = res.useful_s / T;
    return res;
}

std::vector<SatelliteCondition> satellite_conditions(std::span<const FaultEvent> events,
                                                     std::span<const SpareSwap> swaps, std::int32_t n,
                                                     std::int32_t spares, double reboot_s, double t0, double t1) {
    if (n < 0 || spares < 0 || spares > n) throw std::invalid_argument("need satellite_count >= spare_satellites >= 0");
    std::vector<SatelliteCondition> out(static_cast<std::size_t>(n), SatelliteCondition::ok);
    std::vector<char> spare(static_cast<std::size_t>(n), 0);
    for (std::int32_t s = n - spares; s < n; ++s) spare[static_cast<std::size_t>(s)] = 1;
    for (const SpareSwap& w : swaps) {
        if (w.time_s > t1) break;
        if (w.failed < 0 || w.failed >= n || w.spare < 0 || w.spare >= n) throw std::invalid_argument("spare swap satellite out of range");
        spare[static_cast<std::size_t>(w.failed)] = 1;
        spare[static_cast<std::size_t>(w.spare)] = 0;
    }
    std::vector<char> hit(static_cast<std::size_t>(n), 0), down(static_cast<std::size_t>(n), 0);
    // Only events after min(t0, t1 - reboot_s) can matter (sorted by time: a binary search, so a
    // run's frames cost their own window each, not the whole event list).
    const double from = std::min(t0, t1 - reboot_s);
    const auto first = std::upper_bound(events.begin(), events.end(), from,
                                        [](double t, const FaultEvent& e) { return t < e.time_s; });
    for (const FaultEvent& e : std::span<const FaultEvent>(first, events.end())) {
        if (e.time_s > t1) break;
        if (e.satellite < 0 || e.satellite >= n) throw std::invalid_argument("fault event satellite out of range");
        const auto s = static_cast<std::size_t>(e.satellite);
        if (fault_crashes(e.kind) && e.time_s + reboot_s > t1) down[s] = 1;
        if (e.time_s > t0) hit[s] = 1;
    }
    for (std::size_t s = 0; s < out.size(); ++s)
        out[s] = down[s] ? SatelliteCondition::rebooting
                 : hit[s] ? SatelliteCondition::faulted
                 : spare[s] ? SatelliteCondition::spare
                            : SatelliteCondition::ok;
    return out;
}

TrialStatistics trial_statistics(std::span<const double> v) {
    TrialStatistics s;
    const std::size_t n = v.size();
    if (n == 0) return s;
    s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(n);
    double ss = 0.0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.stddev = n > 1 ? std::sqrt(ss / static_cast<double>(n - 1)) : 0.0;
    const auto quantile = [](const std::vector<double>& sorted, double q) {
        const std::size_t m = sorted.size();
        const double pos = q * static_cast<double>(m - 1);
        const auto lo = static_cast<std::size_t>(std::floor(pos));
        const std::size_t hi = std::min(lo + 1, m - 1);
        return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
    };
    std::vector<double> sorted(v.begin(), v.end());
    std::sort(sorted.begin(), sorted.end());
    s.p2_5 = quantile(sorted, 0.025);
    s.p97_5 = quantile(sorted, 0.975);
    // Percentile bootstrap of the mean: means of resamples drawn with replacement. The generator
    // has a fixed seed, so the same trials give the same interval (determinism).
    constexpr int resamples = 1000;
    std::vector<double> means(resamples);
    std::uint64_t state = 0x9E3779B97F4A7C15ull;
    const auto next = [&state]() {  // splitmix64
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    };
    for (double& m : means) {
        double sum = 0.0;
        for (std::size_t i = 0; i < n; ++i) {
            const auto k = static_cast<std::size_t>(next() % n);  // bias < n / 2^64
            sum += v[k];
        }
        m = sum / static_cast<double>(n);
    }
    std::sort(means.begin(), means.end());
    s.mean_ci95_low = quantile(means, 0.025);
    s.mean_ci95_high = quantile(means, 0.975);
    return s;
}

std::pair<double, double> poisson_rate_ci95(double total, std::int32_t trials, double days) {
    if (trials <= 0 || !(days > 0.0) || !(total >= 0.0)) throw std::invalid_argument("poisson_rate_ci95: need trials > 0, days > 0, total >= 0");
    const double exposure = static_cast<double>(trials) * days;
    const double low = total > 0.0 ? boost::math::gamma_p_inv(total, 0.025) : 0.0;
    const double high = boost::math::gamma_p_inv(total + 1.0, 0.975);
    return {low / exposure, high / exposure};
}

MonteCarloResult monte_carlo_goodput(const DoseRateSeries& series, const FaultModel& model,
                                     const RecoveryConfig& config, const StepDurations& steps, double duration_s,
                                     std::uint64_t seed, std::int32_t trials, Backend backend) {
    if (trials <= 0) throw std::invalid_argument("trials must be >= 1");
    check_series(series);
    RecoveryConfig c = config;
    if (!(c.checkpoint_interval_s > 0.0) && !(c.mtbf_s > 0.0))
        c.mtbf_s = interruption_mtbf_s(series, model, series.satellite_count - c.spare_satellites, duration_s);
    MonteCarloResult out;
    out.trials = trials;
    out.checkpoint_interval_s = resolve_checkpoint_interval_s(c);
    std::vector<double> interrupts, all_events;
    double total_events = 0.0;
    const double days = duration_s / 86400.0;
    const detail::FaultStreams streams = detail::prepare_fault_streams(series, model, duration_s, seed);
    out.backend = resolve_backend(backend);
    for (std::int32_t first = 0; first < trials; first += monte_carlo_batch_trials) {
        const std::int32_t batch = std::min(monte_carlo_batch_trials, trials - first);
        const std::vector<std::vector<FaultEvent>> drawn =
            sample_batch(streams, static_cast<std::uint64_t>(first), batch, out.backend);
        for (const std::vector<FaultEvent>& ev : drawn) {
            const GoodputResult r = simulate_training_with_faults(ev, series.satellite_count, duration_s, steps, c);
            out.goodput_per_trial.push_back(r.goodput);
            interrupts.push_back(static_cast<double>(r.rollbacks) / days);
            all_events.push_back(static_cast<double>(ev.size()) / days);
            total_events += static_cast<double>(ev.size());
            for (int j = 0; j < fault_kind_count; ++j)
                out.mean_events_by_kind[static_cast<std::size_t>(j)] +=
                    static_cast<double>(r.events_by_kind[static_cast<std::size_t>(j)]) / trials;
        }
    }
    out.goodput = trial_statistics(out.goodput_per_trial);
    out.interruptions_per_day = trial_statistics(interrupts);
    out.events_per_day = trial_statistics(all_events);
    std::tie(out.events_per_day.mean_ci95_low, out.events_per_day.mean_ci95_high) = poisson_rate_ci95(total_events, trials, days);
    return out;
}

}  // namespace skyfabric::workloads
