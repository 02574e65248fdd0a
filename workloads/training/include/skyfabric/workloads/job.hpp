#pragma once
// Accelerators and training jobs: how long a step computes, how many bytes its
// gradients are, and checkpoint-interval rules (Young, Daly).

#include <skyfabric/physics/enum_names.hpp>
#include <skyfabric/physics/settings_problem.hpp>

#include <cstdint>
#include <string>

namespace skyfabric::workloads {

struct Accelerator {
    std::string name = "tpu_v6e";
    double peak_flops = 918e12;   // dense bf16 FLOP/s per chip
    double hbm_bytes = 32e9;
    double hbm_bandwidth_Bps = 1640e9;  // what a memory-bound decode step reads its weights and KV at
    bool operator==(const Accelerator&) const = default;  // the same chips: name and every figure
};

// Trillium (TPU v6e): 918 TFLOP/s bf16, 32 GB HBM at 1,640 GB/s (docs/references.md, "Training at scale").
Accelerator tpu_v6e();
// Named preset (tpu_v6e, h200, h20; docs/references.md "Accelerators"); throws std::invalid_argument for an unknown name.
Accelerator accelerator_preset(const std::string& name);

enum class SyncMode : std::uint8_t {
    every_step = 0,   // all-reduce gradients each step, buckets overlapped with backward
    local_steps = 1,  // DiLoCo-style: H local steps, then one outer all-reduce
};
inline constexpr auto sync_mode_names = physics::enum_names<SyncMode>({
    {SyncMode::every_step, "every_step"}, {SyncMode::local_steps, "local_steps"}});

// Expert parallelism: the data-parallel ranks form groups of `expert_parallel` consecutive ranks
// (neighbours on the ring placement); each rank of a group holds 1/expert_parallel of the experts.
// Every MoE layer routes each token's activations to `experts_per_token` experts and back: an
// all-to-all within every group to dispatch and one to combine, forward and again backward (4 per
// layer per step), on the critical path. Each rank sends
//     tokens_per_rank × experts_per_token × hidden_size × bytes_per_activation × load_imbalance
// bytes per all-to-all (load_imbalance: the busiest rank's routed tokens over the mean, ≥ 1,
// which sets the all-to-all's time). Gradients: a rank all-reduces the dense parameters and its
// share of the experts, (parameters − expert_parameters) + expert_parameters / expert_parallel.
struct MixtureOfExperts {
    std::int32_t layers = 0;               // MoE layers (0: dense model)
    std::int32_t expert_parallel = 1;      // ranks per expert group; divides data_parallel
    std::int32_t experts_per_token = 2;    // top-k routing
    double hidden_size = 4096.0;           // d_model: elements per token's activation
    double bytes_per_activation = 2.0;     // bf16
    double expert_parameters = 0.0;        // parameters in the routed experts (of `parameters`)
    double load_imbalance = 1.0;           // busiest rank's routed tokens / mean, ≥ 1
    bool operator==(const MixtureOfExperts&) const = default;
};

struct TrainingJob {
    double parameters = 7e9;          // total parameters (gradient size)
    double active_parameters = 0.0;   // per-token active parameters (MoE); 0 = dense
    double tokens_per_step = 4e6;     // global batch in tokens
    double bytes_per_gradient_element = 2.0;  // bf16 gradients
    std::int32_t data_parallel = 81;  // satellites in the data-parallel ring
    // Chips per satellite sharing one model replica (tensor parallel inside the
    // satellite, over on-board ICI, not modelled): adds compute, not ISL traffic,
    // because the satellite's t shards together carry one full gradient.
    std::int32_t tensor_parallel = 1;
    double mfu = 0.4;                 // achieved fraction of peak FLOP/s
    std::int32_t gradient_buckets = 4;  // all-reduce buckets overlapping the backward pass
    double backward_fraction = 2.0 / 3.0;  // share of step compute in the backward pass
    SyncMode sync = SyncMode::every_step;
    // Local SGD, one model at two granularities: a replica steps on its own and every H steps the
    // replicas average (the outer sync, of outer_sync_bytes). The replica is a rank under
    // SyncMode::local_steps, a cluster under a constellation's diloco and noloco (cluster_training.hpp).
    std::int32_t local_steps = 50;         // H, inner steps per outer sync
    double outer_bytes_per_element = 4.0;  // outer gradients (fp32; 1 for 8-bit compression)
    MixtureOfExperts moe;             // moe.layers = 0: a dense model
    bool operator==(const TrainingJob&) const = default;
};

// What simulate_training refuses in a job, by field name ("moe.expert_parallel"): at least one rank
// and chip, an MFU in (0, 1], active parameters within the model, local_steps >= 1 with
// SyncMode::local_steps, and a mixture of experts whose groups divide the data-parallel ranks.
// data_parallel is the resolved count (a scenario's 0, "every satellite", is resolved first).
physics::SettingsProblems check(const TrainingJob& job);

// Active parameters used for FLOPs (dense: all of them).
double active_parameters(const TrainingJob& job);
// Chips working on the step: data_parallel × tensor_parallel.
std::int64_t chip_count(const TrainingJob& job);
// FLOPs per step ≈ 6·P_active·tokens (forward 2, backward 4 per parameter and token).
double flops_per_step(const TrainingJob& job);
// compute_s = 6·P_active·tokens / (chips · peak · MFU).
double compute_time_per_step_s(const TrainingJob& job, const Accelerator& accelerator);
// Bytes each data-parallel rank all-reduces per synchronisation.
double gradient_bytes(const TrainingJob& job);
double outer_sync_bytes(const TrainingJob& job);
// Bytes each rank sends in one MoE all-to-all (dispatch or combine); 0 for a dense model.
double moe_all_to_all_bytes(const TrainingJob& job);

// Young: τ = √(2δM), δ checkpoint cost, M mean time between failures.
double young_interval_s(double checkpoint_cost_s, double mtbf_s);
// Daly: τ = √(2δM)·[1 + ⅓√(δ/2M) + (δ/2M)/9] − δ for δ < 2M, else M.
double daly_interval_s(double checkpoint_cost_s, double mtbf_s);
// Fraction of time wasted ≈ δ/τ + (τ + R)/M (R restart cost).
double checkpoint_waste_fraction(double interval_s, double checkpoint_cost_s, double restart_s,
                                 double mtbf_s);

}  // namespace skyfabric::workloads
