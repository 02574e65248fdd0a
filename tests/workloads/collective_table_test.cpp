// nccl-tests style tables (collective_table.hpp): each row's time, algorithm and bus bandwidth, and
// the bandwidth bound it is checked against, for a ring all-reduce on a ring against the α–β model
// (docs/references.md, "Collective cost"); B is bytes/s = capacity_bps / 8, α the per-hop latency.
#include <vector>

#include <gtest/gtest.h>

#include <skyfabric/workloads/collective_table.hpp>

#include "test_helpers.hpp"

namespace sw = skyfabric::workloads;
using sw::Algorithm;
using sw::CollectiveOp;

namespace {
constexpr double capacity_bps = 100e9;  // B = 12.5 GB/s
constexpr double bandwidth_Bps = capacity_bps / 8.0;
constexpr double alpha_s = 5e-6;
}  // namespace

TEST(CollectiveTable, RingAllReduceRowsAreTheAlphaBetaTimesAndTheirBandwidths) {
    // 2(p − 1) steps of n/p bytes over one hop each: t = 2(p − 1)(n / (pB) + α); algbw = n / t,
    // busbw = algbw · 2(p − 1)/p; the bound drops α: 2(p − 1)/p · n / B, at busbw B.
    const int p = 5;
    const auto topo = sw::testing::ring(p, capacity_bps, alpha_s);
    const std::vector<double> sizes{1e3, 1e6, 1e9};
    const auto rows = sw::collective_table(topo, CollectiveOp::all_reduce, Algorithm::ring, sizes);
    ASSERT_EQ(rows.size(), sizes.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const double n = sizes[i], factor = 2.0 * (p - 1) / p;
        const double t = 2.0 * (p - 1) * (n / (p * bandwidth_Bps) + alpha_s);
        EXPECT_EQ(rows[i].bytes, n);
        EXPECT_NEAR(rows[i].time_s, t, 1e-12 * t) << n;
        EXPECT_NEAR(rows[i].alg_bw_Bps, n / t, 1e-12 * n / t) << n;
        EXPECT_NEAR(rows[i].bus_bw_Bps, factor * n / t, 1e-12 * n / t) << n;
        EXPECT_NEAR(rows[i].lower_bound_s, factor * n / bandwidth_Bps, 1e-12 * t) << n;
        EXPECT_EQ(rows[i].bound_bus_bw_Bps, bandwidth_Bps);
    }
}

TEST(CollectiveTable, SizeSweepDoublesUpToTheMaximum) {
    EXPECT_EQ(sw::size_sweep(1.0, 8.0), (std::vector<double>{1.0, 2.0, 4.0, 8.0}));
    EXPECT_EQ(sw::size_sweep(1.0, 10.0), (std::vector<double>{1.0, 2.0, 4.0, 8.0}));  // 16 would pass 10
    EXPECT_EQ(sw::size_sweep(3.0, 30.0, 3.0), (std::vector<double>{3.0, 9.0, 27.0}));
    EXPECT_EQ(sw::size_sweep(5.0, 5.0), (std::vector<double>{5.0}));
}

TEST(BusBandwidth, ApproachesLinkBandwidthForLargeMessages) {
    const int p = 9;
    const auto topo = sw::testing::ring(p, capacity_bps, alpha_s);
    const std::vector<double> sizes{1e3, 1e6, 1e9, 16e9};
    const auto rows = sw::collective_table(topo, CollectiveOp::all_reduce, Algorithm::ring, sizes);
    ASSERT_EQ(rows.size(), sizes.size());
    EXPECT_LT(rows[0].bus_bw_Bps, 0.1 * bandwidth_Bps);  // latency-bound
    EXPECT_NEAR(rows[3].bus_bw_Bps, bandwidth_Bps, 0.001 * bandwidth_Bps);
    for (std::size_t i = 1; i < rows.size(); ++i) EXPECT_GT(rows[i].bus_bw_Bps, rows[i - 1].bus_bw_Bps);
    for (const auto& r : rows) {
        EXPECT_DOUBLE_EQ(r.bound_bus_bw_Bps, bandwidth_Bps);
        EXPECT_GE(r.time_s, r.lower_bound_s);
    }
}
