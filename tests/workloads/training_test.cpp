// Step-level simulator: overlap of bucketed all-reduce with the backward pass,
// low-communication mode, topology changes.

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include <skyfabric/workloads/training.hpp>

#include "test_helpers.hpp"

namespace sw = skyfabric::workloads;
using skyfabric::links::Topology;

namespace {
sw::TrainingJob small_job(int p) {
    sw::TrainingJob job;
    job.parameters = 1e9;
    job.tokens_per_step = 1e6;
    job.data_parallel = p;
    job.mfu = 0.5;
    job.gradient_buckets = 1;
    return job;
}
}  // namespace

TEST(Training, OneBucketExposesTheWholeAllReduce) {
    // One bucket is ready only when backward ends: step = compute + ring all-reduce.
    const int p = 8;
    const double cap = 100e9, alpha = 1e-6;
    const std::vector<Topology> series{sw::testing::ring(p, cap, alpha)};
    const auto job = small_job(p);
    sw::TrainingOptions o;
    o.max_steps = 5;
    const auto r = sw::simulate_training(job, sw::tpu_v6e(), series, o);
    ASSERT_EQ(r.summary.steps, 5);
    const double compute = 6.0 * 1e9 * 1e6 / (p * 918e12 * 0.5);
    const double n = 2e9;
    const double ar = 2.0 * (p - 1) * alpha + 2.0 * (p - 1.0) / p * n / (cap / 8);
    for (const auto& s : r.steps) {
        EXPECT_NEAR(s.compute_s, compute, 1e-12);
        EXPECT_NEAR(s.exposed_communication_s, ar, 1e-9 * ar);
        EXPECT_NEAR(s.end_s - s.start_s, compute + ar, 1e-9);
        EXPECT_EQ(s.status, sw::StepStatus::ok);
    }
    EXPECT_EQ(r.collectives.size(), 5u);
    EXPECT_NEAR(r.summary.step_time_median_s, compute + ar, 1e-9);
    EXPECT_NEAR(r.summary.tokens_per_s, 1e6 / (compute + ar), 1e-6 * 1e6 / (compute + ar));
    EXPECT_NEAR(r.summary.mfu, 0.5 * compute / (compute + ar), 1e-9);
    EXPECT_NEAR(r.summary.bus_bw_mean_Bps / r.summary.bus_bw_bound_Bps, (2.0 * (p - 1) / p * n / (cap / 8)) / ar, 1e-6);
}

TEST(Training, BucketsOverlapTheBackwardPass) {
    // K buckets: all but the last bucket's all-reduce hide under backward (when the
    // network keeps up), so exposed ≈ one bucket's all-reduce.
    const int p = 8, k = 4;
    const double cap = 100e9, alpha = 1e-6;
    const std::vector<Topology> series{sw::testing::ring(p, cap, alpha)};
    auto job = small_job(p);
    job.gradient_buckets = k;
    sw::TrainingOptions o;
    o.max_steps = 3;
    const auto r = sw::simulate_training(job, sw::tpu_v6e(), series, o);
    const double bucket = 2e9 / k;
    const double ar = 2.0 * (p - 1) * alpha + 2.0 * (p - 1.0) / p * bucket / (cap / 8);
    const double compute = r.summary.compute_per_step_s;
    ASSERT_LT(ar, compute * (2.0 / 3.0) / k);  // each bucket finishes before the next is ready
    for (const auto& s : r.steps) EXPECT_NEAR(s.exposed_communication_s, ar, 1e-9);
    EXPECT_EQ(r.collectives.size(), 3u * k);
}

TEST(Training, LocalStepsSynchroniseEveryH) {
    const int p = 6;
    const std::vector<Topology> series{sw::testing::ring(p, 100e9, 1e-6)};
    auto job = small_job(p);
    job.sync = sw::SyncMode::local_steps;
    job.local_steps = 4;
    sw::TrainingOptions o;
    o.max_steps = 8;
    const auto r = sw::simulate_training(job, sw::tpu_v6e(), series, o);
    ASSERT_EQ(r.steps.size(), 8u);
    EXPECT_EQ(r.collectives.size(), 2u);
    for (const auto& s : r.steps) {
        EXPECT_EQ(s.synchronised, (s.step + 1) % 4 == 0);
        if (!s.synchronised) {
            EXPECT_DOUBLE_EQ(s.exposed_communication_s, 0.0);
        }
    }
    EXPECT_DOUBLE_EQ(r.collectives[0].bytes, 1e9 * 4.0);  // fp32 outer gradients
}

TEST(Training, TopologyChangeReplansAndCountsLostTime) {
    // A lattice whose link (0,1) drops at t = 5 s: the ring through it is re-embedded.
    const auto base = sw::testing::lattice(4, 4, 100e9, 1e-6);
    std::vector<Topology> series;
    for (int i = 0; i < 40; ++i) {
        Topology t = base;
        t.time_s = 0.5 * i;
        if (i >= 10) t.links.erase(t.links.begin());  // (0,1) gone from 5 s on
        series.push_back(t);
    }
    auto job = small_job(16);
    sw::TrainingOptions o;
    const auto r = sw::simulate_training(job, sw::tpu_v6e(), series, o);
    EXPECT_GT(r.summary.steps, 10);
    EXPECT_GE(r.summary.replans, 1);
    EXPECT_NEAR(r.summary.end_s, r.steps.back().end_s, 0.0);
    EXPECT_LE(r.summary.end_s, 20.0);
    EXPECT_FALSE(r.links.empty());
    double bytes = 0.0;
    for (const auto& l : r.links) {
        bytes += l.bytes;
        EXPECT_LE(l.utilisation, 1.0 + 1e-9);
    }
    EXPECT_GT(bytes, 0.0);
    // Determinism: the same input gives the same output.
    const auto again = sw::simulate_training(job, sw::tpu_v6e(), series, o);
    ASSERT_EQ(again.steps.size(), r.steps.size());
    for (std::size_t i = 0; i < r.steps.size(); ++i) EXPECT_EQ(again.steps[i].end_s, r.steps[i].end_s);
}

TEST(Training, RankGroupsReembedOnlyTheGroupWhoseRingBroke) {
    // Two groups of 4 (nodes 0–3, 4–7) on rings of their own, bridged 3–4 and 7–0. At t = 50 s group
    // 0's ring becomes 0–2–1–3: its ring lost hops, so it is re-embedded once; group 1 untouched.
    using sw::testing::make_link;
    auto topology = [](double t, bool reordered) {
        Topology x;
        x.time_s = t;
        x.node_count = 8;
        const std::vector<int> g0 = reordered ? std::vector<int>{0, 2, 1, 3} : std::vector<int>{0, 1, 2, 3};
        for (int i = 0; i < 4; ++i) x.links.push_back(make_link(g0[i], g0[(i + 1) % 4], 100e9, 1e-6));
        for (int i = 0; i < 4; ++i) x.links.push_back(make_link(4 + i, 4 + (i + 1) % 4, 100e9, 1e-6));
        x.links.push_back(make_link(3, 4, 10e9, 1e-4));
        x.links.push_back(make_link(0, 7, 10e9, 1e-4));
        std::sort(x.links.begin(), x.links.end(),
                  [](const auto& a, const auto& b) { return a.source != b.source ? a.source < b.source : a.target < b.target; });
        return x;
    };
    const std::vector<Topology> series{topology(0.0, false), topology(50.0, true)};
    auto job = small_job(8);
    sw::TrainingOptions o;
    o.rank_groups = {{0, 1, 2, 3}, {4, 5, 6, 7}};
    o.end_s = 100.0;
    const auto r = sw::simulate_training(job, sw::tpu_v6e(), series, o);
    ASSERT_GT(r.summary.steps, 10);
    EXPECT_EQ(r.summary.replans, 1);
    EXPECT_EQ(r.summary.stalled_s, 0.0);
    o.rank_nodes = {0, 1, 2, 3, 4, 5, 6, 7};
    EXPECT_THROW(sw::simulate_training(job, sw::tpu_v6e(), series, o), std::invalid_argument);
}

TEST(Training, WithoutReplanningTheFirstRingRoutesAroundItsBrokenHops) {
    // Four ranks on a ring 0–1–2–3 of equal links; at t = 50 s the links become the ring 0–2–1–3,
    // whose link 3–0 is a slow one (1 ms). Replanning re-embeds the ring on the new links once; with
    // workload.replan_on_topology_change: false the first ring is kept and its hops 0→1 and 2→3 take
    // their shortest paths over two links, 0→2→1 and 2→1→3, which share 2→1: each at half the link's
    // rate, so its ring steps after 50 s communicate for about twice as long.
    using sw::testing::make_link;
    auto topology = [](double t, const std::vector<int>& order) {
        Topology x;
        x.time_s = t;
        x.node_count = 4;
        for (int i = 0; i < 4; ++i) {
            const int a = order[i], b = order[(i + 1) % 4];
            x.links.push_back(make_link(a, b, 100e9, t > 0.0 && a + b == 3 && a * b == 0 ? 1e-3 : 1e-6));
        }
        std::sort(x.links.begin(), x.links.end(),
                  [](const auto& a, const auto& b) { return a.source != b.source ? a.source < b.source : a.target < b.target; });
        return x;
    };
    const std::vector<Topology> series{topology(0.0, {0, 1, 2, 3}), topology(50.0, {0, 2, 1, 3})};
    const auto job = small_job(4);
    sw::TrainingOptions o;
    o.end_s = 100.0;
    const auto replanned = sw::simulate_training(job, sw::tpu_v6e(), series, o);
    o.replan_on_topology_change = false;
    const auto kept = sw::simulate_training(job, sw::tpu_v6e(), series, o);
    EXPECT_EQ(replanned.summary.replans, 1);
    EXPECT_EQ(kept.summary.replans, 0);
    EXPECT_EQ(kept.summary.stalled_s, 0.0);
    const auto communication_after = [](const sw::TrainingResult& r) {
        double s = 0.0;
        for (const auto& step : r.steps) s += step.start_s >= 50.0 ? step.communication_s : 0.0;
        return s;
    };
    ASSERT_GT(communication_after(replanned), 0.0);
    EXPECT_GT(communication_after(kept), 1.5 * communication_after(replanned));
}

TEST(Stragglers, AStragglingStepComputesSlowdownTimesLongerThenAllReduces) {
    // Every rank straggles (probability 1, slowdown 2): each step is 2 · compute + the ring
    // all-reduce (one bucket: it starts when the slowed backward pass ends), and the stragglers'
    // time is one compute per step.
    const int p = 8;
    const double cap = 100e9, alpha = 1e-6;
    const std::vector<Topology> series{sw::testing::ring(p, cap, alpha)};
    sw::TrainingOptions o;
    o.max_steps = 4;
    o.stragglers = {1.0, 2.0, 7};
    const auto r = sw::simulate_training(small_job(p), sw::tpu_v6e(), series, o);
    ASSERT_EQ(r.summary.steps, 4);
    const double compute = 6.0 * 1e9 * 1e6 / (p * 918e12 * 0.5);
    const double ar = 2.0 * (p - 1) * alpha + 2.0 * (p - 1.0) / p * 2e9 / (cap / 8);
    for (const auto& s : r.steps) {
        EXPECT_NEAR(s.compute_s, 2.0 * compute, 1e-12);
        EXPECT_NEAR(s.straggler_s, compute, 1e-12);
        EXPECT_NEAR(s.end_s - s.start_s, 2.0 * compute + ar, 1e-9);
    }
    EXPECT_EQ(r.summary.straggler_steps, 4);
    EXPECT_NEAR(r.summary.straggler_s, 4.0 * compute, 1e-9);
    EXPECT_NEAR(r.summary.compute_per_step_s, compute, 1e-12);  // the nominal figure stays nominal
}

TEST(Stragglers, AStepWaitsWhenAnyOfItsRanksStragglesAsOften) {
    // P(a step of n ranks straggles) = 1 − (1 − p)^n: p = 1 %, n = 16 gives 0.14854; over 20,000
    // seeded steps the share lies within 4 standard deviations (0.0025 each) of it. More ranks,
    // more straggling steps; probability 0 or slowdown 1: none.
    const sw::StragglerModel m{0.01, 1.5, 42};
    const int steps = 20000;
    auto share = [&](int ranks) {
        int hit = 0;
        for (int s = 0; s < steps; ++s) hit += sw::step_straggles(m, s, ranks) ? 1 : 0;
        return static_cast<double>(hit) / steps;
    };
    const double expected = 1.0 - std::pow(0.99, 16);
    EXPECT_NEAR(share(16), expected, 4.0 * std::sqrt(expected * (1.0 - expected) / steps));
    EXPECT_NEAR(share(1), 0.01, 4.0 * std::sqrt(0.01 * 0.99 / steps));
    EXPECT_GT(share(256), 0.9);  // 1 − 0.99^256 = 0.924
    EXPECT_FALSE(sw::step_straggles({0.0, 2.0, 42}, 3, 100));
    EXPECT_FALSE(sw::step_straggles({0.5, 1.0, 42}, 3, 100));
    // The same seed and step give the same draw, whatever else was drawn.
    EXPECT_EQ(sw::step_straggles(m, 1234, 16), sw::step_straggles(m, 1234, 16));
}
