#include <skyfabric/links/aggregation.hpp>

#include <skyfabric/physics/constants.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace skyfabric::links {

physics::SettingsProblems check(const GatewayParameters& parameters, std::span<const std::size_t> cluster_sizes) {
    physics::SettingsProblems problems;
    const std::int32_t g = parameters.gateways_per_cluster;
    if (g < 0) problems.push_back({"gateways_per_cluster", "must be >= 0"});
    if (!cluster_sizes.empty()) {
        const std::size_t smallest = *std::min_element(cluster_sizes.begin(), cluster_sizes.end());
        if (g > 0 && static_cast<std::size_t>(g) > smallest)
            problems.push_back({"gateways_per_cluster", "a cluster has only " + std::to_string(smallest) + " satellites"});
    }
    return problems;
}

std::vector<GatewayPair> gateway_pairs(std::int32_t clusters, std::int32_t gateways_per_cluster,
                                       AggregationTopology topology) {
    if (clusters < 0 || gateways_per_cluster < 0)
        throw std::invalid_argument("gateway_pairs: clusters and gateways_per_cluster must be >= 0");
    std::vector<GatewayPair> pairs;
    const std::int32_t g = gateways_per_cluster;
    pairs.reserve(static_cast<std::size_t>(g) * static_cast<std::size_t>(clusters) *
                  static_cast<std::size_t>(std::max(clusters - 1, 0)) / 2);
    for (std::int32_t a = 0; a < clusters; ++a)
        for (std::int32_t b = a + 1; b < clusters; ++b)
            for (std::int32_t k = 0; k < g; ++k) {
                // Spread: k ↦ k + offset is a bijection, so every gateway still ends with exactly
                // clusters − 1 links; an offset of the form φ(b) − φ(a) would leave G planes.
                const std::int32_t offset = (a + b + 2 * a * b + 1) % g;
                const std::int32_t kb = topology == AggregationTopology::spread ? (k + offset) % g : k;
                pairs.push_back({a, k, b, kb});
            }
    return pairs;
}

std::vector<std::int32_t> choose_gateways(std::span<const Eigen::Vector3d> positions_lvlh_m,
                                          std::int32_t count) {
    GatewayParameters parameters;
    parameters.gateways_per_cluster = count;
    const std::size_t satellites = positions_lvlh_m.size();
    physics::throw_problems("choose_gateways", check(parameters, {&satellites, 1}));
    std::vector<std::int32_t> chosen;
    chosen.reserve(static_cast<std::size_t>(count));
    std::vector<char> used(positions_lvlh_m.size(), 0);
    for (std::int32_t k = 0; k < count; ++k) {
        const double angle = 2.0 * physics::pi * k / count;
        // LVLH: x radial, y along-track; angle 0 is +along-track, π/2 is +radial.
        const double along = std::cos(angle), radial = std::sin(angle);
        std::int32_t best = -1;
        double best_projection = -std::numeric_limits<double>::infinity();
        for (std::size_t i = 0; i < positions_lvlh_m.size(); ++i) {
            if (used[i]) continue;
            const double projection = along * positions_lvlh_m[i].y() + radial * positions_lvlh_m[i].x();
            if (projection > best_projection) {
                best_projection = projection;
                best = static_cast<std::int32_t>(i);
            }
        }
        used[static_cast<std::size_t>(best)] = 1;
        chosen.push_back(best);
    }
    return chosen;
}

double line_of_sight_altitude_m(const Eigen::Vector3d& a_eci_m, const Eigen::Vector3d& b_eci_m) {
    const Eigen::Vector3d ab = b_eci_m - a_eci_m;
    const double length2 = ab.squaredNorm();
    // Closest point to the centre on the infinite line, clamped to the segment.
    const double t = length2 > 0.0 ? std::clamp(-a_eci_m.dot(ab) / length2, 0.0, 1.0) : 0.0;
    return (a_eci_m + t * ab).norm() - physics::earth_equatorial_radius_m;
}

bool line_of_sight_clear(const Eigen::Vector3d& a_eci_m, const Eigen::Vector3d& b_eci_m,
                         double grazing_altitude_m) {
    return line_of_sight_altitude_m(a_eci_m, b_eci_m) >= grazing_altitude_m;
}

AggregationBuilder::AggregationBuilder(const GatewayParameters& parameters)
    : p_(parameters), model_(parameters.optics) {
    physics::throw_problems("AggregationBuilder", check(p_, {}));
}

AggregationLayer AggregationBuilder::build(std::span<const std::vector<std::int32_t>> gateway_nodes,
                                           std::span<const Eigen::Vector3d> positions_eci_m) const {
    const auto clusters = static_cast<std::int32_t>(gateway_nodes.size());
    const auto nodes = static_cast<std::int32_t>(positions_eci_m.size());
    for (std::int32_t c = 0; c < clusters; ++c) {
        const auto& gateways = gateway_nodes[static_cast<std::size_t>(c)];
        if (static_cast<std::int32_t>(gateways.size()) < p_.gateways_per_cluster)
            throw std::invalid_argument("AggregationBuilder::build: cluster " + std::to_string(c) + " lists " +
                                        std::to_string(gateways.size()) + " gateways, need " +
                                        std::to_string(p_.gateways_per_cluster));
        for (const std::int32_t v : gateways)
            if (v < 0 || v >= nodes)
                throw std::invalid_argument("AggregationBuilder::build: gateway node " + std::to_string(v) +
                                            " outside 0.." + std::to_string(nodes - 1));
    }
    AggregationLayer layer;
    for (const GatewayPair& pair : gateway_pairs(clusters, p_.gateways_per_cluster, p_.topology)) {
        std::int32_t u = gateway_nodes[static_cast<std::size_t>(pair.cluster_a)][static_cast<std::size_t>(pair.gateway_a)];
        std::int32_t v = gateway_nodes[static_cast<std::size_t>(pair.cluster_b)][static_cast<std::size_t>(pair.gateway_b)];
        const Eigen::Vector3d& pu = positions_eci_m[static_cast<std::size_t>(u)];
        const Eigen::Vector3d& pv = positions_eci_m[static_cast<std::size_t>(v)];
        if (!line_of_sight_clear(pu, pv, p_.grazing_altitude_m)) {
            ++layer.blocked;
            continue;
        }
        const double distance_m = (pu - pv).norm();
        const LinkBudget budget = model_.at(distance_m);
        if (!(budget.capacity_bps > 0.0)) {
            ++layer.out_of_budget;
            continue;
        }
        if (u > v) std::swap(u, v);
        Link link;
        link.source = u;
        link.target = v;
        link.distance_m = distance_m;
        link.capacity_bps = budget.capacity_bps;
        link.latency_s = budget.latency_s;
        link.received_power_dbm = budget.received_power_per_channel_dbm;
        link.margin_db = budget.margin_db;
        layer.links.push_back(link);
    }
    std::sort(layer.links.begin(), layer.links.end(), [](const Link& x, const Link& y) {
        return x.source != y.source ? x.source < y.source : x.target < y.target;
    });
    return layer;
}

}  // namespace skyfabric::links
