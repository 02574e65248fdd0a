// The analysis model on hand-built inputs (analysis/analysis.hpp): the step and TTFT breakdowns
// partition their totals, and each detector fires on its rule with the numbers derived by hand.
#include <skyfabric/analysis/analysis.hpp>
#include <skyfabric/analysis/critical_path.hpp>
#include <skyfabric/workloads/job.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace skyfabric::analysis;

const AntiPattern* find(const Analysis& a, const std::string& id) {
    for (const auto& p : a.anti_patterns)
        if (p.id == id) return &p;
    return nullptr;
}

TEST(Analysis, TheStepBreakdownPartitionsEveryStep) {
    Input in;
    TrainingInput t;
    t.compute_full_speed_s = 2.0;
    t.throttled_s = 1.0;  // all slowed compute is power's
    // Step 0: 2 s compute + 1 s exposed (0.25 s of it stalled); step 1: 3 s compute (1 s slowed) + 0.5 s exposed.
    t.steps = {{0.0, 3.0, 2.0, 0.25}, {3.0, 6.5, 3.0, 0.0}};
    in.training = t;
    const auto a = analyse(in);
    ASSERT_FALSE(a.breakdowns.empty());
    const auto& b = a.breakdowns[0];
    EXPECT_DOUBLE_EQ(b.total_s, 3.25);
    EXPECT_DOUBLE_EQ(b.parts[0].seconds, 2.0);    // full speed
    EXPECT_DOUBLE_EQ(b.parts[1].seconds, 0.5);    // power: (0 + 1) / 2
    EXPECT_DOUBLE_EQ(b.parts[2].seconds, 0.0);    // stragglers
    EXPECT_DOUBLE_EQ(b.parts[3].seconds, 0.125);  // stalled: (0.25 + 0) / 2
    EXPECT_DOUBLE_EQ(b.parts[4].seconds, 0.625);  // transfer: (0.75 + 0.5) / 2
    EXPECT_LE(std::fabs(b.parts_sum_s() - b.total_s), 1e-12);
    EXPECT_EQ(b.max_relative_residual, 0.0);
    // 0.5 s of 3.25 s throttled: above the 2 % straggler rule, the only cause (exposed 0.75/3.25 ≥ 20 % too, as a symptom).
    const auto* straggler = find(a, "straggling_cluster");
    ASSERT_NE(straggler, nullptr);
    EXPECT_DOUBLE_EQ(straggler->impact, 0.5 / 3.25);
}

TEST(Analysis, ACheckpointIntervalOffDalysIsDetectedWithDalysValue) {
    Input in;
    FaultInput f;
    f.elapsed_s = 7200.0;
    f.goodput = 0.6;
    f.checkpoint_cost_s = 60.0;
    f.restart_s = 300.0;
    f.mtbi_long_term_s = 15000.0;
    const double daly = skyfabric::workloads::daly_interval_s(60.0, 15000.0);
    f.checkpoint_interval_s = daly / 10.0;
    in.faults = {f};
    const auto a = analyse(in);
    ASSERT_FALSE(a.anti_patterns.empty());
    EXPECT_EQ(a.anti_patterns[0].id, "checkpoint_interval");
    ASSERT_EQ(a.anti_patterns[0].recommendations.size(), 1u);
    EXPECT_EQ(a.anti_patterns[0].recommendations[0].value, std::to_string(static_cast<long>(std::round(daly))));
    // δ/τ + (τ + R)/M at τ = Daly/10 minus the same at Daly.
    const auto waste = [&](double tau) { return 60.0 / tau + (tau + 300.0) / 15000.0; };
    EXPECT_NEAR(a.anti_patterns[0].impact, waste(daly / 10.0) - waste(daly), 1e-12);
    // Within a factor of two of Daly: nothing to report.
    in.faults[0].checkpoint_interval_s = daly * 1.5;
    EXPECT_EQ(find(analyse(in), "checkpoint_interval"), nullptr);
}

// Rework + restarts 900 s of the ring's 1,200 s lost (0.75 of its losses, 0.15 of a 6,000 s run),
// noloco keeping 0.85 against the ring's 0.70: named, with constellation.algorithms=[noloco] whose
// goodput is read in the rerun; expected (0.85 - 0.70) / 0.70. Without a local-SGD algorithm in the
// run, or when it keeps less, or when checkpoints dominate the losses, nothing is reported.
TEST(Analysis, RollbackDominatedLossesPointToTheLocalSgdAlgorithmThatKeptMore) {
    Input in;
    in.kind = RunKind::constellation;
    FaultInput ring;
    ring.algorithm = "ring";
    ring.trials = 10;
    ring.elapsed_s = 6000.0;
    ring.goodput = 0.70;
    ring.lost_faults_s = 600.0;
    ring.lost_restarts_s = 300.0;
    ring.lost_checkpoints_s = 300.0;
    FaultInput diloco = ring, noloco = ring;
    diloco.algorithm = "diloco";
    diloco.goodput = 0.69;
    noloco.algorithm = "noloco";
    noloco.goodput = 0.85;
    noloco.lost_faults_s = 100.0;
    noloco.lost_restarts_s = 50.0;
    in.faults = {ring, diloco, noloco};
    const auto a = analyse(in);
    const auto* p = find(a, "rollback_losses");
    ASSERT_NE(p, nullptr);
    EXPECT_NEAR(p->impact, 900.0 / 6000.0, 1e-12);
    EXPECT_EQ(p->cause, "rollbacks: one fault rolls every rank of ring back (0.15 of the run)");
    ASSERT_EQ(p->recommendations.size(), 1u);
    const auto& r = p->recommendations[0];
    EXPECT_EQ(r.set_argument(), "constellation.algorithms=[noloco]");
    EXPECT_EQ(r.metric, "goodput");
    EXPECT_EQ(r.algorithm, "ring");
    EXPECT_EQ(r.after_algorithm, "noloco");
    EXPECT_FALSE(r.lower_is_better);
    EXPECT_NEAR(r.expected_relative_change, 0.15 / 0.70, 1e-12);

    in.faults = {ring};  // no local-SGD algorithm measured
    EXPECT_EQ(find(analyse(in), "rollback_losses"), nullptr);
    noloco.goodput = 0.65;  // local SGD kept less than the ring
    in.faults = {ring, noloco};
    EXPECT_EQ(find(analyse(in), "rollback_losses"), nullptr);
    noloco.goodput = 0.85;
    ring.lost_checkpoints_s = 1000.0;  // rollbacks 900 of 1,900 s lost: below half
    in.faults = {ring, noloco};
    EXPECT_EQ(find(analyse(in), "rollback_losses"), nullptr);
}

TEST(Analysis, TtftSplitsIntoQueueingPrefillAndKvTransferAndTheDominantPartNamesTheCause) {
    Input in;
    in.serving.enabled = true;
    in.serving.ttft_slo_s = 1.0;
    // Nine requests on time; one late by its KV transfer (0.1 queue + 0.2 prefill + 1.5 KV).
    for (int i = 0; i < 9; ++i) in.serving.requests.push_back({double(i), i + 0.1, i + 0.4, i + 0.5, 0});
    in.serving.requests.push_back({9.0, 9.1, 9.3, 10.8, 0});
    const auto a = analyse(in);
    ASSERT_GE(a.breakdowns.size(), 2u);
    for (const auto& b : a.breakdowns) {
        EXPECT_LE(std::fabs(b.parts_sum_s() - b.total_s), 1e-9 * b.total_s) << b.subject;
        EXPECT_LE(b.max_relative_residual, 1e-9) << b.subject;
    }
    ASSERT_FALSE(a.anti_patterns.empty());
    EXPECT_EQ(a.anti_patterns[0].id, "serving_kv_transfer");
    EXPECT_DOUBLE_EQ(a.anti_patterns[0].impact, 0.1);
}

}  // namespace

namespace {

using skyfabric::analysis::CollectiveSlice;
using skyfabric::analysis::StepSlice;

TEST(CriticalPath, EachStepGoesThroughTheCollectiveThatEndsItAndOnToTheStepItGates) {
    // Step 0: compute [0, 2], its collectives [1, 2.5] and [1.5, 3]: the second ends the step (1 s exposed).
    // Step 1 starts at 3 (gated by it): compute [3, 5], its collective [3.5, 4.8] hidden under compute.
    // Step 2 starts at 6, a second after step 1 ended (a stall): step 1's chain does not go on into it.
    const std::vector<StepSlice> steps = {{0, 0.0, 2.0, 3.0}, {1, 3.0, 5.0, 5.0}, {2, 6.0, 8.0, 8.5}};
    const std::vector<CollectiveSlice> collectives = {{0, 1.0, 2.5}, {0, 1.5, 3.0}, {1, 3.5, 4.8}, {2, 7.0, 8.5}};
    const auto path = skyfabric::analysis::critical_path(steps, collectives);
    ASSERT_EQ(path.size(), 3u);
    EXPECT_EQ(path[0].gating_collective, 1);
    EXPECT_EQ(path[0].next_step_index, 1);
    EXPECT_EQ(path[1].gating_collective, -1);
    EXPECT_EQ(path[1].next_step_index, -1);
    EXPECT_EQ(path[2].gating_collective, 3);
    EXPECT_EQ(path[2].next_step_index, -1);
}

}  // namespace

namespace {

using namespace skyfabric::analysis;

TEST(Analysis, EachReplicaOfALocalSgdAlgorithmIsBrokenDownOverItsRounds) {
    // DiLoCo at 1 s of compute per inner step at full speed; two replicas, two rounds of 4 inner steps each,
    // both rounds starting together ([0, 6) and [6, 16)); each outer sync starts when both are ready and
    // takes 1 s. Replica 0 (slowed) is ready at 5 s and 15 s: inner 5 + 9 = 14 s (8 at full speed, 6 more),
    // no wait, 2 s of sync. Replica 1 is ready at 4 s and 10 s: inner 4 + 4 = 8 s, waits 1 + 5 = 6 s for
    // replica 0, 2 s of sync. Both: 16 s.
    Input in;
    AlgorithmRecord a;
    a.name = "diloco";
    a.compute_per_step_s = 1.0;
    in.algorithms = {a};
    in.rounds = {{"diloco", 0, 4, 0.0, 5.0, 5.0, 6.0},
                 {"diloco", 1, 4, 0.0, 4.0, 5.0, 6.0},
                 {"diloco", 0, 4, 6.0, 15.0, 15.0, 16.0},
                 {"diloco", 1, 4, 6.0, 10.0, 15.0, 16.0}};
    const auto out = analyse(in);
    std::vector<const Breakdown*> replicas;
    for (const auto& b : out.breakdowns)
        if (b.subject.rfind("diloco replica", 0) == 0) replicas.push_back(&b);
    ASSERT_EQ(replicas.size(), 2u);
    const auto& r0 = *replicas[0];
    const auto& r1 = *replicas[1];
    EXPECT_EQ(r0.subject.rfind("diloco replica 0 (cluster 0, 2 rounds", 0), 0u) << r0.subject;
    EXPECT_DOUBLE_EQ(r0.total_s, 16.0);
    EXPECT_DOUBLE_EQ(r0.parts[0].seconds, 8.0);   // 8 inner steps at 1 s
    EXPECT_DOUBLE_EQ(r0.parts[1].seconds, 6.0);   // inner 5 + 9 = 14 s, 6 beyond full speed
    EXPECT_DOUBLE_EQ(r0.parts[2].seconds, 0.0);   // it sets the pace
    EXPECT_DOUBLE_EQ(r0.parts[3].seconds, 2.0);
    EXPECT_DOUBLE_EQ(r1.total_s, 16.0);
    EXPECT_DOUBLE_EQ(r1.parts[0].seconds, 8.0);
    EXPECT_DOUBLE_EQ(r1.parts[1].seconds, 0.0);
    EXPECT_DOUBLE_EQ(r1.parts[2].seconds, 6.0);   // 1 + 5 s waiting for replica 0
    EXPECT_DOUBLE_EQ(r1.parts[3].seconds, 2.0);
    EXPECT_LE(r0.max_relative_residual, 1e-12);
    EXPECT_LE(r1.max_relative_residual, 1e-12);
}

}  // namespace

namespace {

using namespace skyfabric::analysis;

TEST(Analysis, TheExposedTransferIsSplitByTheCollectivesInTheExposedWindow) {
    // Step 0 [0, 3): 2 s of compute, 0.2 s stalled; all_to_all over [1.5, 2.5) and all_reduce over [2.5, 3):
    // each covers 0.5 s of the exposed window [2, 3), so each takes half of the 0.8 s of transfer.
    // Step 1 [3, 6): 2 s of compute, no stall; all_reduce over [5.5, 6) covers half the window [5, 6):
    // 0.5 s to it, 0.5 s outside any recorded collective. Means over the two steps: 0.2, 0.45, 0.25.
    Input in;
    TrainingInput t;
    t.compute_full_speed_s = 2.0;
    t.steps = {{0.0, 3.0, 2.0, 0.2, {{"all_to_all ring", 1.5, 2.5}, {"all_reduce ring", 2.5, 3.0}}},
               {3.0, 6.0, 2.0, 0.0, {{"all_reduce ring", 5.5, 6.0}}}};
    in.training = t;
    const auto a = analyse(in);
    const auto& b = a.breakdowns.at(0);
    ASSERT_EQ(b.parts.size(), 7u);
    EXPECT_EQ(b.parts[4].name, "exposed communication: transfer in all_to_all ring");
    EXPECT_NEAR(b.parts[4].seconds, 0.2, 1e-12);
    EXPECT_EQ(b.parts[5].name, "exposed communication: transfer in all_reduce ring");
    EXPECT_NEAR(b.parts[5].seconds, 0.45, 1e-12);
    EXPECT_NEAR(b.parts[6].seconds, 0.25, 1e-12);
    EXPECT_NEAR(b.parts[3].seconds, 0.1, 1e-12);
    EXPECT_NEAR(b.parts_sum_s(), b.total_s, 1e-12);
}

}  // namespace

namespace {

using namespace skyfabric::analysis;

TEST(Analysis, ExposedCommunicationOfRingRecommendsTheFasterSynchronousAlgorithmTheRunMeasured) {
    // A constellation whose ring steps take 4 s, 3 of them exposed communication (0.75 of the step), and
    // whose hierarchical steps took 1.5 s on the same fabric: the change is hierarchical, expected
    // 1.5 / 4 − 1 = −62.5 %, its metric read for hierarchical after the change. Without a faster
    // synchronous algorithm (diloco's steps are not the same updates) the bucket heuristic stays.
    Input in;
    in.kind = RunKind::constellation;
    TrainingInput t;
    t.algorithm = "ring";
    t.compute_full_speed_s = 1.0;
    t.steps = {{0.0, 4.0, 1.0, 0.0}, {4.0, 8.0, 1.0, 0.0}};
    in.training = t;
    AlgorithmRecord ring, hierarchical, diloco;
    ring.name = "ring", ring.steps = 2, ring.step_time_mean_s = 4.0, ring.compute_per_step_s = 1.0;
    hierarchical.name = "hierarchical", hierarchical.steps = 5, hierarchical.step_time_mean_s = 1.5, hierarchical.compute_per_step_s = 1.0;
    diloco.name = "diloco", diloco.steps = 7, diloco.step_time_mean_s = 1.1, diloco.compute_per_step_s = 1.0;
    in.algorithms = {ring, hierarchical, diloco};
    auto a = analyse(in);
    const auto* p = find(a, "exposed_communication");
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(p->recommendations.size(), 1u);
    const auto& r = p->recommendations[0];
    EXPECT_EQ(r.set_argument(), "constellation.algorithms=[hierarchical]");
    EXPECT_EQ(r.metric, "step_time_mean_s");
    EXPECT_EQ(r.algorithm, "ring");
    EXPECT_EQ(r.after_algorithm, "hierarchical");
    EXPECT_NEAR(r.expected_relative_change, -0.625, 1e-12);
    in.algorithms = {ring, diloco};
    a = analyse(in);
    p = find(a, "exposed_communication");
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(p->recommendations.size(), 1u);
    EXPECT_EQ(p->recommendations[0].key, "workload.gradient_buckets");
}

}  // namespace
