#include "simulation/cluster_set.hpp"

#include "scenario/yaml_reader.hpp"
#include "simulation/simulation.hpp"

#include <skyfabric/links/metrics.hpp>
#include <skyfabric/physics/frames.hpp>

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace skyfabric::simulation {

ClusterSet::ClusterSet(const scenario::Scenario& sc, bool with_links, bool links_acquired) {
    const std::size_t clusters = scenario::cluster_count(sc);
    auto parameters = sc.links.topology;
    if (links_acquired) parameters.initial_links_acquired = true;
    for (std::size_t c = 0; c < clusters; ++c) {
        const scenario::Scenario cluster = scenario::cluster_scenario(sc, c);
        const auto states = scenario::initial_formation(cluster);
        propagators_.emplace_back(scenario::initial_chief_state(cluster), states, scenario::propagation_settings(cluster));
        std::vector<std::int32_t> nodes(states.size());
        for (std::size_t i = 0; i < states.size(); ++i) {
            nodes[i] = static_cast<std::int32_t>(satellite_count_ + i);
            cluster_of_.push_back(static_cast<std::int32_t>(c));
        }
        if (clusters > 1) {
            std::vector<Eigen::Vector3d> positions;
            for (const auto& s : states) positions.push_back(s.position_m);
            auto local = links::choose_gateways(positions, sc.constellation.gateways.gateways_per_cluster);
            for (auto& g : local) g = nodes[static_cast<std::size_t>(g)];
            gateway_nodes_.push_back(std::move(local));
        }
        cluster_nodes_.push_back(std::move(nodes));
        initial_lvlh_.insert(initial_lvlh_.end(), states.begin(), states.end());
        satellite_count_ += states.size();
        if (with_links) builders_.emplace_back(parameters);
    }
    if (clusters > 1) {
        snapshots_.resize(clusters);
        if (with_links) aggregation_builder_.emplace(sc.constellation.gateways);
    } else {
        cluster_of_.clear();  // one cluster: every satellite in it, nothing to tell apart
    }
}

void ClusterSet::advance_to(double time_s, physics::FormationSnapshot& combined) {
    if (!constellation()) {
        propagators_[0].advance_to(time_s, combined);
        single_ = &combined;
        return;
    }
    for (std::size_t c = 0; c < propagators_.size(); ++c) propagators_[c].advance_to(time_s, snapshots_[c]);
    combined.time_s = time_s;
    combined.chief_eci = snapshots_[0].chief_eci;
    combined.satellites_eci.clear();
    combined.satellites_lvlh.clear();
    for (std::size_t c = 0; c < snapshots_.size(); ++c) {
        const auto& s = snapshots_[c];
        combined.satellites_eci.insert(combined.satellites_eci.end(), s.satellites_eci.begin(), s.satellites_eci.end());
        if (c == 0) {
            combined.satellites_lvlh.insert(combined.satellites_lvlh.end(), s.satellites_lvlh.begin(), s.satellites_lvlh.end());
            continue;
        }
        for (const auto& x : s.satellites_eci) combined.satellites_lvlh.push_back(physics::eci_to_lvlh(combined.chief_eci, x));
    }
}

const physics::FormationSnapshot& ClusterSet::cluster_snapshot(std::size_t c) const {
    if (!constellation()) {
        if (!single_) throw std::logic_error("ClusterSet: no snapshot before advance_to");
        return *single_;
    }
    return snapshots_.at(c);
}

links::Topology ClusterSet::update_topology(double time_s, std::vector<links::LinkEvent>& events) {
    if (builders_.empty()) throw std::logic_error("ClusterSet: built without links");
    auto positions_of = [this](const physics::FormationSnapshot& s) {
        positions_.resize(s.satellites_lvlh.size());
        // Distances are frame-invariant, so each cluster's own LVLH positions serve its link budget.
        for (std::size_t i = 0; i < positions_.size(); ++i) positions_[i] = s.satellites_lvlh[i].position_m;
    };
    if (!constellation()) {
        positions_of(cluster_snapshot(0));
        return builders_[0].update(time_s, positions_, events);
    }
    links::Topology all;
    all.time_s = time_s;
    all.node_count = static_cast<std::int32_t>(satellite_count_);
    const std::size_t clusters = propagators_.size();
    aggregation_ = AggregationSample{};
    aggregation_.oversubscription.assign(clusters, 0.0);
    std::vector<double> bisection(clusters, 0.0), gateway_capacity(clusters, 0.0);
    std::vector<links::LinkEvent> local_events;
    for (std::size_t c = 0; c < clusters; ++c) {
        positions_of(snapshots_[c]);
        local_events.clear();
        const links::Topology t = builders_[c].update(time_s, positions_, local_events);
        bisection[c] = links::bisection_capacity_bps(t, positions_);
        const std::int32_t offset = cluster_nodes_[c].front();
        for (links::Link l : t.links) {
            l.source += offset;
            l.target += offset;
            all.links.push_back(l);
        }
        for (links::LinkEvent e : local_events) {
            e.source += offset;
            e.target += offset;
            events.push_back(e);
        }
        aggregation_.chief_eci_m.push_back(snapshots_[c].chief_eci.position_m);
        aggregation_.chief_velocity_eci_m_s.push_back(snapshots_[c].chief_eci.velocity_m_s);
    }
    eci_positions_.resize(satellite_count_);
    std::size_t i = 0;
    for (const auto& s : snapshots_)
        for (const auto& x : s.satellites_eci) eci_positions_[i++] = x.position_m;
    const links::AggregationLayer layer = aggregation_builder_->build(gateway_nodes_, eci_positions_);
    aggregation_.gateway_links = static_cast<std::int32_t>(layer.links.size());
    aggregation_.blocked = layer.blocked;
    aggregation_.out_of_budget = layer.out_of_budget;
    // Gateway links that came or went since the last sample (range: blocked or out of budget).
    std::vector<std::pair<std::int32_t, std::int32_t>> now;
    for (const auto& l : layer.links) {
        now.emplace_back(l.source, l.target);
        aggregation_.gateway_capacity_bps += l.capacity_bps;
        gateway_capacity[static_cast<std::size_t>(cluster_of_[static_cast<std::size_t>(l.source)])] += l.capacity_bps;
        gateway_capacity[static_cast<std::size_t>(cluster_of_[static_cast<std::size_t>(l.target)])] += l.capacity_bps;
        all.links.push_back(l);
    }
    for (const auto& p : now)
        if (!std::binary_search(gateway_pairs_up_.begin(), gateway_pairs_up_.end(), p))
            events.push_back(links::LinkEvent{time_s, p.first, p.second, links::LinkEventKind::up});
    for (const auto& p : gateway_pairs_up_)
        if (!std::binary_search(now.begin(), now.end(), p))
            events.push_back(links::LinkEvent{time_s, p.first, p.second, links::LinkEventKind::down_range});
    gateway_pairs_up_ = std::move(now);
    for (std::size_t c = 0; c < clusters; ++c) {
        aggregation_.oversubscription[c] = gateway_capacity[c] > 0.0 ? bisection[c] / gateway_capacity[c]
                                                                     : std::numeric_limits<double>::infinity();
        aggregation_.oversubscription_max = std::max(aggregation_.oversubscription_max, aggregation_.oversubscription[c]);
    }
    std::sort(all.links.begin(), all.links.end(), [](const links::Link& a, const links::Link& b) {
        return a.source != b.source ? a.source < b.source : a.target < b.target;
    });
    return all;
}

// The `collective` command's fabric: the scenario's clusters and links at one instant.
links::Topology topology_at(const scenario::Scenario& sc, double time_s) {
    if (!sc.links.enabled) throw scenario::ScenarioError(sc.source_file + ": the scenario has no links section, so no topology");
    ClusterSet clusters(sc, /*with_links=*/true, /*links_acquired=*/true);
    physics::FormationSnapshot snapshot;
    clusters.advance_to(time_s, snapshot);
    std::vector<links::LinkEvent> events;
    return clusters.update_topology(time_s, events);
}

}  // namespace skyfabric::simulation
