// Collective times on uniform networks against the α–β formulas (docs/references.md,
// "Collective cost"). B is bytes/s = capacity_bps / 8; α is the per-hop link latency.

#include <algorithm>
#include <cmath>
#include <utility>

#include <gtest/gtest.h>

#include <skyfabric/workloads/collectives.hpp>
#include <skyfabric/workloads/collective_table.hpp>
#include <skyfabric/workloads/collective_engine.hpp>

#include "test_helpers.hpp"

namespace sw = skyfabric::workloads;
using sw::Algorithm;
using sw::CollectiveOp;

namespace {

constexpr double capacity_bps = 100e9;  // B = 12.5 GB/s
constexpr double bandwidth_Bps = capacity_bps / 8.0;
constexpr double alpha_s = 5e-6;
constexpr double n_bytes = 256e6;

double simulate(const skyfabric::links::Topology& topo, CollectiveOp op, Algorithm algo, double n,
                std::int32_t p, sw::ScheduleOptions so = {}) {
    const auto r = sw::run_collective(topo, op, algo, n, sw::identity_placement(p), {}, so);
    EXPECT_TRUE(r.completed);
    return r.duration_s();
}

}  // namespace

class RingFormulas : public ::testing::TestWithParam<int> {};

TEST_P(RingFormulas, AllReduceMatchesAlphaBeta) {
    const int p = GetParam();
    const auto topo = sw::testing::ring(p, capacity_bps, alpha_s);
    const double expected = 2.0 * (p - 1) * alpha_s + 2.0 * (p - 1) / p * n_bytes / bandwidth_Bps;
    EXPECT_NEAR(simulate(topo, CollectiveOp::all_reduce, Algorithm::ring, n_bytes, p), expected, 0.01 * expected);
}

TEST_P(RingFormulas, ReduceScatterAndAllGatherMatchAlphaBeta) {
    const int p = GetParam();
    const auto topo = sw::testing::ring(p, capacity_bps, alpha_s);
    const double expected = (p - 1) * alpha_s + (p - 1.0) / p * n_bytes / bandwidth_Bps;
    EXPECT_NEAR(simulate(topo, CollectiveOp::reduce_scatter, Algorithm::ring, n_bytes, p), expected, 0.01 * expected);
    EXPECT_NEAR(simulate(topo, CollectiveOp::all_gather, Algorithm::ring, n_bytes, p), expected, 0.01 * expected);
}

TEST_P(RingFormulas, PairwiseAllToAllMatchesAlphaBetaOnFullConnectivity) {
    // Pairwise all-to-all assumes every pair has its own link of bandwidth B.
    // n is the per-rank send buffer; (p−1)/p·n leaves the rank — the formula's n.
    const int p = GetParam();
    const auto topo = sw::testing::complete(p, capacity_bps, alpha_s);
    const double leaving = (p - 1.0) / p * n_bytes;
    const double expected = (p - 1) * alpha_s + leaving / bandwidth_Bps;
    EXPECT_NEAR(simulate(topo, CollectiveOp::all_to_all, Algorithm::pairwise, n_bytes, p), expected, 0.01 * expected);
}

TEST_P(RingFormulas, DirectAllToAllMatchesAlphaBetaOnFullConnectivity) {
    // Every pair at once, each on its own link: one step of n/p.
    const int p = GetParam();
    const auto topo = sw::testing::complete(p, capacity_bps, alpha_s);
    const double expected = alpha_s + n_bytes / p / bandwidth_Bps;
    EXPECT_NEAR(simulate(topo, CollectiveOp::all_to_all, Algorithm::direct, n_bytes, p), expected, 0.01 * expected);
}

INSTANTIATE_TEST_SUITE_P(SeveralRankCounts, RingFormulas, ::testing::Values(2, 3, 5, 8, 13, 16, 31));

class PowerOfTwoFormulas : public ::testing::TestWithParam<int> {};

TEST_P(PowerOfTwoFormulas, HalvingDoublingMatchesAlphaBeta) {
    const int p = GetParam();
    const auto topo = sw::testing::complete(p, capacity_bps, alpha_s);
    const double expected = 2.0 * std::log2(p) * alpha_s + 2.0 * (p - 1) / p * n_bytes / bandwidth_Bps;
    EXPECT_NEAR(simulate(topo, CollectiveOp::all_reduce, Algorithm::halving_doubling, n_bytes, p), expected,
                0.01 * expected);
}

INSTANTIATE_TEST_SUITE_P(PowersOfTwo, PowerOfTwoFormulas, ::testing::Values(2, 4, 8, 16, 32));

// m groups of k: each group a ring (B₁, α₁), node l of group g linked to node l of group
// g+1 mod m (B₂ < B₁, α₂ > α₁). Identity placement puts rank g·k + l on that node, so the
// in-group rings and the across-group rings (column l: ranks l, l+k, …) run on their own links.
class HierarchicalRingFormula : public ::testing::TestWithParam<std::pair<int, int>> {};

TEST_P(HierarchicalRingFormula, AllReduceOnTwoLevelFabricEqualsAlphaBetaExactly) {
    const auto [k, m] = GetParam();
    const int p = k * m;
    const double b1 = 200e9, a1 = 2e-6, b2 = 50e9, a2 = 20e-6;
    skyfabric::links::Topology t;
    t.node_count = p;
    for (int g = 0; g < m; ++g)
        for (int l = 0; l < k; ++l) t.links.push_back(sw::testing::make_link(g * k + l, g * k + (l + 1) % k, b1, a1));
    for (int l = 0; l < k; ++l)
        for (int g = 0; g < m; ++g)
            t.links.push_back(sw::testing::make_link(g * k + l, ((g + 1) % m) * k + l, b2, a2));
    std::sort(t.links.begin(), t.links.end(), [](const auto& x, const auto& y) {
        return x.source != y.source ? x.source < y.source : x.target < y.target;
    });
    sw::ScheduleOptions so;
    so.hierarchical_group_size = k;
    // Reduce-scatter and all-gather in the group: 2(k−1) steps of n/k over B₁; all-reduce
    // across groups of the n/k shard: 2(m−1) steps of n/(k·m) over B₂. Nothing shares a link.
    const double expected = 2.0 * (k - 1) * (a1 + n_bytes / k / (b1 / 8)) +
                            2.0 * (m - 1) * (a2 + n_bytes / (k * m) / (b2 / 8));
    EXPECT_NEAR(simulate(t, CollectiveOp::all_reduce, Algorithm::hierarchical_ring, n_bytes, p, so), expected,
                1e-12 * expected);
}

// (k, m) with k, m ≥ 3: with 2 the ring's two links would join the same pair.
INSTANTIATE_TEST_SUITE_P(GroupsOfKTimesM, HierarchicalRingFormula,
                         ::testing::Values(std::pair{9, 4}, std::pair{4, 3}, std::pair{3, 5}));

TEST(DoubleBinaryTree, CompletesNearTwoNOverBOnFullConnectivity) {
    // NCCL model: t ≈ latency·O(log p) + n/B per tree pair direction. Bounded below by the
    // all-reduce bandwidth bound and above by a generous 2n/B + pipeline latency.
    const int p = 15;
    const auto topo = sw::testing::complete(p, capacity_bps, alpha_s);
    const double t = simulate(topo, CollectiveOp::all_reduce, Algorithm::double_binary_tree, n_bytes, p);
    EXPECT_GE(t, 2.0 * (p - 1) / p * n_bytes / bandwidth_Bps * 0.5);
    EXPECT_LE(t, 2.0 * n_bytes / bandwidth_Bps * 1.5 + 200 * alpha_s);
}

TEST(Schedules, DirectAllToAllIsOnePhaseOfEveryPair) {
    const int p = 5;
    const auto s = sw::build_schedule(CollectiveOp::all_to_all, Algorithm::direct, p, 10.0);
    ASSERT_EQ(s.phases.size(), 1u);
    EXPECT_EQ(s.phase_count(), 1);
    ASSERT_EQ(s.phases[0].transfer_count, p * (p - 1));
    EXPECT_TRUE(s.transfers.empty());  // a rotation: every pair, none listed
    std::vector<int> seen(p * p, 0);
    for (int j = 0; j < s.phases[0].transfer_count; ++j) {
        const auto t = s.transfer(s.phases[0], j);
        EXPECT_NE(t.source_rank, t.target_rank);
        EXPECT_DOUBLE_EQ(t.bytes, 10.0 / p);
        ++seen[t.source_rank * p + t.target_rank];
    }
    for (int i = 0; i < p; ++i)
        for (int j = 0; j < p; ++j) EXPECT_EQ(seen[i * p + j], i == j ? 0 : 1);
    EXPECT_TRUE(sw::build_schedule(CollectiveOp::all_to_all, Algorithm::direct, 1, 10.0).phases.empty());
}

TEST(Schedules, RejectUnsupportedAlgorithm) {
    EXPECT_THROW(sw::build_schedule(CollectiveOp::all_to_all, Algorithm::ring, 4, 1e6), std::invalid_argument);
    EXPECT_THROW(sw::build_schedule(CollectiveOp::all_reduce, Algorithm::direct, 4, 1e6), std::invalid_argument);
    EXPECT_THROW(sw::parse_algorithm("butterfly"), std::invalid_argument);
    EXPECT_EQ(sw::parse_collective_op("all_gather"), CollectiveOp::all_gather);
}

TEST(Schedules, RejectDimsThatAreNotATwoDimensionalGridOfTheRanks) {
    for (const std::vector<std::int32_t>& dims : {std::vector<std::int32_t>{3, 3}, {8}, {2, 2, 2}, {0, 8}, {-2, -4}}) {
        sw::ScheduleOptions o;
        o.dims = dims;
        EXPECT_THROW(sw::build_schedule(CollectiveOp::all_reduce, Algorithm::ring, 8, 1e6, o), std::invalid_argument);
    }
    sw::ScheduleOptions o;
    o.dims = {4, 2};
    EXPECT_NO_THROW(sw::build_schedule(CollectiveOp::all_reduce, Algorithm::hierarchical_ring, 8, 1e6, o));
}
