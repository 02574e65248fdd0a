// The convergence model's token multipliers against the published loss gaps, derived by hand.
#include <gtest/gtest.h>

#include <cmath>

#include <skyfabric/workloads/convergence.hpp>

using namespace skyfabric::workloads;

// Chinchilla's data term (Hoffmann et al. 2022, Eq. 10: B = 410.7, β = 0.28): data-parallel training on
// D/k tokens ends B/(D/k)^β − B/D^β nats above training on D. An algorithm that far above DP at D
// needs k times DP's tokens.
TEST(Convergence, LossGapOfFewerTokensGivesTheirRatio) {
    for (const double tokens : {1e9, 26e9, 2e11}) {
        for (const double k : {1.05, 1.25, 2.0}) {
            const double gap = 410.7 / std::pow(tokens / k, 0.28) - 410.7 / std::pow(tokens, 0.28);
            EXPECT_NEAR(token_multiplier_from_loss_gap(gap, tokens), k, 1e-9 * k) << tokens << " tokens, k " << k;
        }
    }
    // No credit for beating DP.
    EXPECT_EQ(token_multiplier_from_loss_gap(-0.01, 26e9), 1.0);
    EXPECT_EQ(token_multiplier_from_loss_gap(0.0, 26e9), 1.0);
}

TEST(Convergence, DilocoAtMeasuredSettingsUsesTheTable) {
    // 1.3B, M = 8, H = 30: 2.493 − 2.460 = 0.033 nats (arXiv:2503.09799 Table 4) at D = 26e9.
    // By hand: 26e9^0.28 = 829.3; 0.033 × 829.3 / 410.7 = 0.06664; 1.06664^(1/0.28) = 1.259.
    const auto e = token_efficiency(ClusterAlgorithm::diloco, 8, 30, 1.3e9);
    ASSERT_TRUE(e.covered);
    EXPECT_EQ(e.bound, EstimateBound::estimate);
    EXPECT_NEAR(e.token_multiplier, 1.259, 0.002);
    // 2.4B, M = 2: 2.323 < 2.326, DiLoCo beats DP: no penalty.
    EXPECT_EQ(token_efficiency(ClusterAlgorithm::diloco, 2, 30, 2.4e9).token_multiplier, 1.0);
}

TEST(Convergence, SizesBetweenRowsInterpolateTheGapInLogN) {
    // Halfway in ln N between 1.3B (0.033) and 2.4B (0.025 = 2.351 − 2.326) at M = 8: 0.029 nats.
    const double n = std::sqrt(1.3e9 * 2.4e9);
    const auto e = token_efficiency(ClusterAlgorithm::diloco, 8, 30, n);
    ASSERT_TRUE(e.covered);
    EXPECT_NEAR(e.token_multiplier, token_multiplier_from_loss_gap(0.029, 20.0 * n), 1e-9);
}

TEST(Convergence, OtherCadencesGiveBoundsNotFigures) {
    // 7B, M = 4 (the 4x81 scenario): 4B and 10B both 0.006 nats above DP (Table 5), so 0.006 at
    // D = 1.4e11: 1.4e11^0.28 = 1321; 0.006 × 1321 / 410.7 = 0.0193; 1.0193^(1/0.28) = 1.071.
    const auto h50 = token_efficiency(ClusterAlgorithm::diloco, 4, 50, 7e9);
    ASSERT_TRUE(h50.covered);
    EXPECT_EQ(h50.bound, EstimateBound::at_most);  // loss grows with H: at least this many tokens
    EXPECT_NEAR(h50.token_multiplier, 1.071, 0.002);
    EXPECT_EQ(token_efficiency(ClusterAlgorithm::diloco, 4, 10, 7e9).bound, EstimateBound::at_least);
    EXPECT_FALSE(token_efficiency(ClusterAlgorithm::diloco, 4, 1, 7e9).covered);
}

TEST(Convergence, SettingsNoPaperCoversAreSaidSo) {
    EXPECT_FALSE(token_efficiency(ClusterAlgorithm::diloco, 3, 30, 1e9).covered);    // M = 3 not run
    EXPECT_FALSE(token_efficiency(ClusterAlgorithm::diloco, 4, 30, 20e9).covered);   // above 10B
    EXPECT_FALSE(token_efficiency(ClusterAlgorithm::diloco, 8, 30, 4e9).covered);    // M = 8 stops at 2.4B
    EXPECT_FALSE(token_efficiency(ClusterAlgorithm::diloco, 2, 30, 10e6).covered);   // below 35M
    const auto noloco = token_efficiency(ClusterAlgorithm::noloco, 4, 50, 7e9);
    EXPECT_FALSE(noloco.covered);
    EXPECT_FALSE(noloco.not_covered.empty());
    // Synchronous all-reduce every step is data-parallel training: exact.
    for (const auto a : {ClusterAlgorithm::ring, ClusterAlgorithm::hierarchical}) {
        const auto e = token_efficiency(a, 5, 50, 70e9);
        EXPECT_TRUE(e.covered);
        EXPECT_EQ(e.token_multiplier, 1.0);
        EXPECT_EQ(e.bound, EstimateBound::estimate);
    }
}
