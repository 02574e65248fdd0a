#include "simulation/simulation.hpp"

#include "simulation/sample_statistics.hpp"

#include <skyfabric/links/topology_policy.hpp>
#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/formation_metrics.hpp>
#include <skyfabric/physics/illumination.hpp>
#include <skyfabric/physics/power.hpp>
#include <skyfabric/physics/neighbours.hpp>
#include <skyfabric/workloads/placement.hpp>

#include <algorithm>
#include <cstdio>
#include <chrono>
#include <deque>
#include <cmath>
#include <limits>
#include <optional>

namespace skyfabric::simulation {

namespace {

// One run's state. advance() produces the next sample: physics, metrics, links, and the
// recorders; the training simulation, when there is one, drives it by pulling topologies.
class RunState {
public:
    RunState(const scenario::Scenario& sc, std::vector<Recorder*> recorders, const std::atomic<bool>* stop)
        : sc_(sc), recorders_(std::move(recorders)), stop_(stop), times_(sample_times(sc.duration_s, sc.output_step_s)) {
        setup_.scenario = &sc;
        // backend: cuda on a machine without a usable GPU fails here, not after the physics.
        backend_ = workloads::resolve_backend(sc.workload.backend);
        if (sc.fabric) {
            fabric_ = workloads::make_fabric(*sc.fabric);
            setup_.fabric = &*fabric_;
            setup_.satellite_count = static_cast<std::size_t>(fabric_->ranks);
            times_.clear();
            return;
        }
        clusters_.emplace(sc, sc.links.enabled, /*links_acquired=*/false);
        setup_.initial_lvlh = clusters_->initial_lvlh();
        setup_.satellite_count = clusters_->satellite_count();
        setup_.sample_count = times_.size();
        setup_.cluster_of.assign(clusters_->cluster_of().begin(), clusters_->cluster_of().end());
        setup_.gateway_nodes = clusters_->gateway_nodes();
        if (sc.dynamics.compare_to_nonlinear) {
            // Each cluster against its own nonlinear truth: the same chief and initial states, free fall.
            for (std::size_t c = 0; c < clusters_->cluster_count(); ++c) {
                const scenario::Scenario cluster = scenario::cluster_scenario(sc, c);
                auto settings = scenario::propagation_settings(cluster);
                settings.model = physics::RelativeMotionModel::nonlinear;
                settings.station_keeping.enabled = false;
                truth_.emplace_back(scenario::initial_chief_state(cluster), scenario::initial_formation(cluster), settings);
            }
            truth_snapshots_.resize(truth_.size());
        }
        positions_lvlh_.resize(setup_.satellite_count);
        if (sc.radiation.enabled) {
            radiation_model_.emplace(physics::make_radiation_model(sc.radiation.environment));
            const auto n = setup_.satellite_count;
            dose_rate_.assign(n, 0.0);
            dose_.assign(n, 0.0);
            dose_series_.start_s = 0.0;
            dose_series_.step_s = sc.output_step_s;
            dose_series_.satellite_count = static_cast<std::int32_t>(n);
        }

        constexpr double inf = std::numeric_limits<double>::infinity();
        epoch_julian_date_ = physics::julian_date(sc.orbit.epoch);
        summary_.beta_angle_min_rad = inf;
        summary_.beta_angle_max_rad = -inf;
        summary_.power_state_of_charge_min = inf;
        summary_.power_temperature_max_k = -inf;
        summary_.nearest_neighbour_min_m = summary_.reference_neighbours_min_m = summary_.min_separation_m = inf;
        if (sc.links.enabled) summary_.link_capacity_min_bps = summary_.bisection_capacity_min_bps = inf;
        if (clusters_->constellation()) summary_.gateway_capacity_min_bps = summary_.oversubscription_min = inf;
    }

    RunSummary execute() {
        for (auto* r : recorders_) r->begin(setup_);
        try {
            if (fabric_) run_fabric_workload();
            else if (sc_.inference.enabled) run_inference();
            else if (sc_.workload.enabled && clusters_->constellation()) run_constellation_workload();
            else if (sc_.workload.enabled) run_workload();
            while (advance()) {
            }
        } catch (const physics::PropagationError& e) {
            summary_.stop_reason = std::string("numerical failure: ") + e.what();
        }
        summary_.complete = summary_.stop_reason.empty() && summary_.samples_written == times_.size();
        if (radiation_model_) finish_radiation();
        finish_summary();
        for (auto* r : recorders_) r->end(summary_);
        return std::move(summary_);
    }

private:
    bool advance() {
        const std::size_t k = next_;
        if (k >= times_.size()) return false;
        if (stop_ && stop_->load()) {
            char at[64];
            std::snprintf(at, sizeof at, "%.10g", times_[k]);
            summary_.stop_reason = std::string("interrupted at t = ") + at + " s";
            return false;
        }
        ++next_;
        clusters_->advance_to(times_[k], snapshot_);
        sample_.index = k;
        sample_.snapshot = &snapshot_;
        derive_metrics(sc_, snapshot_, sample_);
        sample_.model_error_m.clear();
        if (!truth_.empty()) {
            sample_.model_error_m.resize(snapshot_.satellites_eci.size());
            // The relative motion's error (LVLH, each model's own chief, cluster by cluster): the linear
            // models' reference orbits differ from the nonlinear chief by kilometres a day, which is not
            // their error.
            std::size_t first = 0;
            for (std::size_t c = 0; c < truth_.size(); ++c) {
                truth_[c].advance_to(times_[k], truth_snapshots_[c]);
                const auto& model = clusters_->cluster_snapshot(c).satellites_lvlh;
                const auto& truth = truth_snapshots_[c].satellites_lvlh;
                for (std::size_t i = 0; i < model.size(); ++i)
                    sample_.model_error_m[first + i] = (model[i].position_m - truth[i].position_m).norm();
                first += model.size();
            }
        }
        sample_.delta_v_m_s = station_keeping_delta_v();
        sample_sunlight(times_[k]);
        if (sc_.station_keeping.enabled && sc_.dynamics.model == physics::RelativeMotionModel::nonlinear) {
            for (std::size_t c = 0; c < clusters_->cluster_count(); ++c) {
                const auto& own = clusters_->cluster_snapshot(c).satellites_lvlh;  // in its own chief's frame
                for (std::size_t i = 0; i < own.size(); ++i) {
                    const double deviation_m =
                        (own[i].position_m - clusters_->propagator(c).station_keeping_reference_lvlh(i).position_m).norm();
                    summary_.station_keeping_deviation_max_m = std::max(summary_.station_keeping_deviation_max_m, deviation_m);
                }
            }
        }
        if (sc_.links.enabled) {
            for (std::size_t i = 0; i < positions_lvlh_.size(); ++i) positions_lvlh_[i] = snapshot_.satellites_lvlh[i].position_m;
            link_events_.clear();
            topology_ = clusters_->update_topology(times_[k], link_events_);
            if (clusters_->constellation()) sample_.aggregation = &clusters_->aggregation();
            if (sc_.power.enabled) sample_power(k);
            sample_.topology = &topology_;
            sample_.link_events = link_events_;
            sample_.link_metrics = links::summarize(topology_, positions_lvlh_);
        } else if (sc_.power.enabled) {
            sample_power(k);
        }
        if (radiation_model_) sample_radiation(k);
        statistics_.add(sample_, sc_.metrics.min_separation_alarm_m, summary_);
        for (auto* r : recorders_) r->record(sample_);
        summary_.samples_written = k + 1;
        summary_.simulated_s = times_[k];
        return true;
    }

    // Dose rate at every satellite; the dose integrates it by the trapezoid rule.
    void sample_radiation(std::size_t k) {
        const double dt = k > 0 ? times_[k] - times_[k - 1] : 0.0;
        double flux_sum = 0.0;
        for (std::size_t i = 0; i < dose_rate_.size(); ++i) {
            const auto r = physics::radiation_at(snapshot_.satellites_eci[i].position_m, times_[k], *radiation_model_);
            dose_[i] += 0.5 * (dose_rate_[i] + r.dose_rate_rad_s) * dt;
            dose_rate_[i] = r.dose_rate_rad_s;
            flux_sum += r.flux_relative;
        }
        // The fault process reads the rate on a uniform grid: an end time off the grid is left out.
        if (std::abs(times_[k] - static_cast<double>(k) * sc_.output_step_s) < 1e-9 * std::max(1.0, times_[k])) {
            dose_series_.dose_rate_rad_s.insert(dose_series_.dose_rate_rad_s.end(), dose_rate_.begin(), dose_rate_.end());
            ++dose_series_.sample_count;
        }
        sample_.dose_rate_rad_s = dose_rate_;
        sample_.dose_rad = dose_;
        sample_.flux_relative_mean = dose_rate_.empty() ? 0.0 : flux_sum / static_cast<double>(dose_rate_.size());
    }

    // The fault model of the run: a constellation's gateway satellites carry gateway terminals, which fail on their own.
    workloads::FaultModel fault_model() const {
        workloads::FaultModel model = sc_.radiation.faults;
        if (clusters_ && clusters_->constellation()) {
            for (const auto& gateways : clusters_->gateway_nodes())
                model.gateway_satellites.insert(model.gateway_satellites.end(), gateways.begin(), gateways.end());
            std::sort(model.gateway_satellites.begin(), model.gateway_satellites.end());
        }
        return model;
    }

    // The nominal trial's fault events on the dose-rate history of the run so far (once: a serving run plays
    // them before the end, finish_radiation reports them). False when more are expected than can be held.
    bool draw_faults() {
        if (faults_drawn_) return faults_drawn_->stop_reason.empty();
        auto& out = faults_drawn_.emplace();
        const auto& r = sc_.radiation;
        const double duration_s = summary_.simulated_s;
        const auto n = static_cast<std::int32_t>(dose_.size());
        if (dose_series_.sample_count > 0 && duration_s > 0.0) {
            const workloads::FaultModel model = fault_model();
            out.outcome.expected_events = workloads::expected_fault_counts(dose_series_, model, duration_s);
            // The loader refused what its orbit-average estimate would not fit; this run's own dose
            // history (SAA passes: a few times the average) is checked again, with a margin, against
            // what the estimate cannot see (a satellite that left the formation) before drawing.
            double expected = 0.0;
            for (const double x : out.outcome.expected_events) expected += x;
            const double batch = std::min(r.trials, workloads::monte_carlo_batch_trials);
            if (!(expected * batch <= 4.0 * workloads::max_fault_events_in_memory)) {
                out.stop_reason = "radiation: the dose history gives " + std::to_string(expected) +
                                  " expected fault events per trial, more than can be held; faults not drawn";
                return false;
            }
            out.outcome.events = workloads::sample_fault_events(dose_series_, model, duration_s, sc_.seed, 0);
            out.outcome.interruption_mtbf_s =
                workloads::interruption_mtbf_s(dose_series_, r.faults, n - r.recovery.spare_satellites, duration_s);
        }
        return true;
    }

    // Faults drawn on the dose-rate history, then checkpoint/restart accounting over the
    // training job's own step times.
    void finish_radiation() {
        const auto& r = sc_.radiation;
        const double duration_s = summary_.simulated_s;
        const auto n = static_cast<std::int32_t>(dose_.size());
        const bool drawn = draw_faults();
        RadiationOutcome out = std::move(faults_drawn_->outcome);
        if (!drawn) {
            summary_.stop_reason = faults_drawn_->stop_reason;
            summary_.complete = false;
            summary_.radiation = std::move(out);
            return;
        }
        const workloads::FaultModel model = fault_model();
        for (double d : dose_) {
            out.dose_mean_rad += d / std::max(1, n);
            out.dose_max_rad = std::max(out.dose_max_rad, d);
        }
        if (duration_s > 0.0) out.dose_rate_mean_rad_per_yr = out.dose_mean_rad / duration_s * physics::seconds_per_year_radiation;
        // A run's own rate depends on which SAA passes it covers (one orbit: 11-350 rad/yr); the annual
        // figure is the orbit's long-term average instead.
        out.annual_dose_rad_per_yr = physics::orbit_average_dose_rate_rad_s(*radiation_model_,
                                                                            sc_.orbit.semi_major_axis_m - physics::earth_equatorial_radius_m,
                                                                            sc_.orbit.inclination_rad) *
                                     physics::seconds_per_year_radiation;
        out.long_term_interruption_mtbf_s = workloads::interruption_mtbf_at_dose_rate_s(
            out.annual_dose_rad_per_yr / physics::seconds_per_year_radiation, r.faults, n - r.recovery.spare_satellites);
        try {
            play_trials(out, model, duration_s);
        } catch (const workloads::TrialsInterrupted& e) {
            // Ctrl-C while the trials ran: the physics and the nominal trial are kept, the trials' figures left out.
            summary_.stop_reason = e.what();
            summary_.complete = false;
            out.monte_carlo.reset();
            out.constellation.clear();
        }
        summary_.radiation = std::move(out);
    }

    // The nominal trial and the Monte Carlo trials, on one formation or on each constellation algorithm.
    void play_trials(RadiationOutcome& out, const workloads::FaultModel& model, double duration_s) {
        const auto& r = sc_.radiation;
        const auto n = static_cast<std::int32_t>(dose_.size());
        if (clusters_ && clusters_->constellation()) {
            if (!summary_.constellation.empty() && dose_series_.sample_count > 0 && duration_s > 0.0)
                play_constellation_faults(out, model, duration_s);
        } else if (summary_.training && !summary_.training->steps.empty() && duration_s > 0.0) {
            const workloads::StepDurations steps = workloads::fault_free_steps(*summary_.training);
            auto recovery = r.recovery;
            // Daly's interval from the orbit's long-term interruption rate (the annual dose's), not from the
            // SAA passes this run happened to see, so that runs of any length checkpoint alike (no
            // interruptions: no checkpoints needed within the run, so one interval spans it).
            if (recovery.checkpoint_interval_s <= 0.0) {
                recovery.mtbf_s = std::isfinite(out.long_term_interruption_mtbf_s) && out.long_term_interruption_mtbf_s > 0.0
                                      ? out.long_term_interruption_mtbf_s
                                      : 1e3 * duration_s;
            }
            // Faults act on the fabric: each trial's outages and reboots damage the run's topology
            // timeline, and its steps are solved there (workloads/damaged_fabric.hpp).
            std::optional<workloads::DamagedFabric> fabric;
            const std::int32_t ranks = n - recovery.spare_satellites;
            if (timeline_.keyframe_count() > 0 && sc_.workload.job.data_parallel == ranks) {
                // A shrunk mixture of experts keeps whole expert groups (the solver needs them).
                if (sc_.workload.job.moe.layers > 0) recovery.rank_multiple = std::max(1, sc_.workload.job.moe.expert_parallel);
                fabric.emplace(timeline_, workloads::StepModel{sc_.workload.job, sc_.workload.accelerator, sc_.workload.options},
                               ranks);
            } else {
                out.fabric_note = "faults do not act on the fabric: the job's " + std::to_string(sc_.workload.job.data_parallel) +
                                  " data-parallel ranks are not the " + std::to_string(ranks) +
                                  " satellites outside the spares";
            }
            workloads::FabricModel* fabric_model = fabric ? &*fabric : nullptr;
            out.goodput = workloads::simulate_training_with_faults(out.events, n, duration_s, steps, recovery,
                                                                   /*record_timeline=*/true, fabric_model);
            if (r.trials > 1) {
                const auto trials_start = std::chrono::steady_clock::now();
                out.monte_carlo = workloads::monte_carlo_goodput(dose_series_, r.faults, recovery, steps, duration_s, sc_.seed,
                                                                 r.trials, backend_, fabric_model,
                                                                 scenario::monte_carlo_threads(sc_), stop_);
                out.trials_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - trials_start).count();
            }
            if (fabric) {
                out.fabric_keyframes = static_cast<std::int64_t>(timeline_.keyframe_count());
                out.fabric_topologies = timeline_.topology_count();
                out.fabric_memory_bytes = static_cast<std::int64_t>(timeline_.memory_bytes());
                out.fabric_evaluations = fabric->evaluations();
            }
        }
    }

    // Each cluster algorithm's trials over the same fault draws (workloads/cluster_faults.hpp).
    void play_constellation_faults(RadiationOutcome& out, const workloads::FaultModel& model, double duration_s) {
        const auto& r = sc_.radiation;
        workloads::ClusterFaultSetup s;
        s.series = &dose_series_;
        s.model = model;
        s.recovery = r.recovery;
        s.recovery.gateway_failover_s = sc_.constellation.gateway_failover_s;
        // Daly's interval from the orbit's long-term interruption rate, as for one cluster (none: one
        // interval spans the run).
        if (s.recovery.checkpoint_interval_s <= 0.0)
            s.recovery.mtbf_s = std::isfinite(out.long_term_interruption_mtbf_s) && out.long_term_interruption_mtbf_s > 0.0
                                    ? out.long_term_interruption_mtbf_s
                                    : 1e3 * duration_s;
        s.duration_s = duration_s;
        s.seed = sc_.seed;
        s.trials = r.trials;
        s.backend = backend_;
        s.threads = scenario::monte_carlo_threads(sc_);
        s.timeline = &timeline_;
        s.training = constellation_setup_;
        s.stop = stop_;
        const auto trials_start = std::chrono::steady_clock::now();
        for (auto* rec : recorders_) rec->phase("fault trials of every algorithm");
        std::vector<workloads::ClusterAlgorithm> algorithms;
        for (const auto& c : summary_.constellation) algorithms.push_back(c.algorithm);
        out.constellation = workloads::monte_carlo_cluster_goodput(algorithms, s, summary_.constellation, every_step_steps_);
        for (const auto& c : out.constellation) out.fabric_evaluations += c.fabric_evaluations;
        out.trials_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - trials_start).count();
        out.fabric_keyframes = static_cast<std::int64_t>(timeline_.keyframe_count());
        out.fabric_topologies = timeline_.topology_count();
        out.fabric_memory_bytes = static_cast<std::int64_t>(timeline_.memory_bytes());
    }

    // The training job pulls one topology per sample; the physics advances as it pulls.
    void run_workload() {
        auto options = sc_.workload.options;
        options.start_s = 0.0;
        options.end_s = sc_.duration_s;
        workloads::TopologySource source = [this](links::Topology& next) {
            if (!pending_topologies_.empty()) {  // produced while the power limit was looked ahead
                next = std::move(pending_topologies_.front());
                pending_topologies_.pop_front();
                if (radiation_model_) timeline_.append(next);
                return true;
            }
            if (!advance_keeping_results()) return false;  // the run's end, a stop or a numerical failure
            next = topology_;
            if (radiation_model_) timeline_.append(next);  // the fabric the fault trials damage
            return true;
        };
        if (sc_.power.enabled) {
            options.compute_done_s = [this](double start_s, double work_s) { return compute_done_s(start_s, work_s); };
        }
        // A stop or a numerical failure ends the job after the steps done so far, which are kept
        // (and the faults are played over the time the run covered).
        options.end_limit_s = [this] {
            return summary_.stop_reason.empty() ? std::numeric_limits<double>::infinity() : summary_.simulated_s;
        };
        summary_.training = workloads::simulate_training(sc_.workload.job, sc_.workload.accelerator, source, options);
    }

    // Every cluster's cumulative station-keeping delta-v, as the satellites are numbered.
    std::span<const double> station_keeping_delta_v() {
        if (!clusters_->constellation()) return clusters_->propagator(0).station_keeping_delta_v_m_s();
        delta_v_all_.clear();
        for (std::size_t c = 0; c < clusters_->cluster_count(); ++c) {
            const auto dv = clusters_->propagator(c).station_keeping_delta_v_m_s();
            delta_v_all_.insert(delta_v_all_.end(), dv.begin(), dv.end());
        }
        return delta_v_all_;
    }

    // A constellation: the physics first, every topology kept as keyframes, then each training algorithm
    // replayed over them from the start (workloads/cluster_training.hpp), so that they compare on the
    // same fabric. The first algorithm's record, when it steps every rank together, is the run's training.
    void run_constellation_workload() {
        const auto& con = sc_.constellation;
        while (advance_keeping_results()) timeline_.append(topology_);
        if (timeline_.keyframe_count() == 0) return;
        workloads::ClusterTrainingSetup setup;
        setup.job = sc_.workload.job;
        setup.accelerator = sc_.workload.accelerator;
        setup.options = sc_.workload.options;
        setup.options.start_s = 0.0;
        setup.options.end_s = summary_.simulated_s;
        setup.inner_steps = con.inner_steps;
        setup.outer_bytes_per_element = con.outer_bytes_per_element;
        setup.experts_across_clusters = sc_.workload.experts_across_clusters;
        setup.seed = sc_.seed;
        setup.topologies = [this](double from_s) { return timeline_.source_from(from_s); };
        setup.cluster_nodes = clusters_->cluster_nodes();
        if (sc_.power.enabled) {  // every sample is simulated: the clusters' shares are known
            setup.cluster_compute_done_s = [this](std::size_t c, double start_s, double work_s) {
                return compute_done_s(start_s, work_s, cluster_fraction_[c]);
            };
        }
        constellation_setup_ = setup;
        // The algorithms are independent replays of the same stored fabric: run side by side, on the
        // threads the trials may use (the physics is done, so the power lambda only reads).
        const std::int32_t threads = scenario::monte_carlo_threads(sc_);
        std::string what = "training";
        for (const auto algorithm : con.algorithms) what += " " + std::string(workloads::to_string(algorithm));
        for (auto* r : recorders_) r->phase(what);
        summary_.constellation = workloads::simulate_cluster_trainings(con.algorithms, setup, threads);
        for (const auto& result : summary_.constellation) {
            // What the fault trials replay: ring's and hierarchical's fault-free steps.
            every_step_steps_.push_back(workloads::fault_free_steps(result.training));
            // Each ring/hierarchical record stays with its algorithm (a trace draws them all): steps,
            // collectives and per-link totals, a few MB at most for a day of 4 x 81.
        }
        if (!summary_.constellation.empty()) {
            const auto first = summary_.constellation.front().algorithm;
            if (first == workloads::ClusterAlgorithm::ring || first == workloads::ClusterAlgorithm::hierarchical)
                summary_.training = summary_.constellation.front().training;  // the workload block's record
        }
    }

    // Serving: the physics first, every topology kept as keyframes, then each routing replayed over them
    // from the start, so that they compare on the same requests and the same fabric.
    void run_inference() {
        while (advance_keeping_results()) timeline_.append(topology_);
        if (timeline_.keyframe_count() == 0) return;
        serve([this](double from_s) { return timeline_.source_from(from_s); });
    }

    // Faults and power on the serving instances (docs/inference.md "Faults and power"): the nominal trial's
    // chip and host crashes take their satellite down for reboot_s; each satellite computes at the share
    // its power policy allowed in each sample.
    void add_faults_and_power(workloads::ServingConfig& config) {
        if (radiation_model_ && draw_faults()) {
            for (const auto& e : faults_drawn_->outcome.events)
                if (workloads::fault_crashes(e.kind))
                    config.outages.push_back(workloads::SatelliteOutage{e.time_s, e.time_s + sc_.radiation.recovery.reboot_s, e.satellite});
        }
        if (!satellite_share_.empty()) {
            auto& th = config.throttle;
            th.start_s = 0.0;
            th.step_s = sc_.output_step_s;
            th.satellite_count = static_cast<std::int32_t>(power_state_.size());
            th.sample_count = static_cast<std::int64_t>(satellite_share_.size()) / th.satellite_count;
            th.share = satellite_share_;
        }
    }

    template <class Topologies>
    void serve(const Topologies& topologies) {
        const auto& in = sc_.inference;
        std::vector<workloads::ServingRouting> routings{in.serving.routing};
        if (in.compare_routing)
            routings.push_back(in.serving.routing == workloads::ServingRouting::local ? workloads::ServingRouting::prfaas
                                                                                    : workloads::ServingRouting::local);
        // A training job beside the serving one: placed and scheduled once, for every run that carries it.
        const std::optional<workloads::SharedTraining> training =
            scenario::workloads_share_fabric(sc_) ? std::optional(shared_training(topologies)) : std::nullopt;
        for (const auto routing : routings) {
            workloads::ServingConfig config = in.serving;
            config.routing = routing;
            config.nodes = scenario::inference_nodes(sc_);
            config.start_s = 0.0;
            config.end_s = summary_.simulated_s;
            if (clusters_ && clusters_->cluster_count() > 1) {  // the gateway layer's egress, per output step
                config.cluster_of.assign(clusters_->cluster_of().begin(), clusters_->cluster_of().end());
                config.egress_bin_s = sc_.output_step_s;
            }
            add_faults_and_power(config);
            for (auto* r : recorders_) r->phase(std::string("serving, ") + workloads::to_string(routing) + " routing");
            const std::size_t run = summary_.inference.size();
            const workloads::RequestSink sink{[&](std::span<const workloads::RequestRecord> rows) {
                for (auto* r : recorders_) r->requests(run, routing, rows);
            }};
            summary_.inference_routing.push_back(routing);
            summary_.inference.push_back(workloads::simulate_serving(config, in.accelerator, topologies(0.0), sink));
            if (!training) continue;
            if (!summary_.training_without_serving) {  // the training's baseline, once: the same engine, no requests
                auto alone = config;
                alone.training = *training;
                alone.trace.clear();
                alone.requests.rate_per_s = 0.0;
                for (auto* r : recorders_) r->phase("training alone on the serving engine");
                summary_.training_without_serving = workloads::simulate_serving(alone, in.accelerator, topologies(0.0)).training;
            }
            config.training = *training;
            for (auto* r : recorders_) r->phase(std::string("serving beside training, ") + workloads::to_string(routing) + " routing");
            // The figures are the summary's; the records written are the run alone's: these are dropped as they come.
            const workloads::RequestSink drop{[](std::span<const workloads::RequestRecord>) {}};
            auto beside = workloads::simulate_serving(config, in.accelerator, topologies(0.0), drop);
            summary_.inference_beside_training.push_back(std::move(beside));
        }
    }

    // The training job beside the serving one: data-parallel over its clusters' free satellites in a
    // ring tour of the first topology, one all-reduce of its gradients after each step's compute (no
    // overlap with the backward pass: docs/inference.md "Serving beside training").
    template <class Topologies>
    workloads::SharedTraining shared_training(const Topologies& topologies) const {
        const auto& w = sc_.workload;
        links::Topology first;
        topologies(0.0)(first);
        const auto nodes = scenario::shared_training_nodes(sc_);
        workloads::SharedTraining t;
        t.rank_nodes = workloads::ring_placement(workloads::build_network(first), nodes);
        t.collective = workloads::build_schedule(workloads::CollectiveOp::all_reduce, w.options.all_reduce,
                                                 static_cast<std::int32_t>(t.rank_nodes.size()), workloads::gradient_bytes(w.job),
                                                 w.options.schedule);
        t.compute_s = workloads::compute_time_per_step_s(w.job, w.accelerator);
        return t;
    }

    // advance() for the training's callbacks: a numerical failure becomes the stop reason instead of
    // unwinding through the training simulation (which would lose its results).
    bool advance_keeping_results() {
        try {
            return advance();
        } catch (const physics::PropagationError& e) {
            summary_.stop_reason = std::string("numerical failure: ") + e.what();
            return false;
        }
    }

    // A fixed synthetic fabric: one topology for the whole run, ranks on the fabric's nodes.
    void run_fabric_workload() {
        if (sc_.inference.enabled) {
            summary_.simulated_s = sc_.duration_s;
            serve([this](double) { return workloads::topology_source(std::span(&fabric_->topology, 1)); });
            return;
        }
        if (!sc_.workload.enabled) return;
        auto options = sc_.workload.options;
        options.start_s = 0.0;
        options.end_s = sc_.duration_s;
        // The switch of a star is a node but not a rank: keep ranks on nodes 0..p-1.
        if (fabric_->spec.kind == workloads::FabricKind::switch_star) options.placement = workloads::PlacementPolicy::identity;
        const links::Topology series[] = {fabric_->topology};
        summary_.training = workloads::simulate_training(sc_.workload.job, sc_.workload.accelerator, series, options);
        summary_.simulated_s = sc_.duration_s;
    }

    // Each satellite's array, battery and radiator over [t_k, t_k+1) (physics/power.hpp): the training
    // (when there is one) asks for full compute; the policy allows what the battery and the heat permit,
    // and the ring runs at its slowest satellite's share. A satellite that browns out loses its links.
    void sample_power(std::size_t k) {
        const auto& p = sc_.power.parameters;
        const std::size_t n = sample_.shadow_fraction.size();
        if (power_state_.empty()) {
            power_state_.assign(n, physics::initial_power_state(p));
            compute_fraction_.assign(times_.size(), 1.0);
        }
        const double dt = k + 1 < times_.size() ? times_[k + 1] - times_[k] : 0.0;
        const double t = times_[k];
        const double au = sun_eci_m_.norm() / physics::astronomical_unit_m;  // from sample_sunlight
        std::vector<int> degree = sc_.links.enabled ? links::links_per_satellite(topology_) : std::vector<int>(n, 0);
        degree.resize(n, 0);
        const double requested = sc_.workload.enabled || sc_.inference.enabled ? 1.0 : 0.0;
        const auto policy = sc_.inference.enabled ? sc_.inference.power_policy : sc_.workload.power_policy;
        auto& s = sample_;
        s.solar_w.resize(n);
        s.load_w.resize(n);
        s.state_of_charge.resize(n);
        s.temperature_k.resize(n);
        double fraction = 1.0;
        std::vector<bool> browned(n, false);
        // A constellation: each cluster its own β (its own plane) and its own compute share.
        const auto cluster_of = clusters_->cluster_of();
        const std::size_t clusters = clusters_->cluster_count();
        if (clusters > 1 && cluster_fraction_.empty()) cluster_fraction_.assign(clusters, std::vector<double>(times_.size(), 1.0));
        std::vector<double> cluster_fraction(clusters, 1.0);
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t c = clusters > 1 ? static_cast<std::size_t>(cluster_of[i]) : 0;
            const double beta_rad = clusters > 1 ? cluster_beta_rad_[c] : s.beta_angle_rad;
            s.solar_w[i] = physics::solar_power_w(p.array, au, s.shadow_fraction[i], std::sin(beta_rad),
                                                  t / physics::seconds_per_julian_year);
            const physics::PowerStep step = dt > 0.0 ? physics::advance_power(p, power_state_[i], s.solar_w[i], degree[i], requested,
                                                                              policy, dt)
                                                     : physics::PowerStep{requested, physics::load_power_w(p.loads, requested, degree[i])};
            s.load_w[i] = step.load_w;
            s.state_of_charge[i] = p.battery.capacity_wh > 0.0 ? power_state_[i].battery_wh / p.battery.capacity_wh : 0.0;
            s.temperature_k[i] = power_state_[i].temperature_k;
            if (requested > 0.0) {
                fraction = std::min(fraction, step.utilisation);
                cluster_fraction[c] = std::min(cluster_fraction[c], step.utilisation);
            }
            browned[i] = step.browned_out;
            if (sc_.inference.enabled) satellite_share_.push_back(step.utilisation);  // each instance its own
            power_generated_j_ += s.solar_w[i] * dt;
            power_used_j_ += step.load_w * dt;
            power_shunted_j_ += step.shunted_w * dt;
            summary_.power_state_of_charge_min = std::min(summary_.power_state_of_charge_min, s.state_of_charge[i]);
            summary_.power_temperature_max_k = std::max(summary_.power_temperature_max_k, s.temperature_k[i]);
            if (step.browned_out) ++summary_.power_brownouts;
        }
        s.compute_fraction = fraction;
        compute_fraction_[k] = fraction;
        for (std::size_t c = 0; clusters > 1 && c < clusters; ++c) cluster_fraction_[c][k] = cluster_fraction[c];
        if (fraction < 1.0 && requested > 0.0) {
            ++summary_.power_samples_limited;
            summary_.power_compute_lost_s += (1.0 - fraction) * dt;
        }
        if (std::find(browned.begin(), browned.end(), true) != browned.end()) {
            std::erase_if(topology_.links, [&](const links::Link& l) {
                return browned[static_cast<std::size_t>(l.source)] || browned[static_cast<std::size_t>(l.target)];
            });
        }
    }

    // When `work_s` of full-speed compute started at start_s is done, at the power-allowed share of each
    // sample interval; samples not yet simulated are simulated now (their topologies kept for the training's clock).
    double compute_done_s(double start_s, double work_s) { return compute_done_s(start_s, work_s, compute_fraction_); }
    // The same at a share series of one's own (a constellation's cluster).
    double compute_done_s(double start_s, double work_s, const std::vector<double>& compute_fraction) {
        std::size_t k = static_cast<std::size_t>(std::upper_bound(times_.begin(), times_.end(), start_s) - times_.begin());
        k = k > 0 ? k - 1 : 0;
        double t = start_s, left = work_s;
        while (true) {
            while (k >= next_) {
                if (!advance_keeping_results()) {
                    // Stopped: this compute never finishes (the job ends); past the run's end nothing limits it.
                    if (!summary_.stop_reason.empty()) return std::numeric_limits<double>::infinity();
                    return t + left;
                }
                pending_topologies_.push_back(topology_);
            }
            const double end = k + 1 < times_.size() ? times_[k + 1] : std::numeric_limits<double>::infinity();
            const double rate = compute_fraction[k];
            if (rate > 0.0 && t + left / rate <= end) return t + left / rate;
            if (!std::isfinite(end)) return end;
            left -= rate * (end - t);
            t = end;
            ++k;
        }
    }

    void sample_sunlight(double time_s) {
        sun_eci_m_ = physics::sun_position_eci_m(epoch_julian_date_ + time_s / physics::seconds_per_day);
        const Eigen::Vector3d& sun = sun_eci_m_;
        sample_.sun_direction_eci = sun.normalized();
        sample_.beta_angle_rad = physics::beta_angle_rad(snapshot_.chief_eci.position_m, snapshot_.chief_eci.velocity_m_s, sun);
        if (clusters_->constellation()) {
            cluster_beta_rad_.resize(clusters_->cluster_count());
            for (std::size_t c = 0; c < cluster_beta_rad_.size(); ++c) {
                const auto& chief = clusters_->cluster_snapshot(c).chief_eci;
                cluster_beta_rad_[c] = physics::beta_angle_rad(chief.position_m, chief.velocity_m_s, sun);
            }
        }
        sample_.shadow_fraction.resize(snapshot_.satellites_eci.size());
        for (std::size_t i = 0; i < snapshot_.satellites_eci.size(); ++i) {
            sample_.shadow_fraction[i] = physics::shadow_fraction(snapshot_.satellites_eci[i].position_m, sun);
        }
    }

    void finish_summary() {
        auto& m = summary_;
        statistics_.finish(m, sc_.links.enabled, clusters_ && clusters_->constellation());
        if (!std::isfinite(m.power_state_of_charge_min)) m.power_state_of_charge_min = m.power_temperature_max_k = 0.0;
        if (!power_state_.empty()) {
            const double n = static_cast<double>(power_state_.size());
            m.power_generated_kwh = power_generated_j_ / n / 3.6e6;
            m.power_used_kwh = power_used_j_ / n / 3.6e6;
            m.power_shunted_kwh = power_shunted_j_ / n / 3.6e6;
        }
        if (clusters_) {
            // Cluster after cluster, as the satellites are numbered.
            for (std::size_t c = 0; c < clusters_->cluster_count(); ++c) {
                const auto& p = clusters_->propagator(c);
                const auto dv = p.station_keeping_delta_v_m_s();
                m.station_keeping_delta_v_m_s.insert(m.station_keeping_delta_v_m_s.end(), dv.begin(), dv.end());
                const auto acquisition = p.station_keeping_acquisition_delta_v_m_s();
                m.station_keeping_acquisition_delta_v_m_s.insert(m.station_keeping_acquisition_delta_v_m_s.end(),
                                                                 acquisition.begin(), acquisition.end());
                m.station_keeping_steady_since_s = std::max(m.station_keeping_steady_since_s, p.station_keeping_steady_since_s());
                const auto drag = p.differential_drag_delta_v_m_s();
                m.differential_drag_delta_v_m_s.insert(m.differential_drag_delta_v_m_s.end(), drag.begin(), drag.end());
            }
        }
        m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start_).count();
    }

    const scenario::Scenario& sc_;
    workloads::TopologyTimeline timeline_;  // the fault-free topologies, as keyframes (radiation runs)
    workloads::Backend backend_ = workloads::Backend::cpu;  // for batched work (the radiation Monte Carlo)
    std::vector<Recorder*> recorders_;
    const std::atomic<bool>* stop_;
    std::vector<double> times_;
    std::chrono::steady_clock::time_point wall_start_ = std::chrono::steady_clock::now();
    RunSetup setup_;
    RunSummary summary_;

    std::optional<workloads::Fabric> fabric_;
    std::optional<ClusterSet> clusters_;                // every cluster's physics and links (one without a constellation)
    workloads::ClusterTrainingSetup constellation_setup_;  // the cluster algorithms' (for the fault trials)
    std::vector<workloads::StepDurations> every_step_steps_;  // per algorithm: its fault-free steps (empty: diloco, noloco)
    std::vector<physics::FormationPropagator> truth_;  // compare_to_nonlinear: one per cluster
    std::vector<double> delta_v_all_;                  // a constellation's clusters' delta-v, concatenated
    double epoch_julian_date_ = 0.0;
    Eigen::Vector3d sun_eci_m_ = Eigen::Vector3d::Zero();  // at the current sample
    std::vector<physics::PowerState> power_state_;     // [N]
    std::vector<double> compute_fraction_;             // per sample: compute share allowed until the next
    std::vector<std::vector<double>> cluster_fraction_;  // a constellation's: [cluster][sample]
    std::vector<double> satellite_share_;              // a serving run's: [sample][satellite]
    std::vector<double> cluster_beta_rad_;             // a constellation's clusters' β at the current sample
    std::deque<links::Topology> pending_topologies_;   // simulated ahead for compute_done_s, not yet pulled
    double power_generated_j_ = 0.0, power_used_j_ = 0.0, power_shunted_j_ = 0.0;
    physics::FormationSnapshot snapshot_;
    std::vector<physics::FormationSnapshot> truth_snapshots_;
    links::Topology topology_;
    std::vector<links::LinkEvent> link_events_;
    std::vector<Eigen::Vector3d> positions_lvlh_;
    Sample sample_;
    std::size_t next_ = 0;

    std::optional<physics::RadiationModel> radiation_model_;
    std::vector<double> dose_rate_, dose_;
    workloads::DoseRateSeries dose_series_;
    struct DrawnFaults {
        RadiationOutcome outcome;  // events, expected counts, MTBF
        std::string stop_reason;   // too many to hold: not drawn
    };
    std::optional<DrawnFaults> faults_drawn_;
    SampleStatistics statistics_;  // minima, maxima and means over the samples
};

}  // namespace

RunSummary run(const scenario::Scenario& sc, std::vector<Recorder*> recorders, const std::atomic<bool>* stop) {
    return RunState(sc, std::move(recorders), stop).execute();
}

}  // namespace skyfabric::simulation
