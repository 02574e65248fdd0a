// Radiation faults across clusters: each algorithm's recovery semantics on known faults, derived
// by hand from the renewal arithmetic of the play (checkpoint every τ of useful compute, rollback
// to the last one, wait for the reboot, restart R) and the outer syncs' composition
// (workloads/cluster_faults.hpp); gateway terminals' outages drawn and played.
#include <skyfabric/workloads/cluster_faults.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <barrier>
#include <cmath>
#include <thread>
#include <vector>

#include "test_helpers.hpp"

namespace sw = skyfabric::workloads;
namespace swt = skyfabric::workloads::testing;

namespace {

// Two clusters of two satellites on a ring 0–1–2–3–0: links 1–2 and 3–0 join the clusters.
// Every step (ring's, and each replica's inner step) lasts 1 s; a fault-free round is H = 10
// inner steps then a 2 s outer sync. Checkpoints every τ = 100 s of useful compute cost
// δ = 10 s; a crash waits for the reboot (50 s), then restarts (R = 20 s). T = 1000 s.
struct TwoClusters {
    sw::TopologyTimeline timeline;
    sw::DoseRateSeries series = sw::constant_dose_rate(4, 0.0);
    sw::ClusterFaultSetup setup;
    std::vector<sw::ClusterTrainingResult> fault_free;
    std::vector<sw::StepDurations> steps;
    std::vector<sw::ClusterAlgorithm> algorithms{sw::ClusterAlgorithm::ring, sw::ClusterAlgorithm::diloco,
                                                 sw::ClusterAlgorithm::noloco};

    TwoClusters() : TwoClusters(swt::ring(4, 800e9, 1e-6)) {}
    explicit TwoClusters(const skyfabric::links::Topology& fabric) {
        timeline.append(fabric);
        setup.series = &series;
        setup.timeline = &timeline;
        setup.duration_s = 1000.0;
        auto& r = setup.recovery;
        r.checkpoint_interval_s = 100.0;
        r.checkpoint_cost_s = 10.0;
        r.restart_s = 20.0;
        r.reboot_s = 50.0;
        r.on_rank_loss = sw::RankLossPolicy::wait;
        auto& t = setup.training;
        t.job.parameters = 1e6;
        t.job.tokens_per_step = 4e3;
        t.job.data_parallel = 4;
        t.cluster_nodes = {{0, 1}, {2, 3}};
        t.job.local_steps = 10;
        for (auto a : algorithms) {
            sw::ClusterTrainingResult f;
            f.algorithm = a;
            if (a != sw::ClusterAlgorithm::ring) {
                for (std::int32_t replica = 0; replica < 2; ++replica)
                    for (std::int64_t round = 0; round < 100; ++round) {
                        sw::ReplicaRound rr;
                        rr.replica = replica;
                        rr.round = round;
                        rr.inner_steps = 10;
                        rr.start_s = 12.0 * static_cast<double>(round);
                        rr.ready_s = rr.sync_start_s = rr.start_s + 10.0;
                        rr.end_s = rr.ready_s + 2.0;
                        f.rounds.push_back(rr);
                    }
            }
            fault_free.push_back(f);
            sw::StepDurations s;
            s.nominal_s = 1.0;
            steps.push_back(s);
        }
    }
    std::vector<sw::ClusterGoodput> run(const std::vector<std::vector<sw::FaultEvent>>& trials) {
        setup.events = trials;
        return sw::monte_carlo_cluster_goodput(algorithms, setup, fault_free, steps);
    }
};

}  // namespace

// No faults: the checkpoints alone.
//  ring: 9 cycles of 100 steps + δ end at 990 s, then 10 steps: useful 910 s → 0.91.
//  diloco/noloco (the replicas in step): a round is 10 s of steps + 2 s of sync, 10 s more when
//  it holds a checkpoint (every 10th round from round 10): rounds 0–9 end at 120 s, each next 10
//  take 130 s (E_70 = 900), rounds 70–76 end at 994; round 77 would end at 1006 > T. Useful =
//  77 rounds × 12 s + the 6 inner steps done in the last 6 s = 930 s → 0.93.
TEST(ClusterFaults, FaultFreeGoodputIsTheCheckpointsOverhead) {
    TwoClusters c;
    const auto out = c.run({{}});
    ASSERT_EQ(out.size(), 3u);
    EXPECT_NEAR(out[0].monte_carlo.per_trial[0].goodput, 0.91, 1e-12);
    EXPECT_NEAR(out[0].fault_free_goodput, 0.91, 1e-12);
    for (std::size_t i = 1; i < 3; ++i) {
        EXPECT_NEAR(out[i].monte_carlo.per_trial[0].goodput, 0.93, 1e-12) << i;
        EXPECT_NEAR(out[i].fault_free_goodput, 0.93, 1e-12) << i;
        EXPECT_NEAR(out[i].monte_carlo.per_trial[0].lost_waiting_s, 0.0, 1e-12) << i;
    }
}

// One host crash on satellite 0 (cluster 0) at 250.5 s.
//  ring: every rank rolls back to the checkpoint at 220 s (30.5 s of rework), waits for the
//  reboot to 300.5 s, restarts to 320.5 s, then 6 cycles of 110 s to 980.5 s and 19 steps:
//  useful 200 + 600 + 19 = 819 s → 0.819.
//  diloco: replica 0 alone replays that timeline; its round 20 (steps 201–210) takes
//  W0(210) − W0(200) = 330.5 − 210 = 120.5 s where replica 1's takes 20 s (a checkpoint), so the
//  barrier ends it at 250 + 120.5 + 2 = 372.5 s and replica 1 waits 100.5 s (mean over the two:
//  50.25 s). From there both rounds take 12 s (22 s every 10th): rounds 21–68 end at 988.5 s;
//  round 69 would end at 1000.5. Useful = 69 × 12 + 10 inner steps each in the last 11.5 s = 838 s.
//  noloco: in round 20 replica 0 is 100.5 s late (more than a round's 10 s of work), so neither
//  waits and, the two never meeting again, each goes on alone at its own rounds without syncs:
//  replica 1 completes rounds 21–87 (clock 270 → 1000 s): 240 + 10 + 670 = 920 s; replica 0
//  rounds 21–77 (370.5 → 990.5 s) and 9 inner steps: 240 + 10 + 570 + 9 = 829 s. Mean 874.5 s.
TEST(ClusterFaults, RingRollsEveryRankBackDilocoWaitsForTheSlowestNolocoGoesOn) {
    TwoClusters c;
    const auto out = c.run({{sw::FaultEvent{250.5, 0, sw::FaultKind::host_crash}}});
    const auto& ring = out[0].monte_carlo.per_trial[0];
    const auto& diloco = out[1].monte_carlo.per_trial[0];
    const auto& noloco = out[2].monte_carlo.per_trial[0];
    EXPECT_NEAR(ring.goodput, 0.819, 1e-12);
    EXPECT_EQ(ring.ranks_lost, 1);
    EXPECT_NEAR(ring.lost_restarts_s, 20.0, 1e-9);
    EXPECT_NEAR(ring.lost_faults_s, 30.5 + 50.0, 1e-9);  // rework + the wait for the reboot
    EXPECT_NEAR(ring.lost_waiting_s, 0.0, 1e-12);
    EXPECT_NEAR(diloco.goodput, 0.838, 1e-12);
    EXPECT_NEAR(diloco.lost_waiting_s, 50.25, 1e-9);
    // The rest of what was lost is the replicas' own faults, restarts and checkpoints.
    const double own = diloco.lost_faults_s + diloco.lost_restarts_s + diloco.lost_checkpoints_s + diloco.lost_fabric_s +
                       diloco.lost_shrink_s;
    EXPECT_NEAR(own, 1000.0 - 838.0 - 50.25, 1e-9);
    EXPECT_NEAR(noloco.goodput, 0.8745, 1e-12);
    EXPECT_NEAR(noloco.lost_waiting_s, 0.0, 1e-12);
}

namespace {
// The same two clusters, each with a third satellite held as its hot spare (2 for cluster 0, 5 for
// cluster 1), every satellite linked to every other alike: a ring through a spare is as fast as the
// undamaged one, so the spares change only the recovery.
struct TwoClustersWithSpares : TwoClusters {
    TwoClustersWithSpares() : TwoClusters(swt::complete(6, 800e9, 1e-6)) {
        series = sw::constant_dose_rate(6, 0.0);
        setup.training.cluster_nodes = {{0, 1}, {3, 4}};
        setup.training.cluster_satellites = {{0, 1, 2}, {3, 4, 5}};
        setup.recovery.spare_satellites = 1;
        setup.recovery.spare_group_size = 3;
        setup.recovery.on_rank_loss = sw::RankLossPolicy::spare;
    }
};
}  // namespace

// The host crash on satellite 0 at 250.5 s again, now with a spare up in each cluster: the rank
// moves to cluster 0's spare at once, so each algorithm saves the 50 s reboot wait of the test above.
//  ring: rework to the checkpoint at 220 s (30.5 s), restart to 270.5 s, 6 cycles of 110 s to 930.5 s
//  and 69 steps: useful 200 + 600 + 69 = 869 s → 0.869.
//  diloco: replica 0's round 20 ends its steps at W0(210) = 270.5 + 10 = 280.5 s: 70.5 s against
//  replica 1's 20 s, so the barrier ends it at 250 + 70.5 + 2 = 322.5 s and replica 1 waits 50.5 s
//  (mean 25.25 s). Both replicas then checkpoint in rounds 30, 40, ... (22 s, else 12 s): rounds
//  21–72 end at 996.5 s, and 3 inner steps fit in the last 3.5 s: 73 × 12 + 3 = 879 s → 0.879.
//  noloco: replica 0 is 50.5 s late in round 20 and, as above, the two go on alone: replica 1 920 s;
//  replica 0 from 320.5 s completes rounds 21–81 (990.5 s) and 9 inner steps: 240 + 10 + 610 + 9 =
//  869 s. Mean 894.5 s → 0.8945.
TEST(ClusterFaults, ACrashedRankMovesToItsClustersSpare) {
    // Per algorithm (ring, diloco, noloco): the goodput with the spare, and waiting for the reboot
    // instead (the test above's figures).
    const double with_spare[] = {0.869, 0.879, 0.8945}, waiting[] = {0.819, 0.838, 0.8745};
    for (const auto policy : {sw::RankLossPolicy::spare, sw::RankLossPolicy::wait}) {
        TwoClustersWithSpares c;
        c.setup.recovery.on_rank_loss = policy;
        const auto out = c.run({{sw::FaultEvent{250.5, 0, sw::FaultKind::host_crash}}});
        for (std::size_t i = 0; i < 3; ++i) {
            const auto& trial = out[i].monte_carlo.per_trial[0];
            const bool spare = policy == sw::RankLossPolicy::spare;
            EXPECT_NEAR(trial.goodput, spare ? with_spare[i] : waiting[i], 1e-9) << i << (spare ? " spare" : " wait");
            EXPECT_EQ(trial.spare_swaps, spare ? 1 : 0) << i;
        }
        if (policy != sw::RankLossPolicy::spare) continue;
        EXPECT_EQ(out[0].monte_carlo.per_trial[0].ranks_lost, 1);
        EXPECT_NEAR(out[0].monte_carlo.per_trial[0].lost_faults_s, 30.5, 1e-6);  // rework only: no wait for the reboot
        EXPECT_NEAR(out[0].monte_carlo.per_trial[0].lost_restarts_s, 20.0, 1e-6);
        EXPECT_NEAR(out[1].monte_carlo.per_trial[0].lost_waiting_s, 25.25, 1e-6);
    }
}

// A spare serves its own cluster only. Cluster 0's spare (2) crashed at 240 s and is down until
// 290 s when satellite 0 crashes at 250.5 s (down until 300.5 s); cluster 1's spare (5) is up. The
// ring takes spare 2 as soon as it is back: rework 30.5 s, wait to 290 s, restart to 310 s, 6 cycles
// to 970 s and 30 steps: useful 830 s → 0.83 (spare 5, taken at once, would give 0.869).
TEST(ClusterFaults, ASpareServesOnlyItsOwnCluster) {
    TwoClustersWithSpares c;
    const auto out = c.run({{sw::FaultEvent{240.0, 2, sw::FaultKind::host_crash}, sw::FaultEvent{250.5, 0, sw::FaultKind::host_crash}}});
    EXPECT_NEAR(out[0].monte_carlo.per_trial[0].goodput, 0.83, 1e-9);
    EXPECT_EQ(out[0].monte_carlo.per_trial[0].spare_swaps, 1);
    EXPECT_NEAR(out[0].monte_carlo.per_trial[0].lost_faults_s, 30.5 + 39.5, 1e-6);
}

// A gateway terminal's outage takes down one of its satellite's links to the other cluster, an
// ISL terminal's one of its links inside the cluster; both are counted, the gateway's apart.
TEST(ClusterFaults, GatewayTerminalOutagesTakeGatewayLinksDown) {
    TwoClusters c;
    c.setup.recovery.link_outage_s = 60.0;
    sw::FaultEvent gateway{100.5, 1, sw::FaultKind::link_outage, false, 0.0, /*gateway=*/true};
    sw::FaultEvent isl{300.5, 1, sw::FaultKind::link_outage, false, 0.0};
    const auto out = c.run({{gateway, isl}});
    const auto& ring = out[0].monte_carlo.per_trial[0];
    EXPECT_EQ(ring.links_lost, 2);
    EXPECT_EQ(ring.gateway_links_lost, 1);
    // The replicas play their own cluster's events: satellite 1 is cluster 0's.
    EXPECT_EQ(out[1].monte_carlo.per_trial[0].gateway_links_lost, 1);
    EXPECT_EQ(out[1].monte_carlo.per_trial[0].links_lost, 2);

    sw::DamagedFabric fabric(c.timeline, sw::every_step_model(sw::ClusterAlgorithm::ring, c.setup.training), {0, 1, 2, 3},
                             {0, 0, 1, 1});
    std::pair<std::int32_t, std::int32_t> link;
    ASSERT_TRUE(fabric.outage_link(1, 0.0, 0.0, /*gateway=*/true, link));
    EXPECT_EQ(link, (std::pair<std::int32_t, std::int32_t>{1, 2}));  // satellite 1's only gateway link
    ASSERT_TRUE(fabric.outage_link(1, 0.0, 0.99, /*gateway=*/false, link));
    EXPECT_EQ(link, (std::pair<std::int32_t, std::int32_t>{0, 1}));  // its only link inside cluster 0
}

// The run's route store reaches the trials' fabrics: their undamaged steps take the routes found
// there (damaged ones keep searching from their seed), and every trial comes out as without it.
TEST(ClusterFaults, TrialsSharingTheRunsRoutesComeOutAsWithTheirOwn) {
    const std::vector<std::vector<sw::FaultEvent>> trials{
        {sw::FaultEvent{250.5, 0, sw::FaultKind::host_crash}},
        {sw::FaultEvent{100.5, 1, sw::FaultKind::link_outage, false, 0.0, /*gateway=*/true},
         sw::FaultEvent{300.5, 2, sw::FaultKind::link_outage, false, 0.0}}};
    TwoClusters own;
    own.setup.recovery.link_outage_s = 60.0;
    const auto want = own.run(trials);
    TwoClusters shared;
    shared.setup.recovery.link_outage_s = 60.0;
    auto store = std::make_shared<sw::RouteStore>();
    shared.setup.training_context.training.flow.route_store = store;
    const auto got = shared.run(trials);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t a = 0; a < got.size(); ++a)
        for (std::size_t t = 0; t < trials.size(); ++t) {
            SCOPED_TRACE(testing::Message() << "algorithm " << a << ", trial " << t);
            const auto& g = got[a].monte_carlo.per_trial[t];
            const auto& w = want[a].monte_carlo.per_trial[t];
            EXPECT_EQ(g.goodput, w.goodput);
            EXPECT_EQ(g.lost_fabric_s, w.lost_fabric_s);
            EXPECT_EQ(g.links_lost, w.links_lost);
            EXPECT_EQ(g.damaged_steps, w.damaged_steps);
        }
    EXPECT_EQ(store->tables(), 1u);  // the one keyframe, undamaged: every fabric's step on it
    EXPECT_GT(store->bytes(), 0u);
}

// Gateway failover (constellation.gateways.failover_s = F): a gateway link that fails at t0 blackholes
// what the routes send it until t0 + F. The ring's step in progress at 500.5 s ([500, 501): 1 s steps
// from the last checkpoint at 430-440 s) makes no progress from 500.5 to 502.5 and ends 2 s late; the
// bytes sent into the link are one step's share of it (F = 2 s is longer than the 1 s step): a 4-rank
// ring all-reduce of S = 2e6 bytes (1e6 bf16 gradients) puts 2(p-1)/p · S = 3e6 bytes on each link.
// DiLoCo's round-0 outer sync runs [10, 12) and crosses every gateway link: a failure at 11 s freezes
// it until 13 s; NoLoCo's pair (the only two replicas) likewise. F = 0 re-routes at once.
TEST(ClusterFaults, AFailedGatewayLinkBlackholesTrafficUntilItsFailureIsDetected) {
    const auto run = [](double failover_s, double at_s) {
        TwoClusters c;
        c.setup.recovery.link_outage_s = 60.0;
        c.setup.recovery.gateway_failover_s = failover_s;
        return c.run({{sw::FaultEvent{at_s, 1, sw::FaultKind::link_outage, false, 0.0, /*gateway=*/true}}});
    };
    const auto instant = run(0.0, 500.5), detected = run(2.0, 500.5);
    const auto& ring0 = instant[0].monte_carlo.per_trial[0];
    const auto& ring2 = detected[0].monte_carlo.per_trial[0];
    EXPECT_EQ(ring0.failover_stall_s, 0.0);
    EXPECT_EQ(ring0.bytes_retried, 0.0);
    EXPECT_NEAR(ring2.failover_stall_s, 2.0, 1e-9);
    EXPECT_NEAR(ring2.bytes_retried, 3e6, 1e-3);
    // The stall, give or take the rerouted steps' extra (~5e-5 s each) that the 2 s shift moves past
    // the outage's 60 s.
    EXPECT_NEAR(ring2.lost_fabric_s - ring0.lost_fabric_s, 2.0, 1e-3);
    EXPECT_LT(ring2.goodput, ring0.goodput);

    const auto in_sync = run(2.0, 11.0), in_sync_instant = run(0.0, 11.0);
    for (const std::size_t i : {std::size_t{1}, std::size_t{2}}) {  // diloco, noloco
        const auto& a = in_sync[i].monte_carlo.per_trial[0];
        const auto& a0 = in_sync_instant[i].monte_carlo.per_trial[0];
        EXPECT_NEAR(a.failover_stall_s, 2.0, 1e-9) << i;
        EXPECT_EQ(a0.failover_stall_s, 0.0) << i;
        // The slowest sync of the trial (nearest-rank p99 of its ~80 syncs) is the stalled one.
        EXPECT_NEAR(a.outer_sync_p99_s, 4.0, 1e-9) << i;
        EXPECT_NEAR(a0.outer_sync_p99_s, 2.0, 1e-9) << i;
        EXPECT_LT(a.goodput, a0.goodput) << i;
    }
    // A failure while the replicas compute their inner steps (cluster links only) costs nothing.
    const auto inner = run(2.0, 5.5);
    EXPECT_EQ(inner[1].monte_carlo.per_trial[0].failover_stall_s, 0.0);
}

// Under local SGD with a rank per replica (sync: local_steps, H = 10) only the outer sync, one step
// in ten, crosses the gateway, so each step in the undetected window freezes a tenth of what is
// left of it (as a damaged step's extra time is spread over its round). The gateway fails at
// 500.5 s, in the step [500, 501]: it freezes 0.1 × 2 s and ends at 501.2; the next freezes
// 0.1 × (502.5 − 501.2) and ends at 502.33; the next 0.1 × (502.5 − 502.33): 0.347 s in all (the
// rerouted steps' extra, ~1e-6 s each spread over ten, moves it by less than 1e-5). Every-step
// sync freezes its first step for the whole 2 s (the test above).
TEST(ClusterFaults, LocalStepsFreezeOnAFailedGatewayOnlyForTheirOuterSyncs) {
    TwoClusters c;
    c.algorithms = {sw::ClusterAlgorithm::ring};
    c.fault_free.resize(1);
    c.steps.resize(1);
    c.setup.training.job.sync = sw::SyncMode::local_steps;
    c.setup.recovery.link_outage_s = 60.0;
    c.setup.recovery.gateway_failover_s = 2.0;
    const auto out = c.run({{sw::FaultEvent{500.5, 1, sw::FaultKind::link_outage, false, 0.0, /*gateway=*/true}}});
    const auto& ring = out[0].monte_carlo.per_trial[0];
    EXPECT_NEAR(ring.failover_stall_s, 0.1 * (2.0 + 1.3 + (502.5 - 502.33)), 1e-5);
    EXPECT_GT(ring.bytes_retried, 0.0);
}

// Gateway outages are a constant-rate stream per gateway satellite: expected count
// rate × rate_scale × gateways × T, and the drawn events sit on gateway satellites only.
TEST(ClusterFaults, GatewayOutagesAreDrawnOnGatewaySatellitesAtTheirRate) {
    sw::FaultModel model;
    model.device.sdc_rad_per_event = model.device.hbm_uecc_rad_per_event = 1e30;
    model.device.chip_crash_rad_per_event = model.device.host_cpu_rad_per_event = model.device.host_ram_rad_per_event = 1e30;
    model.gateway_outage_rate_per_s = 1e-3;
    model.rate_scale = 2.0;
    model.gateway_satellites = {1, 3};
    const auto series = sw::constant_dose_rate(4, 0.0);
    const double T = 10000.0;
    const auto expected = sw::expected_fault_counts(series, model, T);
    EXPECT_NEAR(expected[static_cast<std::size_t>(sw::FaultKind::link_outage)], 1e-3 * 2.0 * 2 * T, 1e-9);
    double drawn = 0.0;
    const int trials = 200;
    for (const auto& events : sw::sample_fault_events_batch(series, model, T, 7, 0, trials)) {
        for (const auto& e : events) {
            EXPECT_TRUE(e.gateway);
            EXPECT_TRUE(e.satellite == 1 || e.satellite == 3);
        }
        drawn += static_cast<double>(events.size());
    }
    // Mean 40 per trial; over 200 trials the sum is Poisson(8000): within 5 σ ≈ 450.
    EXPECT_NEAR(drawn, 40.0 * trials, 450.0);
}

TEST(ClusterFaults, OneClusterPlaysTheFormationsOwnTrials) {
    // A single formation's fault trials run through the constellation's entry point as one cluster:
    // its job as configured on the fabric, and the play of faults.hpp on it — the nominal trial with
    // its timeline, each drawn trial — exactly as a DamagedFabric over the formation's ranks gives.
    // Five satellites on a ring, the last a hot spare; one fault a day per satellite at this dose.
    sw::TopologyTimeline timeline;
    timeline.append(swt::ring(5, 800e9, 1e-6));
    const sw::DoseRateSeries series = sw::constant_dose_rate(5, 1e-4);
    sw::ClusterFaultSetup s;
    s.series = &series;
    s.timeline = &timeline;
    s.duration_s = 20000.0;
    s.seed = 7;
    s.trials = 6;
    s.model.rate_scale = 50.0;
    s.model.link_outage_rate_per_s = 1e-4;
    auto& r = s.recovery;
    r.checkpoint_interval_s = 600.0;
    r.checkpoint_cost_s = 10.0;
    r.restart_s = 20.0;
    r.reboot_s = 300.0;
    r.spare_satellites = 1;  // one group of every satellite (spare_group_size 0), as a formation's
    r.on_rank_loss = sw::RankLossPolicy::spare;
    auto& t = s.training;
    t.job.parameters = 1e8;
    t.job.tokens_per_step = 4e5;
    t.job.data_parallel = 4;
    t.options.all_reduce = sw::Algorithm::double_binary_tree;
    t.cluster_nodes = {{0, 1, 2, 3}};
    t.cluster_satellites = {{0, 1, 2, 3, 4}};
    s.training_context.topologies = [&timeline](double from_s) { return timeline.frames_from(from_s); };
    sw::StepDurations steps;
    steps.nominal_s = 2.0;
    const auto nominal = sw::sample_fault_events(series, s.model, s.duration_s, s.seed, 0);
    ASSERT_GT(nominal.size(), 3u);
    s.nominal_events = &nominal;

    const std::vector<sw::ClusterAlgorithm> ring{sw::ClusterAlgorithm::ring};
    const std::vector<sw::ClusterTrainingResult> unread(1);  // read for diloco's and noloco's rounds only
    const auto one = sw::monte_carlo_cluster_goodput(ring, s, unread, {&steps, 1});
    ASSERT_EQ(one.size(), 1u);
    EXPECT_TRUE(one[0].on_fabric);
    EXPECT_FALSE(one[0].interrupted);

    sw::DamagedFabric fabric(timeline, sw::StepModel{t.job, t.accelerator, t.options, {}}, 4);
    const auto direct = sw::simulate_training_with_faults(nominal, 5, s.duration_s, steps, r, true, &fabric);
    ASSERT_TRUE(one[0].nominal.has_value());
    EXPECT_EQ(one[0].nominal->goodput, direct.goodput);
    EXPECT_EQ(one[0].nominal->elapsed_s, direct.elapsed_s);
    EXPECT_EQ(one[0].nominal->replacements, direct.replacements);
    EXPECT_EQ(one[0].nominal->links_lost, direct.links_lost);
    EXPECT_EQ(one[0].nominal->timeline.size(), direct.timeline.size());
    EXPECT_GT(direct.timeline.size(), 1u);
    EXPECT_GT(direct.replacements + direct.links_lost, 0);
    const auto trials = sw::monte_carlo_goodput(series, s.model, r, steps, s.duration_s, s.seed, s.trials, sw::Backend::cpu, &fabric);
    ASSERT_EQ(one[0].monte_carlo.goodput_per_trial.size(), 6u);
    EXPECT_EQ(one[0].monte_carlo.goodput_per_trial, trials.goodput_per_trial);
    EXPECT_EQ(one[0].monte_carlo.goodput_per_trial.front(), direct.goodput);  // trial 0 is the nominal one

    // One trial is the nominal one alone: no Monte Carlo.
    s.trials = 1;
    EXPECT_EQ(sw::monte_carlo_cluster_goodput(ring, s, unread, {&steps, 1})[0].monte_carlo.goodput_per_trial.size(), 0u);
    s.trials = 6;

    // A job on fewer ranks than the satellites outside the spares: the faults stop ranks, but the
    // fabric its steps ran on is not the one they would damage (the play without a fabric).
    t.job.data_parallel = 3;
    const auto apart = sw::monte_carlo_cluster_goodput(ring, s, unread, {&steps, 1});
    EXPECT_FALSE(apart[0].on_fabric);
    EXPECT_EQ(apart[0].nominal->goodput, sw::simulate_training_with_faults(nominal, 5, s.duration_s, steps, r).goodput);
    EXPECT_EQ(apart[0].fabric_evaluations, 0);

    // Ctrl-C before the trials: the nominal trial is whole, the trials are marked interrupted.
    std::atomic<bool> stop{true};
    s.stop = &stop;
    const auto stopped = sw::monte_carlo_cluster_goodput(ring, s, unread, {&steps, 1});
    EXPECT_TRUE(stopped[0].interrupted);
    ASSERT_TRUE(stopped[0].nominal.has_value());
    EXPECT_EQ(stopped[0].nominal->goodput, apart[0].nominal->goodput);
}

namespace {

// Parts of a Monte Carlo played by threads of this process, their rows gathered through memory as
// src/ gathers MPI ranks' (cli/run_ranks.cpp): each part publishes its rows, takes the others'.
class PartsInMemory {
public:
    explicit PartsInMemory(std::int32_t parts) : parts_(parts), rows_(static_cast<std::size_t>(parts)), stopped_(rows_.size()), sync_(parts) {}
    sw::TrialShare share(std::int32_t part) {
        return {part, parts_, [this, part](std::span<sw::TrialRow> rows, bool stopped) {
                    rows_[static_cast<std::size_t>(part)] = rows;
                    stopped_[static_cast<std::size_t>(part)] = stopped;
                    sync_.arrive_and_wait();
                    for (std::size_t t = 0; t < rows.size(); ++t) rows[t] = rows_[t % rows_.size()][t];
                    const bool any = std::find(stopped_.begin(), stopped_.end(), true) != stopped_.end();
                    sync_.arrive_and_wait();  // every part has read before any goes on
                    return any;
                }};
    }

private:
    std::int32_t parts_;
    std::vector<std::span<sw::TrialRow>> rows_;
    std::vector<bool> stopped_;
    std::barrier<> sync_;
};

}  // namespace

// Issue 48 item 4: the trials of every algorithm split among three parts (MPI ranks in a run) by
// index, 7 of them (parts of 3, 2 and 2), and gathered: every part returns what one process does,
// trial by trial and in every figure over the trials. A stop in one part stops every part.
TEST(ClusterFaults, TrialsSharedAmongPartsGiveWhatOneProcessGives) {
    TwoClusters c;
    c.series = sw::constant_dose_rate(4, 1e-4);
    c.setup.model.rate_scale = 50.0;
    c.setup.model.link_outage_rate_per_s = 2e-3;
    c.setup.recovery.link_outage_s = 60.0;
    c.setup.seed = 11;
    c.setup.trials = 7;
    const auto whole = sw::monte_carlo_cluster_goodput(c.algorithms, c.setup, c.fault_free, c.steps);
    ASSERT_EQ(whole.size(), 3u);
    ASSERT_EQ(whole[0].monte_carlo.per_trial.size(), 7u);
    std::vector<double> ring = whole[0].monte_carlo.goodput_per_trial;
    std::sort(ring.begin(), ring.end());
    ASSERT_LT(ring.front(), ring.back()) << "the trials differ, so one out of place would show";

    const auto play_in_parts = [&](const std::atomic<bool>* stop_part_1) {
        PartsInMemory memory(3);
        std::array<sw::TrialShare, 3> shares{memory.share(0), memory.share(1), memory.share(2)};
        std::array<std::vector<sw::ClusterGoodput>, 3> out;
        std::vector<std::thread> threads;
        for (std::size_t k = 0; k < 3; ++k)
            threads.emplace_back([&, k] {
                sw::ClusterFaultSetup s = c.setup;
                s.share = &shares[k];
                if (k == 1) s.stop = stop_part_1;
                out[k] = sw::monte_carlo_cluster_goodput(c.algorithms, s, c.fault_free, c.steps);
            });
        for (auto& t : threads) t.join();
        return out;
    };
    const auto parts = play_in_parts(nullptr);
    for (std::size_t k = 0; k < 3; ++k)
        for (std::size_t a = 0; a < whole.size(); ++a) {
            SCOPED_TRACE(testing::Message() << "part " << k << ", algorithm " << a);
            const auto& g = parts[k][a].monte_carlo;
            const auto& w = whole[a].monte_carlo;
            EXPECT_FALSE(parts[k][a].interrupted);
            EXPECT_EQ(g.goodput_per_trial, w.goodput_per_trial);
            EXPECT_EQ(g.goodput.mean, w.goodput.mean);
            EXPECT_EQ(g.goodput.mean_ci95_low, w.goodput.mean_ci95_low);
            EXPECT_EQ(g.events_per_day.mean, w.events_per_day.mean);
            EXPECT_EQ(g.interruptions_per_day.mean, w.interruptions_per_day.mean);
            EXPECT_EQ(g.mean_events_by_kind, w.mean_events_by_kind);
            ASSERT_EQ(g.per_trial.size(), w.per_trial.size());
            for (std::size_t t = 0; t < w.per_trial.size(); ++t) {
                EXPECT_EQ(g.per_trial[t].links_lost, w.per_trial[t].links_lost) << "trial " << t;
                EXPECT_EQ(g.per_trial[t].lost_waiting_s, w.per_trial[t].lost_waiting_s) << "trial " << t;
            }
            EXPECT_EQ(parts[k][a].fault_free_goodput, whole[a].fault_free_goodput);
        }

    const std::atomic<bool> stop{true};
    const auto stopped = play_in_parts(&stop);
    for (std::size_t k = 0; k < 3; ++k)
        for (const auto& g : stopped[k]) EXPECT_TRUE(g.interrupted) << "part " << k;
}
