// Constraints between sections, checked once every section has been read and the scenario resolved
// (resolve.cpp): on const scenarios, reporting only (file:line:column, exit 2); nothing here writes.
#include "scenario/scenario.hpp"

#include "scenario/section_readers.hpp"
#include "scenario/yaml_reader.hpp"

#include <skyfabric/links/aggregation.hpp>
#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/frames.hpp>
#include <skyfabric/physics/orbit.hpp>
#include <skyfabric/physics/random.hpp>
#include <skyfabric/workloads/cluster_faults.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <regex>
#include <sstream>

namespace skyfabric::scenario::detail {

void fail_on_problems(Section s, const physics::SettingsProblems& problems, std::span<const FieldKey> keys) {
    if (problems.empty()) return;
    const auto& p = problems.front();
    const auto entry = std::find_if(keys.begin(), keys.end(), [&](const FieldKey& k) { return k.field == p.key; });
    std::string key(entry == keys.end() || entry->key.empty() ? std::string_view(p.key) : entry->key);
    // Into the nested sections that are there; a key absent from the file is named at its parent.
    for (auto dot = key.find('.'); dot != std::string::npos && s.has(key.substr(0, dot)); dot = key.find('.')) {
        s = s.section(key.substr(0, dot));
        key.erase(0, dot + 1);
    }
    s.fail(key, p.message);
}

// The name is the default output folder (out/<name>) and a file name in sweeps: it
// must be one plain path component, so that no name can write outside out/.
void check_name(Section& top, const std::string& name) {
    if (name.size() > 128) top.fail("name", "must be at most 128 characters (it names the output folder out/<name>)");
    for (const char c : name) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '/' || c == '\\' || u < 0x20 || u == 0x7f) {
            top.fail("name", "must not contain '/', '\\' or control characters: it names the output folder out/<name>");
        }
    }
    if (name == "." || name == ".." || name.front() == '.' || name.front() == '-') {
        top.fail("name", "must not start with '.' or '-': it names the output folder out/<name>");
    }
}

namespace {

// Where a satellite's initial state is refused: its explicit entry, else the lattice's radius.
[[noreturn]] void fail_satellite(Section& top, const Scenario& sc, std::size_t i, const std::string& message) {
    Section formation = top.section("formation");
    if (sc.formation.layout == FormationLayout::explicit_states) {
        const auto items = formation.sequence("satellites");
        Section sat = formation.item(items.at(i), formation.path() + ".satellites[" + std::to_string(i) + "]");
        sat.fail(sat.has("velocity_m_s") ? "velocity_m_s" : "position_m", message);
    }
    formation.fail("radius_m", "satellite " + std::to_string(i) + ": " + message);
}

// What a constellation run supports, and what its algorithms need of the clusters (workloads::check
// of the training and of its fault trials, links::check of the gateways).
void check_constellation(Section& top, const Scenario& sc, const std::vector<std::size_t>& sizes) {
    Section c = top.section("constellation");
    const auto& con = sc.constellation;
    if (sc.fabric) c.fail("clusters", "a constellation needs an orbit; a synthetic topology has none");
    if (!sc.links.enabled) c.fail("clusters", "a constellation needs a links section (the clusters' own fabrics)");
    if (sc.radiation.enabled && sc.radiation.recovery.spare_satellites > 0) {
        Section radiation = top.section("radiation");
        const auto spares = static_cast<std::size_t>(sc.radiation.recovery.spare_satellites);
        if (std::adjacent_find(sizes.begin(), sizes.end(), std::not_equal_to<>()) != sizes.end())
            radiation.fail("spare_satellites", "hot spares in a constellation (spare_satellites in each cluster) need clusters "
                                               "of equal size");
        if (spares >= sizes.front())
            radiation.fail("spare_satellites", "is per cluster in a constellation: must leave at least one of each cluster's " +
                                                   std::to_string(sizes.front()) + " satellites training");
    }
    const workloads::ClusterTrainingSetup training = cluster_training(sc);
    // Beside a serving job radiation is refused (check_shared_workloads), and the job's keys are in `workloads`.
    if (sc.radiation.enabled && !workloads_share_fabric(sc)) {
        workloads::ClusterFaultSetup faults;
        faults.recovery = sc.radiation.recovery;
        faults.recovery.on_rank_loss = sc.workload.on_rank_loss.value_or(workloads::RankLossPolicy::wait);
        faults.training = training;
        fail_on_problems(top, workloads::check(faults, con.algorithms), cluster_fault_keys);
    }
    fail_on_problems(c, links::check(con.gateways, sizes), gateway_keys);
    fail_on_problems(top, workloads::check(training, con.algorithms), cluster_training_keys);
}

// A training job beside a serving one (docs/inference.md "Serving beside training"): data-parallel over
// its clusters' satellites that serve nothing, one all-reduce after each step's compute.
void check_shared_workloads(Section& top, const Scenario& read, const Scenario& sc) {
    Section training = workload_section(top, false);
    const auto nodes = shared_training_nodes(sc);
    if (nodes.size() < 2)
        training.fail("clusters", "leave the training job " + std::to_string(nodes.size()) +
                                      " satellites beside the serving instances; it needs at least 2");
    const auto given = read.workload.job.data_parallel;
    if (given != 0 && static_cast<std::size_t>(given) != nodes.size())
        training.section("parallelism").fail("data", "beside a serving job the training runs on its clusters' " + std::to_string(nodes.size()) +
                                                          " free satellites: give 0 (all of them)");
    const auto& job = sc.workload.job;  // resolved: data-parallel over those satellites
    try {  // its all-reduce over those ranks, refused here rather than when the run reaches it
        (void)workloads::build_schedule(workloads::CollectiveOp::all_reduce, sc.workload.options.all_reduce, job.data_parallel,
                                        workloads::gradient_bytes(job), sc.workload.options.schedule);
    } catch (const std::invalid_argument& e) {
        training.fail("all_reduce", e.what());
    }
    if (job.moe.layers > 0) training.fail_first_leaf("moe", "a mixture of experts beside a serving job is not modelled; run it alone");
    if (job.sync != workloads::SyncMode::every_step)
        training.fail("sync", "beside a serving job the training all-reduces every step; local_steps runs alone");
    if (top.section("constellation").has("algorithms"))
        top.section("constellation").fail("algorithms", "compares a training job's algorithms alone; beside a serving job it "
                                                        "all-reduces with its own all_reduce key over its satellites");
    const char* why = " beside a serving job is not modelled yet (the training has no fault or power model there); "
                      "run the jobs apart to see it";
    if (sc.radiation.enabled) top.section("radiation").fail("enabled", std::string("radiation") + why);
    if (sc.power.enabled) top.section("power").fail("enabled", std::string("power") + why);
}

// Every satellite's own orbit must be bound, stay above 100 km and within the largest orbit a
// scenario may give: an escaping or re-entering satellite is not a formation, and its dose (hence
// its fault events) would grow without bound. Returns the highest apogee altitude, m.
double check_satellite_orbits(Section& top, const Scenario& sc, const std::vector<physics::RelativeState>& states) {
    const physics::CartesianState chief = initial_chief_state(sc);
    if (!chief.position_m.allFinite() || !chief.velocity_m_s.allFinite()) {
        Section orbit = top.section("orbit");
        orbit.fail(orbit.has("inclination_deg") ? "inclination_deg" : "eccentricity",
                   "the chief's initial state is not finite: the first-order mean-to-osculating map (Brouwer-Lyddane) "
                   "is singular at exactly 0 or 180 deg with e = 0 and at the critical inclination 63.43 deg; "
                   "move the inclination a little off it (or set dynamics.j2: false)");
    }
    const double mu = physics::earth_mu_m3_s2;
    const double min_radius_m = physics::earth_equatorial_radius_m + min_perigee_altitude_m;
    double max_apogee_m = 0.0;
    for (std::size_t i = 0; i < states.size(); ++i) {
        const physics::CartesianState x = physics::lvlh_to_eci(chief, states[i]);
        if (!x.position_m.allFinite() || !x.velocity_m_s.allFinite()) {
            top.section("formation").fail("relative_orbits",
                                          "satellite " + std::to_string(i) + "'s initial state is not finite: this relative-orbit "
                                          "set-up is singular for this chief orbit (inclination exactly 0 or 180 deg, or the critical 63.43 deg); "
                                          "try relative_orbits: hcw or an inclination off 0 and 180 deg");
        }
        const double r = x.position_m.norm();
        const double energy = 0.5 * x.velocity_m_s.squaredNorm() - mu / r;
        if (!(energy < 0.0)) {
            fail_satellite(top, sc, i, "this satellite escapes Earth's gravity (" + format_count(x.velocity_m_s.norm()) +
                                           " m/s at " + format_count(r / 1e3) + " km from the centre): it is no formation");
        }
        const double a = -mu / (2.0 * energy);
        const double h = x.position_m.cross(x.velocity_m_s).norm();
        const double e = std::sqrt(std::max(0.0, 1.0 - h * h / (mu * a)));
        if (a * (1.0 - e) < min_radius_m) {
            fail_satellite(top, sc, i, "this satellite's orbit has its perigee " +
                                           format_count((a * (1.0 - e) - physics::earth_equatorial_radius_m) / 1e3) +
                                           " km above the equator, below 100 km: it re-enters");
        }
        if (a * (1.0 + e) > max_apogee_radius_m) {
            fail_satellite(top, sc, i, "this satellite's orbit reaches " + format_count(a * (1.0 + e) / 1e3) +
                                           " km from the centre; it leaves the formation");
        }
        max_apogee_m = std::max(max_apogee_m, a * (1.0 + e) - physics::earth_equatorial_radius_m);
    }
    return max_apogee_m;
}

// Operational faults (`faults`): beside radiation they join its draws; on a synthetic fabric they are
// the run's faults, with the section's own recovery settings.
void check_operational_faults(Section& top, const Scenario& sc, std::size_t satellites) {
    Section faults = top.section("faults");
    if (sc.inference.enabled || !sc.workload.clusters.empty())
        faults.fail("enabled", "operational faults act on a training job alone (a serving workload's faults are radiation's)");
    if (sc.radiation.enabled) return;  // joined to radiation's draws (resolve), checked with them
    if (!sc.fabric)
        faults.fail("enabled", "on an orbit operational faults play beside radiation: add a radiation section "
                               "(its rate_scale: 0 leaves the operational faults alone)");
    if (!sc.workload.enabled) faults.fail("enabled", "needs a training workload: its steps are what the faults interrupt");
    const auto& recovery = sc.faults.recovery;
    if (recovery.spare_satellites > 0)
        faults.fail("spare_satellites", "a synthetic fabric keeps no hot spares: a failed node is swapped out at once "
                                        "(reboot_s: 0, the default) or waited for");
    fail_on_problems(faults, workloads::check(recovery, static_cast<std::int32_t>(satellites)), recovery_keys);
    if (recovery.on_rank_loss == workloads::RankLossPolicy::spare) {
        Section workload = workload_section(top, false);
        workload.fail("on_rank_loss", "spare needs hot spares, which a synthetic fabric does not keep (wait or shrink)");
    }
    workloads::FaultModel model;
    model.operational = sc.faults.operational;
    double expected = 0.0;
    for (const double x : workloads::expected_operational_counts(model, static_cast<std::int32_t>(satellites), sc.duration_s)) expected += x;
    const double batch = std::min<double>(sc.faults.trials, workloads::monte_carlo_batch_trials);
    if (!(expected * batch <= workloads::max_fault_events_in_memory))
        faults.fail("trials", "the rates give " + format_count(expected) + " expected events per trial x " + format_count(batch) +
                                  " trials drawn together, more than " + format_count(workloads::max_fault_events_in_memory) +
                                  " events can be held: lower faults.trials, the rates or the run's length");
}

// The radiation model is calibrated before the run, and the fault events it implies are
// estimated from the orbit-average dose rate at the highest apogee (the trapped-proton term
// grows exponentially with altitude: a(h) = exp((h - 650 km) / 109 km), 2e17 at 5,000 km):
// what would not fit in memory is refused here, naming the key to change.
void check_radiation(Section& top, const Scenario& sc, std::size_t satellites, double max_apogee_altitude_m) {
    Section radiation = top.section("radiation");
    // The dose-rate history is kept in memory for the fault draw (and copied satellite-major
    // there), whatever the outputs: 16 bytes per output step and satellite.
    const double series_bytes = 16.0 * (std::floor(sc.duration_s / sc.output_step_s) + 1.0) * static_cast<double>(satellites);
    if (series_bytes > max_dose_series_bytes) {
        top.fail("output_step_s", "with radiation the dose-rate history takes about " + format_count(series_bytes / 1e9) +
                                      " GB of memory (16 bytes per output step and satellite); at most " +
                                      format_count(max_dose_series_bytes / 1e9) +
                                      " GB are allowed: raise output_step_s or shorten the run");
    }
    const auto& env = sc.radiation.environment;
    physics::SettingsProblems problems;
    const std::optional<physics::RadiationModel> built = physics::try_make_radiation_model(env, problems);
    fail_on_problems(radiation, problems, radiation_environment_keys);
    const physics::RadiationModel& model = *built;
    double rate_rad_s = physics::orbit_average_dose_rate_rad_s(model, max_apogee_altitude_m, sc.orbit.inclination_rad);
    for (const auto& spe : env.solar_particle_events) {
        const double overlap = std::max(0.0, std::min(sc.duration_s, spe.start_s + spe.duration_s) - std::max(0.0, spe.start_s));
        if (sc.duration_s > 0.0) {
            rate_rad_s += (spe.flux_factor - 1.0) * model.gcr_polar_dose_rate_rad_s * model.shielding_factor * overlap / sc.duration_s;
        }
    }
    double per_satellite_s = 0.0;
    for (const double x : workloads::fault_rates_per_s(rate_rad_s, sc.radiation.faults)) per_satellite_s += x;
    per_satellite_s += workloads::operational_rate_per_rank_s(sc.radiation.faults.operational);  // faults: beside it
    const double per_trial = per_satellite_s * static_cast<double>(satellites) * sc.duration_s;
    const double batch = std::min<double>(sc.radiation.trials, workloads::monte_carlo_batch_trials);
    if (std::isfinite(per_trial) && per_trial * batch <= workloads::max_fault_events_in_memory) return;
    const std::string estimate = "about " + format_count(per_trial) + " fault events per trial (" +
                                 format_count(rate_rad_s * physics::seconds_per_year_radiation) + " rad(Si)/yr at " +
                                 std::to_string(std::lround(max_apogee_altitude_m / 1e3)) + " km, " + std::to_string(satellites) +
                                 " satellites, " + format_count(sc.duration_s / physics::seconds_per_day) + " days)";
    const std::string limit = "; at most " + format_count(workloads::max_fault_events_in_memory) + " are held at once";
    if (std::isfinite(per_trial) && per_trial <= workloads::max_fault_events_in_memory) {
        radiation.fail("trials", estimate + " x " + format_count(batch) + " trials drawn together" + limit +
                                     ": lower radiation.trials to at most " +
                                     format_count(std::floor(workloads::max_fault_events_in_memory / std::max(1.0, per_trial))));
    }
    // The dose rate itself is out of bounds far from the reference orbit; else the run is too long.
    if (!(rate_rad_s * physics::seconds_per_year_radiation <= 1e3 * env.target_dose_rad_per_yr)) {
        Section orbit = top.section("orbit");
        orbit.fail(orbit.has("semi_major_axis_km") ? "semi_major_axis_km" : "altitude_km",
                   "with radiation, " + estimate + limit +
                       ": the trapped-proton model scales exponentially from 650 km and is meant for low Earth orbit; "
                       "lower the orbit or set radiation.enabled: false");
    }
    top.fail(top.has("duration_s") ? "duration_s" : "duration_orbits",
             "with radiation, " + estimate + limit + ": shorten the run or set radiation.enabled: false");
}

// The run's length in seconds (duration_orbits resolved) and its output steps in range.
void check_duration(Section& top, const Scenario& sc) {
    if (sc.duration_s > 10.0 * physics::seconds_per_julian_year) {  // duration_s's own range refuses it as read
        top.fail("duration_orbits", "gives " + format_count(sc.duration_s / physics::seconds_per_julian_year) +
                                        " years; at most 10 years are allowed");
    }
    if (sc.duration_s / sc.output_step_s > max_output_steps) {
        top.fail("output_step_s", "duration / output_step_s gives " + std::to_string(static_cast<long long>(sc.duration_s / sc.output_step_s)) +
                                      " output steps; at most " + std::to_string(static_cast<long long>(max_output_steps)) +
                                      " are allowed (raise output_step_s or shorten the run)");
    }
}

}  // namespace

void check_satellite_count(Section& top, const Scenario& sc) {
    // Ranks of the fabric, or satellites of the formation (counted: the states are set up only by the
    // orbit checks, once the count is known to be in range).
    const std::size_t satellites = node_count(sc);
    if (satellites > static_cast<std::size_t>(max_satellites)) {
        top.fail(sc.constellation.enabled ? "constellation" : "formation",
                 (sc.constellation.enabled ? "the constellation has " : "the formation has ") + std::to_string(satellites) +
                     " satellites; at most " + std::to_string(max_satellites) + " are supported");
    }
}

// Most checks read the resolved scenario (`sc`, what the run receives); `read` where the value as
// written matters (a count given against the one derived, a role's own chips against its site's).
void check_across_sections(Section& top, const Scenario& read, const Scenario& sc, const LoadOptions& options) {
    check_duration(top, sc);
    if (read.inference.enabled) check_site_names(top, read);
    if (sc.radiation.enabled && top.has("faults")) {
        Section faults = top.section("faults");
        for (const char* key : faults_recovery_keys)
            if (faults.has(key)) faults.fail(key, "with radiation the checkpoint, restart and trial keys are radiation's: set radiation." +
                                                      std::string(key));
    }
    const std::vector<std::size_t> sizes = sc.fabric ? std::vector<std::size_t>{} : cluster_sizes(sc);
    const std::size_t satellites = node_count(sc);
    if (sc.constellation.enabled) check_constellation(top, sc, sizes);
    if (workloads_share_fabric(sc)) check_shared_workloads(top, read, sc);
    if (sc.workload.enabled) {
        Section workload = workload_section(top, false);
        if (!sc.fabric && !sc.links.enabled) workload.fail("enabled", "a training workload needs links: add a links section");
        // Hot spares hold no rank (resolve places a formation's ranks before them).
        const std::int32_t spares = sc.radiation.enabled && !sc.fabric && !sc.constellation.enabled
                                        ? sc.radiation.recovery.spare_satellites
                                        : 0;
        const std::int32_t formation_ranks = static_cast<std::int32_t>(satellites) - spares;
        if (spares > 0 && formation_ranks < 2) {
            Section radiation = top.section("radiation");
            radiation.fail("spare_satellites", "leaves " + std::to_string(formation_ranks) + " of the formation's " +
                                                   std::to_string(satellites) + " satellites to train on; a training job needs at least 2");
        }
        if (static_cast<std::size_t>(sc.workload.job.data_parallel) > satellites) {
            Section parallelism = workload.section("parallelism");
            parallelism.fail("data", "data-parallel ranks (" + std::to_string(sc.workload.job.data_parallel) +
                                         ") exceed the satellite count " + std::to_string(satellites));
        }
        if (sc.workload.job.data_parallel < 2) {
            Section parallelism = workload.section("parallelism");
            parallelism.fail("data", "needs at least 2 data-parallel ranks");
        }
        const auto& job = sc.workload.job;
        if (job.moe.expert_parallel > 1 && job.moe.layers == 0) {
            Section parallelism = workload.section("parallelism");
            parallelism.fail("expert", "expert parallelism needs a workload.moe section (a mixture-of-experts model)");
        }
        if (sc.workload.experts_across_clusters && !sc.constellation.enabled) {
            Section parallelism = workload.section("parallelism");
            parallelism.fail("expert_placement", "across_clusters needs a constellation (one formation has one cluster)");
        }
        fail_on_problems(workload, workloads::check(job), training_job_keys);
    }
    if (sc.inference.enabled) {
        Section workload = workload_section(top, true);
        if (!sc.fabric && !sc.links.enabled) workload.fail("kind", "a serving workload needs links: add a links section");
        if (!(sc.duration_s > 0.0))
            top.fail(top.has("duration_s") ? "duration_s" : "duration_orbits", "a serving workload needs a run of positive duration");
        // Serving plays the nominal trial's crashes (docs/inference.md "Faults and power"): no Monte Carlo, no spares.
        if (sc.radiation.enabled) {
            Section radiation = top.section("radiation");
            if (sc.radiation.trials > 1)
                radiation.fail("trials", "a serving workload plays one trial of the faults (the run's own); set trials: 1");
            if (sc.radiation.recovery.spare_satellites > 0)
                radiation.fail("spare_satellites", "hot spares are a training job's; a serving workload's instances are its satellites");
        }
        const auto& e = sc.inference.serving.engines;
        const std::int64_t needed = static_cast<std::int64_t>(e.prefill.instances) * e.prefill.satellites_per_instance +
                                    static_cast<std::int64_t>(e.decode.instances) * e.decode.satellites_per_instance;
        if (inference_nodes(sc).empty()) {
            Section engines = workload.section("inference").section("engines");
            engines.fail("prefill", "the instances need " + std::to_string(needed) + " satellites" +
                                        (sc.constellation.enabled ? " (dedicated prefill instances in cluster 0, the others in the last cluster, "
                                                                    "of " + std::to_string(sizes.front()) + " and " + std::to_string(sizes.back()) + ")"
                                                                  : "; there are " + std::to_string(satellites)));
        }
        // Instances take the chips of where they stand (a cluster's or a ground data centre's accelerator).
        check_site_accelerators(top, read, sc, inference_nodes(sc));
        auto checked = sc.inference.serving;
        if (sc.inference.compare_routing) checked.routing = workloads::ServingRouting::prfaas;
        fail_on_problems(workload.section("inference"), workloads::check_fits(checked, sc.inference.accelerator), serving_fit_keys);
    }
    if (sc.workload.enabled && sc.constellation.enabled) {
        // Mixed hardware is modelled for serving only: a training job's clusters run the workload's chips.
        const auto& a = sc.workload.accelerator;
        for (std::size_t c = 0; c < sc.constellation.clusters.size(); ++c) {
            const auto& own = sc.constellation.clusters[c].accelerator;
            if (own && *own != a) {
                Section cluster = top.section("constellation").item(top.section("constellation").sequence("clusters")[c],
                                                                    "constellation.clusters[" + std::to_string(c) + "]");
                cluster.fail(cluster.has("accelerator") ? "accelerator" : cluster.has("peak_tflops") ? "peak_tflops" : cluster.has("hbm_gb") ? "hbm_gb" : "hbm_bandwidth_gbs",
                             "gives this cluster " + own->name + " chips, but the training job runs on " + a.name +
                                 ": mixed accelerators are modelled for serving only (a training job's clusters must hold the workload's accelerator)");
            }
        }
    }
    if (sc.workload.enabled) {
        // Every step computes for at least the job's compute time: an upper bound on the steps.
        const double compute_s = workloads::compute_time_per_step_s(sc.workload.job, sc.workload.accelerator);
        const double steps = compute_s > 0.0 ? sc.duration_s / compute_s : std::numeric_limits<double>::infinity();
        if (!(steps <= max_training_steps)) {
            const std::string what = "the training job computes " + format_count(compute_s) + " s per step, so the run could take up to " +
                                     format_count(steps) + " steps; at most " + format_count(max_training_steps) + " are simulated";
            Section workload = workload_section(top, false);
            if (compute_s < 1e-3) {
                workload.fail("model_parameters", what + ": raise model_parameters or tokens_per_step, or shorten the run");
            }
            top.fail(top.has("duration_s") ? "duration_s" : "duration_orbits", what + ": shorten the run");
        }
    }
    if (sc.radiation.enabled) {
        Section radiation = top.section("radiation");
        if (sc.fabric) radiation.fail("enabled", "radiation needs an orbit; a synthetic topology has none");
        fail_on_problems(radiation, workloads::check(sc.radiation.recovery, static_cast<std::int32_t>(satellites)), recovery_keys);
        // The rank-loss policy given (resolve: spare when there are spares, else wait).
        if (sc.workload.on_rank_loss == workloads::RankLossPolicy::spare && sc.radiation.recovery.spare_satellites == 0) {
            Section workload = workload_section(top, false);
            workload.fail("on_rank_loss", "spare needs radiation.spare_satellites >= 1 (none are kept in reserve)");
        }
        if (!sc.constellation.enabled && sc.radiation.faults.gateway_outage_rate_per_s > 0.0)
            radiation.fail("gateway_outages_per_day", "needs a constellation: a single formation has no gateway terminals");
    }
    if (sc.faults.enabled) check_operational_faults(top, sc, satellites);
    double max_apogee_altitude_m = 0.0;
    if (!sc.fabric && satellites <= static_cast<std::size_t>(max_satellites)) {
        max_apogee_altitude_m = check_satellite_orbits(top, sc, initial_formation(sc));
        for (std::size_t k = 1; k < cluster_count(sc); ++k) {
            const Scenario cluster = cluster_scenario(sc, k);
            max_apogee_altitude_m = std::max(max_apogee_altitude_m, check_satellite_orbits(top, cluster, initial_formation(cluster)));
        }
    }
    if (sc.radiation.enabled) check_radiation(top, sc, satellites, max_apogee_altitude_m);
    if (static_cast<std::size_t>(sc.metrics.reference_satellite) >= satellites) {
        Section metrics = top.section("metrics");
        metrics.fail("reference_satellite", "must be below the satellite count " + std::to_string(satellites));
    }
    check_output_volume(top, sc, satellites);
    if (options.refuse_large_runs) check_run_size(top, sc, satellites);
}

}  // namespace skyfabric::scenario::detail
