#pragma once
// The aggregation layer of a constellation of clusters: several formations (clusters) tens to
// thousands of km apart, joined by long-range optical links between a few gateway satellites
// of each — the orbital twin of a data centre's backend aggregation (BAG) layer.
//
// Which gateway pairs get a link is a fixed pattern (planar or spread, below); a pair keeps
// its link only when the Earth does not block the line of sight and the far-field budget at
// its distance closes at least one DWDM channel.

#include <skyfabric/links/budget.hpp>
#include <skyfabric/links/topology.hpp>
#include <skyfabric/physics/enum_names.hpp>
#include <skyfabric/physics/settings_problem.hpp>

#include <Eigen/Core>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace skyfabric::links {

enum class AggregationTopology : std::uint8_t { planar = 0, spread = 1 };
inline constexpr auto aggregation_topology_names = physics::enum_names<AggregationTopology>({
    {AggregationTopology::planar, "planar"}, {AggregationTopology::spread, "spread"}});

// nullopt for a name not in the table.
inline std::optional<AggregationTopology> aggregation_topology_from_name(std::string_view name) {
    return aggregation_topology_names.value(name);
}
inline std::string_view to_string(AggregationTopology topology) { return aggregation_topology_names.name(topology); }

// A link of the merged fabric: inside one cluster, or between two (a gateway link); the result
// file's /links/class and its class_names attribute.
enum class LinkClass : std::uint8_t { intra_cluster = 0, gateway = 1 };
inline constexpr auto link_class_names = physics::enum_names<LinkClass>({
    {LinkClass::intra_cluster, "intra_cluster"}, {LinkClass::gateway, "gateway"}});

// The long-range gateway terminal: a 30 cm aperture at 10 W, else the ISL terminal's optics
// (docs/constellations.md).
inline OpticalTerminalParameters gateway_terminal_optics() {
    OpticalTerminalParameters o;
    o.aperture_m = 0.3;
    o.tx_power_w = 10.0;
    return o;
}

struct GatewayParameters {
    std::int32_t gateways_per_cluster = 4;
    AggregationTopology topology = AggregationTopology::planar;
    OpticalTerminalParameters optics = gateway_terminal_optics();
    double grazing_altitude_m = 100e3;    // a line of sight must pass this high above the Earth
    // A failed gateway link goes undetected this long (its routes blackhole their share until the
    // routes re-weight; workloads::RecoveryConfig::gateway_failover_s, which the run copies from
    // here): BFD's detection time at a common 1 s interval x 3 missed packets (RFC 5880).
    double failover_s = 3.0;
    bool operator==(const GatewayParameters&) const = default;
};

// What the aggregation layer refuses, by field name: gateways_per_cluster below 0 or above the
// smallest of cluster_sizes (every gateway is a satellite of its cluster; empty: sizes not known).
physics::SettingsProblems check(const GatewayParameters& parameters, std::span<const std::size_t> cluster_sizes);

// Which gateway pairs get a link (one gateway terminal per link at each end):
//  planar: gateway k of cluster a <-> gateway k of cluster b, for every pair of clusters a < b
//          (the gateways with index k form plane k; planes meet only inside the clusters);
//  spread: gateway k of cluster a <-> gateway (k + a + b + 2ab + 1) mod G of cluster b (a < b): the
//          same number of links and terminals, but the offset is no difference φ(b) − φ(a), so no
//          label survives along every link and the layer is one mesh across the planes (path
//          diversity: a gateway reaches every plane). For 4 clusters of 4 gateways (the shipped
//          constellation) each gateway also meets a different index in each other cluster; that
//          is not guaranteed for every count (tests/links/aggregation_test.cpp).
// Both give G·C(C−1)/2 pairs, clusters − 1 per gateway, ordered by (cluster_a, cluster_b, gateway_a).
struct GatewayPair {
    std::int32_t cluster_a = 0, gateway_a = 0, cluster_b = 0, gateway_b = 0;
};
std::vector<GatewayPair> gateway_pairs(std::int32_t clusters, std::int32_t gateways_per_cluster,
                                       AggregationTopology topology);

// The `count` satellites of one formation that carry gateway terminals: on its rim, spread in
// angle in the LVLH radial/along-track plane (for each k the satellite with the largest
// projection on the direction at angle 2πk/count from +along-track towards +radial, never the
// same one twice; ties to the lower index). Returns indices into positions_lvlh_m.
// Throws std::invalid_argument for check({count}, {positions})'s problem.
std::vector<std::int32_t> choose_gateways(std::span<const Eigen::Vector3d> positions_lvlh_m,
                                          std::int32_t count);

// Lowest altitude of the straight segment a–b above a spherical Earth of radius
// physics::earth_equatorial_radius_m: |closest point of the segment to the centre| − R.
double line_of_sight_altitude_m(const Eigen::Vector3d& a_eci_m, const Eigen::Vector3d& b_eci_m);
// line_of_sight_altitude_m(a, b) >= grazing_altitude_m.
bool line_of_sight_clear(const Eigen::Vector3d& a_eci_m, const Eigen::Vector3d& b_eci_m,
                         double grazing_altitude_m);

struct AggregationLayer {
    std::vector<Link> links;          // sorted by (source, target), source < target, capacity > 0
    std::int32_t blocked = 0;         // pairs whose line of sight the Earth blocks (left out)
    std::int32_t out_of_budget = 0;   // pairs where no DWDM channel closes (left out)
};

// gateway_nodes[c][k]: the global node id of gateway k of cluster c; positions_eci_m indexed by
// global node id. Capacity, margin and received power per channel come from the budget at the
// pair's distance (LinkBudgetModel of parameters.optics: Friis in the far field, with fewer
// DWDM channels lit at range when optics.adaptive_channel_count); latency is the light time.
class AggregationBuilder {
public:
    // Throws std::invalid_argument for check(parameters, {})'s first problem.
    explicit AggregationBuilder(const GatewayParameters& parameters);
    // Throws std::invalid_argument if a cluster lists fewer than gateways_per_cluster gateways
    // or a node id is outside positions_eci_m.
    AggregationLayer build(std::span<const std::vector<std::int32_t>> gateway_nodes,
                           std::span<const Eigen::Vector3d> positions_eci_m) const;
    const LinkBudgetModel& budget_model() const { return model_; }

private:
    GatewayParameters p_;
    LinkBudgetModel model_;
};

}  // namespace skyfabric::links
