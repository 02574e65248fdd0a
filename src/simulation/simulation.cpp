#include "simulation/simulation.hpp"

#include <skyfabric/links/topology_policy.hpp>
#include <skyfabric/physics/neighbours.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>

namespace skyfabric::simulation {

std::vector<double> sample_times(double duration_s, double output_step_s) {
    std::vector<double> times;
    const auto whole_steps = static_cast<std::size_t>(std::floor(duration_s / output_step_s + 1e-9));
    times.reserve(whole_steps + 2);
    for (std::size_t k = 0; k <= whole_steps; ++k) times.push_back(static_cast<double>(k) * output_step_s);
    if (duration_s - times.back() > 1e-9 * std::max(1.0, duration_s)) times.push_back(duration_s);
    return times;
}

namespace {

void derive_metrics(const scenario::Scenario& sc, const physics::FormationSnapshot& snap, Sample& s) {
    const std::size_t n = snap.satellites_lvlh.size();
    std::vector<Eigen::Vector3d> positions(n);
    s.envelope_m[0] = s.envelope_m[1] = s.envelope_m[2] = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        positions[i] = snap.satellites_lvlh[i].position_m;
        for (int a = 0; a < 3; ++a) s.envelope_m[a] = std::max(s.envelope_m[a], std::abs(positions[i][a]));
    }
    const int k = std::min<int>(sc.metrics.neighbour_count, static_cast<int>(n) - 1);
    s.nearest_neighbour_m.assign(n, std::numeric_limits<double>::quiet_NaN());
    s.reference_neighbours_m.clear();
    s.min_separation_m = std::numeric_limits<double>::quiet_NaN();
    if (k < 1) return;
    const auto nn = physics::k_nearest_neighbours(positions, k);
    s.min_separation_m = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n; ++i) {
        const double d = nn.distance_m[i * static_cast<std::size_t>(k)];
        s.nearest_neighbour_m[i] = d;
        if (d < s.min_separation_m) {
            s.min_separation_m = d;
            const auto j = nn.index[i * static_cast<std::size_t>(k)];
            s.min_separation_pair[0] = static_cast<std::int32_t>(std::min<std::size_t>(i, static_cast<std::size_t>(j)));
            s.min_separation_pair[1] = static_cast<std::int32_t>(std::max<std::size_t>(i, static_cast<std::size_t>(j)));
        }
    }
    const auto ref = static_cast<std::size_t>(sc.metrics.reference_satellite);
    s.reference_neighbours_m.assign(nn.distance_m.begin() + static_cast<std::ptrdiff_t>(ref * k),
                                    nn.distance_m.begin() + static_cast<std::ptrdiff_t>((ref + 1) * k));
}

}  // namespace

RunSummary run(const scenario::Scenario& sc, std::vector<Recorder*> recorders, const std::atomic<bool>* stop) {
    const auto wall_start = std::chrono::steady_clock::now();
    const auto times = sample_times(sc.duration_s, sc.output_step_s);
    const auto chief = scenario::initial_chief_state(sc);

    RunSetup setup;
    setup.scenario = &sc;
    setup.initial_lvlh = scenario::initial_formation(sc);
    setup.satellite_count = setup.initial_lvlh.size();
    setup.sample_count = times.size();

    physics::FormationPropagator propagator(chief, setup.initial_lvlh, scenario::propagation_settings(sc));
    std::optional<physics::FormationPropagator> truth;
    if (sc.dynamics.compare_to_nonlinear) {
        auto settings = scenario::propagation_settings(sc);
        settings.model = physics::RelativeMotionModel::nonlinear;
        settings.station_keeping.enabled = false;
        truth.emplace(chief, setup.initial_lvlh, settings);
    }

    std::optional<links::TopologyBuilder> topology_builder;
    if (sc.links.enabled) topology_builder.emplace(sc.links.topology);
    links::Topology topology;
    std::vector<links::LinkEvent> link_events;
    std::vector<Eigen::Vector3d> positions_lvlh(setup.satellite_count);
    double capacity_sum_bps = 0.0, bisection_sum_bps = 0.0, degree_sum = 0.0;
    std::size_t capacity_samples = 0;

    for (auto* r : recorders) r->begin(setup);

    RunSummary summary;
    summary.nearest_neighbour_min_m = summary.reference_neighbours_min_m = summary.min_separation_m =
        std::numeric_limits<double>::infinity();
    summary.nearest_neighbour_max_m = summary.reference_neighbours_max_m = 0.0;
    if (topology_builder) {
        summary.link_capacity_min_bps = summary.bisection_capacity_min_bps = std::numeric_limits<double>::infinity();
    }

    physics::FormationSnapshot snapshot, truth_snapshot;
    Sample sample;
    try {
        for (std::size_t k = 0; k < times.size(); ++k) {
            if (stop && stop->load()) {
                summary.stop_reason = "interrupted at t = " + std::to_string(times[k]) + " s";
                break;
            }
            propagator.advance_to(times[k], snapshot);
            sample.index = k;
            sample.snapshot = &snapshot;
            derive_metrics(sc, snapshot, sample);
            sample.model_error_m.clear();
            if (truth) {
                truth->advance_to(times[k], truth_snapshot);
                sample.model_error_m.resize(snapshot.satellites_eci.size());
                for (std::size_t i = 0; i < snapshot.satellites_eci.size(); ++i) {
                    sample.model_error_m[i] =
                        (snapshot.satellites_eci[i].position_m - truth_snapshot.satellites_eci[i].position_m).norm();
                    summary.model_error_max_m = std::max(summary.model_error_max_m, sample.model_error_m[i]);
                }
            }
            for (double d : sample.nearest_neighbour_m) {
                summary.nearest_neighbour_min_m = std::min(summary.nearest_neighbour_min_m, d);
                summary.nearest_neighbour_max_m = std::max(summary.nearest_neighbour_max_m, d);
            }
            for (double d : sample.reference_neighbours_m) {
                summary.reference_neighbours_min_m = std::min(summary.reference_neighbours_min_m, d);
                summary.reference_neighbours_max_m = std::max(summary.reference_neighbours_max_m, d);
            }
            if (sample.min_separation_m < summary.min_separation_m) {
                summary.min_separation_m = sample.min_separation_m;
                summary.min_separation_time_s = times[k];
                summary.min_separation_pair[0] = sample.min_separation_pair[0];
                summary.min_separation_pair[1] = sample.min_separation_pair[1];
            }
            if (sample.min_separation_m < sc.metrics.min_separation_alarm_m) ++summary.separation_alarms;
            for (int a = 0; a < 3; ++a) summary.envelope_max_m[a] = std::max(summary.envelope_max_m[a], sample.envelope_m[a]);

            sample.delta_v_m_s = propagator.station_keeping_delta_v_m_s();
            if (topology_builder) {
                // Distances are frame-invariant, so LVLH positions serve the link budget.
                for (std::size_t i = 0; i < positions_lvlh.size(); ++i) positions_lvlh[i] = snapshot.satellites_lvlh[i].position_m;
                link_events.clear();
                topology = topology_builder->update(times[k], positions_lvlh, link_events);
                sample.topology = &topology;
                sample.link_events = link_events;
                sample.link_metrics = links::summarize(topology, positions_lvlh);
                const auto& m = sample.link_metrics;
                if (m.link_count > 0) {
                    summary.link_capacity_min_bps = std::min(summary.link_capacity_min_bps, m.capacity_min_bps);
                    summary.link_capacity_max_bps = std::max(summary.link_capacity_max_bps, m.capacity_max_bps);
                    capacity_sum_bps += m.capacity_mean_bps * m.link_count;
                    capacity_samples += static_cast<std::size_t>(m.link_count);
                }
                summary.bisection_capacity_min_bps = std::min(summary.bisection_capacity_min_bps, m.bisection_capacity_bps);
                bisection_sum_bps += m.bisection_capacity_bps;
                degree_sum += m.links_per_satellite_mean;
                summary.links_per_satellite_max = std::max(summary.links_per_satellite_max, m.links_per_satellite_max);
                summary.components_max = std::max(summary.components_max, m.components);
                summary.link_events += link_events.size();
            }
            for (auto* r : recorders) r->record(sample);
            summary.samples_written = k + 1;
            summary.simulated_s = times[k];
        }
        summary.complete = summary.samples_written == times.size();
    } catch (const physics::PropagationError& e) {
        summary.stop_reason = std::string("numerical failure: ") + e.what();
    }
    if (topology_builder && summary.samples_written > 0) {
        const double samples = static_cast<double>(summary.samples_written);
        summary.link_capacity_mean_bps = capacity_samples ? capacity_sum_bps / static_cast<double>(capacity_samples) : 0.0;
        summary.bisection_capacity_mean_bps = bisection_sum_bps / samples;
        summary.links_per_satellite_mean = degree_sum / samples;
        if (!std::isfinite(summary.link_capacity_min_bps)) summary.link_capacity_min_bps = 0.0;
    }
    const auto dv = propagator.station_keeping_delta_v_m_s();
    summary.station_keeping_delta_v_m_s.assign(dv.begin(), dv.end());
    summary.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    for (auto* r : recorders) r->end(summary);
    return summary;
}

}  // namespace skyfabric::simulation
