#pragma once
// How many tokens a cross-cluster algorithm needs to reach the loss that synchronous data-parallel
// training (DP) reaches, from published loss gaps: raw tokens/s divided by that multiplier is the
// "effective tokens/s" the constellation summary prints beside the raw figure. A model, labelled as
// one: it covers only the settings a paper measured, and says so elsewhere rather than extrapolate.
//
// Sources (docs/references.md, "Convergence of low-communication training"):
//   ring, hierarchical: synchronous all-reduce of every step's gradients is DP: multiplier 1, exact.
//   diloco: Charles et al. 2025, "Scaling Laws for DiLoCo" (arXiv:2503.09799v1), Table 4 (35M-2.4B
//     parameters, M = 2, 4, 8 replicas) and Table 5 (4B, 10B; M = 2, 4): C4 evaluation loss of DP and
//     DiLoCo at H = 30 inner steps, D = 20N tokens, each with its own tuned batch and learning rates.
//     Between two tabulated sizes the loss gap is interpolated linearly in ln N.
//     H = 30 gives the figure; H > 30 a lower bound on the multiplier (the paper's Fig. 9: "outside of
//     H = 1 ... evaluation loss increases with H"), 1 < H < 30 an upper bound.
//   noloco: not covered. Its paper (Kolehmainen et al. 2025, arXiv:2506.10911v1, Table 2) compares
//     against DP with batch and learning rate its authors call "likely sub-optimal" for NoLoCo.
// A loss gap ΔL at D tokens becomes a token multiplier through Chinchilla's data term B / D^β
// (Hoffmann et al. 2022, arXiv:2203.15556, Eq. 10: B = 410.7, β = 0.28): the algorithm is taken to
// reach the loss DP reaches with D / (1 + p) tokens, so 1 + p = (1 + ΔL · D^β / B)^(1/β). A gap at
// or below zero gives 1 (no credit for beating DP).
// Pure: no I/O.

#include <string>

#include <skyfabric/physics/enum_names.hpp>
#include <skyfabric/workloads/cluster_training.hpp>

namespace skyfabric::workloads {

// How the true effective rate relates to raw tokens/s ÷ token_multiplier.
enum class EstimateBound : unsigned char {
    estimate = 0,  // the published figure for this setting
    at_most = 1,   // the true effective rate is at most this (the multiplier is a lower bound)
    at_least = 2,  // the true effective rate is at least this (the multiplier is an upper bound)
};
inline constexpr auto estimate_bound_names = physics::enum_names<EstimateBound>(
    {{EstimateBound::estimate, "estimate"}, {EstimateBound::at_most, "at_most"}, {EstimateBound::at_least, "at_least"}});
inline const char* to_string(EstimateBound bound) { return estimate_bound_names.name(bound); }

struct TokenEfficiency {
    bool covered = false;
    double token_multiplier = 1.0;  // tokens to reach DP's loss ÷ DP's tokens (≥ 1)
    EstimateBound bound = EstimateBound::estimate;
    std::string source;             // the paper and table used, when covered
    std::string not_covered;        // why no published figure applies, when not
};

// Chinchilla's data term turned into a token multiplier: (1 + ΔL · D^β / B)^(1/β), 1 for ΔL ≤ 0.
double token_multiplier_from_loss_gap(double loss_gap_nats, double tokens);

// `replicas` M (clusters), `inner_steps` H, `model_parameters` N of the job.
TokenEfficiency token_efficiency(ClusterAlgorithm algorithm, int replicas, int inner_steps, double model_parameters);

}  // namespace skyfabric::workloads
