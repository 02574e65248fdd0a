// Faults in the loop: a trial's outages and crashes damage the fabric its steps run on.
// Expected values are hand-derived from the α–β / max-min arithmetic of the flow engine
// (each phase of a ring all-reduce costs chunk/bottleneck + path latency), never from earlier
// output of the code.
#include <skyfabric/workloads/backend.hpp>
#include <skyfabric/workloads/damaged_fabric.hpp>
#include <skyfabric/workloads/faults.hpp>
#include <skyfabric/workloads/job.hpp>
#include <skyfabric/workloads/training.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <tuple>
#include <limits>
#include <numeric>
#include <vector>

#include "test_helpers.hpp"

namespace sw = skyfabric::workloads;
namespace swt = skyfabric::workloads::testing;
namespace links = skyfabric::links;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double capacity_bps = 800e9;  // B = 100 GB/s per direction
constexpr double bandwidth_Bps = capacity_bps / 8.0;
constexpr double alpha_s = 1e-6;        // per hop

// One gradient bucket, all-reduced after the backward pass: the whole all-reduce is exposed,
// so a step is compute + 2(p−1) ring phases.
sw::StepModel exposed_job(std::int32_t ranks) {
    sw::StepModel m;
    m.job.parameters = 1e9;  // n = 2 GB of bf16 gradients
    m.job.tokens_per_step = 1e5 * ranks;
    m.job.data_parallel = ranks;
    m.job.gradient_buckets = 1;
    m.options.placement = sw::PlacementPolicy::topology_aware;
    return m;
}

double compute_s(const sw::StepModel& m) { return sw::compute_time_per_step_s(m.job, m.accelerator); }

// A run whose topology never changes: one keyframe.
sw::TopologyTimeline timeline_of(const links::Topology& topology) {
    sw::TopologyTimeline timeline;
    timeline.append(topology);
    return timeline;
}

sw::FabricDamage all_ranks(std::int32_t p) {
    sw::FabricDamage d;
    d.ranks.resize(static_cast<std::size_t>(p));
    std::iota(d.ranks.begin(), d.ranks.end(), 0);
    return d;
}

// Only the given kinds happen, at a constant dose rate.
sw::FaultModel only(bool uecc, bool chip_crash, double link_outages_per_s) {
    sw::FaultModel m;
    m.device.sdc_rad_per_event = inf;
    m.device.host_cpu_rad_per_event = inf;
    m.device.host_ram_rad_per_event = inf;
    if (!uecc) m.device.hbm_uecc_rad_per_event = inf;
    if (!chip_crash) m.device.chip_crash_rad_per_event = inf;
    m.link_outage_rate_per_s = link_outages_per_s;
    return m;
}

// A p-ring plus a chord 0–2 at half capacity and 2α latency, as a one-keyframe timeline.
sw::TopologyTimeline ring_with_chord(std::int32_t p) {
    links::Topology t = swt::ring(p, capacity_bps, alpha_s);
    t.links.push_back(swt::make_link(0, 2, capacity_bps / 2, 2 * alpha_s));
    std::sort(t.links.begin(), t.links.end(),
              [](const links::Link& a, const links::Link& b) { return std::tie(a.source, a.target) < std::tie(b.source, b.target); });
    return timeline_of(t);
}

}  // namespace

TEST(DamagedFabric, RingThatLosesALinkReroutesByTheMaxMinAmount) {
    // A 6-ring plus a chord 0–2 at half capacity and 2α latency. Undamaged, the ring is embedded
    // on the ring links: each phase costs c/B + α (c = n/p). With 0–1 down the ring is planned
    // again (0→5→4→3→2→1) and closes 1→0 over 1→2→0: the only flow on the chord, so max-min gives
    // it the chord's B/2, and its latency is 3α. Phase: 2c/B + 3α; extra per phase c/B + 2α.
    const std::int32_t p = 6;
    const sw::TopologyTimeline timeline = ring_with_chord(p);
    const sw::StepModel model = exposed_job(p);
    sw::DamagedFabric fabric(timeline, model, p);
    const double n = sw::gradient_bytes(model.job), c = n / p, phases = 2.0 * (p - 1);

    const double undamaged = fabric.step_s(0, all_ranks(p));
    EXPECT_NEAR(undamaged, compute_s(model) + phases * (c / bandwidth_Bps + alpha_s), 1e-9 * undamaged);

    sw::FabricDamage cut = all_ranks(p);
    cut.links_down = {{0, 1}};
    const double extra = fabric.extra_step_s(0.0, cut);
    EXPECT_NEAR(extra, phases * (c / bandwidth_Bps + 2 * alpha_s), 1e-9 * undamaged);
    // A down link that carries no traffic (the chord, undamaged) changes nothing.
    sw::FabricDamage idle = all_ranks(p);
    idle.links_down = {{0, 2}};
    EXPECT_EQ(fabric.extra_step_s(0.0, idle), 0.0);
    // Both 0–1 and 0–2 down: 0 still reaches the ring through 5, the ring closes 1→…→0 the long way.
    sw::FabricDamage both = all_ranks(p);
    both.links_down = {{0, 1}, {0, 2}};
    EXPECT_NEAR(fabric.extra_step_s(0.0, both), phases * (p - 2) * alpha_s, 1e-9 * undamaged);
    // Cut twice, the ring splits: no step can complete.
    sw::FabricDamage split = all_ranks(p);
    split.links_down = {{0, 1}, {0, 2}, {3, 4}};
    EXPECT_EQ(fabric.extra_step_s(0.0, split), inf);
}

// Local SGD: only every H-th step syncs (an outer all-reduce of outer_sync_bytes after compute),
// so a damaged step costs the outer sync's extra once a round, spread over its H steps. The same
// ring and cut as above: extra per phase c_o/B + 2α with c_o the outer chunk, over 2(p − 1) phases,
// divided by H; the split ring still stalls every round.
TEST(DamagedFabric, LocalStepsPayTheOuterSyncsExtraOnceARound) {
    const std::int32_t p = 6, H = 4;
    const sw::TopologyTimeline timeline = ring_with_chord(p);
    sw::StepModel model = exposed_job(p);
    model.job.sync = sw::SyncMode::local_steps;
    model.job.local_steps = H;
    sw::DamagedFabric fabric(timeline, model, p);
    const double c = sw::outer_sync_bytes(model.job) / p, phases = 2.0 * (p - 1);
    // step_s is an outer-sync step: compute, then the outer all-reduce.
    const double sync_step = fabric.step_s(0, all_ranks(p));
    EXPECT_NEAR(sync_step, compute_s(model) + phases * (c / bandwidth_Bps + alpha_s), 1e-9 * sync_step);
    sw::FabricDamage cut = all_ranks(p);
    cut.links_down = {{0, 1}};
    EXPECT_NEAR(fabric.extra_step_s(0.0, cut), phases * (c / bandwidth_Bps + 2 * alpha_s) / H, 1e-9 * sync_step);
    sw::FabricDamage split = all_ranks(p);
    split.links_down = {{0, 1}, {0, 2}, {3, 4}};
    EXPECT_EQ(fabric.extra_step_s(0.0, split), inf);
}

TEST(DamagedFabric, MultipathDamagedStepsEqualAFreshSolveOfTheDamagedFabric) {
    // UCMP over 4 disjoint paths on a 6×6 lattice: a damaged step's routes start from the undamaged
    // keyframe's (RouteCache::seed, searching again only the pairs whose paths broke). Each damaged
    // step must equal, bit for bit, simulate_training on a copy of the fabric with those links cut.
    const links::Topology t = swt::lattice(6, 6, capacity_bps, alpha_s);
    sw::StepModel model = exposed_job(36);
    model.options.flow.paths_per_transfer = 4;
    model.options.flow.split = sw::MultipathSplit::capacity;
    const sw::TopologyTimeline timeline = timeline_of(t);
    sw::DamagedFabric fabric(timeline, model, 36);
    const double undamaged = fabric.step_s(0, all_ranks(36));
    for (const auto& down : std::vector<std::vector<std::pair<std::int32_t, std::int32_t>>>{
             {{0, 1}}, {{14, 15}}, {{0, 1}, {20, 26}}, {{7, 8}, {8, 14}, {27, 28}}}) {
        sw::FabricDamage d = all_ranks(36);
        d.links_down = down;
        links::Topology cut = timeline.keyframe(0);  // as stored (latencies kept as float)
        for (auto& l : cut.links)
            if (std::find(down.begin(), down.end(), std::pair{l.source, l.target}) != down.end()) l.capacity_bps = 0.0;
        sw::TrainingOptions o = model.options;
        o.max_steps = 1;
        o.start_s = 0.0;
        const links::Topology series[] = {cut};
        const sw::TrainingResult fresh = sw::simulate_training(model.job, model.accelerator, series, o);
        ASSERT_EQ(fresh.steps.size(), 1u);
        const double seeded = fabric.step_s(0, d);
        EXPECT_EQ(seeded, fresh.steps[0].end_s - fresh.steps[0].start_s) << down.size() << " links down";
        EXPECT_GE(seeded, undamaged);
    }
}

TEST(DamagedFabric, ShrinkReformsTheRingOverTheSurvivors) {
    // An 8-ring; satellite 0 reboots (neither computes nor forwards). The 7 survivors' ring runs
    // 1→2→…→7 and closes 7→1 the long way (6 hops, on the reverse directions nobody else uses):
    // each of the 2(7−1) phases costs n/(7B) + 6α. The batch shrinks with the ranks, so compute
    // per step is unchanged.
    const std::int32_t p = 8;
    const sw::TopologyTimeline timeline = timeline_of(swt::ring(p, capacity_bps, alpha_s));
    const sw::StepModel model = exposed_job(p);
    sw::DamagedFabric fabric(timeline, model, p);
    const double n = sw::gradient_bytes(model.job);
    sw::FabricDamage shrunk;
    shrunk.satellites_down = {0};
    shrunk.ranks = {1, 2, 3, 4, 5, 6, 7};
    const double expected = compute_s(model) + 2.0 * (p - 2) * (n / ((p - 1) * bandwidth_Bps) + (p - 2) * alpha_s);
    EXPECT_NEAR(fabric.step_s(0, shrunk), expected, 1e-9 * expected);
}

TEST(CoupledPlay, ShrinkDropsTheCrashedRankUntilTheCheckpointAfterItsReboot) {
    const std::int32_t p = 8;
    const sw::TopologyTimeline timeline = timeline_of(swt::ring(p, capacity_bps, alpha_s));
    const sw::StepModel model = exposed_job(p);
    sw::DamagedFabric fabric(timeline, model, p);
    const double full = fabric.step_s(0, all_ranks(p));
    sw::FabricDamage shrunk;
    shrunk.satellites_down = {0};
    shrunk.ranks = {1, 2, 3, 4, 5, 6, 7};
    const double extra = fabric.step_s(0, shrunk) - full;
    // Once satellite 0 has rebooted it forwards again but holds no rank until the next checkpoint:
    // the 7-rank ring then closes 7→0→1.
    sw::FabricDamage rebooted;
    rebooted.ranks = shrunk.ranks;
    const double extra_rebooted = fabric.step_s(0, rebooted) - full;

    sw::StepDurations steps;
    steps.nominal_s = full;
    sw::RecoveryConfig c;
    c.on_rank_loss = sw::RankLossPolicy::shrink;
    c.checkpoint_interval_s = 100.0;
    c.checkpoint_cost_s = 10.0;
    c.restart_s = 30.0;
    c.reboot_s = 200.0;
    const double T = 2000.0;
    const std::vector<sw::FaultEvent> events = {{50.0, 0, sw::FaultKind::chip_crash, false, 0.0}};
    const sw::GoodputResult r = sw::simulate_training_with_faults(events, p, T, steps, c, true, &fabric);
    EXPECT_EQ(r.ranks_lost, 1);
    EXPECT_EQ(r.rollbacks, 1);
    // No wait for the reboot: recovery is the restart alone.
    EXPECT_NEAR(r.recovery_s[static_cast<int>(sw::FaultKind::chip_crash)], c.restart_s, 1e-9);
    // Shrunk steps run from 80 s until the first checkpoint after 250 s (the reboot's end).
    ASSERT_GT(r.damaged_steps, 0);
    const double shrunk_wall = r.damaged_steps * (full + extra);
    EXPECT_GT(80.0 + shrunk_wall, 250.0);
    EXPECT_LT(80.0 + shrunk_wall, 250.0 + c.checkpoint_interval_s + c.checkpoint_cost_s + 2 * (full + extra) +
                                      c.checkpoint_cost_s * (shrunk_wall / c.checkpoint_interval_s));
    // Each shrunk step credits 7/8 of an undamaged step; the rest is the missing rank's share.
    EXPECT_NEAR(r.shrunk_s, r.damaged_steps * full / p, 1e-9 * T);
    std::int64_t while_down = 0;  // shrunk steps started before the reboot's end
    for (const auto& iv : r.timeline)
        if (iv.phase == sw::JobPhase::step && iv.start_s >= 80.0 && iv.start_s < 250.0) ++while_down;
    EXPECT_GT(while_down, 0);
    EXPECT_LT(while_down, r.damaged_steps);
    // The extras split by sign (issue 28: no loss is negative): positive ones are the fabric's loss,
    // negative ones (a 7-rank ring can be faster than the 8-rank one) its gain.
    const auto later = static_cast<double>(r.damaged_steps - while_down);
    const auto down = static_cast<double>(while_down);
    EXPECT_NEAR(r.fabric_loss_s, down * std::max(extra, 0.0) + later * std::max(extra_rebooted, 0.0), 1e-9 * T);
    EXPECT_NEAR(r.fabric_gain_s, down * std::max(-extra, 0.0) + later * std::max(-extra_rebooted, 0.0), 1e-9 * T);
    EXPECT_GE(r.fabric_loss_s, 0.0);
    EXPECT_GE(r.fabric_gain_s, 0.0);
    double lost = r.sdc_recompute_s + r.checkpoint_s + r.tail_s + r.fabric_loss_s - r.fabric_gain_s + r.stalled_s + r.shrunk_s;
    for (int k = 0; k < sw::fault_kind_count; ++k) lost += r.rework_s[k] + r.recovery_s[k];
    EXPECT_NEAR(r.useful_s + lost, T, 1e-9 * T);
}

TEST(CoupledPlay, TwoOutagesThatSplitTheRingStallItUntilTheFirstRepair) {
    // A 4-ring: satellite 0's outage (mark 0 → its first link, 0–1) and satellite 2's (mark 0.9 →
    // its second link, 2–3) at 100 s split it into {0,3} and {1,2}. The step running at 100 s
    // finishes (damage acts from the next step); the next one waits until 150 s.
    const std::int32_t p = 4;
    const sw::TopologyTimeline timeline = timeline_of(swt::ring(p, capacity_bps, alpha_s));
    sw::DamagedFabric fabric(timeline, exposed_job(p), p);
    const double d = fabric.step_s(0, all_ranks(p));
    sw::StepDurations steps;
    steps.nominal_s = d;
    sw::RecoveryConfig c;
    c.checkpoint_interval_s = 1e9;
    c.link_outage_s = 50.0;
    const std::vector<sw::FaultEvent> events = {{100.0, 0, sw::FaultKind::link_outage, false, 0.0},
                                                {100.0, 2, sw::FaultKind::link_outage, false, 0.9}};
    const sw::GoodputResult r = sw::simulate_training_with_faults(events, p, 400.0, steps, c, true, &fabric);
    EXPECT_EQ(r.links_lost, 2);
    const double resume = std::ceil(100.0 / d) * d;  // the first step start at or after 100 s
    EXPECT_NEAR(r.stalled_s, 150.0 - resume, 1e-6);
    EXPECT_EQ(r.effects[0], sw::FaultEffect::link_down);
    bool saw_stall = false;
    for (const auto& iv : r.timeline) saw_stall |= iv.phase == sw::JobPhase::stalled;
    EXPECT_TRUE(saw_stall);
}

namespace {

// An 8-ring timeline whose topology changes capacity every 500 s, and trials with crashes,
// UECCs and link outages.
struct CoupledCase {
    std::int32_t p = 8;
    sw::TopologyTimeline timeline;
    sw::StepModel model = exposed_job(8);
    sw::DoseRateSeries series = sw::constant_dose_rate(8, 2e-3);
    double T = 3000.0;
    CoupledCase() {
        for (int k = 0; k < 6; ++k) timeline.append(swt::ring(p, capacity_bps * (1.0 - 0.1 * (k % 2)), alpha_s, 500.0 * k));
    }
    // About two chip crashes a trial beside UECCs and link outages; ranks lost shrink the ring.
    static sw::FaultModel crashing_faults() {
        sw::FaultModel model = only(true, true, 2e-3);
        model.device.chip_crash_rad_per_event = 20.0;
        return model;
    }
    static sw::RecoveryConfig shrinking_recovery() {
        sw::RecoveryConfig c;
        c.checkpoint_interval_s = 200.0;
        c.on_rank_loss = sw::RankLossPolicy::shrink;
        return c;
    }
    sw::StepDurations fault_free() const {
        // The fault-free run's own steps over the timeline: one per keyframe's step time.
        sw::StepDurations s;
        for (std::size_t k = 0; k < timeline.keyframe_count(); ++k) {
            const links::Topology keyframe[] = {timeline.keyframe(k)};
            auto o = model.options;
            o.max_steps = 1;
            const auto r = sw::simulate_training(model.job, model.accelerator, keyframe, o);
            s.start_s.push_back(timeline.keyframe(k).time_s);
            s.duration_s.push_back(r.steps.at(0).end_s - r.steps.at(0).start_s);
        }
        return s;
    }
};

}  // namespace

TEST(CoupledMonteCarlo, ZeroFaultRatesGiveTheFaultFreeRunBitForBit) {
    const CoupledCase k;
    sw::DamagedFabric fabric(k.timeline, k.model, k.p);
    sw::FaultModel model = only(true, true, 1e-2);
    model.rate_scale = 0.0;
    sw::RecoveryConfig c;
    c.checkpoint_interval_s = 1e9;  // no checkpoint within the run
    const sw::StepDurations steps = k.fault_free();
    const sw::MonteCarloResult mc = sw::monte_carlo_goodput(k.series, model, c, steps, k.T, 7, 8, sw::Backend::cpu, &fabric, 2);
    // The fault-free run: whole steps while they fit, each as long as its keyframe says.
    double t = 0.0, useful = 0.0;
    for (;;) {
        const double d = sw::step_duration_at_s(steps, t);
        if (t + d > k.T) break;
        useful += d;
        t += d;
    }
    for (const auto& trial : mc.per_trial) {
        EXPECT_EQ(trial.goodput, useful / k.T);
        EXPECT_EQ(trial.damaged_steps, 0);
        EXPECT_EQ(trial.lost_fabric_s, 0.0);
    }
    EXPECT_EQ(fabric.evaluations(), 0);
}

TEST(CoupledMonteCarlo, OneAndTwoThreadsGiveIdenticalTrials) {
    const CoupledCase k;
    sw::DamagedFabric fabric(k.timeline, k.model, k.p);
    const sw::FaultModel model = CoupledCase::crashing_faults();
    sw::RecoveryConfig c = CoupledCase::shrinking_recovery();
    c.checkpoint_cost_s = 10.0;
    c.restart_s = 20.0;
    c.reboot_s = 100.0;
    const sw::StepDurations steps = k.fault_free();
    const auto one = sw::monte_carlo_goodput(k.series, model, c, steps, k.T, 3, 24, sw::Backend::cpu, &fabric, 1);
    const auto two = sw::monte_carlo_goodput(k.series, model, c, steps, k.T, 3, 24, sw::Backend::cpu, &fabric, 2);
    ASSERT_EQ(one.per_trial.size(), two.per_trial.size());
    std::int64_t ranks_lost = 0, links_lost = 0, damaged = 0;
    for (std::size_t i = 0; i < one.per_trial.size(); ++i) {
        const auto& a = one.per_trial[i];
        const auto& b = two.per_trial[i];
        EXPECT_EQ(a.goodput, b.goodput) << "trial " << i;
        EXPECT_EQ(a.lost_fabric_s, b.lost_fabric_s);
        EXPECT_EQ(a.lost_shrink_s, b.lost_shrink_s);
        EXPECT_EQ(a.step_time_p99_s, b.step_time_p99_s);
        EXPECT_EQ(a.damaged_steps, b.damaged_steps);
        ranks_lost += a.ranks_lost;
        links_lost += a.links_lost;
        damaged += a.damaged_steps;
    }
    EXPECT_EQ(one.goodput.mean, two.goodput.mean);
    // The case is not vacuous: ranks and links were lost and steps ran on a damaged fabric.
    EXPECT_GT(ranks_lost, 0);
    EXPECT_GT(links_lost, 0);
    EXPECT_GT(damaged, 0);
}

// The flow engine drains a collective's phases as one batch (FlowSolver::drain_batch), phases of
// one pattern sharing a problem. The explicit schedule lists every ring step as a phase of its own,
// which then share one problem, where the compact one repeats a single phase. The trials must not
// tell them apart: goodput, losses and damaged steps equal bit for bit, over trials that damage
// links and ranks.
TEST(CoupledMonteCarlo, TrialsDoNotDependOnHowPhasesAreBatched) {
    const CoupledCase k;
    sw::StepModel listed = k.model;
    listed.context.explicit_schedules = true;
    sw::DamagedFabric compact_fabric(k.timeline, k.model, k.p), listed_fabric(k.timeline, listed, k.p);
    const sw::FaultModel model = CoupledCase::crashing_faults();
    const sw::RecoveryConfig c = CoupledCase::shrinking_recovery();
    const sw::StepDurations steps = k.fault_free();
    const auto a = sw::monte_carlo_goodput(k.series, model, c, steps, k.T, 5, 24, sw::Backend::cpu, &compact_fabric, 2);
    const auto b = sw::monte_carlo_goodput(k.series, model, c, steps, k.T, 5, 24, sw::Backend::cpu, &listed_fabric, 2);
    ASSERT_EQ(a.per_trial.size(), b.per_trial.size());
    std::int64_t damaged = 0;
    for (std::size_t i = 0; i < a.per_trial.size(); ++i) {
        EXPECT_EQ(a.per_trial[i].goodput, b.per_trial[i].goodput) << "trial " << i;
        EXPECT_EQ(a.per_trial[i].lost_fabric_s, b.per_trial[i].lost_fabric_s) << "trial " << i;
        EXPECT_EQ(a.per_trial[i].lost_shrink_s, b.per_trial[i].lost_shrink_s) << "trial " << i;
        EXPECT_EQ(a.per_trial[i].damaged_steps, b.per_trial[i].damaged_steps) << "trial " << i;
        damaged += a.per_trial[i].damaged_steps;
    }
    EXPECT_GT(damaged, 0);
    EXPECT_GT(compact_fabric.evaluations(), 0);
}

// Past its cache budget a fabric solves a damaged step again when asked again: the same numbers,
// bit for bit, as a fabric that keeps every solve. Its kept solves stay within the budget but for
// the undamaged ones (one per keyframe, kept whatever the budget: the damaged ones' seeds), which
// a budget of 0 keeps alone.
TEST(DamagedFabric, ASolveCacheOverItsBudgetGivesTheSameStepsAndStaysWithinIt) {
    const CoupledCase k;
    const std::vector<std::int32_t> ranks = all_ranks(k.p).ranks, cluster_of = {0, 0, 0, 0, 1, 1, 1, 1};
    constexpr std::size_t budget = 4096;  // a dozen solves of an 8-ring
    sw::DamagedFabric kept(k.timeline, k.model, ranks, cluster_of);
    sw::DamagedFabric bounded(k.timeline, k.model, ranks, cluster_of, budget);
    sw::DamagedFabric seeds(k.timeline, k.model, ranks, cluster_of, 0);
    sw::DamagedFabric* const fabrics[] = {&kept, &bounded, &seeds};
    const auto without = [&](std::int32_t node) {
        std::vector<std::int32_t> r;
        std::copy_if(ranks.begin(), ranks.end(), std::back_inserter(r), [&](std::int32_t v) { return v != node; });
        return r;
    };
    std::vector<sw::FabricDamage> damages;
    const auto add = [&](std::vector<std::pair<std::int32_t, std::int32_t>> links, std::vector<std::int32_t> down,
                         std::vector<std::int32_t> r) { damages.push_back({std::move(links), std::move(down), std::move(r)}); };
    add({}, {}, ranks);
    add({{0, 1}}, {}, ranks);
    add({{3, 4}}, {}, ranks);                           // a gateway link (clusters 0–3, 4–7)
    add({{0, 1}, {4, 5}}, {}, ranks);                   // the ring splits: +inf
    add({}, {2}, without(2));                           // a satellite rebooting, its rank dropped
    add({}, {}, without(5));                            // rebooted, no rank until the checkpoint
    add({{0, 7}}, {6}, without(6));
    add({{1, 2}, {3, 4}}, {}, without(0));
    const std::pair<std::int32_t, std::int32_t> gateways[] = {{3, 4}, {0, 7}};
    std::int64_t finite = 0;
    for (int pass = 0; pass < 2; ++pass)  // asked again: kept answers from its cache, the others solve again
        for (std::size_t f = 0; f < k.timeline.keyframe_count(); ++f) {
            const double t = k.timeline.keyframe(f).time_s + 1.0;
            for (std::size_t d = 0; d < damages.size(); ++d) {
                const double step = kept.step_s(f, damages[d]);
                const double extra = kept.extra_step_s(t, damages[d]);
                finite += std::isfinite(step) ? 1 : 0;
                for (sw::DamagedFabric* other : {&bounded, &seeds}) {
                    EXPECT_EQ(other->step_s(f, damages[d]), step) << "keyframe " << f << " damage " << d;
                    EXPECT_EQ(other->extra_step_s(t, damages[d]), extra) << "keyframe " << f << " damage " << d;
                    for (const auto& g : gateways)
                        EXPECT_EQ(other->link_traffic(t, damages[d], g).bytes, kept.link_traffic(t, damages[d], g).bytes)
                            << "keyframe " << f << " damage " << d;
                }
            }
        }
    EXPECT_GT(finite, 0);
    const auto keyframes = k.timeline.keyframe_count();
    EXPECT_EQ(seeds.cached_solves(), keyframes);
    EXPECT_LE(bounded.cache_bytes(), budget + seeds.cache_bytes());
    EXPECT_GT(kept.cache_bytes(), 2 * (budget + seeds.cache_bytes()));  // not vacuous: kept all, it would pass
    // Most damaged solves not kept, but those that fit are.
    EXPECT_LT(2 * (bounded.cached_solves() - keyframes), kept.cached_solves() - keyframes);
    EXPECT_GT(bounded.cached_solves(), keyframes);
    EXPECT_EQ(kept.evaluations(), static_cast<std::int64_t>(kept.cached_solves()));
    EXPECT_GT(bounded.evaluations(), kept.evaluations());  // past the budget, each solve again counts
    EXPECT_GT(seeds.evaluations(), bounded.evaluations());

    // Trials on two threads, each holding the solves not kept that it asked for.
    const sw::FaultModel model = CoupledCase::crashing_faults();
    sw::RecoveryConfig c = CoupledCase::shrinking_recovery();
    c.reboot_s = 100.0;
    const sw::StepDurations steps = k.fault_free();
    std::vector<sw::MonteCarloResult> mc;
    for (sw::DamagedFabric* f : fabrics)
        mc.push_back(sw::monte_carlo_goodput(k.series, model, c, steps, k.T, 3, 16, sw::Backend::cpu, f, 2));
    std::int64_t damaged = 0;
    for (std::size_t j = 1; j < mc.size(); ++j) {
        ASSERT_EQ(mc[j].per_trial.size(), mc[0].per_trial.size());
        for (std::size_t i = 0; i < mc[0].per_trial.size(); ++i) {
            EXPECT_EQ(mc[j].per_trial[i].goodput, mc[0].per_trial[i].goodput) << "fabric " << j << " trial " << i;
            EXPECT_EQ(mc[j].per_trial[i].lost_fabric_s, mc[0].per_trial[i].lost_fabric_s) << "fabric " << j << " trial " << i;
            EXPECT_EQ(mc[j].per_trial[i].damaged_steps, mc[0].per_trial[i].damaged_steps) << "fabric " << j << " trial " << i;
            damaged += mc[j].per_trial[i].damaged_steps;
        }
    }
    EXPECT_GT(damaged, 0);
    EXPECT_EQ(seeds.cached_solves(), keyframes);
    EXPECT_LE(bounded.cache_bytes(), budget + seeds.cache_bytes());
    EXPECT_EQ(kept.evaluations(), static_cast<std::int64_t>(kept.cached_solves()));
}

TEST(CoupledMonteCarlo, RollbackOnlyFaultsMatchTheRenewalFormulaOnAFabric) {
    // UECCs only (rollback, no crash): the fabric is never damaged, and the coupled goodput is
    // the renewal formula's within its Monte Carlo error.
    const std::int32_t p = 8;
    const sw::TopologyTimeline timeline = timeline_of(swt::ring(p, capacity_bps, alpha_s));
    sw::DamagedFabric fabric(timeline, exposed_job(p), p);
    const double M = 3600.0, delta = 60.0, R = 300.0, tau = 1200.0, T = 2.0e6;
    const double step = fabric.step_s(0, all_ranks(p));
    const sw::DoseRateSeries series = sw::constant_dose_rate(p, 44.0 / (p * M));  // Σ Ḋ/44 = 1/M
    sw::RecoveryConfig c;
    c.checkpoint_interval_s = tau;
    c.checkpoint_cost_s = delta;
    c.restart_s = R;
    sw::StepDurations steps;
    steps.nominal_s = step;
    const auto mc = sw::monte_carlo_goodput(series, only(true, false, 0.0), c, steps, T, 11, 16, sw::Backend::cpu, &fabric, 2);
    const double w = std::ceil(tau / step) * step;  // τ rounded up to whole steps
    const double exact = sw::expected_goodput_constant_rate(w, delta, R, M);
    const double se = mc.goodput.stddev / std::sqrt(16.0);
    EXPECT_NEAR(mc.goodput.mean, exact, 4 * se + tau / T) << "se " << se;
    for (const auto& trial : mc.per_trial) EXPECT_EQ(trial.damaged_steps, 0);
}

TEST(CoupledMonteCarlo, CudaDrawnTrialsMatchTheCpu) {
    if (sw::cuda_device_count() == 0)
        GTEST_SKIP() << "CUDA comparison skipped: " << sw::cuda_unavailable_reason();
    const CoupledCase k;
    sw::DamagedFabric fabric(k.timeline, k.model, k.p);
    const sw::FaultModel model = CoupledCase::crashing_faults();
    const sw::RecoveryConfig c = CoupledCase::shrinking_recovery();
    const sw::StepDurations steps = k.fault_free();
    const auto cpu = sw::monte_carlo_goodput(k.series, model, c, steps, k.T, 3, 64, sw::Backend::cpu, &fabric, 2);
    const auto gpu = sw::monte_carlo_goodput(k.series, model, c, steps, k.T, 3, 64, sw::Backend::cuda, &fabric, 2);
    // Event times may differ in the last bits of the GPU's logarithm (faults.hpp): goodput agrees
    // to 1e-9, the counts exactly.
    for (std::size_t i = 0; i < cpu.per_trial.size(); ++i) {
        EXPECT_NEAR(cpu.per_trial[i].goodput, gpu.per_trial[i].goodput, 1e-9) << "trial " << i;
        EXPECT_EQ(cpu.per_trial[i].ranks_lost, gpu.per_trial[i].ranks_lost);
        EXPECT_EQ(cpu.per_trial[i].links_lost, gpu.per_trial[i].links_lost);
    }
}

TEST(TopologyTimeline, KeyframesRebuiltFromChangesEqualTheTopologiesAppended) {
    // A 12-node lattice whose links come and go and change capacity at random; every distinct
    // topology must come back exactly (endpoints, capacity) from copies every 4 keyframes and the
    // changes between them, and repeats must not make keyframes.
    sw::TopologyTimeline timeline(4);
    std::vector<links::Topology> kept;
    std::uint64_t state = 12345;
    const auto next = [&state] {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<double>(state >> 11) * 0x1.0p-53;
    };
    const links::Topology full = swt::lattice(3, 4, capacity_bps, alpha_s);
    for (int k = 0; k < 40; ++k) {
        links::Topology t;
        t.node_count = full.node_count;
        t.time_s = 10.0 * k;
        for (links::Link l : full.links) {
            const double u = next();
            if (u < 0.2) continue;                  // down at this sample
            if (u < 0.3) l.capacity_bps *= 0.5;     // fewer channels
            t.links.push_back(l);
        }
        timeline.append(t);
        if (k % 5 == 0) {  // the same links again a second later: no new keyframe
            links::Topology again = t;
            again.time_s += 1.0;
            timeline.append(again);
        }
        kept.push_back(t);
    }
    ASSERT_EQ(timeline.keyframe_count(), kept.size());
    EXPECT_EQ(timeline.topology_count(), 48);
    for (std::size_t k = 0; k < kept.size(); ++k) {
        const links::Topology got = timeline.keyframe(k);
        EXPECT_EQ(got.time_s, kept[k].time_s);
        ASSERT_EQ(got.links.size(), kept[k].links.size()) << "keyframe " << k;
        for (std::size_t i = 0; i < got.links.size(); ++i) {
            EXPECT_EQ(got.links[i].source, kept[k].links[i].source);
            EXPECT_EQ(got.links[i].target, kept[k].links[i].target);
            EXPECT_EQ(got.links[i].capacity_bps, kept[k].links[i].capacity_bps);
        }
        EXPECT_EQ(timeline.keyframe_index_at(kept[k].time_s + 0.5), k);
    }
    EXPECT_EQ(timeline.keyframe_index_at(-1.0), 0u);
    // Built forward from an earlier keyframe (a replay walking in time), within a run of changes
    // and across a full copy (every 4th here), a keyframe is the same, link for link.
    for (std::size_t j = 0; j < kept.size(); ++j)
        for (std::size_t k : {j, j + 1, j + 2, j + 5}) {
            if (k >= kept.size()) continue;
            const links::Topology want = timeline.keyframe(k);
            const links::Topology got = timeline.keyframe_from(k, timeline.keyframe(j), j);
            EXPECT_EQ(got.time_s, want.time_s);
            ASSERT_EQ(got.links.size(), want.links.size()) << j << " -> " << k;
            for (std::size_t i = 0; i < got.links.size(); ++i) {
                EXPECT_EQ(got.links[i].source, want.links[i].source);
                EXPECT_EQ(got.links[i].target, want.links[i].target);
                EXPECT_EQ(got.links[i].capacity_bps, want.links[i].capacity_bps);
                EXPECT_EQ(got.links[i].latency_s, want.links[i].latency_s);
            }
        }
}

namespace {

// A mixture of experts on 12 satellites, fully connected, in expert groups of 4.
sw::StepModel moe_model(std::int32_t p, std::int32_t expert_parallel) {
    sw::StepModel m = exposed_job(p);
    m.job.active_parameters = 5e8;
    m.job.moe.layers = 2;
    m.job.moe.expert_parallel = expert_parallel;
    m.job.moe.experts_per_token = 2;
    m.job.moe.hidden_size = 1024;
    m.job.moe.expert_parameters = 6e8;
    return m;
}

// Forwards to the damaged fabric and records the rank counts the play asked it to solve.
class CountingFabric final : public sw::FabricModel {
public:
    explicit CountingFabric(sw::DamagedFabric& fabric) : fabric_(fabric) {}
    double extra_step_s(double t, const sw::FabricDamage& damage) override {
        rank_counts.push_back(static_cast<std::int32_t>(damage.ranks.size()));
        return fabric_.extra_step_s(t, damage);
    }
    bool outage_link(std::int32_t satellite, double t, double mark, bool gateway,
                     std::pair<std::int32_t, std::int32_t>& link) const override {
        return fabric_.outage_link(satellite, t, mark, gateway, link);
    }
    double next_change_s(double t) const override { return fabric_.next_change_s(t); }
    LinkTraffic link_traffic(double t, const sw::FabricDamage& damage, std::pair<std::int32_t, std::int32_t> link) override {
        return fabric_.link_traffic(t, damage, link);
    }
    std::vector<std::int32_t> rank_counts;

private:
    sw::DamagedFabric& fabric_;
};

}  // namespace

TEST(CoupledPlay, ShrunkMixtureOfExpertsKeepsWholeExpertGroupsAndIdlesTheRest) {
    const std::int32_t p = 12, groups_of = 4;
    const sw::TopologyTimeline timeline = timeline_of(swt::complete(p, capacity_bps, alpha_s));
    sw::DamagedFabric fabric(timeline, moe_model(p, groups_of), p);
    const double full = fabric.step_s(0, all_ranks(p));
    ASSERT_TRUE(std::isfinite(full));
    sw::StepDurations steps;
    steps.nominal_s = full;
    sw::RecoveryConfig c;
    c.on_rank_loss = sw::RankLossPolicy::shrink;
    c.checkpoint_interval_s = 100.0;
    c.checkpoint_cost_s = 10.0;
    c.restart_s = 30.0;
    c.reboot_s = 200.0;
    const double T = 2000.0;
    const std::vector<sw::FaultEvent> one = {{50.0, 5, sw::FaultKind::chip_crash, false, 0.0}};

    // Without the multiple, the 11 survivors cannot form expert groups of 4: the solver refuses.
    EXPECT_THROW(sw::simulate_training_with_faults(one, p, T, steps, c, false, &fabric), std::invalid_argument);

    // With it: 8 ranks (two whole groups) train and 3 survivors idle until the checkpoint after
    // satellite 5's reboot (at 250 s), when all 12 rejoin. Each shrunk step credits 8/12 of a full
    // step; the missing third is shrunk_s.
    c.rank_multiple = groups_of;
    CountingFabric counting(fabric);
    const sw::GoodputResult r = sw::simulate_training_with_faults(one, p, T, steps, c, false, &counting);
    EXPECT_EQ(r.ranks_lost, 1);
    EXPECT_EQ(r.ranks_idled, 3);
    ASSERT_GT(r.damaged_steps, 0);
    EXPECT_NEAR(r.shrunk_s, r.damaged_steps * full * 4.0 / 12.0, 1e-9 * T);
    EXPECT_TRUE(std::count(counting.rank_counts.begin(), counting.rank_counts.end(), 8) > 0);
    for (const std::int32_t n : counting.rank_counts) EXPECT_TRUE(n == 8 || n == 12) << n;

    // A multiple that does not divide the ranks is refused.
    c.rank_multiple = 5;
    EXPECT_THROW(sw::simulate_training_with_faults(one, p, T, steps, c, false, &fabric), std::invalid_argument);
}

TEST(CoupledPlay, ShrunkMixtureOfExpertsCompletesOverSeedsOfHeavyCrashes) {
    // The suncatcher-81-moe stress test (rate_scale 100) in small: crashes every ~40 s on 12
    // satellites, 10 seeds. Every step the play solves has a whole number of expert groups, and
    // at least one group always remains.
    const std::int32_t p = 12, groups_of = 3;
    const sw::TopologyTimeline timeline = timeline_of(swt::complete(p, capacity_bps, alpha_s));
    sw::DamagedFabric fabric(timeline, moe_model(p, groups_of), p);
    sw::StepDurations steps;
    steps.nominal_s = fabric.step_s(0, all_ranks(p));
    sw::RecoveryConfig c;
    c.on_rank_loss = sw::RankLossPolicy::shrink;
    c.rank_multiple = groups_of;
    c.checkpoint_interval_s = 60.0;
    c.checkpoint_cost_s = 5.0;
    c.restart_s = 10.0;
    c.reboot_s = 300.0;
    const double T = 3000.0;
    for (std::uint32_t seed = 1; seed <= 10; ++seed) {
        std::uint64_t state = seed * 0x9E3779B97F4A7C15ull;  // splitmix64: a fixed stream per seed
        const auto next = [&state] {
            std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            return (z ^ (z >> 31)) >> 11;
        };
        std::vector<sw::FaultEvent> events;
        for (double t = 0.0;;) {
            t += 5.0 + static_cast<double>(next() % 70);
            if (t >= T) break;
            events.push_back({t, static_cast<std::int32_t>(next() % p),
                              next() % 2 ? sw::FaultKind::chip_crash : sw::FaultKind::host_crash, false, 0.0});
        }
        CountingFabric counting(fabric);
        sw::GoodputResult r;
        ASSERT_NO_THROW(r = sw::simulate_training_with_faults(events, p, T, steps, c, false, &counting)) << "seed " << seed;
        EXPECT_GT(r.ranks_lost, 0) << "seed " << seed;
        EXPECT_GT(r.ranks_idled, 0) << "seed " << seed;
        for (const std::int32_t n : counting.rank_counts) {
            EXPECT_EQ(n % groups_of, 0) << "seed " << seed;
            EXPECT_GE(n, groups_of) << "seed " << seed;
        }
    }
}

// Local SGD with a mixture of experts: its all-to-alls meet the damage every step, its outer sync
// once in H, so the extra is b + (s − b)/H (s: an outer-sync step's extra, H = 1; b: a step's
// between syncs). Two H give b; a third must follow, and b is not 0: the damaged ring is planned
// again, which moves the expert groups (here to a faster all-to-all: b < 0, an extra may be).
TEST(DamagedFabric, LocalStepsWithExpertsPayTheAllToAllsEveryStep) {
    const std::int32_t p = 6;
    const sw::TopologyTimeline timeline = ring_with_chord(p);
    sw::FabricDamage cut = all_ranks(p);
    cut.links_down = {{0, 1}};
    const auto extra = [&](std::int32_t H) {
        sw::StepModel model = moe_model(p, 3);
        model.job.sync = sw::SyncMode::local_steps;
        model.job.local_steps = H;
        sw::DamagedFabric fabric(timeline, model, p);
        return fabric.extra_step_s(0.0, cut);
    };
    const double s = extra(1), e2 = extra(2), e5 = extra(5);
    const double b = 2.0 * e2 - s;
    EXPECT_GT(std::abs(b), 1e-3 * s);  // the between-syncs steps see the damage
    EXPECT_NEAR(e5, b + (s - b) / 5.0, 1e-9 * s);
}
