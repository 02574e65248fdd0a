// One max-min problem spread over threads (SpreadMaxMin, maxmin_spread.hpp) against the one-thread
// solver it must equal to the bit (maxmin_rates, drain_flows, themselves checked against hand-worked
// cases in flow_solver_test.cpp), at 1, 2 and 3 threads: random problems (weights, idle flows,
// links down, flows with no links), a pairwise all-to-all phase of thousands of ranks on a fabric
// of clusters behind oversubscribed uplinks (checked against its α–β time too), and the collective
// engine routing such phases through it. The GPU's spread kernels against the CPU where a GPU is.

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <skyfabric/workloads/collectives.hpp>
#include <skyfabric/workloads/collective_engine.hpp>
#include <skyfabric/workloads/flow_solver.hpp>
#include <skyfabric/workloads/idle_helpers.hpp>
#include <skyfabric/workloads/maxmin_core.hpp>
#include <skyfabric/workloads/spread_solver.hpp>
#include <skyfabric/workloads/synthetic_fabric.hpp>

namespace sw = skyfabric::workloads;

namespace {

// a and b to 1e-12 relative (equal infinities too).
void expect_close(double a, double b, std::size_t f) {
    if (a == b) return;
    ASSERT_NEAR(b, a, 1e-12 * std::abs(a)) << "flow " << f;
}

// Random links and flows: paths of 0–6 links (repeats allowed), capacities over three decades with
// one link in ten down, byte counts from a few values (so flows tie) or all equal.
sw::FlowProblem random_problem(std::uint32_t seed, std::int32_t links, std::int32_t flows, bool equal_bytes) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    sw::FlowProblem p;
    for (std::int32_t l = 0; l < links; ++l)
        p.capacity_Bps.push_back(rng() % 10 == 0 ? 0.0 : std::pow(10.0, 9.0 + 3.0 * unit(rng)));
    std::vector<std::int32_t> path;
    for (std::int32_t f = 0; f < flows; ++f) {
        path.clear();
        const auto hops = static_cast<std::int32_t>(rng() % 7);
        for (std::int32_t h = 0; h < hops; ++h) path.push_back(static_cast<std::int32_t>(rng() % static_cast<std::uint32_t>(links)));
        const double bytes = equal_bytes ? 1e6 : (rng() % 5 == 0 ? 0.0 : 1e6 * static_cast<double>(1 + rng() % 4));
        p.add_flow(path, bytes, 1e-6 * static_cast<double>(rng() % 3));
    }
    return p;
}

std::vector<double> one_thread_rates(const sw::FlowProblem& p, const std::vector<unsigned char>& active,
                                     const std::vector<std::int32_t>& weight) {
    const auto f = static_cast<std::size_t>(p.flow_count()), l = static_cast<std::size_t>(p.link_count());
    std::vector<double> rate(f), remaining(l);
    std::vector<int> count(l);
    std::vector<unsigned char> saturated(l), frozen(f);
    sw::core::maxmin_rates(p.link_count(), p.capacity_Bps.data(), p.flow_count(), p.flow_offsets.data(),
                           p.flow_links.data(), active.data(), rate.data(), remaining.data(), count.data(),
                           saturated.data(), frozen.data(), weight.empty() ? nullptr : weight.data());
    return rate;
}

sw::DrainResult one_thread_drain(const sw::FlowProblem& p) {
    return sw::make_flow_solver(sw::Backend::cpu)->drain(p);
}

// threads − 1 helpers serving while it lives, each waiting in serve() once it is made.
struct Pool {
    explicit Pool(std::int32_t threads) : threads_(helpers, threads) {
        while (helpers.idle_count() < threads - 1) std::this_thread::yield();
    }
    sw::IdleHelpers helpers;

private:
    sw::HelperThreads threads_;
};

// Pairwise all-to-all step k (rank i sends to i + k) over switch:p with leaves of `leaf` ranks whose
// uplinks carry a quarter of what their ranks could send: links i (rank i up), p + j (down to rank
// j), 2p + c (leaf c up to the spine), 2p + L + c (spine down to leaf c).
sw::FlowProblem pairwise_phase(std::int32_t p, std::int32_t leaf, std::int32_t k, double B, double bytes) {
    const std::int32_t leaves = p / leaf;
    sw::FlowProblem q;
    q.capacity_Bps.assign(2 * static_cast<std::size_t>(p), B);
    q.capacity_Bps.resize(2 * static_cast<std::size_t>(p) + 2 * static_cast<std::size_t>(leaves), B * leaf / 4.0);
    for (std::int32_t i = 0; i < p; ++i) {
        const std::int32_t j = (i + k) % p, a = i / leaf, b = j / leaf;
        if (a == b) {
            const std::int32_t path[2] = {i, p + j};
            q.add_flow(path, bytes, 1e-6);
        } else {
            const std::int32_t path[4] = {i, 2 * p + a, 2 * p + leaves + b, p + j};
            q.add_flow(path, bytes, 2e-6);
        }
    }
    return q;
}

}  // namespace

TEST(SpreadMaxMin, RandomProblemsGiveTheOneThreadRatesToTheBitAtOneTwoAndThreeThreads) {
    sw::SpreadMaxMin spread;
    for (std::uint32_t seed = 0; seed < 24; ++seed) {
        SCOPED_TRACE(testing::Message() << "seed " << seed);
        const std::int32_t links = 3 + static_cast<std::int32_t>(seed * 37 % 600);
        const std::int32_t flows = 1 + static_cast<std::int32_t>(seed * 211 % 3000);
        const auto p = random_problem(seed, links, flows, false);
        std::mt19937 rng(seed + 1000);
        std::vector<unsigned char> active(static_cast<std::size_t>(flows));
        std::vector<std::int32_t> weight;
        for (auto& a : active) a = rng() % 6 != 0;
        if (seed % 2 == 1)
            for (std::int32_t f = 0; f < flows; ++f) weight.push_back(1 + static_cast<std::int32_t>(rng() % 3));
        const auto expected = one_thread_rates(p, active, weight);
        for (std::int32_t threads : {1, 2, 3}) {
            SCOPED_TRACE(testing::Message() << threads << " threads");
            Pool pool(threads);
            std::vector<double> rate(static_cast<std::size_t>(flows), -1.0);
            spread.rates(p, active.data(), rate.data(), pool.helpers, weight.empty() ? nullptr : weight.data());
            for (std::int32_t f = 0; f < flows; ++f) ASSERT_EQ(rate[f], expected[f]) << "flow " << f;
        }
    }
}

TEST(SpreadMaxMin, RandomDrainsGiveTheOneThreadFinishTimesToTheBit) {
    sw::SpreadMaxMin spread;
    for (std::uint32_t seed = 0; seed < 8; ++seed) {
        SCOPED_TRACE(testing::Message() << "seed " << seed);
        // Unequal bytes: several events, each a new solve; equal: one solve, drained at fixed rates.
        const auto p = random_problem(seed + 77, 40 + static_cast<std::int32_t>(seed) * 30, 300, seed % 2 == 0);
        const auto expected = one_thread_drain(p);
        for (std::int32_t threads : {1, 2, 3}) {
            Pool pool(threads);
            std::vector<double> finish(static_cast<std::size_t>(p.flow_count()));
            const double makespan = spread.drain(p, finish.data(), pool.helpers, nullptr);
            ASSERT_EQ(makespan, expected.makespan_s) << threads << " threads";
            for (std::size_t f = 0; f < finish.size(); ++f) ASSERT_EQ(finish[f], expected.finish_s[f]) << "flow " << f;
        }
    }
}

// 4,096 ranks in 64 clusters: a step's flows between clusters share their leaves' uplinks (B·64/4
// each way), those inside a cluster have their own links. Step k = 100 sends 28 of a cluster's 64
// senders to the next cluster and 36 two clusters on, so every uplink and every spine downlink
// carries 64 flows: B/4 each, and every flow drains in bytes / (B/4) plus its two hops' latency.
TEST(SpreadMaxMin, PairwiseAllToAllPhaseOfThousandsOfRanksEqualsTheOneThreadSolve) {
    const std::int32_t p = 4096, leaf = 64;
    const double B = 50e9, bytes = 1e6;
    sw::SpreadMaxMin spread;
    for (std::int32_t k : {1, 100, 2048}) {
        SCOPED_TRACE(testing::Message() << "step " << k);
        const auto q = pairwise_phase(p, leaf, k, B, bytes);
        const auto expected = one_thread_drain(q);
        for (std::int32_t threads : {1, 2, 3}) {
            Pool pool(threads);
            std::vector<double> finish(static_cast<std::size_t>(q.flow_count()));
            ASSERT_EQ(spread.drain(q, finish.data(), pool.helpers, nullptr), expected.makespan_s) << threads << " threads";
            for (std::size_t f = 0; f < finish.size(); ++f) ASSERT_EQ(finish[f], expected.finish_s[f]);
        }
        if (k == 100) {
            EXPECT_NEAR(expected.makespan_s, bytes / (B / 4.0) + 2e-6, 1e-12);
        }
    }
}

// The collective engine hands a phase of spread_min_flows or more flows to the helpers it is lent
// (when spread_min_idle_helpers of them are idle): the same durations and link bytes as without,
// to the bit.
TEST(SpreadMaxMin, CollectiveEngineSpreadsLargePhasesWithTheSameResults) {
    const std::int32_t p = 4096;
    ASSERT_GE(p, sw::spread_min_flows) << "the phases must be large enough to be spread";
    const auto f = sw::make_fabric(sw::parse_fabric_spec("switch:p=4096,leaf=64,uplink_gbps=6400,bw_gbps=400"));
    const sw::Placement placement(f.placement.begin(), f.placement.begin() + p);
    auto s = sw::build_schedule(sw::CollectiveOp::all_to_all, sw::Algorithm::pairwise, p, 4096.0 * 1e6);
    s.phases.resize(3);  // three steps are enough, and keep the test short
    const std::vector<skyfabric::links::Topology> series{f.topology};
    std::vector<double> durations;
    std::vector<std::vector<double>> link_bytes;
    const double end_s = 1.0;  // past the three steps
    for (std::int32_t threads : {0, 3, 4}) {
        sw::FlowContext context;
        std::unique_ptr<Pool> pool;
        if (threads > 0) {
            pool = std::make_unique<Pool>(threads);
            context.helpers = std::shared_ptr<sw::IdleHelpers>(&pool->helpers, [](sw::IdleHelpers*) {});
        }
        sw::NetworkClock clock(sw::topology_source(series));
        sw::CollectiveEngine engine(clock, {}, context);
        const auto r = engine.run(s, placement, 0.0, -1);
        ASSERT_TRUE(r.completed);
        if (pool) {
            EXPECT_GT(pool->helpers.shared_runs(), 0) << "the phases were spread over the helpers";
        }
        durations.push_back(r.duration_s());
        std::vector<double> bytes;
        for (const auto& u : clock.link_utilisation(end_s)) bytes.push_back(u.bytes);
        ASSERT_FALSE(bytes.empty());
        link_bytes.push_back(std::move(bytes));
    }
    EXPECT_EQ(durations[1], durations[0]);
    EXPECT_EQ(durations[2], durations[0]);
    EXPECT_EQ(link_bytes[1], link_bytes[0]);
    EXPECT_EQ(link_bytes[2], link_bytes[0]);
}

// Where a GPU is: the spread kernels give the CPU's rates and finish times (to 1e-12; -fmad=false on
// the device and -ffp-contract=off on the host, so in practice the same bits).
TEST(SpreadMaxMin, CudaSpreadEqualsTheCpu) {
    if (sw::cuda_device_count() == 0) GTEST_SKIP() << "CUDA comparison skipped: " << sw::cuda_unavailable_reason();
    const auto cpu = sw::make_flow_solver(sw::Backend::cpu);
    const auto gpu = sw::make_flow_solver(sw::Backend::cuda);
    std::vector<sw::FlowProblem> problems;
    problems.push_back(pairwise_phase(32768, 512, 7000, 50e9, 1e6));
    problems.push_back(random_problem(5, 5000, sw::device_spread_min_flows + 1000, false));
    problems.push_back(random_problem(6, 20000, sw::device_spread_min_flows * 2, true));
    for (const auto& q : problems) {
        ASSERT_GE(q.flow_count(), sw::device_spread_min_flows);
        const auto a = cpu->solve_rates(q), b = gpu->solve_rates(q);
        for (std::size_t f = 0; f < a.size(); ++f) expect_close(a[f], b[f], f);
        const auto da = cpu->drain(q), db = gpu->drain(q);
        expect_close(da.makespan_s, db.makespan_s, 0);
        for (std::size_t f = 0; f < da.finish_s.size(); ++f) expect_close(da.finish_s[f], db.finish_s[f], f);
        // The engine's way there: one large problem in a small batch.
        std::vector<sw::DrainResult> out;
        sw::batch_flow_solver(sw::Backend::cuda).drain_batch(std::span<const sw::FlowProblem>(&q, 1), out);
        expect_close(da.makespan_s, out.at(0).makespan_s, 0);
    }
    // Small problems forced onto the spread kernels: links down, idle flows, flows with no links.
    for (std::uint32_t seed = 0; seed < 6; ++seed) {
        const auto q = random_problem(seed + 300, 20 + static_cast<std::int32_t>(seed) * 50, 200, seed % 2 == 0);
        const auto da = cpu->drain(q), db = sw::device_spread_drain(q);
        expect_close(da.makespan_s, db.makespan_s, 0);
        for (std::size_t f = 0; f < da.finish_s.size(); ++f) expect_close(da.finish_s[f], db.finish_s[f], f);
    }
}
