// Monte Carlo over trials: statistics with intervals, and the batch of trials itself.
#include <skyfabric/workloads/faults.hpp>

#include <boost/math/special_functions/gamma.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <tuple>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "fault_streams.hpp"

namespace skyfabric::workloads {

using detail::check_series;
using detail::kind_index;

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
    s.median = quantile(sorted, 0.5);
    // Nearest rank: the value at rank ceil(q n), 1-based (Hyndman & Fan's definition 1).
    const auto nearest_rank = [&sorted](double q) {
        const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size()) - 1e-9));  // 0.975 × 40 is 39, not 39.000…01
        return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
    };
    s.spread_low = nearest_rank(0.025);
    s.spread_high = nearest_rank(0.975);
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

const char* spread_kind(std::size_t trials) {
    return trials < spread_min_max_below_trials ? "min_max" : "nearest_rank_p2.5_p97.5";
}

std::pair<double, double> poisson_rate_ci95(double total, std::int32_t trials, double days) {
    if (trials <= 0 || !(days > 0.0) || !(total >= 0.0)) throw std::invalid_argument("poisson_rate_ci95: need trials > 0, days > 0, total >= 0");
    const double exposure = static_cast<double>(trials) * days;
    const double low = total > 0.0 ? boost::math::gamma_p_inv(total, 0.025) : 0.0;
    const double high = boost::math::gamma_p_inv(total + 1.0, 0.975);
    return {low / exposure, high / exposure};
}

MonteCarloResult::Trial trial_summary(const GoodputResult& r) {
    MonteCarloResult::Trial tr;
    tr.goodput = r.goodput;
    for (int j = 0; j < fault_kind_count; ++j)
        tr.lost_faults_s += r.rework_s[static_cast<std::size_t>(j)] + r.recovery_s[static_cast<std::size_t>(j)];
    tr.lost_faults_s += r.sdc_recompute_s - r.restart_total_s;
    tr.lost_restarts_s = r.restart_total_s;
    tr.lost_checkpoints_s = r.checkpoint_s;
    tr.lost_fabric_s = r.fabric_loss_s + r.stalled_s;
    tr.gained_fabric_s = r.fabric_gain_s;
    tr.lost_shrink_s = r.shrunk_s;
    tr.step_time_median_s = r.step_time_median_s;
    tr.step_time_p99_s = r.step_time_p99_s;
    tr.ranks_lost = r.ranks_lost;
    tr.spare_swaps = r.replacements;
    tr.links_lost = r.links_lost;
    tr.gateway_links_lost = r.gateway_links_lost;
    tr.damaged_steps = r.damaged_steps;
    tr.rollbacks = r.rollbacks;
    tr.failover_stall_s = r.failover_stall_s;
    tr.bytes_retried = r.bytes_retried;
    return tr;
}

void for_each_trial(std::int32_t threads, std::int32_t count, const std::function<void(std::int32_t)>& work,
                    const std::atomic<bool>* stop) {
    std::atomic<std::int32_t> next{0};
    std::atomic<bool> stopped{false};
    std::exception_ptr failure;
    std::mutex failure_mutex;
    const auto worker = [&] {
        try {
            for (std::int32_t i = next++; i < count; i = next++) {
                if (stop && stop->load(std::memory_order_relaxed)) {
                    stopped = true;
                    next = count;
                    break;
                }
                work(i);
            }
        } catch (const Interrupted&) {  // a trial stopped part way (its play polls `stop` too)
            stopped = true;
            next = count;
        } catch (...) {
            const std::lock_guard lock(failure_mutex);
            if (!failure) failure = std::current_exception();
            next = count;
        }
    };
    std::vector<std::thread> pool;
    // Every trial on a worker thread, the caller only waiting: the caller's malloc arena carries the
    // physics run's heap, and trials played on it ran 1.3-1.4x slower (bench/coupled_trials.sh).
    for (std::int32_t w = 0; w < std::min(std::max(threads, 1), count); ++w) pool.emplace_back(worker);
    for (auto& th : pool) th.join();
    if (failure) std::rethrow_exception(failure);
    if (stopped) throw TrialsInterrupted();
}

MonteCarloResult monte_carlo_goodput(const DoseRateSeries& series, const FaultModel& model,
                                     const RecoveryConfig& config, const StepDurations& steps, double duration_s,
                                     std::uint64_t seed, std::int32_t trials, Backend backend, FabricModel* fabric,
                                     std::int32_t threads, const std::atomic<bool>* stop, const TrialShare* share) {
    if (trials <= 0) throw std::invalid_argument("trials must be >= 1");
    if (threads < 0) throw std::invalid_argument("threads must be >= 0 (0: every core)");
    check_series(series);
    RecoveryConfig c = config;
    if (!(c.checkpoint_interval_s > 0.0) && !(c.mtbf_s > 0.0))
        c.mtbf_s = interruption_mtbf_s(series, model, series.satellite_count - c.spare_satellites, duration_s);
    MonteCarloResult out;
    out.trials = trials;
    out.checkpoint_interval_s = resolve_checkpoint_interval_s(c);
    if (threads == 0) threads = static_cast<std::int32_t>(std::max(1u, std::thread::hardware_concurrency()));
    out.threads = std::min(threads, trials);
    std::vector<TrialRow> rows(static_cast<std::size_t>(trials));
    const double days = duration_s / 86400.0;
    out.backend = resolve_backend(backend);
    // Trials are independent: each thread takes the next one; results land in trial order.
    bool stopped = false;
    try {
        for_each_drawn_trial(series, model, duration_s, seed, trials, out.backend, out.threads,
                             [&](std::int32_t trial, std::span<const FaultEvent> ev) {
                                 const GoodputResult r = simulate_training_with_faults(ev, series.satellite_count, duration_s,
                                                                                       steps, c, false, fabric, stop);
                                 rows[static_cast<std::size_t>(trial)] = {trial_summary(r), static_cast<std::int64_t>(ev.size()),
                                                                          r.events_by_kind, r.operational};
                             },
                             stop, share);
    } catch (const TrialsInterrupted&) {
        stopped = true;
    }
    if (share && share->gather) stopped = share->gather(rows, stopped);  // the other parts' trials
    if (stopped) throw TrialsInterrupted();
    // Sums in trial order: the same bits for any thread count.
    std::vector<double> interrupts, all_events;
    double total_events = 0.0;
    for (const TrialRow& row : rows) {
        out.per_trial.push_back(row.trial);
        out.goodput_per_trial.push_back(row.trial.goodput);
        interrupts.push_back(static_cast<double>(row.trial.rollbacks) / days);
        all_events.push_back(static_cast<double>(row.events) / days);
        total_events += static_cast<double>(row.events);
        for (int j = 0; j < fault_kind_count; ++j)
            out.mean_events_by_kind[static_cast<std::size_t>(j)] +=
                static_cast<double>(row.events_by_kind[static_cast<std::size_t>(j)]) / trials;
        out.total_interruptions += static_cast<double>(row.trial.rollbacks);
        if (model.operational.enabled())
            for (std::size_t j = 0; j < static_cast<std::size_t>(max_operational_causes); ++j) {
                out.mean_events_by_cause[j] += static_cast<double>(row.operational.events[j]) / trials;
                out.mean_interruptions_by_cause[j] += static_cast<double>(row.operational.interruptions[j]) / trials;
                out.mean_lost_by_cause_s[j] += row.operational.lost_s[j] / trials;
            }
    }
    out.goodput = trial_statistics(out.goodput_per_trial);
    out.interruptions_per_day = trial_statistics(interrupts);
    out.events_per_day = trial_statistics(all_events);
    std::tie(out.events_per_day.mean_ci95_low, out.events_per_day.mean_ci95_high) = poisson_rate_ci95(total_events, trials, days);
    return out;
}

}  // namespace skyfabric::workloads
