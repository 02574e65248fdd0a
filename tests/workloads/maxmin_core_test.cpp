// The max-min core (maxmin_core.hpp), the one arithmetic of every flow solve, on problems worked by
// hand: progressive filling with and without weights, and draining flows as they finish.
#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include <skyfabric/workloads/maxmin_core.hpp>

namespace core = skyfabric::workloads::core;

namespace {

// A problem in the core's CSR form, with its scratch.
struct Problem {
    std::vector<double> capacity;
    std::vector<std::vector<int>> paths;  // each flow's links
    std::vector<int> weight;              // empty: 1 each

    std::vector<double> rates(std::vector<unsigned char> active = {}) const {
        const int n = static_cast<int>(paths.size()), links = static_cast<int>(capacity.size());
        if (active.empty()) active.assign(paths.size(), 1);
        const auto [offsets, flat] = csr();
        std::vector<double> rate(paths.size()), remaining(capacity.size());
        std::vector<int> count(capacity.size());
        std::vector<unsigned char> saturated(capacity.size()), frozen(paths.size());
        core::maxmin_rates(links, capacity.data(), n, offsets.data(), flat.data(), active.data(), rate.data(),
                           remaining.data(), count.data(), saturated.data(), frozen.data(),
                           weight.empty() ? nullptr : weight.data());
        return rate;
    }
    std::vector<double> drain(const std::vector<double>& bytes, const std::vector<double>& latency_s, double& makespan) const {
        const int n = static_cast<int>(paths.size()), links = static_cast<int>(capacity.size());
        const auto [offsets, flat] = csr();
        std::vector<double> finish(paths.size()), rate(paths.size()), left(paths.size()), remaining(capacity.size());
        std::vector<unsigned char> active(paths.size()), saturated(capacity.size()), frozen(paths.size());
        std::vector<int> order(paths.size()), count(capacity.size());
        makespan = core::drain_flows(links, capacity.data(), n, offsets.data(), flat.data(), bytes.data(), latency_s.data(),
                                     finish.data(), rate.data(), left.data(), active.data(), remaining.data(), count.data(),
                                     saturated.data(), frozen.data(), order.data());
        return finish;
    }
    std::pair<std::vector<int>, std::vector<int>> csr() const {
        std::vector<int> offsets{0}, flat;
        for (const auto& p : paths) {
            flat.insert(flat.end(), p.begin(), p.end());
            offsets.push_back(static_cast<int>(flat.size()));
        }
        if (flat.empty()) flat.push_back(0);  // a valid pointer
        return {offsets, flat};
    }
};

}  // namespace

TEST(MaxMinCore, ProgressiveFillingSaturatesTheTightestLinkFirst) {
    // Link 0 (10 B/s) carries flows 0 and 1, link 1 (4 B/s) flows 0 and 2. Link 1's share, 2, is the
    // least: flows 0 and 2 get 2 each; link 0 then has 8 left for flow 1.
    const Problem p{{10.0, 4.0}, {{0, 1}, {0}, {1}}, {}};
    EXPECT_EQ(p.rates(), (std::vector<double>{2.0, 8.0, 2.0}));
    // Flow 0 left out: link 1 gives flow 2 all of its 4, link 0 flow 1 its 10.
    EXPECT_EQ(p.rates({0, 1, 1}), (std::vector<double>{0.0, 10.0, 4.0}));
    // A flow with no links gets 0 (the caller counts it stalled or local); the rest are unchanged.
    const Problem lonely{{10.0, 4.0}, {{0, 1}, {0}, {1}, {}}, {}};
    EXPECT_EQ(lonely.rates(), (std::vector<double>{2.0, 8.0, 2.0, 0.0}));
    // Independent bottlenecks fill alike: a ring step's four links, one flow each, at their capacities.
    const Problem ring{{1.0, 2.0, 3.0, 4.0}, {{0}, {1}, {2}, {3}}, {}};
    EXPECT_EQ(ring.rates(), (std::vector<double>{1.0, 2.0, 3.0, 4.0}));
}

TEST(MaxMinCore, AWeightedFlowStandsForThatManyIdenticalFlows) {
    // 12 B/s shared by a flow of weight 3 and one of weight 1: four equal shares of 3 B/s, and each of
    // the weighted flow's three members gets one.
    const Problem p{{12.0}, {{0}, {0}}, {3, 1}};
    EXPECT_EQ(p.rates(), (std::vector<double>{3.0, 3.0}));
    // The weighted flow also crosses a 4.5 B/s link: 1.5 each there (the least share), then link 0 has
    // 12 − 3·1.5 = 7.5 for the other.
    const Problem two{{12.0, 4.5}, {{0, 1}, {0}}, {3, 1}};
    EXPECT_EQ(two.rates(), (std::vector<double>{1.5, 7.5}));
}

TEST(MaxMinCore, DrainingReSolvesAsFlowsFinishAndAddsEachFlowsLatency) {
    // Two flows on one 10 B/s link, 10 and 30 bytes, latencies 0.5 and 0.25 s: 5 B/s each until the
    // first drains at 2 s; the second then has 20 bytes at 10 B/s, 2 s more. Finishes 2.5 and 4.25 s.
    const Problem p{{10.0}, {{0}, {0}}, {}};
    double makespan = 0.0;
    auto finish = p.drain({10.0, 30.0}, {0.5, 0.25}, makespan);
    EXPECT_DOUBLE_EQ(finish[0], 2.5);
    EXPECT_DOUBLE_EQ(finish[1], 4.25);
    EXPECT_DOUBLE_EQ(makespan, 4.25);
    // A flow of no bytes finishes at its latency; one with bytes and no path never (+inf).
    const Problem q{{10.0}, {{0}, {0}, {}}, {}};
    finish = q.drain({10.0, 0.0, 5.0}, {0.0, 0.125, 0.0}, makespan);
    EXPECT_DOUBLE_EQ(finish[0], 1.0);  // alone on the link: 10 B at 10 B/s
    EXPECT_DOUBLE_EQ(finish[1], 0.125);
    EXPECT_TRUE(std::isinf(finish[2]));
    EXPECT_TRUE(std::isinf(makespan));
}

TEST(MaxMinCore, EqualBytesDrainInOrderOfFallingRateFromOneSolve) {
    // 12 bytes each: flows 0 and 1 share a 6 B/s link (3 B/s each), flow 2 has a 12 B/s link alone.
    // Flow 2 drains at 1 s; 0 and 1 at 4 s, their rates unchanged by its leaving (their own link).
    const Problem p{{6.0, 12.0}, {{0}, {0}, {1}}, {}};
    double makespan = 0.0;
    const auto finish = p.drain({12.0, 12.0, 12.0}, {0.0, 0.0, 0.0}, makespan);
    EXPECT_DOUBLE_EQ(finish[0], 4.0);
    EXPECT_DOUBLE_EQ(finish[1], 4.0);
    EXPECT_DOUBLE_EQ(finish[2], 1.0);
    EXPECT_DOUBLE_EQ(makespan, 4.0);
}
