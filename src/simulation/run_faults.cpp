// RunState: the dose, the fault draws and the coupled trials (run_state.hpp).
#include "simulation/run_state.hpp"

namespace skyfabric::simulation {

void RunState::sample_radiation(std::size_t k) {
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

workloads::FaultModel RunState::fault_model() const {
    workloads::FaultModel model = sc_.radiation.faults;
    if (clusters_ && clusters_->constellation()) {
        for (const auto& gateways : clusters_->gateway_nodes())
            model.gateway_satellites.insert(model.gateway_satellites.end(), gateways.begin(), gateways.end());
        std::sort(model.gateway_satellites.begin(), model.gateway_satellites.end());
    }
    return model;
}

bool RunState::draw_faults() {
    if (faults_drawn_) return faults_drawn_->stop_reason.empty();
    auto& out = faults_drawn_.emplace();
    const auto& r = sc_.radiation;
    const double duration_s = summary_.simulated_s;
    if (dose_series_.sample_count > 0 && duration_s > 0.0) {
        const workloads::FaultModel model = fault_model();
        out.outcome.expected_events = workloads::expected_fault_counts(dose_series_, model, duration_s);
        out.outcome.expected_operational = workloads::expected_operational_counts(model, dose_series_.satellite_count, duration_s);
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
            workloads::ranks_interruption_mtbf_s(dose_series_, r.faults, r.recovery, duration_s);
    }
    return true;
}

void RunState::finish_radiation() {
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
        out.annual_dose_rad_per_yr / physics::seconds_per_year_radiation, r.faults, workloads::initial_rank_count(r.recovery, n));
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

void RunState::finish_operational_faults() {
    const auto& f = sc_.faults;
    const double duration_s = summary_.simulated_s;
    if (!summary_.training || summary_.training->steps.empty() || !(duration_s > 0.0)) return;
    auto& out = summary_.operational.emplace();
    out.ranks = fabric_->ranks;
    // No dose: the operational streams are the only ones (a zero rate draws nothing).
    const workloads::DoseRateSeries series = workloads::constant_dose_rate(out.ranks, 0.0);
    workloads::FaultModel model;
    model.operational = f.operational;
    workloads::RecoveryConfig recovery = f.recovery;
    out.interruption_mtbf_s = workloads::interruption_mtbf_s(series, model, out.ranks, duration_s);
    if (recovery.checkpoint_interval_s <= 0.0)
        recovery.mtbf_s = std::isfinite(out.interruption_mtbf_s) ? out.interruption_mtbf_s : 1e3 * duration_s;
    out.expected_by_cause = workloads::expected_operational_counts(model, out.ranks, duration_s);
    const workloads::StepDurations steps = workloads::fault_free_steps(*summary_.training);
    out.events = workloads::sample_fault_events(series, model, duration_s, sc_.seed, 0);
    out.goodput = workloads::simulate_training_with_faults(out.events, out.ranks, duration_s, steps, recovery, true, nullptr, stop_);
    // The same accounting without faults (radiation's): completed steps over the run, no checkpoints,
    // so that goodput / it is what faults and the checkpoints against them cost.
    out.fault_free_goodput = (summary_.training->summary.end_s - summary_.training->summary.start_s) / duration_s;
    if (f.trials > 1) {
        for (auto* rec : recorders_) rec->phase("operational fault trials");
        try {
            out.monte_carlo = workloads::monte_carlo_goodput(series, model, recovery, steps, duration_s, sc_.seed, f.trials,
                                                             backend_, nullptr, scenario::monte_carlo_threads(sc_), stop_);
        } catch (const workloads::TrialsInterrupted& e) {
            summary_.stop_reason = e.what();
            summary_.complete = false;
        }
    }
}

void RunState::play_trials(RadiationOutcome& out, const workloads::FaultModel& model, double duration_s) {
    const auto& r = sc_.radiation;
    // A formation is a constellation of one cluster, whose one algorithm is its job as configured.
    const bool one = !clusters_->constellation();
    const bool trained = one ? summary_.training && !summary_.training->steps.empty() : !summary_.constellation.empty();
    if (!trained || dose_series_.sample_count == 0 || !(duration_s > 0.0)) return;
    workloads::ClusterFaultSetup s;
    s.series = &dose_series_;
    s.model = model;
    s.recovery = r.recovery;
    s.recovery.gateway_failover_s = sc_.constellation.gateways.failover_s;
    // Daly's interval from the orbit's long-term interruption rate (the annual dose's), not from the
    // SAA passes this run happened to see, so that runs of any length checkpoint alike (no
    // interruptions: no checkpoints needed within the run, so one interval spans it).
    if (s.recovery.checkpoint_interval_s <= 0.0)
        s.recovery.mtbf_s = std::isfinite(out.long_term_interruption_mtbf_s) && out.long_term_interruption_mtbf_s > 0.0
                                ? out.long_term_interruption_mtbf_s
                                : 1e3 * duration_s;
    s.duration_s = duration_s;
    s.seed = sc_.seed;
    s.trials = r.trials;
    s.backend = backend_;
    s.threads = scenario::monte_carlo_threads(sc_);
    // Faults act on the fabric: each trial's outages and reboots damage the run's topology timeline,
    // and its steps are solved there (workloads/damaged_fabric.hpp).
    s.timeline = &timeline_;
    s.training = fault_training_setup_;
    s.training_context = fault_training_context_;
    s.stop = stop_;
    if (ranks_) s.share = &ranks_->trials;  // each rank plays its part of the trials, then gathers the rest
    // The trials replay the fault-free run's steps (diloco and noloco: each replica's inner steps): an
    // algorithm that completed none in the run has nothing to replay, so it is named instead of played.
    std::vector<workloads::ClusterAlgorithm> algorithms;
    std::vector<workloads::ClusterTrainingResult> played;
    std::vector<workloads::StepDurations> played_steps;
    for (std::size_t i = 0; i < summary_.constellation.size(); ++i) {
        const auto& c = summary_.constellation[i];
        const auto replicas = static_cast<std::int32_t>(fault_training_setup_.cluster_nodes.size());
        if (!one && !workloads::trials_have_steps(c.algorithm, c, every_step_steps_.at(i), replicas)) {
            out.constellation_not_played.push_back(c.algorithm);
            continue;
        }
        algorithms.push_back(c.algorithm);
        played.push_back(c);
        played_steps.push_back(every_step_steps_.at(i));
    }
    if (!one && algorithms.empty()) return;
    std::span<const workloads::ClusterTrainingResult> fault_free = played;
    std::span<const workloads::StepDurations> steps = played_steps;
    const workloads::ClusterTrainingResult ring_record;  // a formation's: only diloco's and noloco's rounds are read
    const workloads::StepDurations formation_steps = one ? workloads::fault_free_steps(*summary_.training) : workloads::StepDurations{};
    if (one) {
        // The nominal trial, its timeline recorded, beside the trials (with 1 trial, alone).
        s.nominal_events = &out.events;
        algorithms = {workloads::ClusterAlgorithm::ring};
        fault_free = {&ring_record, 1};
        steps = {&formation_steps, 1};
    }
    const auto trials_start = std::chrono::steady_clock::now();
    for (auto* rec : recorders_) rec->phase(one ? "fault trials" : "fault trials of every algorithm");
    auto goodput = workloads::monte_carlo_cluster_goodput(algorithms, s, fault_free, steps);
    if (!one || r.trials > 1)
        out.trials_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - trials_start).count();
    for (const auto& c : goodput) out.fabric_evaluations += c.fabric_evaluations;
    if (one) out.goodput = std::move(goodput.front().nominal);
    // Ctrl-C: the nominal trial is kept, the trials' figures are left out (finish_radiation).
    if (std::any_of(goodput.begin(), goodput.end(), [](const auto& g) { return g.interrupted; })) throw workloads::TrialsInterrupted();
    if (one) {
        auto& g = goodput.front();
        if (r.trials > 1) out.monte_carlo = std::move(g.monte_carlo);
        if (!g.on_fabric) {
            out.fabric_note = "faults do not act on the fabric: the job's " + std::to_string(sc_.workload.job.data_parallel) +
                              " data-parallel ranks are not the " +
                              std::to_string(dose_.size() - static_cast<std::size_t>(r.recovery.spare_satellites)) +
                              " satellites outside the spares";
            return;
        }
    } else {
        out.constellation = std::move(goodput);
    }
    out.fabric_keyframes = static_cast<std::int64_t>(timeline_.keyframe_count());
    out.fabric_topologies = timeline_.topology_count();
    out.fabric_memory_bytes = static_cast<std::int64_t>(timeline_.memory_bytes());
}

}  // namespace skyfabric::simulation
