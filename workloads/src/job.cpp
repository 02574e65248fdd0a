#include <skyfabric/workloads/job.hpp>

#include <cmath>
#include <stdexcept>

namespace skyfabric::workloads {

Accelerator tpu_v6e() { return Accelerator{"tpu_v6e", 918e12, 32e9, 1640e9}; }

Accelerator accelerator_preset(const std::string& name) {
    if (name == "tpu_v6e" || name == "trillium") return tpu_v6e();
    throw std::invalid_argument("unknown accelerator preset '" + name + "' (known: tpu_v6e)");
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
