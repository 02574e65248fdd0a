// RunState: the training job, a constellation's algorithms and serving (run_state.hpp).
#include "simulation/run_state.hpp"

#include <cstdio>

namespace skyfabric::simulation {

workloads::TrainingOptions RunState::training_options() const {
    auto options = sc_.workload.options;
    options.flow.backend = backend_;
    return options;
}

workloads::ClusterTrainingSetup RunState::training_setup() {
    workloads::ClusterTrainingSetup setup;
    setup.job = sc_.workload.job;
    setup.accelerator = sc_.workload.accelerator;
    setup.options = training_options();
    setup.options.start_s = 0.0;
    setup.options.end_s = sc_.duration_s;
    setup.experts_across_clusters = sc_.workload.experts_across_clusters;
    setup.seed = sc_.seed;
    setup.cluster_nodes = scenario::cluster_ranks(sc_);  // each cluster's hot spares train only in its fault trials
    setup.cluster_satellites = scenario::cluster_satellites(sc_);
    return setup;
}

workloads::ClusterTrainingContext RunState::training_context() {
    workloads::ClusterTrainingContext context;
    context.training.record_link_epochs = recording_.link_epochs;
    if (sc_.power.enabled) {  // each cluster at its own compute share, looked ahead where not yet produced
        context.cluster_compute_done_s = [this](std::size_t c, double start_s, double work_s) {
            return compute_done_s(start_s, work_s, cluster_fraction_[c]);
        };
    }
    return context;
}

void RunState::run_training() {
    workloads::ClusterTrainingSetup setup = training_setup();
    workloads::ClusterTrainingContext context = training_context();
    if (clusters_->constellation()) return train_algorithms_on_stored_fabric(setup, context);
    // One cluster trains one algorithm, its job as configured (workloads::every_step_model): nothing to
    // compare it with, so it needs no replay and pulls the physics' topologies as they come.
    const workloads::TopologySource source = [this](links::Topology& next) { return producer_->pull(next); };
    context.topologies = [&source](double) { return workloads::frame_source(source); };
    // A stop or a numerical failure ends the job after the steps done so far, which are kept (and the
    // faults are played over the time the run covered): from the pull or look-ahead that finds the
    // physics ended on, its steps must end by the last sample simulated.
    context.training.end_limit_s = [this] {
        return producer_->ended() && !summary_.stop_reason.empty() ? summary_.simulated_s : std::numeric_limits<double>::infinity();
    };
    summary_.training = workloads::simulate_cluster_training(workloads::ClusterAlgorithm::ring, setup, context).training;
    keep_for_fault_trials(std::move(setup), std::move(context));
}

void RunState::keep_for_fault_trials(workloads::ClusterTrainingSetup setup, workloads::ClusterTrainingContext context) {
    // The trials replay the fabric the training saw, as stored; the live source and the run's end are gone.
    context.topologies = [this](double from_s) { return timeline_.frames_from(from_s); };
    context.training.end_limit_s = nullptr;
    // Nor does a stop cut a fabric's step short there: the nominal trial is kept whole after a stop
    // (the trials poll it at every fault event instead, simulate_training_with_faults' stop).
    context.training.flow.stop = nullptr;
    fault_training_setup_ = std::move(setup);
    fault_training_context_ = std::move(context);
}

void RunState::train_algorithms_on_stored_fabric(workloads::ClusterTrainingSetup& setup, workloads::ClusterTrainingContext& context) {
    const auto& con = sc_.constellation;
    for (links::Topology t; producer_->pull(t);) {  // the physics to the end, every topology into the timeline
    }
    if (timeline_.keyframe_count() == 0) return;
    setup.options.end_s = summary_.simulated_s;
    context.topologies = [this](double from_s) { return timeline_.frames_from(from_s); };
    // Every algorithm, round and trial's undamaged step runs on these keyframes: one search per pair,
    // guided between clusters by their gateways (workloads::SearchGuide).
    context.training.flow.route_store = std::make_shared<workloads::RouteStore>(
        std::vector<std::int32_t>(clusters_->cluster_of().begin(), clusters_->cluster_of().end()), con.routing_model.value());
    keep_for_fault_trials(setup, context);
    // The algorithms are independent replays of the same stored fabric: run side by side, on the
    // threads the trials may use (the physics is done, so the power lambda only reads).
    const std::int32_t threads = scenario::monte_carlo_threads(sc_);
    std::string what = "training";
    for (const auto algorithm : con.algorithms) what += " " + std::string(workloads::to_string(algorithm));
    for (auto* r : recorders_) r->phase(what);
    // A stop (Ctrl-C) ends every replay at its next step (the trials keep their own copy of the setup),
    // or inside the step in progress: its solves and route searches throw workloads::Interrupted and the
    // replay keeps the steps done (simulate_training). Not so a formation's live training, which ends
    // where the physics stopped (end_limit_s), a step or two later, the same at any producer capacity.
    context.training.flow.stop = stop_;
    context.training.end_limit_s = [this] {
        return stop_ && stop_->load() ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    };
    // Shared among ranks (RunRanks) only without fault trials to follow: each rank plays the trials of
    // every algorithm, whose steps take the routes the fault-free runs put in the route store, so a rank
    // that had not replayed an algorithm searched them again there (measured: the trials 6x slower).
    if (!ranks_ || radiation_model_) {
        summary_.constellation = workloads::simulate_cluster_trainings(con.algorithms, setup, context, threads);
    } else {
        // This rank's algorithms, then every other rank's gathered.
        const auto rank = static_cast<std::size_t>(ranks_->rank()), size = static_cast<std::size_t>(ranks_->size());
        std::vector<workloads::ClusterAlgorithm> mine;
        for (std::size_t i = rank; i < con.algorithms.size(); i += size) mine.push_back(con.algorithms[i]);
        auto computed = mine.empty() ? std::vector<workloads::ClusterTrainingResult>{}
                                     : workloads::simulate_cluster_trainings(mine, setup, context, threads);
        summary_.constellation.resize(con.algorithms.size());
        for (std::size_t j = 0; j < computed.size(); ++j) summary_.constellation[rank + j * size] = std::move(computed[j]);
        ranks_->gather_algorithms(summary_.constellation);
    }
    context.training.end_limit_s = nullptr;
    if (stop_ && stop_->load() && summary_.stop_reason.empty())
        summary_.stop_reason = "interrupted while replaying the constellation's training";
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

void RunState::run_inference() {
    for (links::Topology t; producer_->pull(t);) {  // the physics to the end, every topology into the timeline
    }
    if (timeline_.keyframe_count() == 0) return;
    serve([this](double from_s) { return timeline_.source_from(from_s); });
}

void RunState::add_faults_and_power(workloads::ServingConfig& config) {
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
void RunState::serve(const Topologies& topologies) {
    const auto& in = sc_.inference;
    // Ground data centres are nodes of the serving fabric, after the satellites, joined through their stations'
    // open links (workloads::ground_fabric); timelines and terminals computed on first use.
    const bool datacentres = sc_.ground.enabled && !sc_.ground.segment.datacentres.empty();
    const auto satellites = static_cast<std::int32_t>(scenario::node_count(sc_));
    std::vector<std::int32_t> terminals;
    const auto fabric = [&](double from_s) -> workloads::TopologySource {
        if (!datacentres) return topologies(from_s);
        if (terminals.empty()) terminals = scenario::cluster_ground_terminals(sc_);
        return workloads::ground_fabric(topologies(from_s), sc_.ground.segment, station_timelines(0.0, summary_.simulated_s), terminals, satellites);
    };
    std::vector<workloads::ServingRouting> routings{in.serving.routing};
    if (in.compare_routing)
        routings.push_back(in.serving.routing == workloads::ServingRouting::local ? workloads::ServingRouting::prfaas
                                                                                : workloads::ServingRouting::local);
    // A training job beside the serving one: placed and scheduled once, for every run that carries it.
    const std::optional<workloads::SharedTraining> training =
        scenario::workloads_share_fabric(sc_) ? std::optional(shared_training(fabric)) : std::nullopt;
    // A stop (Ctrl-C) ends the serving run in progress at its current event and the rest are not run.
    const auto stopped = [this](const workloads::ServingResult& r) {
        if (!r.stopped) return false;
        char at[64];
        std::snprintf(at, sizeof at, "%.10g", r.stopped_at_s);
        if (summary_.stop_reason.empty()) summary_.stop_reason = std::string("interrupted while serving at t = ") + at + " s";
        return true;
    };
    for (const auto routing : routings) {
        if (stop_ && stop_->load()) {
            if (summary_.stop_reason.empty()) summary_.stop_reason = "interrupted before serving with the next routing";
            break;
        }
        workloads::ServingConfig config = in.serving;
        config.routing = routing;
        config.nodes = scenario::inference_nodes(sc_);
        config.start_s = 0.0;
        config.end_s = summary_.simulated_s;
        if (clusters_ && clusters_->cluster_count() > 1) {  // the gateway layer's egress, per output step
            config.cluster_of.assign(clusters_->cluster_of().begin(), clusters_->cluster_of().end());
            config.egress_bin_s = sc_.output_step_s;
        }
        if (datacentres && !config.cluster_of.empty())  // the ground's nodes are no cluster's
            config.cluster_of.resize(static_cast<std::size_t>(workloads::ground_fabric_node_count(sc_.ground.segment, satellites)), -1);
        add_faults_and_power(config);
        for (auto* r : recorders_) r->phase(std::string("serving, ") + workloads::to_string(routing) + " routing");
        // With ground stations the requests arrive on the ground: the serving run takes those that reach orbit,
        // as a trace of their arrivals there, and hands its records to the ground segment to bring the tokens down.
        std::optional<workloads::GroundSegment> ground;
        if (sc_.ground.enabled) {
            ground.emplace(ground_segment(config));
            std::vector<workloads::Request> arrivals = config.trace;
            if (arrivals.empty()) {
                workloads::RequestGenerator stream(config.requests, config.start_s);
                for (auto r = stream.next(); r.arrival_s < config.end_s; r = stream.next()) arrivals.push_back(r);
            }
            config.trace = ground->uplink(arrivals);
            if (config.trace.empty()) config.requests.rate_per_s = 0.0;  // none reached orbit: no stream either
        }
        const std::size_t run = summary_.inference.size();
        const workloads::RequestSink sink{[&](std::span<const workloads::RequestRecord> rows) {
            if (ground) ground->downlink(rows);
            for (auto* r : recorders_) r->requests(run, routing, rows);
        }};
        summary_.inference_routing.push_back(routing);
        summary_.inference.push_back(workloads::simulate_serving(config, in.accelerator, fabric(0.0), sink, stop_));
        if (ground) {
            summary_.inference_ground.push_back(ground->summary(config.ttft_slo_s, config.tpot_slo_s));
            summary_.inference_ground_journeys.push_back(ground->take_journeys());
        }
        if (stopped(summary_.inference.back())) break;
        if (!training) continue;
        if (!summary_.training_without_serving) {  // the training's baseline, once: the same engine, no requests
            auto alone = config;
            alone.training = *training;
            alone.trace.clear();
            alone.requests.rate_per_s = 0.0;
            for (auto* r : recorders_) r->phase("training alone on the serving engine");
            const auto result = workloads::simulate_serving(alone, in.accelerator, fabric(0.0), {}, stop_);
            summary_.training_without_serving = result.training;
            if (stopped(result)) break;
        }
        config.training = *training;
        for (auto* r : recorders_) r->phase(std::string("serving beside training, ") + workloads::to_string(routing) + " routing");
        // The figures are the summary's; the records written are the run alone's: these are dropped as they come.
        const workloads::RequestSink drop{[](std::span<const workloads::RequestRecord>) {}};
        auto beside = workloads::simulate_serving(config, in.accelerator, fabric(0.0), drop, stop_);
        const bool stop_now = stopped(beside);
        summary_.inference_beside_training.push_back(std::move(beside));
        if (stop_now) break;
    }
}

const std::vector<workloads::StationTimeline>& RunState::station_timelines(double start_s, double end_s) {
    if (chief_orbits_.empty() || chief_orbits_.front().states_eci.empty())
        throw std::logic_error("ground segment: no chief orbit was kept");
    // The orbits end at the last sample on the grid of output steps (the run's end, or up to a step before it).
    end_s = std::min(end_s, chief_orbits_.front().end_s());
    if (ground_timelines_.empty()) ground_timelines_ = workloads::ground_timelines(sc_.ground.segment, chief_orbits_, start_s, end_s);
    return ground_timelines_;
}

workloads::GroundSegment RunState::ground_segment(const workloads::ServingConfig& config) {
    station_timelines(config.start_s, config.end_s);
    const double end_s = std::min(config.end_s, chief_orbits_.front().end_s());
    // Each instance's cluster: that of its first satellite.
    const auto& e = config.engines;
    const auto node = [&](std::size_t k) { return config.nodes.empty() ? static_cast<std::int32_t>(k) : config.nodes[k]; };
    const auto satellites = static_cast<std::int32_t>(scenario::node_count(sc_));
    const auto cluster = [&](std::int32_t n) {  // -1: on a ground data centre
        if (n >= satellites) return -1;
        return clusters_ ? static_cast<std::int32_t>(clusters_->cluster_of_satellite(static_cast<std::size_t>(n))) : 0;
    };
    std::vector<std::int32_t> prefill, decode;
    const auto p = static_cast<std::size_t>(e.prefill.satellites_per_instance), d = static_cast<std::size_t>(e.decode.satellites_per_instance);
    for (std::size_t i = 0; i < static_cast<std::size_t>(e.prefill.instances); ++i) prefill.push_back(cluster(node(i * p)));
    const std::size_t first_decode = static_cast<std::size_t>(e.prefill.instances) * p;
    for (std::size_t i = 0; i < static_cast<std::size_t>(e.decode.instances); ++i) decode.push_back(cluster(node(first_decode + i * d)));
    return workloads::GroundSegment(sc_.ground.segment, ground_timelines_, chief_orbits_, std::move(prefill), std::move(decode),
                                    config.start_s, end_s, sc_.ground.placement);
}

template <class Topologies>
workloads::SharedTraining RunState::shared_training(const Topologies& topologies) const {
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

void RunState::run_fabric_workload() {
    if (sc_.inference.enabled) {
        summary_.simulated_s = sc_.duration_s;
        serve([this](double) { return workloads::topology_source(std::span(&fabric_->topology, 1)); });
        return;
    }
    if (!sc_.workload.enabled) return;
    auto options = training_options();
    options.start_s = 0.0;
    options.end_s = sc_.duration_s;
    workloads::TrainingContext context;
    context.flow.stop = stop_;  // a stop inside a step ends the job with the steps done (below)
    context.record_link_epochs = recording_.link_epochs;
    // The switch of a star is a node but not a rank: keep ranks on nodes 0..p-1.
    if (fabric_->spec.kind == workloads::FabricKind::switch_star) options.placement = workloads::PlacementPolicy::identity;
    const links::Topology series[] = {fabric_->topology};
    summary_.training = workloads::simulate_training(sc_.workload.job, sc_.workload.accelerator, series, options, context);
    summary_.simulated_s = sc_.duration_s;
    // A stop (Ctrl-C) inside a step (FlowContext::stop) ended the job with the steps done before it.
    if (summary_.training->summary.stopped && stop_ && stop_->load() && summary_.stop_reason.empty()) {
        char at[64];
        std::snprintf(at, sizeof at, "%.10g", summary_.training->summary.end_s);
        summary_.stop_reason = std::string("interrupted while training on the fabric at t = ") + at + " s";
    }
}

}  // namespace skyfabric::simulation
