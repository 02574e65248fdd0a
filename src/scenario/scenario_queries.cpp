// What a loaded scenario implies: its estimates, initial states, clusters and derived settings.
#include "scenario/scenario.hpp"

#include "scenario/section_readers.hpp"
#include "scenario/yaml_reader.hpp"

#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/frames.hpp>
#include <skyfabric/physics/orbit.hpp>
#include <skyfabric/physics/random.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <regex>
#include <sstream>

namespace skyfabric::scenario {

using namespace detail;

std::vector<std::int32_t> inference_nodes(const Scenario& sc) {
    const auto& v = sc.inference.serving;
    const auto& e = v.engines;
    const auto& placement = sc.ground.placement;
    const bool prefill_ground = placement.prefill_datacentre >= 0, decode_ground = placement.decode_datacentre >= 0;
    const std::int64_t prefill = static_cast<std::int64_t>(e.prefill.instances) * e.prefill.satellites_per_instance;
    const std::int64_t decode = static_cast<std::int64_t>(e.decode.instances) * e.decode.satellites_per_instance;
    // The roles in orbit are packed as below; a role on a ground data centre stands on its node (after the satellites).
    const std::int64_t dedicated =
        prefill_ground ? 0 : static_cast<std::int64_t>(v.dedicated_prefill_instances) * e.prefill.satellites_per_instance;
    const std::int64_t all = (prefill_ground ? 0 : prefill) + (decode_ground ? 0 : decode);
    const auto sizes = cluster_sizes(sc);
    std::vector<std::int32_t> orbit;
    if (!sc.constellation.enabled || dedicated == 0) {
        if (all > static_cast<std::int64_t>(node_count(sc))) return {};
        for (std::int32_t i = 0; i < all; ++i) orbit.push_back(i);
    } else {
        // Dedicated prefill instances from cluster 0's first satellite, every other instance from the last cluster's.
        const auto last_first = static_cast<std::int32_t>(std::accumulate(sizes.begin(), sizes.end() - 1, std::size_t{0}));
        if (dedicated > static_cast<std::int64_t>(sizes.front()) || all - dedicated > static_cast<std::int64_t>(sizes.back())) return {};
        for (std::int32_t i = 0; i < dedicated; ++i) orbit.push_back(i);
        for (std::int32_t i = 0; i < all - dedicated; ++i) orbit.push_back(last_first + i);
    }
    if (!prefill_ground && !decode_ground) return orbit;
    const auto satellites = static_cast<std::int32_t>(node_count(sc));
    std::vector<std::int32_t> nodes;
    auto next = orbit.begin();
    const auto place = [&](bool ground, std::int32_t datacentre, std::int64_t count) {
        for (std::int64_t i = 0; i < count; ++i) nodes.push_back(ground ? workloads::ground_datacentre_node(satellites, static_cast<std::size_t>(datacentre)) : *next++);
    };
    place(prefill_ground, placement.prefill_datacentre, prefill);
    place(decode_ground, placement.decode_datacentre, decode);
    return nodes;
}

std::vector<std::int32_t> cluster_ground_terminals(const Scenario& sc) {
    // Each cluster's ground terminal: its satellite nearest its chief (where the stations' view is computed).
    std::vector<std::int32_t> terminals;
    std::int32_t first = 0;
    for (std::size_t c = 0; c < cluster_count(sc); ++c) {
        const auto states = c == 0 ? initial_formation(sc) : initial_formation(cluster_scenario(sc, c));
        std::size_t best = 0;
        for (std::size_t k = 1; k < states.size(); ++k)
            if (states[k].position_m.norm() < states[best].position_m.norm()) best = k;
        terminals.push_back(first + static_cast<std::int32_t>(best));
        first += static_cast<std::int32_t>(states.size());
    }
    return terminals;
}

std::vector<std::vector<std::int32_t>> cluster_satellites(const Scenario& sc) {
    std::vector<std::vector<std::int32_t>> out;
    std::int32_t first = 0;
    for (const std::size_t n : cluster_sizes(sc)) {
        auto& nodes = out.emplace_back(n);
        std::iota(nodes.begin(), nodes.end(), first);
        first += static_cast<std::int32_t>(n);
    }
    return out;
}

std::vector<std::vector<std::int32_t>> cluster_ranks(const Scenario& sc) {
    auto out = cluster_satellites(sc);
    const std::int32_t spares = sc.radiation.enabled ? sc.radiation.recovery.spare_satellites : 0;
    for (auto& nodes : out) nodes.resize(nodes.size() - std::min(nodes.size(), static_cast<std::size_t>(std::max(0, spares))));
    return out;
}

std::vector<std::int32_t> shared_training_nodes(const Scenario& sc) {
    if (!workloads_share_fabric(sc) || !sc.constellation.enabled) return {};
    const auto sizes = cluster_sizes(sc);
    const auto serving = inference_nodes(sc);
    std::vector<std::int32_t> nodes;
    std::int32_t first = 0;
    for (std::size_t c = 0; c < sizes.size(); ++c) {
        const bool listed = std::find(sc.workload.clusters.begin(), sc.workload.clusters.end(), static_cast<std::int32_t>(c)) !=
                            sc.workload.clusters.end();
        for (std::int32_t i = first; listed && i < first + static_cast<std::int32_t>(sizes[c]); ++i)
            if (std::find(serving.begin(), serving.end(), i) == serving.end()) nodes.push_back(i);
        first += static_cast<std::int32_t>(sizes[c]);
    }
    return nodes;
}

std::string describe(const RunEstimate& e) {
    const auto bytes = [](double b) { return b >= 1e9 ? format_count(b / 1e9) + " GB" : format_count(b / 1e6) + " MB"; };
    const std::string cpu = e.cpu_s >= 3600.0 ? format_count(e.cpu_s / 3600.0) + " CPU-hours"
                          : e.cpu_s >= 60.0   ? format_count(e.cpu_s / 60.0) + " CPU-minutes"
                                              : format_count(e.cpu_s) + " CPU-seconds";
    return "about " + bytes(e.memory_bytes) + " of memory, " + cpu + " and " + bytes(e.output_bytes) +
           " of output before compression";
}

RunEstimate estimate_run(const Scenario& sc, std::size_t satellites) {
    RunEstimate e;
    e.satellites = satellites;
    e.samples = std::floor(sc.duration_s / sc.output_step_s) + 1.0;
    const double n = static_cast<double>(satellites);
    const double satellite_samples = n * e.samples;
    const bool orbital = !sc.fabric;
    // Measured with /usr/bin/time on suncatcher-81 at 973 and 3,853 satellites over one to three
    // orbits, parts switched off one at a time (2-core VM): 40 MB for the program, 6 kB per satellite
    // for the propagator and the output buffers, and per satellite-sample what is kept for the run's
    // end (the links' topology timeline, the training's records, the dose-rate history and, with a
    // workload, the fabric timeline the trials replay, which grows with the trials). The outputs stream
    // to disk. CPU per satellite-sample: state, metrics and output; link topology; training; trials.
    double bytes = 0.0, seconds = 0.0;
    if (orbital) seconds += 2.6e-6;
    if (orbital && sc.links.enabled) bytes += 36.0, seconds += 5.4e-6;
    if (sc.workload.enabled) bytes += 22.0, seconds += 7.3e-6;
    if (sc.radiation.enabled) {
        const double doublings = std::log2(static_cast<double>(std::max(1, sc.radiation.trials)));
        bytes += sc.workload.enabled ? 26.0 + 12.0 * doublings : 16.0;
        seconds += (1.2 + 0.6 * doublings) * 1e-6;
    }
    // A synthetic fabric's run (no propagator, no orbital outputs) takes less for the program: 13–17 MB
    // measured (smoke.yaml on ring:p=8 and torus2d:x=32,y=32; serving-two-datacentres), 20 MB counted.
    e.memory_bytes = (orbital ? 40e6 : 20e6) + (orbital ? 6e3 * n : 0.0) + satellite_samples * bytes;
    e.cpu_s = satellite_samples * seconds;
    // A constellation's training beyond its satellites' share: any cluster's link change starts a
    // keyframe of the merged fabric, and the algorithms route and re-solve their collectives across
    // the clusters at each, mostly DiLoCo's and NoLoCo's outer syncs; counted as clusters^2.5 ×
    // duration. Measured with /usr/bin/time (2-core VM; constellation-4x81 100 km apart, the four
    // algorithms, 600 s, no radiation or output files): 0.29, 1.03, 1.71, 8.05 and 48.7 CPU-s at 4,
    // 16, 32, 64 and 128 clusters; one orbit at 64 clusters with 20 trials, see
    // ConstellationScenario.RunEstimateGrowsWithTheClustersAsMeasuredAndRefusesTheLargest.
    if (sc.constellation.enabled && sc.workload.enabled && !sc.inference.enabled) {
        const double growth = std::pow(static_cast<double>(sc.constellation.clusters.size()), 2.5) * sc.duration_s;
        double per_growth_s = 0.0;
        for (const auto algorithm : sc.constellation.algorithms)
            per_growth_s += algorithm == workloads::ClusterAlgorithm::diloco || algorithm == workloads::ClusterAlgorithm::noloco ? 1.6e-7 : 7e-9;
        e.cpu_s += per_growth_s * growth;
        e.memory_bytes += 12.0 * growth;
    }
    // A synthetic fabric's links, which a fully connected one has by the million: measured with
    // /usr/bin/time on fully_connected p = 1,000–4,472 (0.5–10 M links), 100 s, 2-core VM. Built
    // and kept, ~52 B and 0.2 µs per link; a workload's network and routes over them, ~230 B and
    // 1.0 µs more.
    if (sc.fabric) {
        const double links = static_cast<double>(workloads::fabric_link_count(*sc.fabric));
        e.memory_bytes += links * (52.0 + (sc.workload.enabled ? 230.0 : 0.0));
        e.cpu_s += links * (0.2e-6 + (sc.workload.enabled ? 1.0e-6 : 0.0));
    }
    // Operational faults on a fabric: every trial plays every step (steps counted at their compute
    // alone: an upper bound), and trial 0's timeline keeps 24 B a step. Measured with /usr/bin/time on
    // llama3-16k-ground, with and without its faults (200 trials of 647,000 steps): +1.3 CPU-s and
    // +5 MB (2-core VM); 2e-8 s and 32 B a step keep the estimate above that.
    if (sc.fabric && sc.faults.enabled && sc.workload.enabled) {
        const double compute_s = workloads::compute_time_per_step_s(sc.workload.job, sc.workload.accelerator);
        const double steps = compute_s > 0.0 ? sc.duration_s / compute_s : 0.0;
        e.cpu_s += (sc.faults.trials + 1.0) * steps * 2e-8;
        e.memory_bytes += steps * 32.0;
    }
    // Serving, per request and routing (a day of serving-4x81: ~15 CPU-seconds for 2 × 863,868); a
    // training job beside it, per transfer of its collective's phases, in its run alone and beside each
    // routing (serving-beside-training-4x81: 3 × 363 steps × 66 phases × 304 transfers in ~28 s). Its
    // steps are counted at their compute alone: an upper bound.
    if (sc.inference.enabled) {
        const auto& v = sc.inference.serving;
        const double requests = v.trace.empty() ? v.requests.rate_per_s * sc.duration_s : static_cast<double>(v.trace.size());
        const double routings = sc.inference.compare_routing ? 2.0 : 1.0;
        // When arrivals outpace what the engines can serve (workloads::sustainable_request_rate_per_s), a
        // backlog piles up, held up to max_queued_requests; the arrivals beyond it are dropped (counted, not
        // held). Served: what the engines finish; held: the backlog, bounded; admitted: both, the rows written.
        const double arrival_rate = v.trace.empty() ? v.requests.rate_per_s : requests / std::max(sc.duration_s, 1e-9);
        const double served_rate = workloads::sustainable_request_rate_per_s(v, sc.inference.accelerator);
        const double served = std::min(requests, served_rate * sc.duration_s);
        const double held = std::min({requests - served, std::max(0.0, arrival_rate - served_rate) * sc.duration_s,
                                      static_cast<double>(v.max_queued_requests)});
        const double admitted = served + held;
        const double dropped = std::max(0.0, requests - admitted);
        // CPU: each request served ~8.5 µs (a day of serving-4x81: ~15 CPU-seconds for 2 × 863,868), each held
        // ~1 µs (queued, never served), each dropped ~0.13 µs (its draw and count: 1e5 and 1e6 requests/s for
        // 60 s on serving-two-datacentres, both routings, 1.9 and 15.4 s measured with /usr/bin/time).
        e.cpu_s += (8.5e-6 * served + 1e-6 * held + 0.13e-6 * dropped) * routings;
        // result.h5's request table, one row per admitted request and routing (src/output/request_table.cpp):
        // 10 float64 and 8 int32 columns, 112 B before compression (a day of serving-4x81, 2 × 863,868
        // requests, stored 136 MB of them: 79 B a row once the int32 columns deflate). Dropped: no row.
        if (sc.output.hdf5) e.output_bytes += 112.0 * admitted * routings;
        // Memory that grows with the input (the routings run one after another, so one of them):
        // each trace row as text while it is read and as a request kept for every routing, ~120 B
        // (a 10^7-row trace took 1 GB to validate); each admitted request's TTFT and TPOT kept for the exact
        // percentiles, 24 B with the vectors' growth; and each request held, its record, queue entry,
        // event and state, ~350 B (1e5 requests/s for 60 s on serving-two-datacentres, which serves 25/s:
        // unbounded, 2.38 GB measured for 2.3 GB estimated; at the default 10,000 held, 23 MB measured
        // for 24 MB estimated, and 21 MB at 1e6/s).
        e.memory_bytes += 120.0 * static_cast<double>(v.trace.size()) + 24.0 * admitted + 350.0 * held;
        // Users on the ground: every ground arrival is drawn up front, uplinked into the run's trace and kept
        // with its journey for result.h5, per routing: ~215 B each (serving-from-orbit for a day at 1 and 10
        // requests/s: 82 and 248 MB peak measured with /usr/bin/time, one routing).
        if (sc.ground.enabled) e.memory_bytes += 215.0 * requests * routings;
        const double compute_s = workloads::compute_time_per_step_s(sc.workload.job, sc.workload.accelerator);
        if (workloads_share_fabric(sc) && compute_s > 0.0 && sc.workload.job.data_parallel > 1) {
            const auto& w = sc.workload;
            const auto schedule = workloads::build_schedule(workloads::CollectiveOp::all_reduce, w.options.all_reduce,
                                                            w.job.data_parallel, workloads::gradient_bytes(w.job), w.options.schedule);
            const double transfers_per_step = static_cast<double>(schedule.transfer_count());
            e.cpu_s += 1.3e-6 * (routings + 1.0) * (sc.duration_s / compute_s) * transfers_per_step;
        }
    }
    // Outputs per satellite-sample: the HDF5 series (LVLH state, nearest neighbour, ECI state, model
    // error, radiation, links) and the VTK frames (ASCII/XML points, velocities and link lines).
    double per_satellite = 0.0;
    if (sc.output.hdf5 && orbital) {
        per_satellite += 48.0 + 8.0;
        if (sc.output.eci) per_satellite += 48.0;
        if (sc.dynamics.compare_to_nonlinear) per_satellite += 8.0;
        if (sc.radiation.enabled) per_satellite += 16.0;
        if (sc.links.enabled) per_satellite += 0.5 * sc.links.topology.terminals.terminals_per_satellite * 40.0;
    }
    const double vtk_frames = sc.output.vtk && orbital ? std::floor(e.samples / sc.output.vtk_every + 1.0) : 0.0;
    e.output_bytes += satellite_samples * per_satellite + vtk_frames * n * 200.0;
    return e;
}

physics::KeplerianElements chief_mean_elements(const Scenario& sc) {
    physics::KeplerianElements e;
    e.semi_major_axis_m = sc.orbit.semi_major_axis_m;
    e.eccentricity = sc.orbit.eccentricity;
    e.inclination_rad = sc.orbit.inclination_rad;
    e.raan_rad = sc.orbit.ltan_h ? physics::raan_for_ltan_rad(*sc.orbit.ltan_h, physics::julian_date(sc.orbit.epoch))
                                 : sc.orbit.raan_rad;
    e.arg_perigee_rad = sc.orbit.arg_perigee_rad;
    e.true_anomaly_rad = sc.orbit.arg_latitude_rad - sc.orbit.arg_perigee_rad;
    return e;
}

double dynamics_j2(const Scenario& sc) {
    return sc.dynamics.model == physics::RelativeMotionModel::nonlinear && sc.dynamics.j2 ? physics::earth_j2 : 0.0;
}

double orbit_period_s(const Scenario& sc) {
    return physics::nodal_period_s(sc.orbit.semi_major_axis_m, sc.orbit.eccentricity, sc.orbit.inclination_rad, dynamics_j2(sc));
}

RelativeOrbits resolved_relative_orbits(const Scenario& sc) {
    if (sc.formation.relative_orbits != RelativeOrbits::automatic) return sc.formation.relative_orbits;
    switch (sc.dynamics.model) {
        case physics::RelativeMotionModel::nonlinear: return RelativeOrbits::j2_mean_elements;
        case physics::RelativeMotionModel::schweighart_sedwick: return RelativeOrbits::schweighart_sedwick;
        case physics::RelativeMotionModel::hcw:
        case physics::RelativeMotionModel::hcw_ode: return RelativeOrbits::hcw;
    }
    return RelativeOrbits::hcw;
}

const char* to_string(RelativeOrbits relative_orbits) { return relative_orbits_names.name(relative_orbits); }

const char* to_string(physics::PowerPolicy policy) { return physics::power_policy_names.name(policy); }

physics::CartesianState initial_chief_state(const Scenario& sc) {
    return physics::keplerian_to_cartesian(physics::mean_to_osculating(chief_mean_elements(sc), dynamics_j2(sc)),
                                           physics::earth_mu_m3_s2);
}

std::vector<physics::RelativeState> initial_formation(const Scenario& sc) {
    const double n = physics::mean_motion_rad_s(sc.orbit.semi_major_axis_m, physics::earth_mu_m3_s2);
    const RelativeOrbits design = resolved_relative_orbits(sc);
    physics::BoundedOrbitOptions options;
    options.out_of_plane_amplitude_m = sc.formation.out_of_plane_amplitude_m;
    options.j2_trim = design == RelativeOrbits::schweighart_sedwick;
    options.chief_semi_major_axis_m = sc.orbit.semi_major_axis_m;
    options.chief_inclination_rad = sc.orbit.inclination_rad;
    std::vector<physics::RelativeState> states;
    std::vector<bool> given;  // explicit states with a velocity are taken as they are
    switch (sc.formation.layout) {
        case FormationLayout::suncatcher_lattice:
            states = physics::suncatcher_lattice(sc.formation.radius_m, sc.formation.radial_pitch_m,
                                                 sc.formation.along_track_pitch_m, n, options);
            break;
        case FormationLayout::hexagonal:
            states = physics::hexagonal_lattice(sc.formation.radius_m, sc.formation.pitch_m, n, options);
            break;
        case FormationLayout::explicit_states:
            states = sc.formation.explicit_states;
            for (auto& s : states) {
                given.push_back(!s.velocity_m_s.hasNaN());
                if (!given.back()) s.velocity_m_s = physics::bounded_relative_velocity(s.position_m, n, options);
            }
            break;
    }
    if (design != RelativeOrbits::j2_mean_elements) return states;
    auto bounded = physics::j2_mean_element_formation(chief_mean_elements(sc), states, dynamics_j2(sc)).satellites_lvlh;
    for (std::size_t i = 0; i < given.size(); ++i) {
        if (given[i]) bounded[i] = states[i];
    }
    return bounded;
}

namespace {

// initial_formation(...).size() for formation f at radius_m, without building the states.
std::size_t formation_size(const FormationConfig& f, double radius_m) {
    switch (f.layout) {
        case FormationLayout::suncatcher_lattice:
            return physics::suncatcher_lattice_size(radius_m, f.radial_pitch_m, f.along_track_pitch_m);
        case FormationLayout::hexagonal: return physics::hexagonal_lattice_size(radius_m, f.pitch_m);
        case FormationLayout::explicit_states: return f.explicit_states.size();
    }
    return 0;
}

}  // namespace

std::size_t cluster_count(const Scenario& sc) {
    return sc.constellation.enabled ? sc.constellation.clusters.size() : 1;
}

Scenario cluster_scenario(const Scenario& sc, std::size_t c) {
    Scenario out = sc;
    out.constellation = {};
    if (!sc.constellation.enabled) return out;
    const ClusterConfig& cluster = sc.constellation.clusters.at(c);
    // Along the orbit by arc length on the mean orbit; the node turned (LTAN with it when given).
    out.orbit.arg_latitude_rad += cluster.along_track_m / sc.orbit.semi_major_axis_m;
    out.orbit.raan_rad += cluster.raan_offset_rad;
    if (out.orbit.ltan_h) *out.orbit.ltan_h += cluster.raan_offset_rad * 12.0 / physics::pi;
    if (cluster.radius_m) out.formation.radius_m = *cluster.radius_m;
    // Each cluster's satellites draw their own drag coefficients.
    if (c > 0) out.dynamics.drag.seed = physics::rng::derive_seed(sc.dynamics.drag.seed, c);
    return out;
}

std::vector<std::size_t> cluster_sizes(const Scenario& sc) {
    std::vector<std::size_t> sizes;
    for (std::size_t c = 0; c < cluster_count(sc); ++c) {
        // A cluster's count depends on its formation alone: the formation's, at its own radius.
        const auto& own_radius = sc.constellation.enabled ? sc.constellation.clusters[c].radius_m : std::optional<double>{};
        sizes.push_back(formation_size(sc.formation, own_radius.value_or(sc.formation.radius_m)));
    }
    return sizes;
}

std::size_t node_count(const Scenario& sc) {
    if (sc.fabric) return static_cast<std::size_t>(workloads::fabric_ranks(*sc.fabric));
    const auto sizes = cluster_sizes(sc);
    return std::accumulate(sizes.begin(), sizes.end(), std::size_t{0});
}

physics::PropagationSettings propagation_settings(const Scenario& sc) {
    physics::PropagationSettings p;
    p.model = sc.dynamics.model;
    p.j2 = sc.dynamics.j2;
    p.drag = sc.dynamics.drag;
    p.station_keeping = sc.station_keeping;
    p.relative_tolerance = sc.dynamics.relative_tolerance;
    p.absolute_tolerance = sc.dynamics.absolute_tolerance;
    p.epoch_julian_date = physics::julian_date(sc.orbit.epoch);
    p.threads = static_cast<unsigned>(sc.threads);
    return p;
}

std::int32_t monte_carlo_threads(const Scenario& sc) {
    // A fabric's operational faults have their own trials (radiation is refused there).
    const std::int32_t asked = sc.radiation.enabled || !sc.faults.enabled ? sc.radiation.threads : sc.faults.threads;
    const std::int32_t cap = sc.threads;
    if (cap == 0) return asked;
    return asked == 0 ? cap : std::min(asked, cap);
}

std::string epoch_iso8601(const Scenario& sc) {
    const auto& e = sc.orbit.epoch;
    char text[48];
    const double whole = std::floor(e.second);
    std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d", e.year, e.month, e.day, e.hour, e.minute,
                  static_cast<int>(whole));
    std::string out = text;
    if (e.second > whole) {
        // Fractional seconds as given (microseconds at most), trailing zeros dropped.
        std::snprintf(text, sizeof text, "%.6f", e.second - whole);
        std::string fraction = text + 1;  // ".xxxxxx"
        while (fraction.back() == '0') fraction.pop_back();
        if (fraction != ".") out += fraction;
    }
    return out + "Z";
}

const char* to_string(physics::RelativeMotionModel model) { return physics::relative_motion_model_names.name(model); }

}  // namespace skyfabric::scenario

