// Operational faults (docs/faults.md "Operational faults") and asynchronous checkpoints: the
// Llama 3 preset against the paper's counts (docs/references.md "Failures on the ground"), with
// intervals from the Poisson and multinomial statistics of the draw; hand-built plays.
#include <skyfabric/workloads/faults.hpp>
#include <skyfabric/workloads/job.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace sw = skyfabric::workloads;

namespace {

constexpr double day_s = 86400.0;

// A fabric's ranks with no dose: only the operational streams draw.
sw::FaultModel operational_only(const std::string& preset, std::int32_t gpus_per_rank) {
    sw::FaultModel m;
    m.operational = sw::operational_preset(preset);
    m.operational.gpus_per_rank = gpus_per_rank;
    return m;
}

// Two-sided normal quantile for 99.9 %: the bounds below are wide enough that a seeded draw
// from the model passes, and a model 3 % off the paper's 419 in 54 days fails (64 trials:
// 26,816 expected events, σ = 164, 3.29 σ = 1.0 %).
constexpr double z999 = 3.29;

}  // namespace

TEST(OperationalFaults, Llama3InterruptionsAndSharesHoldWithinTheirStatisticalIntervals) {
    // Llama 3 405B: 419 unexpected interruptions in 54 days on 16,384 GPUs, here 2,048 ranks of 8
    // GPUs. The draw is Poisson: the sum over n trials has mean 419 n, and each cause's count
    // given the total is binomial with the paper's share (count / 419).
    const std::int32_t ranks = 2048, trials = 64;
    const double T = 54.0 * day_s;
    const sw::FaultModel model = operational_only("llama3_405b", 8);
    sw::RecoveryConfig c;
    c.checkpoint_interval_s = 0.0;  // Daly at the model's MTBF
    c.checkpoint_cost_s = 3.0;
    c.restart_s = 600.0;
    c.reboot_s = 0.0;
    c.on_rank_loss = sw::RankLossPolicy::wait;
    sw::StepDurations steps;
    steps.nominal_s = 60.0;
    const sw::DoseRateSeries series = sw::constant_dose_rate(ranks, 0.0);
    const auto mc = sw::monte_carlo_goodput(series, model, c, steps, T, 42, trials, sw::Backend::cpu, nullptr, 2);

    // The rate the preset gives: 419 / 54 per day exactly, and so the MTBF Daly plans on.
    const double mtbf = sw::interruption_mtbf_s(series, model, ranks, T);
    EXPECT_NEAR(day_s / mtbf, 419.0 / 54.0, 1e-9);

    // Interruptions: the total over the trials within its Poisson interval around 419 per trial.
    const double expected_total = 419.0 * trials;
    EXPECT_NEAR(mc.total_interruptions, expected_total, z999 * std::sqrt(expected_total));
    // The paper's one 54-day count lies where the trials' counts lie (nearest-rank 2.5–97.5 %).
    EXPECT_LE(mc.interruptions_per_day.spread_low, 419.0 / 54.0);
    EXPECT_GE(mc.interruptions_per_day.spread_high, 419.0 / 54.0);
    // ... and that spread is a Poisson's: its standard deviation √419 / 54 a day, within 3.29 of
    // its own standard error (≈ σ / √(2(n−1))).
    const double sigma = std::sqrt(419.0) / 54.0;
    EXPECT_NEAR(mc.interruptions_per_day.stddev, sigma, z999 * sigma / std::sqrt(2.0 * (trials - 1)));

    // Shares: each cause's interruptions against Binomial(total, paper's share).
    const std::vector<double> paper = {148, 72, 54, 35, 32, 19, 17, 7, 7, 6, 6, 3, 3, 2, 2, 2, 2, 2};
    ASSERT_EQ(model.operational.causes.size(), paper.size());
    double total = 0.0;
    for (std::size_t k = 0; k < paper.size(); ++k) total += mc.mean_interruptions_by_cause[k] * trials;
    EXPECT_DOUBLE_EQ(total, mc.total_interruptions);
    for (std::size_t k = 0; k < paper.size(); ++k) {
        const double p = paper[k] / 419.0;
        const double count = mc.mean_interruptions_by_cause[k] * trials;
        EXPECT_NEAR(count, p * total, z999 * std::sqrt(total * p * (1.0 - p))) << model.operational.causes[k].name;
    }

    // Effective training time: Daly's renewal goodput at the same M, τ and costs (checkpoints and
    // restarts only), less the three manual interventions' hold in 419 (2 h each), within the
    // trials' Monte Carlo error; and above the paper's 90 %.
    const double tau = mc.checkpoint_interval_s;
    EXPECT_NEAR(tau, sw::daly_interval_s(3.0, mtbf), 1e-6);
    const double w = std::ceil(tau / steps.nominal_s) * steps.nominal_s;
    const double renewal = sw::expected_goodput_constant_rate(w, c.checkpoint_cost_s, c.restart_s, mtbf);
    const double held = 3.0 / 419.0 * 2.0 * 3600.0 / mtbf;  // share of the time held by a person
    const double se = mc.goodput.stddev / std::sqrt(static_cast<double>(trials));
    EXPECT_NEAR(mc.goodput.mean, renewal - held, 4.0 * se + w / T) << "renewal " << renewal << " se " << se;
    EXPECT_GT(mc.goodput.spread_low, 0.90);
}

TEST(OperationalFaults, HotRanksCarryTheirShareAndRetryChainsFailTwoInThree) {
    // The 504-GPU study: 63 nodes, the first 3 carry half of the failures; a retry chain succeeds
    // a third of the time, a failed one holds the job 6 × 11 min + the manual hour.
    sw::FaultModel model = operational_only("b200_504", 8);
    const std::int32_t ranks = 63;
    const double T = 55.0 * day_s;
    std::int64_t hot = 0, all = 0, held = 0;
    const double failed_hold = 6 * 660.0 + 3600.0;
    for (std::uint64_t trial = 0; trial < 400; ++trial) {
        for (const auto& e : sw::sample_fault_events(sw::constant_dose_rate(ranks, 0.0), model, T, 7, trial)) {
            ASSERT_EQ(e.cause, 0);
            EXPECT_EQ(e.kind, sw::FaultKind::chip_crash);  // reboot: a node lost
            ++all;
            if (e.satellite < 3) ++hot;
            if (e.hold_s > 0.0f) {
                ++held;
                EXPECT_FLOAT_EQ(e.hold_s, static_cast<float>(failed_hold));
            }
        }
    }
    // 10 failures per 504 GPUs over 55 days: 10 per trial on average, Poisson over 400 trials.
    EXPECT_NEAR(static_cast<double>(all), 4000.0, z999 * std::sqrt(4000.0));
    const auto binomial = [&](double p) { return z999 * std::sqrt(static_cast<double>(all) * p * (1.0 - p)); };
    EXPECT_NEAR(static_cast<double>(hot), 0.5 * all, binomial(0.5));
    EXPECT_NEAR(static_cast<double>(held), 2.0 / 3.0 * all, binomial(2.0 / 3.0));
}

TEST(OperationalFaults, LeaveTheRadiationDrawsAsTheyWere) {
    // The operational streams have ids of their own: adding them changes none of the radiation events.
    sw::FaultModel radiation;
    radiation.link_outage_rate_per_s = 2.0 / day_s;
    sw::FaultModel both = radiation;
    both.operational = sw::operational_preset("llama3_405b");
    both.operational.gpus_per_rank = 1000;  // enough to put some in each trial
    const sw::DoseRateSeries series = sw::constant_dose_rate(16, 150.0 / (365.25 * day_s) * 100.0);
    for (std::uint64_t trial = 0; trial < 4; ++trial) {
        const auto a = sw::sample_fault_events(series, radiation, 2.0 * day_s, 9, trial);
        auto b = sw::sample_fault_events(series, both, 2.0 * day_s, 9, trial);
        const auto operational = std::count_if(b.begin(), b.end(), [](const sw::FaultEvent& e) { return e.cause >= 0; });
        EXPECT_GT(operational, 0);
        std::erase_if(b, [](const sw::FaultEvent& e) { return e.cause >= 0; });
        ASSERT_EQ(a.size(), b.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
            EXPECT_EQ(a[i].time_s, b[i].time_s);
            EXPECT_EQ(a[i].satellite, b[i].satellite);
            EXPECT_EQ(a[i].kind, b[i].kind);
            EXPECT_EQ(a[i].mark, b[i].mark);
        }
    }
}

namespace {

// Steps of 10 s, τ = 50 s of them, δ = 5 s, R = 20 s, one rank.
sw::RecoveryConfig hand_recovery() {
    sw::RecoveryConfig c;
    c.checkpoint_interval_s = 50.0;
    c.checkpoint_cost_s = 5.0;
    c.restart_s = 20.0;
    c.reboot_s = 0.0;
    c.on_rank_loss = sw::RankLossPolicy::wait;
    return c;
}

sw::StepDurations ten_second_steps() {
    sw::StepDurations s;
    s.nominal_s = 10.0;
    return s;
}

// An operational restart (no rank lost) of cause 0 at t, holding the job for hold_s.
sw::FaultEvent operational_restart(double t, float hold_s = 0.0f) {
    sw::FaultEvent e{t, 0, sw::FaultKind::hbm_uecc};
    e.cause = 0;
    e.hold_s = hold_s;
    return e;
}

}  // namespace

TEST(OperationalFaults, AManualInterventionHoldsTheRestart) {
    // Steps 0–50, checkpoint 50–55, steps 55–105; the fault at 102 loses 55–102 (47 s); the job is
    // held 1000 s by a person, restarts 1102–1122, then steps on from 1122 to the end at 1200.
    const std::vector<sw::FaultEvent> events = {operational_restart(102.0, 1000.0f)};
    const auto r = sw::simulate_training_with_faults(events, 1, 1200.0, ten_second_steps(), hand_recovery());
    EXPECT_EQ(r.rollbacks, 1);
    EXPECT_EQ(r.operational.interruptions[0], 1);
    EXPECT_EQ(r.operational.events[0], 1);
    EXPECT_EQ(r.events_by_kind[static_cast<int>(sw::FaultKind::hbm_uecc)], 0);  // radiation counts stay radiation's
    EXPECT_DOUBLE_EQ(r.rework_s[static_cast<int>(sw::FaultKind::hbm_uecc)], 47.0);
    EXPECT_DOUBLE_EQ(r.recovery_s[static_cast<int>(sw::FaultKind::hbm_uecc)], 1020.0);
    EXPECT_DOUBLE_EQ(r.restart_total_s, 20.0);
    EXPECT_DOUBLE_EQ(r.operational.lost_s[0], 47.0 + 1020.0);
    // After 1122: steps 1122–1172, checkpoint 1172–1177, steps 1177–1197 (2 kept), 1197–1207 cut.
    EXPECT_DOUBLE_EQ(r.useful_s, 50.0 + 50.0 + 20.0);
    EXPECT_DOUBLE_EQ(r.checkpoint_s, 10.0);
    EXPECT_DOUBLE_EQ(r.tail_s, 3.0);
}

TEST(AsyncCheckpoints, AFaultBeforeTheWriteCompletesRollsBackToTheLastCompletedOne) {
    // Async: the snapshot stalls 2 GB / 1 GB/s = 2 s, the write (checkpoint_cost_s = 50 s) overlaps.
    // Steps 0–50, snapshot 50–52 (write until 102), steps 52–62, ..., a fault at 100 (before the
    // write completes): the rollback goes to t = 0's state, so all 100 s are lost.
    sw::RecoveryConfig c = hand_recovery();
    c.checkpoint_mode = sw::CheckpointMode::async;
    c.checkpoint_cost_s = 50.0;
    c.snapshot_bytes_per_rank = 2e9;
    c.snapshot_bandwidth_Bps = 1e9;
    EXPECT_DOUBLE_EQ(sw::checkpoint_stall_s(c), 2.0);
    const auto early = sw::simulate_training_with_faults({{operational_restart(100.0)}}, 1, 150.0, ten_second_steps(), c);
    EXPECT_EQ(early.checkpoints, 0);
    EXPECT_DOUBLE_EQ(early.rework_s[static_cast<int>(sw::FaultKind::hbm_uecc)], 100.0);  // 50 + 2 + 40 + 8
    // Restart 100–120, steps 120–170 would end past 150: 3 steps kept (120–150), the tail none.
    EXPECT_DOUBLE_EQ(early.useful_s, 30.0);
    // The same fault at 105, after the write completed at 102: that checkpoint holds. The next
    // snapshot (102–104, its write until 154) is lost with the steps before it (52–102) and the cut
    // step 104–105: 50 + 2 + 1 s.
    const auto late = sw::simulate_training_with_faults({{operational_restart(105.0)}}, 1, 150.0, ten_second_steps(), c);
    EXPECT_EQ(late.checkpoints, 1);
    EXPECT_DOUBLE_EQ(late.checkpoint_s, 2.0);
    EXPECT_DOUBLE_EQ(late.rework_s[static_cast<int>(sw::FaultKind::hbm_uecc)], 53.0);
    // Restart 105–125, steps 125–145 kept, 145–155 cut (5 s tail).
    EXPECT_DOUBLE_EQ(late.useful_s, 50.0 + 20.0);
    EXPECT_DOUBLE_EQ(late.tail_s, 5.0);
    // Blocking at the same cost: the job stops 50–100 for the write, and the fault at 105 keeps it.
    const auto blocking = sw::simulate_training_with_faults({{operational_restart(105.0)}}, 1, 150.0, ten_second_steps(),
                                                            hand_recovery() /* δ = 5 */);
    EXPECT_EQ(blocking.checkpoints, 1);
    // Every second accounted for, async as blocking.
    for (const auto* r : {&early, &late, &blocking}) {
        double sum = r->useful_s + r->sdc_recompute_s + r->checkpoint_s + r->tail_s + r->fabric_loss_s + r->stalled_s +
                     r->shrunk_s - r->fabric_gain_s;
        for (int k = 0; k < sw::fault_kind_count; ++k) sum += r->rework_s[k] + r->recovery_s[k];
        EXPECT_NEAR(sum, 150.0, 1e-9);
    }
}

TEST(AsyncCheckpoints, OneWriteAtATimeAndDalyOnTheStall) {
    // A write longer than τ: the next snapshot waits for it (counted as checkpoint time). Steps
    // 0–50, snapshot 50–52 (write to 132), steps 52–102, the next snapshot due at 102 waits to 132.
    sw::RecoveryConfig c = hand_recovery();
    c.checkpoint_mode = sw::CheckpointMode::async;
    c.checkpoint_cost_s = 80.0;
    c.snapshot_bytes_per_rank = 2e9;
    c.snapshot_bandwidth_Bps = 1e9;
    const auto r = sw::simulate_training_with_faults({}, 1, 140.0, ten_second_steps(), c);
    EXPECT_EQ(r.checkpoints, 2);  // the first done at 132, the second's write cut by the end (its work counts)
    EXPECT_DOUBLE_EQ(r.checkpoint_s, 2.0 + 30.0);
    EXPECT_DOUBLE_EQ(r.useful_s, 100.0);
    // Daly's interval on the 2 s stall, not on the 80 s write.
    c.checkpoint_interval_s = 0.0;
    c.mtbf_s = 3600.0;
    EXPECT_DOUBLE_EQ(sw::resolve_checkpoint_interval_s(c), sw::daly_interval_s(2.0, 3600.0));
}
