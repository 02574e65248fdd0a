// Fault injection and checkpoint/restart: event rates against λ·T, thinning against a known
// non-homogeneous rate, reproducibility, goodput against the renewal-theory formula.
#include <skyfabric/physics/radiation.hpp>
#include <skyfabric/workloads/faults.hpp>
#include <skyfabric/workloads/job.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <limits>
#include <vector>

namespace sw = skyfabric::workloads;

namespace {

constexpr double pi = 3.14159265358979323846;
constexpr double inf = std::numeric_limits<double>::infinity();

// Exact Poisson quantile bounds [lo, hi] with P(X < lo) <= 0.005 and P(X > hi) <= 0.005.
std::pair<long, long> poisson_99(double mean) {
    double log_p = -mean;  // log P(X = 0)
    double cdf = 0.0;
    long lo = -1, k = 0;
    for (;; ++k) {
        if (k > 0) log_p += std::log(mean) - std::log(static_cast<double>(k));
        cdf += std::exp(log_p);
        if (lo < 0 && cdf > 0.005) lo = k;
        if (cdf >= 0.995) return {lo, k};
    }
}

// Ḋ_s(t) = D0 (1 + 0.8 sin(2π t / P + s)), sampled every step_s; its exact integral.
struct Wavy {
    double d0 = 0.0, period_s = 0.0;
    double rate(double t, int s) const { return d0 * (1.0 + 0.8 * std::sin(2 * pi * t / period_s + s)); }
    double integral(double t_end, int s) const {
        const double w = 2 * pi / period_s;
        return d0 * (t_end - 0.8 / w * (std::cos(w * t_end + s) - std::cos(static_cast<double>(s))));
    }
};

sw::DoseRateSeries sample_series(const Wavy& w, int sats, double step_s, double duration_s) {
    sw::DoseRateSeries s;
    s.step_s = step_s;
    s.satellite_count = sats;
    s.sample_count = static_cast<std::int64_t>(duration_s / step_s) + 1;
    for (std::int64_t j = 0; j < s.sample_count; ++j)
        for (int k = 0; k < sats; ++k) s.dose_rate_rad_s.push_back(w.rate(static_cast<double>(j) * step_s, k));
    return s;
}

// Only HBM UECC, at a total interrupt rate 1/M spread over `sats` satellites.
sw::FaultModel uecc_only() {
    sw::FaultModel m;
    m.device.sdc_rad_per_event = inf;
    m.device.chip_crash_rad_per_event = inf;
    m.device.host_cpu_rad_per_event = inf;
    m.device.host_ram_rad_per_event = inf;
    return m;
}

}  // namespace

TEST(FaultDevice, TrilliumCrossSectionsMatchReferences) {
    const sw::DeviceCrossSections d = sw::trillium_v6e();
    // docs/references.md: SDC 6–9e-9 cm², HBM UECC 3e-9, functional interrupt 2e-11 (paper's 1.27e-7/D).
    EXPECT_GT(sw::cross_section_cm2(d.sdc_rad_per_event), 6e-9);
    EXPECT_LT(sw::cross_section_cm2(d.sdc_rad_per_event), 9e-9);
    EXPECT_NEAR(sw::cross_section_cm2(d.hbm_uecc_rad_per_event), 2.9e-9, 0.1e-9);
    EXPECT_NEAR(sw::cross_section_cm2(d.chip_crash_rad_per_event), 2.5e-11, 0.1e-11);
    EXPECT_NEAR(sw::cross_section_cm2(14.4), 1.27e-7 / 14.4, 0.01e-7 / 14.4);
    EXPECT_DOUBLE_EQ(sw::rad_per_event(sw::cross_section_cm2(44.0)), 44.0);
    EXPECT_THROW(sw::device_preset("h100"), std::invalid_argument);
}

TEST(FaultDevice, DoseAndFluxViewsGiveTheSameRates) {
    sw::FaultModel m;
    m.chips_per_satellite = 4;
    m.hosts_per_satellite = 1;
    const double dose_rate = 150.0 / skyfabric::physics::seconds_per_year_radiation;
    const auto a = sw::fault_rates_per_s(dose_rate, m);
    const auto b = sw::fault_rates_from_flux_per_s(skyfabric::physics::protons_per_cm2_per_rad * dose_rate, m);
    for (int k = 0; k < sw::fault_kind_count; ++k) EXPECT_NEAR(a[k], b[k], 1e-12 * a[k]) << k;
    // 150 rad/yr per chip → 150/17.2 SDC per chip-year.
    EXPECT_NEAR(a[0] * skyfabric::physics::seconds_per_year_radiation, 4 * 150.0 / 17.2, 1e-9);
    EXPECT_NEAR(a[3] * skyfabric::physics::seconds_per_year_radiation, 150.0 / 450 + 150.0 / 400, 1e-9);
}

TEST(FaultSampling, EventCountsPerKindMatchLambdaTWithinPoisson99) {
    const int sats = 16;
    const double year = 365.25 * 86400.0;
    const Wavy w{1500.0 / year, 5900.0};  // 10× the reference dose, orbit-period modulation
    const double duration = year;
    const sw::DoseRateSeries series = sample_series(w, sats, 300.0, duration);
    sw::FaultModel m;
    m.chips_per_satellite = 2;
    m.link_outage_rate_per_s = 1.0 / 86400.0;
    const std::vector<sw::FaultEvent> ev = sw::sample_fault_events(series, m, duration, 2027);
    std::array<long, sw::fault_kind_count> count{};
    for (const sw::FaultEvent& e : ev) {
        ASSERT_GE(e.time_s, 0.0);
        ASSERT_LT(e.time_s, duration);
        ++count[static_cast<int>(e.kind)];
    }
    double dose = 0.0;  // analytic ∫Ḋ dt summed over satellites
    for (int s = 0; s < sats; ++s) dose += w.integral(duration, s);
    const sw::DeviceCrossSections& d = m.device;
    const double expected[] = {2 * dose / d.sdc_rad_per_event, 2 * dose / d.hbm_uecc_rad_per_event,
                               2 * dose / d.chip_crash_rad_per_event,
                               dose * (1 / d.host_cpu_rad_per_event + 1 / d.host_ram_rad_per_event),
                               sats * duration / 86400.0};
    const auto lib = sw::expected_fault_counts(series, m, duration);
    for (int k = 0; k < sw::fault_kind_count; ++k) {
        EXPECT_NEAR(lib[k], expected[k], 1e-4 * expected[k]) << sw::fault_kind_name(static_cast<sw::FaultKind>(k));
        const auto [lo, hi] = poisson_99(expected[k]);
        EXPECT_GE(count[k], lo) << sw::fault_kind_name(static_cast<sw::FaultKind>(k)) << " expected " << expected[k];
        EXPECT_LE(count[k], hi) << sw::fault_kind_name(static_cast<sw::FaultKind>(k)) << " expected " << expected[k];
    }
    // Sorted by time.
    for (std::size_t i = 1; i < ev.size(); ++i) ASSERT_LE(ev[i - 1].time_s, ev[i].time_s);
}

TEST(FaultSampling, ThinningReproducesALinearRampRate) {
    // λ(t) = a t on [0, T]: Λ = a T²/2, event times have density 2t/T² (mean 2T/3).
    // Given as 4 coarse samples (piecewise linear is exact for a ramp).
    const double T = 1000.0, a = 0.002;  // Λ = 1000 per stream
    const double values[] = {0.0, a * T / 3, 2 * a * T / 3, a * T};
    long n = 0;
    double sum_t = 0.0;
    const int streams = 40;
    for (int s = 0; s < streams; ++s) {
        sw::core::thin_piecewise_linear(values, 4, 1, 1.0, 0.0, T / 3, T, 99, static_cast<std::uint64_t>(s),
                                        [&](double t, double) {
                                            ++n;
                                            sum_t += t;
                                        });
    }
    const double lambda = streams * a * T * T / 2;  // 40000
    const auto [lo, hi] = poisson_99(lambda);
    EXPECT_GE(n, lo);
    EXPECT_LE(n, hi);
    // Mean event time 2T/3, sd of one time T/sqrt(18): 5 standard errors.
    EXPECT_NEAR(sum_t / n / T, 2.0 / 3.0, 5.0 / std::sqrt(18.0 * n));
    // A sinusoidal rate: the sampled series' integral is reproduced too (through the public API).
    const Wavy w{1.0e-3, 700.0};
    const sw::DoseRateSeries series = sample_series(w, 1, 10.0, 2.0e6);
    sw::FaultModel m = uecc_only();
    m.device.hbm_uecc_rad_per_event = 1.0;  // events = ∫Ḋ dt
    const double expected = w.integral(2.0e6, 0);
    const auto [lo2, hi2] = poisson_99(expected);
    const long got = static_cast<long>(sw::sample_fault_events(series, m, 2.0e6, 5).size());
    EXPECT_GE(got, lo2);
    EXPECT_LE(got, hi2);
}

TEST(FaultSampling, SameSeedSameEventsDifferentSeedDifferentEvents) {
    const sw::DoseRateSeries series = sample_series(Wavy{1e-3, 5900.0}, 8, 30.0, 86400.0);
    const sw::FaultModel m;
    const auto a = sw::sample_fault_events(series, m, 86400.0, 42, 0);
    const auto b = sw::sample_fault_events(series, m, 86400.0, 42, 0);
    const auto c = sw::sample_fault_events(series, m, 86400.0, 43, 0);
    const auto d = sw::sample_fault_events(series, m, 86400.0, 42, 1);
    ASSERT_GT(a.size(), 10u);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].time_s, b[i].time_s);
        EXPECT_EQ(a[i].satellite, b[i].satellite);
        EXPECT_EQ(a[i].kind, b[i].kind);
        EXPECT_EQ(a[i].detected, b[i].detected);
    }
    const auto differs = [&](const std::vector<sw::FaultEvent>& x) {
        if (x.size() != a.size()) return true;
        for (std::size_t i = 0; i < a.size(); ++i)
            if (x[i].time_s != a[i].time_s) return true;
        return false;
    };
    EXPECT_TRUE(differs(c));
    EXPECT_TRUE(differs(d));
    // The batch is the same as one call per trial.
    const auto batch = sw::sample_fault_events_batch(series, m, 86400.0, 42, 0, 2);
    ASSERT_EQ(batch.size(), 2u);
    ASSERT_EQ(batch[1].size(), d.size());
    for (std::size_t i = 0; i < d.size(); ++i) EXPECT_EQ(batch[1][i].time_s, d[i].time_s);
}

TEST(FaultSampling, SdcDetectionFollowsTheConfiguredProbability) {
    sw::FaultModel m;
    m.sdc_detection_probability = 0.7;
    const auto ev = sw::sample_fault_events(sw::constant_dose_rate(4, 1e-3), m, 4.0e6, 7);
    long sdc = 0, detected = 0;
    for (const auto& e : ev) {
        if (e.kind != sw::FaultKind::sdc) continue;
        ++sdc;
        detected += e.detected ? 1 : 0;
    }
    ASSERT_GT(sdc, 500);
    const double p = static_cast<double>(detected) / sdc;
    EXPECT_NEAR(p, 0.7, 3.3 * std::sqrt(0.7 * 0.3 / sdc));
}

TEST(CheckpointInterval, DalyAndYoungMatchTheirFormulas) {
    const double delta = 60.0, M = 3600.0;
    EXPECT_DOUBLE_EQ(sw::young_interval_s(delta, M), std::sqrt(2 * delta * M));
    const double x = delta / (2 * M);
    const double daly = std::sqrt(2 * delta * M) * (1 + std::sqrt(x) / 3 + x / 9) - delta;
    EXPECT_NEAR(sw::daly_interval_s(delta, M), daly, 1e-9);
    sw::RecoveryConfig c;
    c.checkpoint_cost_s = delta;
    c.mtbf_s = M;
    EXPECT_NEAR(sw::resolve_checkpoint_interval_s(c), daly, 1e-9);
    c.checkpoint_interval_s = 500.0;
    EXPECT_DOUBLE_EQ(sw::resolve_checkpoint_interval_s(c), 500.0);
    c.checkpoint_interval_s = 0.0;
    c.mtbf_s = 0.0;
    EXPECT_THROW(sw::resolve_checkpoint_interval_s(c), std::invalid_argument);
    // Daly's interval maximises the exact goodput to within a fraction of a percent.
    const double g_daly = sw::expected_goodput_constant_rate(daly, delta, 300.0, M);
    for (double tau : {0.5 * daly, 0.8 * daly, 1.25 * daly, 2.0 * daly})
        EXPECT_LT(sw::expected_goodput_constant_rate(tau, delta, 300.0, M), g_daly + 1e-3);
}

TEST(Goodput, LongTermMtbfCountsEveryInterruptingKindOnTheActiveSatellites) {
    // Trillium v6e per chip and host: UECC 1/44, SEFI 1/5000, host 1/450 + 1/400 per rad (SDC does
    // not interrupt); 3 active satellites at 2 rad/yr, rate_scale 10:
    //   1/M = 3 · 10 · (1/44 + 1/5000 + 1/450 + 1/400) · 2 / (365.25 · 86400) per second.
    sw::FaultModel m;
    m.rate_scale = 10.0;
    const double dose_rate = 2.0 / (365.25 * 86400.0);
    const double per_rad = 1.0 / 44 + 1.0 / 5000 + 1.0 / 450 + 1.0 / 400;
    EXPECT_NEAR(sw::interruption_mtbf_at_dose_rate_s(dose_rate, m, 3), 1.0 / (3 * 10.0 * per_rad * dose_rate), 1e-3);
    EXPECT_TRUE(std::isinf(sw::interruption_mtbf_at_dose_rate_s(0.0, m, 3)));
}

TEST(Goodput, ConstantFailureRateMatchesRenewalFormula) {
    const int sats = 8;
    const double M = 3600.0, delta = 60.0, R = 300.0, step = 10.0, tau = 1200.0, T = 2.0e6;
    const sw::FaultModel m = uecc_only();
    // Σ_sat Ḋ/44 = 1/M.
    const sw::DoseRateSeries series = sw::constant_dose_rate(sats, 44.0 / (sats * M));
    EXPECT_NEAR(sw::interruption_mtbf_s(series, m, sats, T), M, 1e-6 * M);
    EXPECT_NEAR(sw::interruption_mtbf_at_dose_rate_s(44.0 / (sats * M), m, sats), M, 1e-9 * M);
    sw::RecoveryConfig c;
    c.checkpoint_interval_s = tau;
    c.checkpoint_cost_s = delta;
    c.restart_s = R;
    sw::StepDurations steps;
    steps.nominal_s = step;
    const sw::MonteCarloResult mc = sw::monte_carlo_goodput(series, m, c, steps, T, 11, 16);
    const double exact = sw::expected_goodput_constant_rate(tau, delta, R, M);  // τ is 120 whole steps
    const double se = mc.goodput.stddev / std::sqrt(16.0);
    // Monte Carlo error (4 σ) + end-of-run bias (≤ τ/T: the unsaved tail counts as useful).
    EXPECT_NEAR(mc.goodput.mean, exact, 4 * se + tau / T) << "se " << se;
    EXPECT_GE(exact, mc.goodput.mean_ci95_low - tau / T);
    // job.hpp's checkpoint_waste_fraction, δ/τ + (τ+R)/M, charges a whole interval of rework
    // per failure where the mean loss is about half of one: it overstates the waste here.
    const double waste = 1.0 - mc.goodput.mean;
    EXPECT_LT(waste, sw::checkpoint_waste_fraction(tau, delta, R, M) - 0.05);
    // Every UECC hits an active rank and interrupts (steps, checkpoints and restarts alike):
    // 86400/M = 24 per day, Poisson.
    EXPECT_NEAR(mc.interruptions_per_day.mean, 86400.0 / M, 4 * std::sqrt(86400.0 / M / (T / 86400.0) / 16));
    EXPECT_LE(mc.goodput.spread_low, mc.goodput.mean);
    EXPECT_GE(mc.goodput.spread_high, mc.goodput.mean);
}

TEST(Goodput, AutoIntervalUsesDalyFromTheRateModel) {
    const int sats = 4;
    const double M = 7200.0;
    const sw::FaultModel m = uecc_only();
    const sw::DoseRateSeries series = sw::constant_dose_rate(sats, 44.0 / (sats * M));
    sw::RecoveryConfig c;  // interval 0 = auto, mtbf 0 = from the rate model
    c.checkpoint_cost_s = 30.0;
    sw::StepDurations steps;
    steps.nominal_s = 5.0;
    const sw::MonteCarloResult mc = sw::monte_carlo_goodput(series, m, c, steps, 5.0e5, 3, 4);
    EXPECT_NEAR(mc.checkpoint_interval_s, sw::daly_interval_s(30.0, M), 1e-6);
    const double exact = sw::expected_goodput_constant_rate(std::ceil(mc.checkpoint_interval_s / 5.0) * 5.0, 30.0,
                                                            c.restart_s, M);
    EXPECT_NEAR(mc.goodput.mean, exact, 0.02);
}

namespace {

// Ten satellites (two hot spares) for 3.5 days with SDC, UECC, crashes and link outages and steps
// of varying length: every branch of the recovery play.
struct AccountingCase {
    static constexpr int sats = 10;
    static constexpr double T = 3.0e5;
    std::vector<sw::FaultEvent> events;
    sw::RecoveryConfig config;
    sw::StepDurations steps;
    AccountingCase() {
        sw::FaultModel m;
        m.chips_per_satellite = 4;
        m.link_outage_rate_per_s = 1e-5;
        m.sdc_detection_probability = 0.5;
        events = sw::sample_fault_events(sample_series(Wavy{2e-4, 5900.0}, sats, 60.0, T), m, T, 1);
        config.checkpoint_interval_s = 900.0;
        config.spare_satellites = 2;
        config.reboot_s = 1800.0;
        steps.nominal_s = 7.0;
        steps.start_s = {0.0, 1000.0, 3000.0};
        steps.duration_s = {7.0, 9.0, 6.0};
        steps.period_s = 5900.0;
    }
    sw::GoodputResult play(bool record_timeline = false) const {
        return sw::simulate_training_with_faults(events, sats, T, steps, config, record_timeline);
    }
};

}  // namespace

TEST(Goodput, TimeAccountingAddsUpWithSparesCrashesAndSdc) {
    const AccountingCase a;
    const std::vector<sw::FaultEvent>& ev = a.events;
    const sw::GoodputResult r = a.play();
    double lost = r.sdc_recompute_s + r.checkpoint_s + r.tail_s;
    for (int k = 0; k < sw::fault_kind_count; ++k) lost += r.rework_s[k] + r.recovery_s[k];
    EXPECT_NEAR(r.useful_s + lost, r.elapsed_s, 1e-6 * r.elapsed_s);
    EXPECT_GT(r.rollbacks, 0);
    EXPECT_GT(r.replacements, 0);
    EXPECT_EQ(static_cast<long>(r.swaps.size()), r.replacements);
    EXPECT_GT(r.recomputed_steps, 0);
    EXPECT_GT(r.checkpoints, 0);
    EXPECT_GT(r.goodput, 0.0);
    EXPECT_LT(r.goodput, 1.0);
    ASSERT_EQ(r.effects.size(), ev.size());
    long processed = 0;
    for (long x : r.events_by_kind) processed += x;
    EXPECT_EQ(processed, static_cast<long>(ev.size()));
}

TEST(Goodput, SatelliteConditionsFollowEventsRebootsAndSwaps) {
    // Four satellites, number 3 a hot spare; an SDC on 0 at 100 s, a chip crash on 1 at 200 s
    // whose rank moves to the spare; reboots take 600 s.
    const std::vector<sw::FaultEvent> ev = {{100.0, 0, sw::FaultKind::sdc, true},
                                            {200.0, 1, sw::FaultKind::chip_crash, false}};
    const std::vector<sw::SpareSwap> swaps = {{200.0, 1, 3}};
    using C = sw::SatelliteCondition;
    sw::RecoveryConfig one_spare;
    one_spare.spare_satellites = 1;
    one_spare.reboot_s = 600.0;
    const auto at = [&](double t0, double t1) { return sw::satellite_conditions(ev, swaps, 4, one_spare, t0, t1); };
    EXPECT_EQ(at(0.0, 50.0), (std::vector<C>{C::ok, C::ok, C::ok, C::spare}));
    EXPECT_EQ(at(50.0, 150.0), (std::vector<C>{C::faulted, C::ok, C::ok, C::spare}));
    EXPECT_EQ(at(150.0, 300.0), (std::vector<C>{C::ok, C::rebooting, C::ok, C::ok}));
    EXPECT_EQ(at(300.0, 799.0), (std::vector<C>{C::ok, C::rebooting, C::ok, C::ok}));
    EXPECT_EQ(at(799.0, 900.0), (std::vector<C>{C::ok, C::spare, C::ok, C::ok}));
    // The play records the swap it makes.
    sw::RecoveryConfig c;
    c.checkpoint_interval_s = 1000.0;
    c.spare_satellites = 1;
    c.reboot_s = 600.0;
    const auto r = sw::simulate_training_with_faults(ev, 4, 2000.0, sw::StepDurations{}, c);
    ASSERT_EQ(r.swaps.size(), 1u);
    EXPECT_EQ(r.swaps[0].time_s, 200.0);
    EXPECT_EQ(r.swaps[0].failed, 1);
    EXPECT_EQ(r.swaps[0].spare, 3);
    // In groups of two (a constellation's clusters), the last of each is its spare: 1 and 3, and the
    // crash of satellite 0 moves its rank to 1, its own group's, not to 3.
    sw::RecoveryConfig pairs = c;
    pairs.spare_group_size = 2;
    EXPECT_EQ(sw::satellite_conditions({}, {}, 4, pairs, 0.0, 0.0), (std::vector<C>{C::ok, C::spare, C::ok, C::spare}));
    EXPECT_EQ(sw::initial_rank_count(pairs, 4), 2);
    const std::vector<sw::FaultEvent> crash = {{200.0, 0, sw::FaultKind::chip_crash, false}};
    const auto grouped = sw::simulate_training_with_faults(crash, 4, 2000.0, sw::StepDurations{}, pairs);
    ASSERT_EQ(grouped.swaps.size(), 1u);
    EXPECT_EQ(grouped.swaps[0].failed, 0);
    EXPECT_EQ(grouped.swaps[0].spare, 1);
}

TEST(Goodput, TimelineTilesTheRunAndMatchesTheTimeAccounting) {
    const AccountingCase a;
    const double T = AccountingCase::T;
    const sw::GoodputResult r = a.play(true);
    ASSERT_FALSE(r.timeline.empty());
    EXPECT_EQ(r.timeline.front().start_s, 0.0);
    EXPECT_DOUBLE_EQ(r.timeline.back().end_s, T);
    std::array<double, 9> by_phase{};
    std::array<int, 9> count{};
    for (std::size_t j = 0; j < r.timeline.size(); ++j) {
        const auto& x = r.timeline[j];
        EXPECT_GT(x.end_s, x.start_s);
        if (j > 0) {
            EXPECT_NEAR(x.start_s, r.timeline[j - 1].end_s, 1e-9 * T) << "gap before interval " << j;
        }
        by_phase[static_cast<std::size_t>(x.phase)] += x.end_s - x.start_s;
        ++count[static_cast<std::size_t>(x.phase)];
    }
    using P = sw::JobPhase;
    const auto at = [&](P p) { return by_phase[static_cast<std::size_t>(p)]; };
    const auto n = [&](P p) { return count[static_cast<std::size_t>(p)]; };
    double rework = 0.0, recovery = 0.0;
    for (int k = 0; k < sw::fault_kind_count; ++k) {
        rework += r.rework_s[static_cast<std::size_t>(k)];
        recovery += r.recovery_s[static_cast<std::size_t>(k)];
    }
    const double tol = 1e-6 * T;
    EXPECT_NEAR(at(P::step) + at(P::step_corrupted), r.useful_s, tol);
    EXPECT_NEAR(at(P::step_recomputed), r.sdc_recompute_s, tol);
    EXPECT_NEAR(at(P::checkpoint), r.checkpoint_s, tol);
    EXPECT_NEAR(at(P::unfinished), r.tail_s, tol);
    EXPECT_NEAR(at(P::step_rolled_back) + at(P::step_interrupted) + at(P::checkpoint_interrupted), rework, tol);
    EXPECT_NEAR(at(P::recovery), recovery, tol);
    EXPECT_EQ(n(P::step) + n(P::step_corrupted), r.steps_completed);
    EXPECT_EQ(n(P::step_corrupted), r.corrupted_steps);
    EXPECT_EQ(n(P::step_recomputed), r.recomputed_steps);
    EXPECT_EQ(n(P::checkpoint), r.checkpoints);
    EXPECT_GT(n(P::step_rolled_back), 0);
    EXPECT_GT(n(P::recovery), 0);
    // Without record_timeline the same play, no timeline.
    const sw::GoodputResult quiet = a.play();
    EXPECT_TRUE(quiet.timeline.empty());
    EXPECT_EQ(quiet.useful_s, r.useful_s);
}

TEST(Goodput, HandmadeEventsHaveTheirDocumentedEffects) {
    sw::RecoveryConfig c;
    c.checkpoint_interval_s = 100.0;
    c.checkpoint_cost_s = 10.0;
    c.restart_s = 20.0;
    c.reboot_s = 500.0;
    sw::StepDurations steps;
    steps.nominal_s = 10.0;
    // Fault-free: 1000 s = cycles of 100 s work + 10 s checkpoint.
    const sw::GoodputResult clean = sw::simulate_training_with_faults({}, 2, 1100.0, steps, c);
    EXPECT_EQ(clean.checkpoints, 10);
    EXPECT_NEAR(clean.useful_s, 1000.0, 1e-9);
    // A detected SDC at t=5 (step 0 rerun), a silent one at t=25 (step 2 corrupted, then rolled
    // back by the UECC at t=35), a crash of the spare (sat 1) at t=40.
    using K = sw::FaultKind;
    const std::vector<sw::FaultEvent> ev = {
        {5.0, 0, K::sdc, true}, {25.0, 0, K::sdc, false}, {35.0, 0, K::hbm_uecc, false}, {40.0, 1, K::chip_crash, false}};
    c.spare_satellites = 1;
    const sw::GoodputResult r = sw::simulate_training_with_faults(ev, 2, 1000.0, steps, c);
    EXPECT_EQ(r.effects[0], sw::FaultEffect::step_recomputed);
    EXPECT_EQ(r.effects[1], sw::FaultEffect::silent_corruption);
    EXPECT_EQ(r.effects[2], sw::FaultEffect::rollback);
    EXPECT_EQ(r.effects[3], sw::FaultEffect::reboot);  // spare, idle: during the restart
    EXPECT_EQ(r.recomputed_steps, 1);
    EXPECT_EQ(r.corrupted_steps, 0);  // the corrupted step was rolled back
    EXPECT_NEAR(r.sdc_recompute_s, 10.0, 1e-12);
    // Work since the checkpoint (steps at 10–20, 20–30) + partial step 30–35.
    EXPECT_NEAR(r.rework_s[static_cast<int>(K::hbm_uecc)], 25.0, 1e-12);
    EXPECT_NEAR(r.recovery_s[static_cast<int>(K::hbm_uecc)], 20.0, 1e-12);
    // Crash of the active satellite with a spare up: restart only; with no spare: reboot + restart.
    const std::vector<sw::FaultEvent> crash = {{50.0, 0, K::chip_crash, false}};
    const sw::GoodputResult with_spare = sw::simulate_training_with_faults(crash, 2, 1000.0, steps, c);
    EXPECT_NEAR(with_spare.recovery_s[static_cast<int>(K::chip_crash)], 20.0, 1e-12);
    EXPECT_EQ(with_spare.replacements, 1);
    c.spare_satellites = 0;
    const sw::GoodputResult no_spare = sw::simulate_training_with_faults(crash, 2, 1000.0, steps, c);
    EXPECT_NEAR(no_spare.recovery_s[static_cast<int>(K::chip_crash)], 520.0, 1e-12);
    EXPECT_EQ(no_spare.replacements, 0);
    // A silent SDC that survives to the end is counted.
    const std::vector<sw::FaultEvent> silent = {{15.0, 0, K::sdc, false}};
    EXPECT_EQ(sw::simulate_training_with_faults(silent, 2, 1000.0, steps, c).corrupted_steps, 1);
}

TEST(Goodput, StepDurationSeriesLookup) {
    sw::StepDurations s;
    s.nominal_s = 3.0;
    EXPECT_EQ(sw::step_duration_at_s(s, 123.0), 3.0);
    s.start_s = {0.0, 10.0, 20.0};
    s.duration_s = {1.0, 2.0, 4.0};
    EXPECT_EQ(sw::step_duration_at_s(s, 9.99), 1.0);
    EXPECT_EQ(sw::step_duration_at_s(s, 10.0), 2.0);
    EXPECT_EQ(sw::step_duration_at_s(s, 50.0), 4.0);
    s.period_s = 30.0;
    EXPECT_EQ(sw::step_duration_at_s(s, 45.0), 2.0);
}

TEST(MonteCarlo, TrialStatisticsOfAKnownSample) {
    const std::vector<double> v = {1, 2, 3, 4, 5};
    const sw::TrialStatistics s = sw::trial_statistics(v);
    EXPECT_DOUBLE_EQ(s.mean, 3.0);
    EXPECT_NEAR(s.stddev, std::sqrt(2.5), 1e-12);
    // Fewer than 40 trials: the spread is the trials' min and max, values some trial has.
    EXPECT_EQ(s.spread_low, 1.0);
    EXPECT_EQ(s.spread_high, 5.0);
    EXPECT_STREQ(sw::spread_kind(v.size()), "min_max");
    // Bootstrap interval of the mean: about mean ± 1.96 σ/√n (≈ ±1.24 less the bootstrap's
    // √((n-1)/n) shrink), reproducible from run to run.
    EXPECT_LT(s.mean_ci95_low, s.mean);
    EXPECT_GT(s.mean_ci95_high, s.mean);
    EXPECT_NEAR(s.mean_ci95_high - s.mean, 1.959963984540054 * std::sqrt(2.0 / 5), 0.25);
    const sw::TrialStatistics again = sw::trial_statistics(v);
    EXPECT_EQ(again.mean_ci95_low, s.mean_ci95_low);
    EXPECT_EQ(again.mean_ci95_high, s.mean_ci95_high);
}

// Issue 28: from 40 trials the spread is the nearest-rank 2.5th and 97.5th percentiles, ranks
// ceil(0.025 n) and ceil(0.975 n): for 1 … 40 that is ranks 1 and 39 (ceil(39.0) = 39, so the top
// trial is left out), for 1 … 100 ranks 3 and 98 — trial values, no interpolation.
TEST(MonteCarlo, SpreadFromFortyTrialsIsTheNearestRankPercentiles) {
    std::vector<double> forty(40), hundred(100);
    for (std::size_t i = 0; i < forty.size(); ++i) forty[i] = static_cast<double>(40 - i);  // unsorted input
    for (std::size_t i = 0; i < hundred.size(); ++i) hundred[i] = static_cast<double>(i + 1);
    const sw::TrialStatistics a = sw::trial_statistics(forty);
    EXPECT_EQ(a.spread_low, 1.0);
    EXPECT_EQ(a.spread_high, 39.0);
    EXPECT_STREQ(sw::spread_kind(forty.size()), "nearest_rank_p2.5_p97.5");
    EXPECT_STREQ(sw::spread_kind(39), "min_max");
    const sw::TrialStatistics b = sw::trial_statistics(hundred);
    EXPECT_EQ(b.spread_low, 3.0);
    EXPECT_EQ(b.spread_high, 98.0);
    EXPECT_EQ(b.median, 50.5);  // the mean of the two middle trials, as numpy.median
}

// Issue 15: rare events (most trials 0 or 1 events, one trial many) gave mean ± 1.96 σ/√n
// = [-0.16, 4.58] events/day. The interval must respect the support: never below 0.
TEST(MonteCarlo, IntervalOfRareNonNegativeValuesStaysNonNegative) {
    std::vector<double> v(20, 0.0);
    v[3] = 1.0;
    v[11] = 1.0;
    v[17] = 45.0;  // mean 2.35, σ ≈ 10: the normal interval reaches -2.3
    const sw::TrialStatistics s = sw::trial_statistics(v);
    EXPECT_GE(s.mean_ci95_low, 0.0);
    EXPECT_LE(s.mean_ci95_low, s.mean);
    EXPECT_GE(s.mean_ci95_high, s.mean);
    EXPECT_LE(s.mean_ci95_high, 45.0);
    // Goodput-like values near 1 stay at or below 1.
    const std::vector<double> g = {1.0, 1.0, 1.0, 0.2, 1.0};
    EXPECT_LE(sw::trial_statistics(g).mean_ci95_high, 1.0);
}

TEST(MonteCarlo, PoissonRateIntervalIsGarwoodsExactInterval) {
    // Published values (Garwood 1936; e.g. Ulm 1990 table): 0 events -> [0, 3.689], 1 -> [0.0253, 5.572],
    // 10 -> [4.795, 18.39] for the mean count.
    auto [lo0, hi0] = sw::poisson_rate_ci95(0.0, 1, 1.0);
    EXPECT_EQ(lo0, 0.0);
    EXPECT_NEAR(hi0, 3.689, 1e-3);
    auto [lo1, hi1] = sw::poisson_rate_ci95(1.0, 1, 1.0);
    EXPECT_NEAR(lo1, 0.0253, 1e-4);
    EXPECT_NEAR(hi1, 5.572, 1e-3);
    // 10 events over 5 trials of 2 days: the count interval divided by the 10 trial-days.
    auto [lo10, hi10] = sw::poisson_rate_ci95(10.0, 5, 2.0);
    EXPECT_NEAR(lo10, 0.4795, 1e-4);
    EXPECT_NEAR(hi10, 1.839, 1e-3);
}

namespace {

// A varying dose rate on 16 satellites for a day, four chips each, link outages on: every field of
// an event is exercised (gateway terminals on two of them), and a few thousand events over the trials.
struct BackendCase {
    sw::DoseRateSeries series = sample_series(Wavy{2e-3, 5900.0}, 16, 10.0, 86400.0);
    sw::FaultModel model = [] {
        sw::FaultModel m;
        m.chips_per_satellite = 4;
        m.link_outage_rate_per_s = 2e-5;
        m.gateway_outage_rate_per_s = 2e-5;  // drawn on the host for either backend
        m.gateway_satellites = {0, 3};
        return m;
    }();
    double duration_s = 86400.0;
};

}  // namespace

TEST(FaultBackends, CudaDrawsTheSameEventsAsCpu) {
    if (sw::cuda_device_count() == 0)
        GTEST_SKIP() << "CUDA comparison skipped: " << sw::cuda_unavailable_reason();
    const BackendCase c;
    const auto cpu = sw::sample_fault_events_batch(c.series, c.model, c.duration_s, 42, 5, 64, sw::Backend::cpu);
    const auto gpu = sw::sample_fault_events_batch(c.series, c.model, c.duration_s, 42, 5, 64, sw::Backend::cuda);
    ASSERT_EQ(cpu.size(), 64u);
    ASSERT_EQ(gpu.size(), 64u);
    std::size_t total = 0;
    for (std::size_t t = 0; t < cpu.size(); ++t) {
        ASSERT_EQ(gpu[t].size(), cpu[t].size()) << "trial " << t;
        for (std::size_t i = 0; i < cpu[t].size(); ++i) {
            EXPECT_EQ(gpu[t][i].satellite, cpu[t][i].satellite);
            EXPECT_EQ(gpu[t][i].kind, cpu[t][i].kind);
            EXPECT_EQ(gpu[t][i].detected, cpu[t][i].detected);
            EXPECT_EQ(gpu[t][i].gateway, cpu[t][i].gateway);
            // Equal up to the last bits of the GPU's logarithm.
            EXPECT_NEAR(gpu[t][i].time_s, cpu[t][i].time_s, 1e-12 * std::max(1.0, cpu[t][i].time_s));
        }
        total += cpu[t].size();
    }
    EXPECT_GT(total, 1000u);
    // The Monte Carlo on either backend gives the same goodput trial by trial.
    sw::RecoveryConfig rc;
    rc.checkpoint_interval_s = 1800.0;
    rc.spare_satellites = 2;
    sw::StepDurations steps;
    steps.nominal_s = 2.0;
    const auto mc_cpu = sw::monte_carlo_goodput(c.series, c.model, rc, steps, c.duration_s, 42, 32, sw::Backend::cpu);
    const auto mc_gpu = sw::monte_carlo_goodput(c.series, c.model, rc, steps, c.duration_s, 42, 32, sw::Backend::cuda);
    EXPECT_EQ(mc_gpu.backend, sw::Backend::cuda);
    ASSERT_EQ(mc_gpu.goodput_per_trial.size(), mc_cpu.goodput_per_trial.size());
    for (std::size_t t = 0; t < mc_cpu.goodput_per_trial.size(); ++t)
        EXPECT_NEAR(mc_gpu.goodput_per_trial[t], mc_cpu.goodput_per_trial[t], 1e-9);
}

TEST(FaultBackends, AutomaticDrawsOnTheCpuWithoutAGpuAndCudaRefuses) {
    if (sw::cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present: the CPU fallback is not taken";
    const BackendCase c;
    const auto cpu = sw::sample_fault_events_batch(c.series, c.model, c.duration_s, 42, 0, 4, sw::Backend::cpu);
    const auto automatic =
        sw::sample_fault_events_batch(c.series, c.model, c.duration_s, 42, 0, 4, sw::Backend::automatic);
    ASSERT_EQ(automatic.size(), cpu.size());
    for (std::size_t t = 0; t < cpu.size(); ++t) {
        ASSERT_EQ(automatic[t].size(), cpu[t].size());
        for (std::size_t i = 0; i < cpu[t].size(); ++i) EXPECT_EQ(automatic[t][i].time_s, cpu[t][i].time_s);
    }
    EXPECT_THROW(sw::sample_fault_events_batch(c.series, c.model, c.duration_s, 42, 0, 4, sw::Backend::cuda),
                 std::runtime_error);
    sw::RecoveryConfig rc;
    rc.checkpoint_interval_s = 1800.0;
    const auto mc = sw::monte_carlo_goodput(c.series, c.model, rc, sw::StepDurations{}, c.duration_s, 42, 3,
                                            sw::Backend::automatic);
    EXPECT_EQ(mc.backend, sw::Backend::cpu);
}

TEST(MonteCarlo, TrialsBeyondOneBatchContinueTheTrialNumbering) {
    // More trials than one batch: trial k of the Monte Carlo is trial k of sample_fault_events.
    const sw::DoseRateSeries series = sw::constant_dose_rate(2, 5e-3);
    sw::FaultModel m = uecc_only();
    sw::RecoveryConfig rc;
    rc.checkpoint_interval_s = 600.0;
    const std::int32_t trials = sw::monte_carlo_batch_trials + 3;
    const auto mc = sw::monte_carlo_goodput(series, m, rc, sw::StepDurations{}, 20000.0, 9, trials);
    ASSERT_EQ(mc.goodput_per_trial.size(), static_cast<std::size_t>(trials));
    for (std::int32_t k : {0, sw::monte_carlo_batch_trials - 1, sw::monte_carlo_batch_trials + 2}) {
        const auto ev = sw::sample_fault_events(series, m, 20000.0, 9, static_cast<std::uint64_t>(k));
        const auto r = sw::simulate_training_with_faults(ev, 2, 20000.0, sw::StepDurations{}, rc);
        EXPECT_EQ(mc.goodput_per_trial[static_cast<std::size_t>(k)], r.goodput) << "trial " << k;
    }
}
