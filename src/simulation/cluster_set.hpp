#pragma once
// The clusters of a scenario flown together: each cluster its own chief, propagator and intra-cluster
// topology builder (so each keeps the relative-motion accuracy of a single-formation run however far
// apart the chiefs are), joined by the aggregation layer of gateway links. Satellites are numbered
// cluster after cluster. Without a constellation section there is one cluster and everything is as
// a single-formation run computes it.
#include "scenario/scenario.hpp"

#include <skyfabric/links/aggregation.hpp>
#include <skyfabric/links/topology.hpp>
#include <skyfabric/links/topology_policy.hpp>
#include <skyfabric/physics/propagation.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace skyfabric::simulation {

// The aggregation layer at one sample.
struct AggregationSample {
    std::int32_t gateway_links = 0;
    std::int32_t blocked = 0;              // gateway pairs the Earth hides from each other
    std::int32_t out_of_budget = 0;        // gateway pairs too far for a single DWDM channel
    double gateway_capacity_bps = 0.0;     // per direction, summed over gateway links
    // Per cluster: its bisection capacity over the capacity of its gateway links (L2-to-aggregation
    // oversubscription; +inf when a cluster has no gateway link up).
    std::vector<double> oversubscription;
    double oversubscription_max = 0.0;     // the worst cluster
    std::vector<Eigen::Vector3d> chief_eci_m;  // each cluster's chief
    std::vector<Eigen::Vector3d> chief_velocity_eci_m_s;  // and its velocity: with the position, its LVLH frame
};

class ClusterSet {
public:
    // with_links: build topologies; links_acquired: links of the first step carry traffic at once.
    ClusterSet(const scenario::Scenario& sc, bool with_links, bool links_acquired);

    std::size_t cluster_count() const { return propagators_.size(); }
    std::size_t satellite_count() const { return satellite_count_; }
    // Global satellite ids of each cluster, and each satellite's cluster (empty for one cluster).
    const std::vector<std::vector<std::int32_t>>& cluster_nodes() const { return cluster_nodes_; }
    std::span<const std::int32_t> cluster_of() const { return cluster_of_; }
    std::size_t cluster_of_satellite(std::size_t i) const { return cluster_of_.empty() ? 0 : static_cast<std::size_t>(cluster_of_[i]); }
    const std::vector<std::vector<std::int32_t>>& gateway_nodes() const { return gateway_nodes_; }
    // Initial LVLH states, each in its own cluster's frame.
    const std::vector<physics::RelativeState>& initial_lvlh() const { return initial_lvlh_; }

    // Every cluster at time_s; `combined` holds every satellite: ECI states, and LVLH states in
    // cluster 0's chief frame (distances between clusters hold there).
    void advance_to(double time_s, physics::FormationSnapshot& combined);
    // Each cluster's own snapshot at the last advance_to (its own chief's LVLH frame).
    const physics::FormationSnapshot& cluster_snapshot(std::size_t c) const;
    physics::FormationPropagator& propagator(std::size_t c) { return propagators_[c]; }
    const physics::FormationPropagator& propagator(std::size_t c) const { return propagators_[c]; }

    // The topology at the last advance_to: every cluster's links and the gateway links; the events
    // of this step appended. Needs with_links.
    links::Topology update_topology(double time_s, std::vector<links::LinkEvent>& events);
    const AggregationSample& aggregation() const { return aggregation_; }
    bool constellation() const { return propagators_.size() > 1; }

private:
    std::vector<physics::FormationPropagator> propagators_;
    std::vector<physics::FormationSnapshot> snapshots_;     // per cluster (constellations only)
    const physics::FormationSnapshot* single_ = nullptr;    // one cluster: the caller's snapshot
    std::vector<links::TopologyBuilder> builders_;
    std::optional<links::AggregationBuilder> aggregation_builder_;
    std::vector<std::vector<std::int32_t>> cluster_nodes_, gateway_nodes_;
    std::vector<std::int32_t> cluster_of_;
    std::vector<physics::RelativeState> initial_lvlh_;
    std::vector<Eigen::Vector3d> positions_, eci_positions_;
    std::size_t satellite_count_ = 0;
    AggregationSample aggregation_;
    std::vector<std::pair<std::int32_t, std::int32_t>> gateway_pairs_up_;  // sorted, at the last update
};

}  // namespace skyfabric::simulation
