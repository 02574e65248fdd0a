// Training across clusters: the replica-average schedule against its α–β formula, the bytes each
// variant moves over the gateway links, NoLoCo's pairing and its lack of a global barrier.

#include <algorithm>
#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include <skyfabric/workloads/cluster_training.hpp>
#include <skyfabric/workloads/collective_engine.hpp>

#include "test_helpers.hpp"

namespace sw = skyfabric::workloads;
using skyfabric::links::Topology;
using sw::testing::make_link;

namespace {

// m clusters, each a ring of k nodes (node g·k + l) with intra links (B1, α1); node l of every
// cluster linked to node l of every other (B2, α2): a uniform two-level fabric.
Topology two_level(int m, int k, double b1_bps, double a1_s, double b2_bps, double a2_s,
                   const std::vector<double>& cluster_b1_bps = {}) {
    Topology t;
    t.node_count = m * k;
    for (int g = 0; g < m; ++g) {
        const double b = cluster_b1_bps.empty() ? b1_bps : cluster_b1_bps[static_cast<std::size_t>(g)];
        for (int l = 0; l < k; ++l) t.links.push_back(make_link(g * k + l, g * k + (l + 1) % k, b, a1_s));
    }
    for (int a = 0; a < m; ++a)
        for (int b = a + 1; b < m; ++b)
            for (int l = 0; l < k; ++l) t.links.push_back(make_link(a * k + l, b * k + l, b2_bps, a2_s));
    std::sort(t.links.begin(), t.links.end(),
              [](const auto& x, const auto& y) { return x.source != y.source ? x.source < y.source : x.target < y.target; });
    return t;
}

struct Fixture {
    std::vector<Topology> series;
    sw::ClusterTrainingSetup setup;
    sw::ClusterTrainingContext context;
    Fixture(int m, int k, const Topology& t, double end_s) {
        series = {t};
        setup.job.parameters = 1e9;
        setup.job.tokens_per_step = 1e6 * m * k;
        setup.job.data_parallel = m * k;
        setup.job.mfu = 0.5;
        setup.job.gradient_buckets = 1;
        setup.options.start_s = 0.0;
        setup.options.end_s = end_s;
        for (int g = 0; g < m; ++g) {
            std::vector<std::int32_t> nodes;
            for (int l = 0; l < k; ++l) nodes.push_back(g * k + l);
            setup.cluster_nodes.push_back(nodes);
        }
        context.topologies = [this](double) { return sw::frame_source(sw::topology_source(series)); };
    }
};

}  // namespace

TEST(ReplicaAverage, EqualsItsAlphaBetaFormulaOnTwoLevelFabric) {
    // 2(m−1)(α2 + n/(k·m·B2)) across, then (k−1)(α1 + n/(k·B1)) gathering inside.
    for (auto [m, k] : {std::pair{4, 9}, std::pair{2, 5}, std::pair{3, 4}}) {
        const double b1 = 800e9, a1 = 1e-6, b2 = 80e9, a2 = 3e-4, n = 4e9;
        const Topology t = two_level(m, k, b1, a1, b2, a2);
        const auto s = sw::build_replica_average_schedule(m, k, n);
        const std::vector<Topology> series{t};
        sw::NetworkClock clock(sw::topology_source(series));
        sw::CollectiveEngine engine(clock, {});
        const auto r = engine.run(s, sw::identity_placement(m * k), 0.0);
        const double expected = 2.0 * (m - 1) * (a2 + n / (k * m) / (b2 / 8)) + (k - 1) * (a1 + n / k / (b1 / 8));
        EXPECT_NEAR(r.duration_s(), expected, 1e-12 * expected) << m << "x" << k;
    }
}

TEST(ClusterTraining, RingCrossesTheGatewayLayerOncePerClusterPerRingStep) {
    // Cluster-major ring of P = m·k ranks: each of its 2(P−1) steps sends n/P over each of the m
    // boundary hops, so a step moves m·2(P−1)/P·n over gateway links.
    const int m = 3, k = 4;
    Fixture f(m, k, two_level(m, k, 800e9, 1e-6, 100e9, 1e-4), 50.0);
    const auto r = sw::simulate_cluster_training(sw::ClusterAlgorithm::ring, f.setup, f.context);
    ASSERT_GT(r.steps, 0);
    const double n = sw::gradient_bytes(f.setup.job), p = m * k;
    // LinkUtilisation counts both directions; the ring sends one way.
    EXPECT_NEAR(r.gateway_bytes, r.steps * m * 2.0 * (p - 1) / p * n, 1e-9 * r.gateway_bytes);
}

TEST(ClusterTraining, RingWithRankReplicasSyncsEveryHthStepOnly) {
    // job.sync local_steps makes every rank a local-SGD replica (job.hpp): ring is then its outer
    // sync, every H-th step, of the outer gradients after compute; the steps between compute only.
    // Gateway bytes as for the every-step ring above, for the synchronised steps' outer bytes.
    const int m = 3, k = 4, H = 3;
    Fixture f(m, k, two_level(m, k, 800e9, 1e-6, 100e9, 1e-4), 200.0);
    f.setup.job.sync = sw::SyncMode::local_steps;
    f.setup.job.local_steps = H;
    const auto r = sw::simulate_cluster_training(sw::ClusterAlgorithm::ring, f.setup, f.context);
    ASSERT_GE(r.training.steps.size(), static_cast<std::size_t>(2 * H));
    const double compute = sw::compute_time_per_step_s(f.setup.job, f.setup.accelerator);
    std::int64_t syncs = 0;
    for (const auto& step : r.training.steps) {
        EXPECT_EQ(step.synchronised, (step.step + 1) % H == 0) << "step " << step.step;
        const double d = step.end_s - step.start_s;
        if (step.synchronised) {
            ++syncs;
            EXPECT_GT(d, compute * (1.0 + 1e-9));
        } else {
            EXPECT_NEAR(d, compute, 1e-12 * compute);
        }
    }
    const double n = sw::outer_sync_bytes(f.setup.job), p = m * k;
    EXPECT_NEAR(r.gateway_bytes, static_cast<double>(syncs) * m * 2.0 * (p - 1) / p * n, 1e-9 * r.gateway_bytes);
}

TEST(ClusterTraining, HierarchicalSendsOnlySlicesAcross) {
    // Per step each rank all-reduces n/k across m clusters: 2(m−1)/m · n/k per rank over gateways.
    const int m = 4, k = 5;
    Fixture f(m, k, two_level(m, k, 800e9, 1e-6, 100e9, 1e-4), 50.0);
    const auto r = sw::simulate_cluster_training(sw::ClusterAlgorithm::hierarchical, f.setup, f.context);
    ASSERT_GT(r.steps, 0);
    const double n = sw::gradient_bytes(f.setup.job);
    EXPECT_NEAR(r.gateway_bytes, r.steps * m * k * 2.0 * (m - 1) / m * n / k, 1e-9 * r.gateway_bytes);
}

TEST(ClusterTraining, NoLoCoMovesTwoOuterGradientsAcrossPerPairAndRound) {
    // A pair's 2k ranks each send n/k (two ring steps of n/2k) to their peer: 2n over gateways per
    // pair and outer step, n = parameters × outer bytes per element. Inner steps stay inside.
    const int m = 4, k = 3;
    Fixture f(m, k, two_level(m, k, 800e9, 1e-6, 100e9, 1e-4), 400.0);
    f.setup.job.local_steps = 5;
    f.setup.job.outer_bytes_per_element = 4.0;
    const auto r = sw::simulate_cluster_training(sw::ClusterAlgorithm::noloco, f.setup, f.context);
    std::int64_t pair_syncs = 0;
    for (const auto& rr : r.rounds)
        if (rr.peer > rr.replica && rr.end_s > rr.ready_s) ++pair_syncs;
    ASSERT_GT(pair_syncs, 4);
    const double n = f.setup.job.parameters * f.setup.job.outer_bytes_per_element;
    EXPECT_NEAR(r.gateway_bytes, pair_syncs * 2.0 * n, 1e-9 * r.gateway_bytes);
}

TEST(ClusterTraining, DiLoCoSyncsEveryReplicaBehindOneBarrier) {
    const int m = 4, k = 3;
    // Cluster 0's own fabric is slow, so its inner steps finish last.
    Fixture f(m, k, two_level(m, k, 800e9, 1e-6, 100e9, 1e-4, {8e9, 800e9, 800e9, 800e9}), 400.0);
    f.setup.job.local_steps = 5;
    const auto r = sw::simulate_cluster_training(sw::ClusterAlgorithm::diloco, f.setup, f.context);
    ASSERT_GT(r.outer_rounds, 1);
    for (std::int64_t round = 0; round < r.outer_rounds; ++round) {
        double latest = 0.0;
        for (const auto& rr : r.rounds)
            if (rr.round == round) latest = std::max(latest, rr.ready_s);
        for (const auto& rr : r.rounds) {
            if (rr.round == round) {
                EXPECT_EQ(rr.sync_start_s, latest);  // everyone waits for the slowest
            }
        }
    }
    // Per round, every rank sends 2(m−1)/m · n/k across: 2(m−1)·n in all.
    const double n = f.setup.job.parameters * f.setup.job.outer_bytes_per_element;
    EXPECT_NEAR(r.gateway_bytes, r.outer_rounds * 2.0 * (m - 1) * n, 1e-9 * r.gateway_bytes);
}

TEST(ClusterTraining, NoLoCoRanksWaitOnlyForTheirPeer) {
    // Same slow cluster 0: under NoLoCo a pair without replica 0 starts its sync when its own two
    // replicas are ready, before replica 0 is; a sync never waits on a replica outside its pair.
    const int m = 4, k = 3;
    Fixture f(m, k, two_level(m, k, 800e9, 1e-6, 100e9, 1e-4, {8e9, 800e9, 800e9, 800e9}), 400.0);
    f.setup.job.local_steps = 5;
    const auto r = sw::simulate_cluster_training(sw::ClusterAlgorithm::noloco, f.setup, f.context);
    bool started_before_slowest = false;
    for (const auto& rr : r.rounds) {
        if (rr.peer < 0) {
            EXPECT_EQ(rr.end_s, rr.ready_s);
            continue;
        }
        const auto peer = std::find_if(r.rounds.begin(), r.rounds.end(),
                                       [&](const auto& x) { return x.round == rr.round && x.replica == rr.peer; });
        ASSERT_NE(peer, r.rounds.end());
        if (rr.end_s == rr.ready_s) continue;  // the run ended before this sync
        EXPECT_EQ(rr.sync_start_s, std::max(rr.ready_s, peer->ready_s));
        double slowest = 0.0;
        for (const auto& x : r.rounds)
            if (x.round == rr.round) slowest = std::max(slowest, x.ready_s);
        if (rr.sync_start_s < slowest) started_before_slowest = true;
    }
    EXPECT_TRUE(started_before_slowest);
    // And the fast replicas get through more inner steps than under DiLoCo's barrier.
    const auto d = sw::simulate_cluster_training(sw::ClusterAlgorithm::diloco, f.setup, f.context);
    EXPECT_GT(r.tokens_per_s, d.tokens_per_s);
}

TEST(ClusterTraining, DiLoCoOutrunsRingOverSlowGatewayLinks) {
    const int m = 4, k = 3;
    Fixture f(m, k, two_level(m, k, 800e9, 1e-6, 1e9, 1e-3), 2000.0);
    f.setup.job.local_steps = 20;
    const auto ring = sw::simulate_cluster_training(sw::ClusterAlgorithm::ring, f.setup, f.context);
    const auto hier = sw::simulate_cluster_training(sw::ClusterAlgorithm::hierarchical, f.setup, f.context);
    const auto diloco = sw::simulate_cluster_training(sw::ClusterAlgorithm::diloco, f.setup, f.context);
    EXPECT_GT(hier.tokens_per_s, ring.tokens_per_s);
    EXPECT_GT(diloco.tokens_per_s, hier.tokens_per_s);
    EXPECT_LT(diloco.idle_fraction, ring.idle_fraction);
    // Throughput is steps × global batch over the wall time, whatever the variant.
    EXPECT_NEAR(ring.tokens_per_s, ring.steps * f.setup.job.tokens_per_step / (ring.end_s - ring.start_s),
                1e-9 * ring.tokens_per_s);
}

TEST(ClusterTraining, NoGatewayPathTrainsNothingWhateverTheAlgorithm) {
    // Every gateway link down (capacity 0: kept, not routed over): the clusters train alone, but
    // no algorithm's model is ever averaged across them. Each reports 0 global steps and 0 tokens/s
    // over the whole run, truncated; DiLoCo's and NoLoCo's replicas computed their first inner
    // steps (busy, so not wholly idle) and then waited for a path to the end.
    const int m = 4, k = 3;
    const double end = 400.0;
    Fixture f(m, k, two_level(m, k, 800e9, 1e-6, 0.0, 1e-4), end);
    f.setup.job.local_steps = 5;
    for (const auto algorithm : sw::cluster_algorithms) {
        SCOPED_TRACE(std::string(sw::to_string(algorithm)));
        const auto r = sw::simulate_cluster_training(algorithm, f.setup, f.context);
        EXPECT_TRUE(r.truncated);
        EXPECT_EQ(r.steps, 0);
        EXPECT_EQ(r.tokens_per_s, 0.0);
        EXPECT_EQ(r.mfu, 0.0);
        EXPECT_EQ(r.outer_rounds, 0);
        if (algorithm == sw::ClusterAlgorithm::diloco || algorithm == sw::ClusterAlgorithm::noloco) {
            EXPECT_EQ(r.end_s, end);
            ASSERT_EQ(r.rounds.size(), static_cast<std::size_t>(m));
            for (const auto& rr : r.rounds) {
                EXPECT_EQ(rr.inner_steps, f.setup.job.local_steps);
                EXPECT_LT(rr.ready_s, end);
                EXPECT_EQ(rr.end_s, end);
            }
            EXPECT_GT(r.idle_fraction, 0.0);
            EXPECT_LT(r.idle_fraction, 1.0);
        }
    }
}

TEST(ClusterTraining, AlgorithmsSideBySideGiveWhatEachGivesAlone) {
    // The constellation runs its algorithms on several threads: each result must be the one a run
    // of that algorithm alone gives, field for field, in the order asked.
    const int m = 4, k = 3;
    Fixture f(m, k, two_level(m, k, 800e9, 1e-6, 1e9, 1e-3), 1500.0);
    f.setup.job.local_steps = 10;
    const std::vector<sw::ClusterAlgorithm> order{sw::ClusterAlgorithm::noloco, sw::ClusterAlgorithm::ring,
                                                  sw::ClusterAlgorithm::diloco, sw::ClusterAlgorithm::hierarchical};
    for (const std::int32_t threads : {1, 3}) {
        SCOPED_TRACE(threads);
        const auto together = sw::simulate_cluster_trainings(order, f.setup, f.context, threads);
        ASSERT_EQ(together.size(), order.size());
        for (std::size_t i = 0; i < order.size(); ++i) {
            const auto alone = sw::simulate_cluster_training(order[i], f.setup, f.context);
            EXPECT_EQ(together[i].algorithm, order[i]);
            EXPECT_EQ(together[i].steps, alone.steps);
            EXPECT_EQ(together[i].end_s, alone.end_s);
            EXPECT_EQ(together[i].tokens_per_s, alone.tokens_per_s);
            EXPECT_EQ(together[i].gateway_bytes, alone.gateway_bytes);
            EXPECT_EQ(together[i].intra_cluster_bytes, alone.intra_cluster_bytes);
            EXPECT_EQ(together[i].rounds.size(), alone.rounds.size());
            EXPECT_EQ(together[i].training.steps.size(), alone.training.steps.size());
        }
    }
    // A setup all but ring refuse (one cluster) is reported, not lost on a thread.
    f.setup.cluster_nodes.resize(1);
    EXPECT_THROW(sw::simulate_cluster_trainings(order, f.setup, f.context, 2), std::invalid_argument);
}

TEST(ClusterTraining, EveryRingOfAConstellationFollowsTheReplanSetting) {
    // workload.replan_on_topology_change reaches the rings a constellation embeds (ring and
    // hierarchical across the clusters, each diloco or noloco replica's in its cluster), as it does a
    // formation's job.
    Fixture f(2, 4, two_level(2, 4, 100e9, 1e-6, 10e9, 1e-4), 10.0);
    for (const bool replan : {true, false}) {
        f.setup.options.replan_on_topology_change = replan;
        for (const auto algorithm : {sw::ClusterAlgorithm::ring, sw::ClusterAlgorithm::hierarchical})
            EXPECT_EQ(sw::every_step_model(algorithm, f.setup).options.replan_on_topology_change, replan);
        EXPECT_EQ(sw::replica_step_model(f.setup, 1).options.replan_on_topology_change, replan);
    }
}

TEST(ClusterTraining, OneClusterTrainsItsJobAsConfigured) {
    // A single formation runs through the constellation's entry point as a constellation of one
    // cluster: ring there is the job as configured (its own all-reduce, placement, ranks on 4 of the
    // 6 satellites, stragglers, power), step for step what simulate_training gives it.
    const int k = 6;
    std::vector<Topology> series;
    for (int i = 0; i < 3; ++i) {
        Topology t;
        t.time_s = 100.0 * i;
        t.node_count = k;
        for (int l = 0; l < k; ++l) t.links.push_back(make_link(l, (l + 1) % k, 100e9 * (1 + i), 1e-6 * (1 + l)));
        if (i == 1) t.links.push_back(make_link(0, 3, 400e9, 2e-6));
        std::sort(t.links.begin(), t.links.end(),
                  [](const auto& x, const auto& y) { return x.source != y.source ? x.source < y.source : x.target < y.target; });
        series.push_back(t);
    }
    sw::ClusterTrainingSetup setup;
    setup.job.parameters = 1e9;
    setup.job.tokens_per_step = 4e6;
    setup.job.data_parallel = 4;
    setup.job.mfu = 0.5;
    setup.job.gradient_buckets = 2;
    setup.options.start_s = 0.0;
    setup.options.end_s = 300.0;
    setup.options.all_reduce = sw::Algorithm::double_binary_tree;
    setup.options.placement = sw::PlacementPolicy::identity;
    setup.options.stragglers.probability = 0.2;
    setup.options.stragglers.slowdown = 3.0;
    setup.cluster_nodes = {{0, 1, 2, 3, 4, 5}};  // every satellite; the job's own 4 ranks train
    sw::ClusterTrainingContext context;
    context.topologies = [&series](double) { return sw::frame_source(sw::topology_source(series)); };
    // Half speed after t = 50 s.
    context.cluster_compute_done_s = [](std::size_t c, double start_s, double work_s) {
        EXPECT_EQ(c, 0u);
        if (start_s + work_s <= 50.0) return start_s + work_s;
        const double before = std::max(0.0, 50.0 - start_s);  // work done at full speed
        return std::max(start_s, 50.0) + 2.0 * (work_s - before);
    };
    const auto one = sw::simulate_cluster_training(sw::ClusterAlgorithm::ring, setup, context);

    sw::TrainingContext direct_context;
    direct_context.compute_done_s = [&](double start_s, double work_s) { return context.cluster_compute_done_s(0, start_s, work_s); };
    const auto direct = sw::simulate_training(setup.job, setup.accelerator, sw::topology_source(series), setup.options, direct_context);
    ASSERT_GT(direct.summary.steps, 2);
    EXPECT_GT(direct.summary.straggler_s, 0.0);
    ASSERT_EQ(one.training.steps.size(), direct.steps.size());
    for (std::size_t i = 0; i < direct.steps.size(); ++i) {
        EXPECT_EQ(one.training.steps[i].start_s, direct.steps[i].start_s) << i;
        EXPECT_EQ(one.training.steps[i].end_s, direct.steps[i].end_s) << i;
        EXPECT_EQ(one.training.steps[i].compute_s, direct.steps[i].compute_s) << i;
        EXPECT_EQ(one.training.steps[i].straggler_s, direct.steps[i].straggler_s) << i;
    }
    ASSERT_EQ(one.training.collectives.size(), direct.collectives.size());
    for (std::size_t i = 0; i < direct.collectives.size(); ++i) EXPECT_EQ(one.training.collectives[i].algorithm, sw::Algorithm::double_binary_tree);
    EXPECT_EQ(one.training.summary.tokens_per_s, direct.summary.tokens_per_s);
    EXPECT_EQ(one.steps, direct.summary.steps);
    EXPECT_EQ(one.gateway_bytes, 0.0);  // no links between clusters
    EXPECT_GT(one.intra_cluster_bytes, 0.0);
    EXPECT_GT(one.compute_throttled_s, 0.0);

    // The other algorithms need clusters to choose between.
    for (const auto a : {sw::ClusterAlgorithm::hierarchical, sw::ClusterAlgorithm::diloco, sw::ClusterAlgorithm::noloco}) {
        const std::vector<sw::ClusterAlgorithm> just{a};
        const auto problems = sw::check(setup, just);
        ASSERT_EQ(problems.size(), 1u);
        EXPECT_EQ(problems.front().key, "cluster_nodes");
        EXPECT_THROW(sw::simulate_cluster_training(a, setup, context), std::invalid_argument);
    }
}

TEST(ClusterTraining, AlgorithmsSharingRoutesGiveWhatEachFindsAlone) {
    // A constellation's algorithms share one route store: on two disjoint paths per transfer, each
    // result must be the one its own searches give, and the one network's routes searched once. With
    // more threads than algorithms, the threads left over search routes for the others. A store told
    // the clusters guides its searches (SearchGuide) through the same engines: the same results (the
    // guided paths themselves are checked edge for edge in network_test.cpp).
    const int m = 4, k = 3;
    Fixture f(m, k, two_level(m, k, 800e9, 1e-6, 1e9, 1e-3), 1500.0);
    f.setup.job.local_steps = 10;
    f.setup.options.flow.paths_per_transfer = 2;
    f.setup.options.flow.split = sw::MultipathSplit::capacity;
    const std::vector<sw::ClusterAlgorithm> order{sw::ClusterAlgorithm::ring, sw::ClusterAlgorithm::hierarchical,
                                                  sw::ClusterAlgorithm::diloco, sw::ClusterAlgorithm::noloco};
    std::vector<sw::ClusterTrainingResult> alone;
    for (const auto a : order) alone.push_back(sw::simulate_cluster_training(a, f.setup, f.context));
    std::vector<std::int32_t> cluster_of(static_cast<std::size_t>(m * k));
    for (std::size_t c = 0; c < f.setup.cluster_nodes.size(); ++c)
        for (const std::int32_t node : f.setup.cluster_nodes[c]) cluster_of[static_cast<std::size_t>(node)] = static_cast<std::int32_t>(c);
    ASSERT_TRUE(sw::build_search_guide(sw::build_network(f.series.front()), cluster_of).has_value());
    const std::pair<bool, std::int32_t> runs[] = {{false, 2}, {false, 7}, {true, 2}, {true, 7}};  // (guided, threads)
    for (const auto& [guided, threads] : runs) {
        SCOPED_TRACE(testing::Message() << threads << " threads" << (guided ? ", guided" : ""));
        auto store = guided ? std::make_shared<sw::RouteStore>(cluster_of) : std::make_shared<sw::RouteStore>();
        f.context.training.flow.route_store = store;
        const auto shared = sw::simulate_cluster_trainings(order, f.setup, f.context, threads);
        ASSERT_EQ(shared.size(), order.size());
        for (std::size_t i = 0; i < order.size(); ++i) {
            SCOPED_TRACE(static_cast<int>(order[i]));
            EXPECT_EQ(shared[i].steps, alone[i].steps);
            EXPECT_EQ(shared[i].end_s, alone[i].end_s);
            EXPECT_EQ(shared[i].step_time_mean_s, alone[i].step_time_mean_s);
            EXPECT_EQ(shared[i].gateway_bytes, alone[i].gateway_bytes);
            EXPECT_EQ(shared[i].intra_cluster_bytes, alone[i].intra_cluster_bytes);
            EXPECT_EQ(shared[i].outer_rounds, alone[i].outer_rounds);
        }
        EXPECT_EQ(store->tables(), 1u);  // one topology: one table for every algorithm and round
        EXPECT_GT(store->bytes(), 0u);
    }
}

TEST(NoLoCoPairing, IsASeededPerfectMatchingThatChangesByRound) {
    std::set<std::vector<std::int32_t>> seen;
    for (std::int64_t round = 0; round < 20; ++round) {
        const auto peer = sw::noloco_pairing(6, round, 42);
        for (std::int32_t a = 0; a < 6; ++a) {
            ASSERT_GE(peer[a], 0);
            EXPECT_NE(peer[a], a);
            EXPECT_EQ(peer[peer[a]], a);
        }
        EXPECT_EQ(peer, sw::noloco_pairing(6, round, 42));
        seen.insert(peer);
    }
    EXPECT_GT(seen.size(), 5u);  // 15 matchings of 6: 20 rounds draw several
    const auto odd = sw::noloco_pairing(5, 0, 42);
    EXPECT_EQ(std::count(odd.begin(), odd.end(), -1), 1);
}

TEST(ClusterTraining, RefusesUnequalClustersWhereSlicesNeedThem) {
    Fixture f(2, 3, two_level(2, 3, 800e9, 1e-6, 100e9, 1e-4), 50.0);
    f.setup.cluster_nodes[1].pop_back();
    f.setup.job.data_parallel = 5;  // every rank, as check(setup) asks
    EXPECT_THROW(sw::simulate_cluster_training(sw::ClusterAlgorithm::hierarchical, f.setup, f.context), std::invalid_argument);
    EXPECT_THROW(sw::simulate_cluster_training(sw::ClusterAlgorithm::noloco, f.setup, f.context), std::invalid_argument);
    EXPECT_NO_THROW(sw::simulate_cluster_training(sw::ClusterAlgorithm::ring, f.setup, f.context));
}

TEST(ClusterTraining, ReportsBytesAPairSendsThroughOtherClusters) {
    // Clusters 0 and 1 have no direct links: whenever NoLoCo pairs them, their slices go round through
    // cluster 2 or 3, whose own syncs the model does not let them contend with — and it says how much.
    const int m = 4, k = 3;
    Topology t = two_level(m, k, 800e9, 1e-6, 100e9, 1e-4);
    std::erase_if(t.links, [&](const auto& l) { return l.source / k == 0 && l.target / k == 1; });
    Fixture f(m, k, t, 400.0);
    f.setup.job.local_steps = 5;
    const auto r = sw::simulate_cluster_training(sw::ClusterAlgorithm::noloco, f.setup, f.context);
    bool paired = false;
    for (const auto& rr : r.rounds) paired |= rr.replica == 0 && rr.peer == 1 && rr.end_s > rr.ready_s;
    ASSERT_TRUE(paired);
    EXPECT_GT(r.bytes_outside_own_clusters, 0.0);
    // With every direct link up, pairs stay on them.
    Fixture direct(m, k, two_level(m, k, 800e9, 1e-6, 100e9, 1e-4), 400.0);
    direct.setup.job.local_steps = 5;
    EXPECT_EQ(sw::simulate_cluster_training(sw::ClusterAlgorithm::noloco, direct.setup, direct.context).bytes_outside_own_clusters, 0.0);
    // DiLoCo's sync is one collective over every cluster: nothing is outside it.
    EXPECT_EQ(sw::simulate_cluster_training(sw::ClusterAlgorithm::diloco, f.setup, f.context).bytes_outside_own_clusters, 0.0);
}

// Issue 25, power per cluster: cluster 0 alone in the Earth's shadow computes at half speed
// (its ranks finish w of full-speed compute in 2w); the others are sunlit. The ring steps every
// rank together, so each of its steps' compute takes 2c and the throttle costs c per step; a
// NoLoCo replica runs at its own cluster's pace, so only replica 0's inner steps take 2c' (the
// mean over the 4 replicas: a quarter of its), its partner waits for it at their sync, and the
// other pair syncs exactly when it would with every cluster sunlit. DiLoCo's barrier makes every
// replica wait for replica 0.
TEST(ClusterTraining, AClusterInShadowSlowsTheRingButNotNolocosOtherPair) {
    const int m = 4, k = 2;
    const Topology t = two_level(m, k, 800e9, 1e-6, 100e9, 1e-4);
    const auto shadowed = [](std::size_t c, double start_s, double work_s) { return start_s + work_s / (c == 0 ? 0.5 : 1.0); };
    const auto run = [&](sw::ClusterAlgorithm a, bool shadow) {
        Fixture f(m, k, t, 400.0);
        f.setup.job.local_steps = 3;
        if (shadow) f.context.cluster_compute_done_s = shadowed;
        return sw::simulate_cluster_training(a, f.setup, f.context);
    };
    const auto ring = run(sw::ClusterAlgorithm::ring, true);
    ASSERT_GT(ring.steps, 0);
    for (const auto& s : ring.training.steps) EXPECT_NEAR(s.compute_s, 2.0 * ring.compute_per_step_s, 1e-9 * s.compute_s);
    EXPECT_NEAR(ring.compute_throttled_s, static_cast<double>(ring.steps) * ring.compute_per_step_s, 1e-9 * ring.compute_throttled_s);
    EXPECT_DOUBLE_EQ(run(sw::ClusterAlgorithm::ring, false).compute_throttled_s, 0.0);

    const auto sunlit = run(sw::ClusterAlgorithm::noloco, false);
    const auto noloco = run(sw::ClusterAlgorithm::noloco, true);
    const auto peer = sw::noloco_pairing(m, 0, Fixture(m, k, t, 400.0).setup.seed);
    const auto round0 = [](const sw::ClusterTrainingResult& r, std::int32_t replica) {
        for (const auto& rr : r.rounds)
            if (rr.round == 0 && rr.replica == replica) return rr;
        return sw::ReplicaRound{};
    };
    const std::int32_t partner = peer[0];
    ASSERT_GE(partner, 0);
    for (std::int32_t g = 1; g < m; ++g) {
        if (g == partner) {
            // Waits for replica 0: its sync starts when replica 0 is ready, later than itself.
            EXPECT_DOUBLE_EQ(round0(noloco, g).sync_start_s, round0(noloco, 0).ready_s);
            EXPECT_GT(round0(noloco, g).sync_start_s, round0(noloco, g).ready_s);
        } else {
            EXPECT_DOUBLE_EQ(round0(noloco, g).end_s, round0(sunlit, g).end_s) << g;  // the other pair does not wait
        }
    }
    // Replica 0's 3 inner steps of compute c' each took 2c': 3c' throttled, a quarter of it per replica,
    // over the rounds it ran.
    std::int64_t replica0_steps = 0;
    for (const auto& rr : noloco.rounds)
        if (rr.replica == 0) replica0_steps += rr.inner_steps;
    EXPECT_NEAR(noloco.compute_throttled_s, static_cast<double>(replica0_steps) * noloco.compute_per_step_s / m,
                1e-9 * noloco.compute_throttled_s);

    const auto diloco = run(sw::ClusterAlgorithm::diloco, true);
    for (std::int32_t g = 1; g < m; ++g) EXPECT_DOUBLE_EQ(round0(diloco, g).sync_start_s, round0(diloco, 0).ready_s);
}

TEST(ClusterTraining, StragglersSlowEveryVariantAndAreNotCountedAsThrottling) {
    // Every rank straggles (probability 1, slowdown 2): each ring and DiLoCo step computes twice as
    // long, so their straggler time is one compute per step (DiLoCo: per replica, mean over
    // replicas), and none of it is power throttling.
    const int m = 2, k = 3;
    Fixture f(m, k, two_level(m, k, 800e9, 1e-6, 100e9, 1e-4), 300.0);
    f.setup.job.local_steps = 3;
    f.setup.options.stragglers = {1.0, 2.0, 5};
    for (const auto algorithm : {sw::ClusterAlgorithm::ring, sw::ClusterAlgorithm::diloco}) {
        SCOPED_TRACE(std::string(sw::to_string(algorithm)));
        const auto r = sw::simulate_cluster_training(algorithm, f.setup, f.context);
        ASSERT_GT(r.steps, 0);
        EXPECT_NEAR(r.straggler_s, static_cast<double>(r.steps) * r.compute_per_step_s, 1e-9 * r.straggler_s);
        EXPECT_EQ(r.compute_throttled_s, 0.0);
    }
}

// Issue 25 item 5: an MoE job across clusters. Two clusters of k = 4 (intra links B1 = 100 GB/s,
// α1 = 1 µs; node l of each cluster to node l of the other at B2 = 1 GB/s, α2 = 0.3 ms), expert
// groups of E = 2. Within a cluster a group is two neighbours on the cluster's ring; across, rank l
// of each cluster, joined by their gateway link. A pairwise all-to-all of n_a bytes per rank is one
// phase of n_a/E: α + n_a/(E·B), four per MoE layer (moe_test.cpp's arithmetic).
TEST(ClusterTraining, ExpertsAcrossClustersPayTheGatewayLinksInTheirAllToAlls) {
    const int m = 2, k = 4;
    const double b1 = 800e9, a1 = 1e-6, b2 = 8e9, a2 = 3e-4;
    Fixture f(m, k, two_level(m, k, b1, a1, b2, a2), 30.0);
    auto& job = f.setup.job;
    job.moe.layers = 1;
    job.moe.expert_parallel = 2;
    job.moe.experts_per_token = 2;
    job.moe.hidden_size = 1024;
    job.moe.expert_parameters = 5e8;
    const double n_a = sw::moe_all_to_all_bytes(job);
    EXPECT_DOUBLE_EQ(n_a, (job.tokens_per_step / (m * k)) * 2 * 1024 * 2.0);
    const double within = 4 * (a1 + n_a / (2 * b1 / 8.0)), across = 4 * (a2 + n_a / (2 * b2 / 8.0));

    const auto ring_within = sw::simulate_cluster_training(sw::ClusterAlgorithm::ring, f.setup, f.context);
    ASSERT_GT(ring_within.steps, 0);
    EXPECT_NEAR(ring_within.all_to_all_per_step_s, within, 1e-9 * within);
    EXPECT_NEAR(ring_within.training.steps.front().all_to_all_s, within, 1e-9 * within);
    // DiLoCo's replica (one cluster) runs the same groups inside it.
    const auto diloco = sw::simulate_cluster_training(sw::ClusterAlgorithm::diloco, f.setup, f.context);
    EXPECT_NEAR(diloco.all_to_all_per_step_s, within, 1e-9 * within);

    f.setup.experts_across_clusters = true;
    const auto ring_across = sw::simulate_cluster_training(sw::ClusterAlgorithm::ring, f.setup, f.context);
    EXPECT_NEAR(ring_across.all_to_all_per_step_s, across, 1e-9 * across);
    EXPECT_GT(ring_across.gateway_bytes, ring_within.gateway_bytes);
    const auto hierarchical = sw::simulate_cluster_training(sw::ClusterAlgorithm::hierarchical, f.setup, f.context);
    EXPECT_NEAR(hierarchical.all_to_all_per_step_s, across, 1e-9 * across);
    EXPECT_THROW(sw::simulate_cluster_training(sw::ClusterAlgorithm::diloco, f.setup, f.context), std::invalid_argument);
    job.moe.expert_parallel = 3;  // not a multiple of the two clusters
    EXPECT_THROW(sw::simulate_cluster_training(sw::ClusterAlgorithm::ring, f.setup, f.context), std::invalid_argument);
}
