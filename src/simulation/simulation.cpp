// RunState: the physics loop, sunlight and power, and the summary (run_state.hpp).
#include "simulation/run_state.hpp"

#include <thread>

namespace skyfabric::simulation {

RunState::RunState(const scenario::Scenario& sc, std::vector<Recorder*> recorders, const std::atomic<bool>* stop,
                   const RunRanks* ranks, RunRecording recording)
    : sc_(sc), recorders_(std::move(recorders)), stop_(stop), ranks_(ranks), recording_(recording), times_(sample_times(sc.duration_s, sc.output_step_s)) {
    if (ranks_ && ranks_->size() > 1) summary_.ranks = ranks_->size();
    else ranks_ = nullptr;
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
    // Read ahead of the physics by the training's compute_done_s: full speed until a sample says otherwise.
    if (sc.power.enabled) cluster_fraction_.assign(clusters_->cluster_count(), std::vector<double>(times_.size(), 1.0));
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
    if (sc.links.enabled)
        summary_.link_capacity_min_bps = summary_.bisection_capacity_min_bps = summary_.link_capacity_min_carrying_bps = inf;
    if (clusters_->constellation()) summary_.gateway_capacity_min_bps = summary_.oversubscription_min = inf;
}

RunSummary RunState::execute() {
    for (auto* r : recorders_) r->begin(setup_);
    try {
        if (fabric_) run_fabric_workload();
        else run_orbit();
    } catch (const physics::PropagationError& e) {
        summary_.stop_reason = std::string("numerical failure: ") + e.what();
    } catch (const workloads::Interrupted& e) {  // a stop seen inside a workload's loop (FlowContext::stop)
        if (summary_.stop_reason.empty()) summary_.stop_reason = e.what();
    }
    summary_.complete = summary_.stop_reason.empty() && summary_.samples_written == times_.size();
    if (radiation_model_) finish_radiation();
    if (fabric_ && sc_.faults.enabled) finish_operational_faults();
    finish_summary();
    for (auto* r : recorders_) r->end(summary_);
    return std::move(summary_);
}

void RunState::keep_chief_orbits(std::size_t k) {
    if (chief_orbits_.empty()) {
        chief_orbits_.resize(clusters_->cluster_count());
        for (auto& o : chief_orbits_) {
            o.start_s = times_.front();
            o.step_s = sc_.output_step_s;
        }
    }
    // The interpolation needs a uniform grid: a last sample off it (the run's end between steps) is left out.
    const double on_grid_s = times_.front() + static_cast<double>(k) * sc_.output_step_s;
    if (std::abs(times_[k] - on_grid_s) > 1e-9 * std::max(1.0, on_grid_s)) return;
    for (std::size_t c = 0; c < chief_orbits_.size(); ++c) chief_orbits_[c].states_eci.push_back(clusters_->cluster_snapshot(c).chief_eci);
}

bool RunState::advance() {
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
    if (sc_.ground.enabled) keep_chief_orbits(k);
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

std::span<const double> RunState::station_keeping_delta_v() {
    if (!clusters_->constellation()) return clusters_->propagator(0).station_keeping_delta_v_m_s();
    delta_v_all_.clear();
    for (std::size_t c = 0; c < clusters_->cluster_count(); ++c) {
        const auto dv = clusters_->propagator(c).station_keeping_delta_v_m_s();
        delta_v_all_.insert(delta_v_all_.end(), dv.begin(), dv.end());
    }
    return delta_v_all_;
}

std::size_t RunState::producer_capacity() const {
    // Only a formation's live training has work to overlap with the physics (a replay's or serving's
    // consumer only stores the topologies): with two threads to spare the physics runs on a thread of
    // its own, up to 16 samples ahead. Not under a power limit, as before the one producer: its
    // look-ahead gives the same outputs at either capacity, but the thread was not measured faster there.
    if (!sc_.workload.enabled || sc_.inference.enabled || clusters_->constellation() || sc_.power.enabled) return 0;
    const std::int32_t budget = sc_.threads > 0 ? sc_.threads : static_cast<std::int32_t>(std::thread::hardware_concurrency());
    return budget >= 2 ? 16 : 0;
}

void RunState::run_orbit() {
    producer_.emplace(
        [this](links::Topology* next) {
            if (!advance()) return false;
            if (next) *next = topology_;
            return true;
        },
        producer_capacity(),
        // A numerical failure, met where a pull or a look-ahead finds the end, becomes the stop reason
        // there: the training ends with its steps kept instead of unwinding.
        [this](std::exception_ptr thrown) {
            if (!thrown) return;
            try {
                std::rethrow_exception(thrown);
            } catch (const physics::PropagationError& e) {
                summary_.stop_reason = std::string("numerical failure: ") + e.what();
            }
        });
    // Every topology pulled is kept where a later phase replays it: the fault trials damage it, a
    // constellation's algorithms and a serving run's routings compare on it.
    if (radiation_model_ || clusters_->constellation() || sc_.inference.enabled)
        producer_->subscribe([this](const links::Topology& t) { timeline_.append(t); });
    try {
        if (sc_.inference.enabled) run_inference();
        else if (sc_.workload.enabled) run_training();
    } catch (...) {
        producer_->stop();  // before the run's state is read by anyone else
        throw;
    }
    // Samples no workload pulled (the job ended early, or there is none), to the run's end.
    producer_->run_out();
}

void RunState::sample_power(std::size_t k) {
    const auto& p = sc_.power.parameters;
    const std::size_t n = sample_.shadow_fraction.size();
    if (power_state_.empty()) power_state_.assign(n, physics::initial_power_state(p));
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
    // Each cluster its own β (its own plane) and its own compute share.
    const std::size_t clusters = clusters_->cluster_count();
    std::vector<double> cluster_fraction(clusters, 1.0);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t c = clusters_->cluster_of_satellite(i);
        const double beta_rad = cluster_beta_rad_[c];
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
    for (std::size_t c = 0; c < clusters; ++c) cluster_fraction_[c][k] = cluster_fraction[c];
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

double RunState::compute_done_s(double start_s, double work_s, const std::vector<double>& compute_fraction) {
    std::size_t k = static_cast<std::size_t>(std::upper_bound(times_.begin(), times_.end(), start_s) - times_.begin());
    k = k > 0 ? k - 1 : 0;
    double t = start_s, left = work_s;
    while (true) {
        if (!producer_->reach(k + 1)) {  // sample k looked ahead: produced now if it was not yet
            // Stopped: this compute never finishes (the job ends); past the run's end nothing limits it.
            if (!summary_.stop_reason.empty()) return std::numeric_limits<double>::infinity();
            return t + left;
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

void RunState::sample_sunlight(double time_s) {
    sun_eci_m_ = physics::sun_position_eci_m(epoch_julian_date_ + time_s / physics::seconds_per_day);
    const Eigen::Vector3d& sun = sun_eci_m_;
    sample_.sun_direction_eci = sun.normalized();
    cluster_beta_rad_.resize(clusters_->cluster_count());
    for (std::size_t c = 0; c < cluster_beta_rad_.size(); ++c) {
        const auto& chief = clusters_->cluster_snapshot(c).chief_eci;
        cluster_beta_rad_[c] = physics::beta_angle_rad(chief.position_m, chief.velocity_m_s, sun);
    }
    sample_.beta_angle_rad = cluster_beta_rad_.front();  // cluster 0's chief is the constellation's
    sample_.shadow_fraction.resize(snapshot_.satellites_eci.size());
    for (std::size_t i = 0; i < snapshot_.satellites_eci.size(); ++i) {
        sample_.shadow_fraction[i] = physics::shadow_fraction(snapshot_.satellites_eci[i].position_m, sun);
    }
}

void RunState::finish_summary() {
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

RunSummary run(const scenario::Scenario& sc, std::vector<Recorder*> recorders, const std::atomic<bool>* stop,
               const RunRanks* ranks, RunRecording recording) {
    return RunState(sc, std::move(recorders), stop, ranks, recording).execute();
}

}  // namespace skyfabric::simulation
