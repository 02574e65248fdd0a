// Mixture-of-experts steps against the α–β arithmetic on a uniform fully connected fabric:
// every rank pair has its own link, so the expert groups' all-to-alls and the ring all-reduce
// run at the per-link bandwidth B with one hop of latency α per phase.
#include <skyfabric/workloads/job.hpp>
#include <skyfabric/workloads/training.hpp>

#include <gtest/gtest.h>

#include <stdexcept>

#include "test_helpers.hpp"

namespace sw = skyfabric::workloads;
namespace links = skyfabric::links;

namespace {

constexpr double capacity_bps = 800e9;  // B = 100 GB/s
constexpr double bandwidth_Bps = capacity_bps / 8.0;
constexpr double alpha_s = 2e-6;

sw::TrainingJob moe_job(std::int32_t p, std::int32_t expert_parallel) {
    sw::TrainingJob job;
    job.parameters = 2e9;
    job.active_parameters = 5e8;
    job.tokens_per_step = 8e4 * p;
    job.data_parallel = p;
    job.gradient_buckets = 1;  // the all-reduce runs after the backward pass: fully exposed
    job.moe.layers = 3;
    job.moe.expert_parallel = expert_parallel;
    job.moe.experts_per_token = 2;
    job.moe.hidden_size = 1024;
    job.moe.expert_parameters = 1.6e9;
    job.moe.load_imbalance = 1.25;
    return job;
}

sw::TrainingResult one_step(const sw::TrainingJob& job) {
    const links::Topology series[] = {sw::testing::complete(job.data_parallel, capacity_bps, alpha_s)};
    sw::TrainingOptions o;
    o.max_steps = 2;
    return sw::simulate_training(job, sw::tpu_v6e(), series, o);
}

}  // namespace



TEST(MixtureOfExperts, StepIsComputePlusGroupAllToAllsPlusTheExposedAllReduce) {
    // p = 8 ranks in 2 expert groups of E = 4. Per all-to-all each rank sends
    // n_a = tokens/rank × k × d × 2 B × imbalance, pairwise in E − 1 phases of n_a/E:
    // (E − 1)(α + n_a/(E B)), 4 per MoE layer. Gradients: (P − P_e + P_e/E) × 2 B, a ring
    // all-reduce of 2(p − 1) phases of n_g/p: 2(p − 1)(α + n_g/(p B)).
    const std::int32_t p = 8, E = 4;
    const sw::TrainingJob job = moe_job(p, E);
    const double n_a = (job.tokens_per_step / p) * 2 * 1024 * 2.0 * 1.25;
    EXPECT_DOUBLE_EQ(sw::moe_all_to_all_bytes(job), n_a);
    const double n_g = (2e9 - 1.6e9 + 1.6e9 / E) * 2.0;
    EXPECT_DOUBLE_EQ(sw::gradient_bytes(job), n_g);
    const double compute = sw::compute_time_per_step_s(job, sw::tpu_v6e());
    const double a2a = 4 * 3 * (E - 1) * (alpha_s + n_a / (E * bandwidth_Bps));
    const double all_reduce = 2.0 * (p - 1) * (alpha_s + n_g / (p * bandwidth_Bps));

    const sw::TrainingResult r = one_step(job);
    ASSERT_EQ(r.steps.size(), 2u);
    const sw::StepRecord& s = r.steps[0];
    EXPECT_NEAR(s.all_to_all_s, a2a, 1e-9 * a2a);
    EXPECT_NEAR(s.exposed_communication_s, all_reduce, 1e-9 * all_reduce);
    EXPECT_NEAR(s.end_s - s.start_s, compute + a2a + all_reduce, 1e-9 * (compute + a2a + all_reduce));
    EXPECT_NEAR(r.summary.all_to_all_per_step_s, a2a, 1e-9 * a2a);
}

TEST(MixtureOfExperts, ExpertsOnEveryRankNeedNoAllToAllAndDenseIsUnchanged) {
    // E = 1: every rank holds every expert, so tokens never leave it.
    const sw::TrainingResult local = one_step(moe_job(8, 1));
    EXPECT_EQ(local.steps.at(0).all_to_all_s, 0.0);
    // A dense job (no moe layers) steps exactly as before: the gradient is all the parameters.
    sw::TrainingJob dense = moe_job(8, 4);
    dense.moe.layers = 0;
    EXPECT_DOUBLE_EQ(sw::gradient_bytes(dense), dense.parameters * dense.bytes_per_gradient_element);
    EXPECT_EQ(one_step(dense).steps.at(0).all_to_all_s, 0.0);
    sw::TrainingJob bad = moe_job(8, 3);
    EXPECT_THROW(one_step(bad), std::invalid_argument);  // groups of 3 do not divide 8 ranks
}
