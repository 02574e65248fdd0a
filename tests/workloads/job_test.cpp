// Compute time per step and checkpoint intervals against their formulas.

#include <cmath>

#include <gtest/gtest.h>

#include <skyfabric/workloads/job.hpp>

namespace sw = skyfabric::workloads;

TEST(ComputeTime, SixPTokensOverChipsPeakMfu) {
    sw::TrainingJob job;
    job.parameters = 7e9;
    job.tokens_per_step = 4e6;
    job.data_parallel = 81;
    job.mfu = 0.4;
    const auto acc = sw::tpu_v6e();
    EXPECT_DOUBLE_EQ(acc.peak_flops, 918e12);
    EXPECT_DOUBLE_EQ(acc.hbm_bytes, 32e9);
    const double expected = 6.0 * 7e9 * 4e6 / (81 * 918e12 * 0.4);
    EXPECT_NEAR(sw::compute_time_per_step_s(job, acc), expected, 1e-12 * expected);
    // MoE: FLOPs follow active parameters, gradients all parameters.
    job.active_parameters = 1e9;
    job.tensor_parallel = 2;
    EXPECT_NEAR(sw::compute_time_per_step_s(job, acc), 6.0 * 1e9 * 4e6 / (162 * 918e12 * 0.4), 1e-9);
    EXPECT_DOUBLE_EQ(sw::gradient_bytes(job), 7e9 * 2.0);
    EXPECT_THROW(sw::accelerator_preset("abacus"), std::invalid_argument);
}

TEST(Checkpointing, YoungAndDaly) {
    const double delta = 60.0, m = 3.0 * 3600.0;  // one failure every 3 h (Llama 3 scale)
    EXPECT_NEAR(sw::young_interval_s(delta, m), std::sqrt(2.0 * 60.0 * 10800.0), 1e-9);
    const double x = delta / (2 * m);
    EXPECT_NEAR(sw::daly_interval_s(delta, m),
                std::sqrt(2 * delta * m) * (1 + std::sqrt(x) / 3 + x / 9) - delta, 1e-9);
    EXPECT_DOUBLE_EQ(sw::daly_interval_s(3 * m, m), m);
    const double tau = sw::young_interval_s(delta, m);
    EXPECT_NEAR(sw::checkpoint_waste_fraction(tau, delta, 0.0, m), delta / tau + tau / m, 1e-15);
}
