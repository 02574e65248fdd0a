#include <skyfabric/workloads/convergence.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <limits>

namespace skyfabric::workloads {
namespace {

// Hoffmann et al. 2022 (arXiv:2203.15556), Eq. 10: the data term of L(N, D) = E + A/N^α + B/D^β.
constexpr double chinchilla_B = 410.7;
constexpr double chinchilla_beta = 0.28;
// The setting Charles et al. 2025 measured: H = 30, D = 20N tokens.
constexpr int measured_inner_steps = 30;
constexpr double tokens_per_parameter = 20.0;

constexpr double none = std::numeric_limits<double>::quiet_NaN();
struct LossRow {
    double parameters;
    double dp, m2, m4, m8;  // C4 evaluation loss, nats; NaN: not run
};
// Charles et al. 2025 (arXiv:2503.09799v1), Table 4 (35M-2.4B) and Table 5 (4B, 10B; M = 8 not run).
constexpr std::array<LossRow, 9> diloco_losses{{
    {35e6, 3.485, 3.508, 3.554, 3.621},
    {90e6, 3.167, 3.182, 3.213, 3.265},
    {180e6, 2.950, 2.957, 2.981, 3.019},
    {335e6, 2.784, 2.788, 2.808, 2.841},
    {550e6, 2.653, 2.657, 2.673, 2.698},
    {1.3e9, 2.460, 2.464, 2.472, 2.493},
    {2.4e9, 2.326, 2.323, 2.332, 2.351},
    {4e9, 2.224, 2.220, 2.230, none},
    {10e9, 2.090, 2.086, 2.096, none},
}};

double gap_nats(const LossRow& row, int replicas) {
    const double loss = replicas == 2 ? row.m2 : replicas == 4 ? row.m4 : row.m8;
    return loss - row.dp;
}

std::string format_parameters(double n) {
    char text[32];
    if (n >= 1e9) std::snprintf(text, sizeof text, "%.3gB", n / 1e9);
    else std::snprintf(text, sizeof text, "%.3gM", n / 1e6);
    return text;
}

}  // namespace

double token_multiplier_from_loss_gap(double loss_gap_nats, double tokens) {
    if (!(loss_gap_nats > 0.0)) return 1.0;
    return std::pow(1.0 + loss_gap_nats * std::pow(tokens, chinchilla_beta) / chinchilla_B, 1.0 / chinchilla_beta);
}

TokenEfficiency token_efficiency(ClusterAlgorithm algorithm, int replicas, int inner_steps, double model_parameters) {
    TokenEfficiency out;
    switch (algorithm) {
        case ClusterAlgorithm::ring:
        case ClusterAlgorithm::hierarchical:
            out.covered = true;
            out.source = "every step all-reduced: data-parallel training";
            return out;
        case ClusterAlgorithm::noloco:
            out.not_covered = "no tuned comparison with data-parallel published (arXiv:2506.10911 Table 2 used settings "
                              "its authors call likely sub-optimal)";
            return out;
        case ClusterAlgorithm::diloco: break;
    }
    if (replicas != 2 && replicas != 4 && replicas != 8) {
        out.not_covered = "published only for 2, 4 and 8 replicas (arXiv:2503.09799 Tables 4-5); this run has " + std::to_string(replicas);
        return out;
    }
    if (inner_steps <= 1) {
        out.not_covered = "H = 1 is outside the measured cadences' trend (arXiv:2503.09799 Fig. 9)";
        return out;
    }
    // The tabulated sizes for this M, and the run's size between two of them.
    const LossRow* below = nullptr;
    const LossRow* above = nullptr;
    for (const auto& row : diloco_losses) {
        if (std::isnan(gap_nats(row, replicas))) continue;
        if (row.parameters <= model_parameters) below = &row;
        if (row.parameters >= model_parameters && !above) above = &row;
    }
    if (!below || !above) {
        double largest = 0.0;
        for (const auto& row : diloco_losses)
            if (!std::isnan(gap_nats(row, replicas))) largest = row.parameters;
        out.not_covered = "published for 35M-" + format_parameters(largest) + " parameters at M = " + std::to_string(replicas) +
                          " (arXiv:2503.09799 Tables 4-5); this model has " + format_parameters(model_parameters);
        return out;
    }
    double gap = gap_nats(*below, replicas);
    if (above != below) {
        const double f = std::log(model_parameters / below->parameters) / std::log(above->parameters / below->parameters);
        gap += f * (gap_nats(*above, replicas) - gap);
    }
    out.covered = true;
    out.token_multiplier = token_multiplier_from_loss_gap(gap, tokens_per_parameter * model_parameters);
    out.bound = inner_steps == measured_inner_steps ? EstimateBound::estimate
                : inner_steps > measured_inner_steps ? EstimateBound::at_most
                                                     : EstimateBound::at_least;
    out.source = "arXiv:2503.09799 Tables 4-5 at M = " + std::to_string(replicas) + ", H = 30" +
                 (inner_steps == measured_inner_steps ? std::string()
                                                      : "; a bound at H = " + std::to_string(inner_steps) + " (loss grows with H, Fig. 9)");
    return out;
}

}  // namespace skyfabric::workloads
