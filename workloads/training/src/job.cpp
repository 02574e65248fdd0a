#include <skyfabric/workloads/job.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

namespace skyfabric::workloads {

Accelerator tpu_v6e() { return Accelerator{"tpu_v6e", 918e12, 32e9, 1640e9}; }

Accelerator accelerator_preset(const std::string& name) {
    if (name == "tpu_v6e" || name == "trillium") return tpu_v6e();
    // docs/references.md "Accelerators": dense bf16 peak, HBM, HBM bandwidth.
    if (name == "h200") return Accelerator{"h200", 989e12, 141e9, 4800e9};
    if (name == "h20") return Accelerator{"h20", 148e12, 96e9, 4000e9};
    throw std::invalid_argument("unknown accelerator preset '" + name + "' (known: tpu_v6e, h200, h20)");
}

physics::SettingsProblems check(const TrainingJob& job) {
    physics::SettingsProblems problems;
    const auto at_least = [&](const char* key, std::int32_t value, std::int32_t minimum) {
        if (value < minimum) problems.push_back({key, "must be at least " + std::to_string(minimum)});
    };
    at_least("data_parallel", job.data_parallel, 1);
    at_least("tensor_parallel", job.tensor_parallel, 1);
    if (!(job.mfu > 0.0 && job.mfu <= 1.0)) problems.push_back({"mfu", "must be in (0, 1]"});
    if (job.active_parameters > job.parameters) problems.push_back({"active_parameters", "must not exceed the model's parameters"});
    if (job.sync == SyncMode::local_steps) at_least("local_steps", job.local_steps, 1);
    const MixtureOfExperts& moe = job.moe;
    if (moe.layers <= 0) return problems;
    if (moe.expert_parallel < 1 || job.data_parallel % moe.expert_parallel != 0)
        problems.push_back({"moe.expert_parallel", "expert groups of " + std::to_string(moe.expert_parallel) + " ranks must divide the " +
                                                       std::to_string(job.data_parallel) + " data-parallel ranks"});
    at_least("moe.experts_per_token", moe.experts_per_token, 1);
    if (!(moe.hidden_size > 0.0)) problems.push_back({"moe.hidden_size", "must be positive"});
    if (!(moe.load_imbalance >= 1.0)) problems.push_back({"moe.load_imbalance", "must be at least 1"});
    if (!(moe.expert_parameters >= 0.0)) problems.push_back({"moe.expert_parameters", "must be >= 0"});
    if (moe.expert_parameters > job.parameters) problems.push_back({"moe.expert_parameters", "must not exceed the model's parameters"});
    return problems;
}

double active_parameters(const TrainingJob& job) {
    return job.active_parameters > 0.0 ? job.active_parameters : job.parameters;
}

std::int64_t chip_count(const TrainingJob& job) {
    return static_cast<std::int64_t>(job.data_parallel) * job.tensor_parallel;
}

double flops_per_step(const TrainingJob& job) {
    return 6.0 * active_parameters(job) * job.tokens_per_step;
}

double compute_time_per_step_s(const TrainingJob& job, const Accelerator& accelerator) {
    const double rate = static_cast<double>(chip_count(job)) * accelerator.peak_flops * job.mfu;
    if (!(rate > 0.0)) throw std::invalid_argument("compute rate must be positive");
    return flops_per_step(job) / rate;
}

double gradient_bytes(const TrainingJob& job) {
    if (job.moe.layers <= 0) return job.parameters * job.bytes_per_gradient_element;
    const double experts = job.moe.expert_parameters;
    return (job.parameters - experts + experts / job.moe.expert_parallel) * job.bytes_per_gradient_element;
}

double moe_all_to_all_bytes(const TrainingJob& job) {
    if (job.moe.layers <= 0) return 0.0;
    const double tokens_per_rank = job.tokens_per_step / job.data_parallel;
    return tokens_per_rank * job.moe.experts_per_token * job.moe.hidden_size * job.moe.bytes_per_activation *
           job.moe.load_imbalance;
}

double outer_sync_bytes(const TrainingJob& job) {
    return job.parameters * job.outer_bytes_per_element;
}

double young_interval_s(double checkpoint_cost_s, double mtbf_s) {
    return std::sqrt(2.0 * checkpoint_cost_s * mtbf_s);
}

double daly_interval_s(double checkpoint_cost_s, double mtbf_s) {
    const double delta = checkpoint_cost_s;
    const double m = mtbf_s;
    if (delta >= 2.0 * m) return m;
    const double x = delta / (2.0 * m);
    return std::sqrt(2.0 * delta * m) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - delta;
}

double checkpoint_waste_fraction(double interval_s, double checkpoint_cost_s, double restart_s,
                                 double mtbf_s) {
    return checkpoint_cost_s / interval_s + (interval_s + restart_s) / mtbf_s;
}

}  // namespace skyfabric::workloads
