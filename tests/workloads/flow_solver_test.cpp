// Max-min fairness (progressive filling) and the CPU/CUDA backends.

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include <skyfabric/workloads/flow_solver.hpp>
#include <skyfabric/workloads/maxmin_core.hpp>

#include <atomic>

namespace sw = skyfabric::workloads;

namespace {
std::vector<std::int32_t> L(std::initializer_list<std::int32_t> l) { return l; }
}  // namespace

TEST(MaxMinFairness, SharedBottleneckSplitsEvenlyAndLeftoverGoesToUnconstrainedFlow) {
    // Link 0 (10 B/s) is shared by flows A, B, C; C also crosses link 1 (100 B/s) alone
    // with D. A, B, C get 10/3; D gets 100 − 10/3.
    sw::FlowProblem p;
    p.capacity_Bps = {10.0, 100.0};
    p.add_flow(L({0}), 1.0, 0.0);
    p.add_flow(L({0}), 1.0, 0.0);
    p.add_flow(L({0, 1}), 1.0, 0.0);
    p.add_flow(L({1}), 1.0, 0.0);
    const auto rates = sw::make_flow_solver(sw::Backend::cpu)->solve_rates(p);
    EXPECT_DOUBLE_EQ(rates[0], 10.0 / 3.0);
    EXPECT_DOUBLE_EQ(rates[1], 10.0 / 3.0);
    EXPECT_DOUBLE_EQ(rates[2], 10.0 / 3.0);
    EXPECT_NEAR(rates[3], 100.0 - 10.0 / 3.0, 1e-12);
}

TEST(MaxMinFairness, TwoLevelBottlenecks) {
    // Classic parking lot: flow 0 crosses links 0,1; flow 1 link 0; flow 2 link 1.
    // Link 0 = 4, link 1 = 10: flows 0,1 get 2 each, flow 2 gets 8.
    sw::FlowProblem p;
    p.capacity_Bps = {4.0, 10.0};
    p.add_flow(L({0, 1}), 1.0, 0.0);
    p.add_flow(L({0}), 1.0, 0.0);
    p.add_flow(L({1}), 1.0, 0.0);
    const auto rates = sw::make_flow_solver(sw::Backend::cpu)->solve_rates(p);
    EXPECT_DOUBLE_EQ(rates[0], 2.0);
    EXPECT_DOUBLE_EQ(rates[1], 2.0);
    EXPECT_DOUBLE_EQ(rates[2], 8.0);
}

TEST(Drain, FlowEndingFreesCapacityForTheOthers) {
    // Two flows share a 10 B/s link: 10 B and 30 B. Both at 5 B/s until t = 2 (first
    // done), then the second alone at 10 B/s for its last 20 B: t = 4. Plus latencies.
    sw::FlowProblem p;
    p.capacity_Bps = {10.0};
    p.add_flow(L({0}), 10.0, 0.5);
    p.add_flow(L({0}), 30.0, 0.25);
    const auto r = sw::make_flow_solver(sw::Backend::cpu)->drain(p);
    EXPECT_DOUBLE_EQ(r.finish_s[0], 2.5);
    EXPECT_DOUBLE_EQ(r.finish_s[1], 4.25);
    EXPECT_DOUBLE_EQ(r.makespan_s, 4.25);
}

TEST(Drain, EqualBytesFinishInOrderOfRateAtTheirFirstRates) {
    // The parking lot of TwoLevelBottlenecks with 8 B each: flow 2 (8 B/s) is done at t = 1,
    // which frees link 1, but flows 0 and 1 are held by link 0 (4 B/s shared): still 2 B/s
    // each, done at t = 4. Plus latencies.
    sw::FlowProblem p;
    p.capacity_Bps = {4.0, 10.0};
    p.add_flow(L({0, 1}), 8.0, 0.5);
    p.add_flow(L({0}), 8.0, 0.0);
    p.add_flow(L({1}), 8.0, 0.25);
    const auto r = sw::make_flow_solver(sw::Backend::cpu)->drain(p);
    EXPECT_DOUBLE_EQ(r.finish_s[0], 4.5);
    EXPECT_DOUBLE_EQ(r.finish_s[1], 4.0);
    EXPECT_DOUBLE_EQ(r.finish_s[2], 1.25);
    EXPECT_DOUBLE_EQ(r.makespan_s, 4.5);
}

TEST(Drain, FlowWithoutPathNeverFinishes) {
    sw::FlowProblem p;
    p.capacity_Bps = {10.0};
    p.add_flow({}, 5.0, 0.0);
    const auto r = sw::make_flow_solver(sw::Backend::cpu)->drain(p);
    EXPECT_TRUE(std::isinf(r.makespan_s));
}

TEST(Backends, AutoFallsBackToCpuWithoutDevice) {
    const auto solver = sw::make_flow_solver(sw::Backend::automatic);
    if (sw::cuda_device_count() == 0) {
        EXPECT_EQ(solver->backend(), sw::Backend::cpu);
        EXPECT_THROW(sw::make_flow_solver(sw::Backend::cuda), std::runtime_error);
        EXPECT_FALSE(sw::cuda_unavailable_reason().empty());
    } else {
        EXPECT_EQ(solver->backend(), sw::Backend::cuda);
    }
    EXPECT_EQ(sw::parse_backend("auto"), sw::Backend::automatic);
}

namespace {
// Many random independent problems: a deterministic LCG, links 2..20, flows 1..40.
std::vector<sw::FlowProblem> random_problems(int count) {
    std::uint64_t s = 12345;
    auto next = [&s] {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<double>(s >> 11) / 9007199254740992.0;
    };
    std::vector<sw::FlowProblem> out(count);
    for (auto& p : out) {
        const int links = 2 + static_cast<int>(next() * 19);
        const int flows = 1 + static_cast<int>(next() * 40);
        for (int l = 0; l < links; ++l) p.capacity_Bps.push_back(1e9 * (0.1 + next()));
        for (int f = 0; f < flows; ++f) {
            std::vector<std::int32_t> path;
            const int hops = 1 + static_cast<int>(next() * 4);
            for (int h = 0; h < hops; ++h) {
                const auto l = static_cast<std::int32_t>(next() * links);
                if (std::find(path.begin(), path.end(), l) == path.end()) path.push_back(l);
            }
            p.add_flow(path, 1e6 * (0.01 + next()), 1e-6 * next());
        }
    }
    return out;
}

// The same problems with every flow's bytes equal (an all-to-all's or a ring step's flows).
std::vector<sw::FlowProblem> with_equal_bytes(std::vector<sw::FlowProblem> problems) {
    for (auto& p : problems)
        for (auto& b : p.flow_bytes) b = 1e6;
    return problems;
}

// Draining by the definition: re-solve the rates of the unfinished flows at every event.
std::vector<double> drain_re_solving_at_every_event(const sw::FlowProblem& problem) {
    const auto solver = sw::make_flow_solver(sw::Backend::cpu);
    sw::FlowProblem p = problem;  // flow_bytes: what is left (0: done, out of the solve)
    std::vector<double> finish(p.flow_bytes.size(), std::numeric_limits<double>::infinity());
    double t = 0.0;
    for (;;) {
        const auto rate = solver->solve_rates(p);
        double dt = std::numeric_limits<double>::infinity();
        for (std::size_t f = 0; f < rate.size(); ++f)
            if (p.flow_bytes[f] > 0.0 && rate[f] > 0.0) dt = std::min(dt, p.flow_bytes[f] / rate[f]);
        if (!std::isfinite(dt)) return finish;
        t += dt;
        for (std::size_t f = 0; f < rate.size(); ++f) {
            if (p.flow_bytes[f] <= 0.0) continue;
            const double sent = rate[f] * dt;
            if (p.flow_bytes[f] <= sent * (1.0 + 1e-12)) {
                p.flow_bytes[f] = 0.0;
                finish[f] = t + p.flow_latency_s[f];
            } else {
                p.flow_bytes[f] -= sent;
            }
        }
    }
}
}  // namespace

TEST(Drain, EqualBytesDrainAsReSolvingAtEveryEventDoes) {
    // drain_flows solves equal-byte flows once (their rates cannot change before they finish);
    // draining by the definition must give the same finish times, to rounding.
    const auto problems = with_equal_bytes(random_problems(300));
    const auto results = sw::make_flow_solver(sw::Backend::cpu)->drain_batch(problems);
    int multi_event = 0;
    for (std::size_t i = 0; i < problems.size(); ++i) {
        const auto expected = drain_re_solving_at_every_event(problems[i]);
        std::vector<double> distinct;
        for (std::size_t f = 0; f < expected.size(); ++f) {
            ASSERT_NEAR(results[i].finish_s[f], expected[f], 1e-12 * expected[f]) << "problem " << i << " flow " << f;
            if (std::find(distinct.begin(), distinct.end(), expected[f]) == distinct.end()) distinct.push_back(expected[f]);
        }
        if (distinct.size() > 2) ++multi_event;
    }
    EXPECT_GT(multi_event, 100);  // the flows finish at several times: the order is tested
}


// Issue 51, finding 5: a drain with many events (a 1e300 Gbit/s link spun here for ever) did not
// poll the stop flag. drain_flows asks stopped() before every event's solve and leaves at once;
// the solver then throws Interrupted, and without a stop gives the same bits as before.
TEST(Drain, AStopLeavesTheDrainAtItsNextEventAndTheSolverThrows) {
    const auto problems = random_problems(50);  // unequal bytes: one solve per event
    const sw::FlowProblem* many = &problems.front();
    for (const auto& p : problems)
        if (p.flow_count() > many->flow_count()) many = &p;
    ASSERT_GE(many->flow_count(), 4);
    const auto f = static_cast<std::size_t>(many->flow_count()), l = static_cast<std::size_t>(many->link_count());
    std::vector<double> finish(f), rate(f), remaining(f), link_remaining(l);
    std::vector<unsigned char> active(f), frozen(f), saturated(l);
    std::vector<int> count(l), order(f);
    int asked = 0;
    const auto drain = [&](auto stopped) {
        asked = 0;
        return sw::core::drain_flows(many->link_count(), many->capacity_Bps.data(), many->flow_count(), many->flow_offsets.data(),
                                     many->flow_links.data(), many->flow_bytes.data(), many->flow_latency_s.data(), finish.data(),
                                     rate.data(), remaining.data(), active.data(), link_remaining.data(), count.data(),
                                     saturated.data(), frozen.data(), order.data(), stopped);
    };
    drain([&] { return ++asked, false; });
    const int events = asked;
    EXPECT_GE(events, 3) << "the problem drains in several events";
    drain([&] { return ++asked >= 2; });
    EXPECT_EQ(asked, 2) << "left at the event the stop was seen, not after " << events;

    const auto cpu = sw::make_flow_solver(sw::Backend::cpu);
    std::atomic<bool> stop{false};
    std::vector<sw::DrainResult> out;
    cpu->drain_batch(problems, out, &stop);
    const auto expected = cpu->drain_batch(problems);
    for (std::size_t i = 0; i < problems.size(); ++i) EXPECT_EQ(out[i].makespan_s, expected[i].makespan_s);
    stop = true;
    EXPECT_THROW(cpu->drain_batch(problems, out, &stop), sw::Interrupted);
    EXPECT_THROW(sw::batch_flow_solver(sw::Backend::automatic).drain_batch(problems, out, &stop), sw::Interrupted);
}

TEST(Backends, CudaBatchMatchesCpuBatch) {
    if (sw::cuda_device_count() == 0)
        GTEST_SKIP() << "CUDA comparison skipped: " << sw::cuda_unavailable_reason();
    auto problems = random_problems(2000);
    for (auto& p : with_equal_bytes(random_problems(500))) problems.push_back(std::move(p));
    const auto cpu = sw::make_flow_solver(sw::Backend::cpu);
    const auto gpu = sw::make_flow_solver(sw::Backend::cuda);
    const auto a = cpu->drain_batch(problems);
    const auto b = gpu->drain_batch(problems);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        ASSERT_NEAR(a[i].makespan_s, b[i].makespan_s, 1e-9 * a[i].makespan_s) << "problem " << i;
        for (std::size_t f = 0; f < a[i].finish_s.size(); ++f)
            ASSERT_NEAR(a[i].finish_s[f], b[i].finish_s[f], 1e-9 * a[i].finish_s[f]);
    }
    const auto ra = cpu->solve_rates_batch(problems);
    const auto rb = gpu->solve_rates_batch(problems);
    for (std::size_t i = 0; i < ra.size(); ++i)
        for (std::size_t f = 0; f < ra[i].size(); ++f) ASSERT_NEAR(ra[i][f], rb[i][f], 1e-9 * ra[i][f]);
}

TEST(Backends, CpuBatchEqualsOneByOne) {
    const auto problems = random_problems(50);
    const auto cpu = sw::make_flow_solver(sw::Backend::cpu);
    const auto batch = cpu->drain_batch(problems);
    for (std::size_t i = 0; i < problems.size(); ++i) {
        EXPECT_EQ(batch[i].makespan_s, cpu->drain(problems[i]).makespan_s);
        EXPECT_GT(batch[i].makespan_s, 0.0);
    }
}

// The solver the collective engine batches through: under a CUDA request a batch too small to
// pay for a launch drains on the CPU (so it runs, and gives the CPU's numbers, on a machine
// without a GPU); a large one needs the device.
TEST(Backends, BatchSolverKeepsSmallBatchesOnTheCpu) {
    const auto small = random_problems(8);
    const auto cpu = sw::make_flow_solver(sw::Backend::cpu)->drain_batch(small);
    for (const auto requested : {sw::Backend::cpu, sw::Backend::automatic, sw::Backend::cuda}) {
        SCOPED_TRACE(sw::to_string(requested));
        std::vector<sw::DrainResult> out;
        sw::batch_flow_solver(requested).drain_batch(small, out);
        ASSERT_EQ(out.size(), cpu.size());
        for (std::size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i].makespan_s, cpu[i].makespan_s);
    }
    const auto large = random_problems(static_cast<int>(sw::device_batch_min_problems));
    std::vector<sw::DrainResult> out;
    if (sw::cuda_device_count() == 0) {
        EXPECT_THROW(sw::batch_flow_solver(sw::Backend::cuda).drain_batch(large, out), std::runtime_error);
        sw::batch_flow_solver(sw::Backend::automatic).drain_batch(large, out);
        const auto expected = sw::make_flow_solver(sw::Backend::cpu)->drain_batch(large);
        for (std::size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i].makespan_s, expected[i].makespan_s);
    } else {
        EXPECT_EQ(sw::batch_flow_solver(sw::Backend::automatic).backend(), sw::Backend::cuda);
    }
}
