#pragma once
// One run's state, inside the simulation library: advance() produces the next sample (physics, metrics,
// links, power, dose, and the recorders); in an orbital run the one TopologyProducer calls it, and the
// workloads pull the topologies from there (topology_producer.hpp). Its members are defined by concern:
// simulation.cpp (the physics loop and its producer, power and the summary), run_workloads.cpp (the
// training, of a formation or a constellation alike; serving) and run_faults.cpp (dose, fault draws and
// the coupled trials).

#include "simulation/simulation.hpp"

#include "simulation/sample_statistics.hpp"
#include "simulation/topology_producer.hpp"

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
#include <cmath>
#include <limits>
#include <optional>

namespace skyfabric::simulation {

class RunState {
public:
    RunState(const scenario::Scenario& sc, std::vector<Recorder*> recorders, const std::atomic<bool>* stop,
             const RunRanks* ranks = nullptr, RunRecording recording = {});

    RunSummary execute();

private:
    bool advance();
    // An orbital run: the producer made, the workloads pulling from it, then the rest of the run produced.
    void run_orbit();
    // How far ahead of its consumer the producer's thread runs (0: no thread, the consumer's pulls produce).
    std::size_t producer_capacity() const;
    // With ground stations: each cluster's chief state at sample k, on the uniform grid of output steps.
    void keep_chief_orbits(std::size_t k);
    // A serving run's ground segment (docs/inference.md "Serving from the ground"), one per routing.
    workloads::GroundSegment ground_segment(const workloads::ServingConfig& config);
    // Each station's open link over the serving run (computed once, shared by the routings).
    const std::vector<workloads::StationTimeline>& station_timelines(double start_s, double end_s);

    // Dose rate at every satellite; the dose integrates it by the trapezoid rule.
    void sample_radiation(std::size_t k);

    // The fault model of the run: a constellation's gateway satellites carry gateway terminals, which fail on their own.
    workloads::FaultModel fault_model() const;

    // The nominal trial's fault events on the dose-rate history of the run so far (once: a serving run plays
    // them before the end, finish_radiation reports them). False when more are expected than can be held.
    bool draw_faults();

    // Faults drawn on the dose-rate history, then checkpoint/restart accounting over the
    // training job's own step times.
    void finish_radiation();
    // Operational faults on a synthetic fabric: trial 0 and the Monte Carlo against the fault-free steps.
    void finish_operational_faults();

    // Each training algorithm's trials over the same fault draws (workloads/cluster_faults.hpp): a
    // formation's one (its job as configured), with its nominal trial, or each constellation algorithm's.
    void play_trials(RadiationOutcome& out, const workloads::FaultModel& model, double duration_s);

    // The training job, on a formation or a constellation alike: each cluster's ranks, spares and
    // compute share (power) in one setup (workloads/cluster_training.hpp).
    workloads::ClusterTrainingSetup training_setup();
    // What the run hands that training: each cluster's compute under power, what to record.
    workloads::ClusterTrainingContext training_context();
    // One formation trains its job as configured, pulling one topology per sample from the producer. A
    // constellation's algorithms are replayed over the stored fabric (train_algorithms_on_stored_fabric).
    void run_training();
    void keep_for_fault_trials(workloads::ClusterTrainingSetup setup, workloads::ClusterTrainingContext context);
    // The scenario's training options, their flow solves on the resolved backend.
    workloads::TrainingOptions training_options() const;

    // Every cluster's cumulative station-keeping delta-v, as the satellites are numbered.
    std::span<const double> station_keeping_delta_v();

    // A constellation: the physics first, every topology kept as keyframes, then each training algorithm
    // replayed over them from the start (workloads/cluster_training.hpp), so that they compare on the
    // same fabric. The first algorithm's record, when it steps every rank together, is the run's training.
    void train_algorithms_on_stored_fabric(workloads::ClusterTrainingSetup& setup, workloads::ClusterTrainingContext& context);

    // Serving: the physics first, every topology kept as keyframes, then each routing replayed over them
    // from the start, so that they compare on the same requests and the same fabric.
    void run_inference();

    // Faults and power on the serving instances (docs/inference.md "Faults and power"): the nominal trial's
    // chip and host crashes take their satellite down for reboot_s; each satellite computes at the share
    // its power policy allowed in each sample.
    void add_faults_and_power(workloads::ServingConfig& config);

    template <class Topologies>
    void serve(const Topologies& topologies);

    // The training job beside the serving one: data-parallel over its clusters' free satellites in a
    // ring tour of the first topology, one all-reduce of its gradients after each step's compute (no
    // overlap with the backward pass: docs/inference.md "Serving beside training").
    template <class Topologies>
    workloads::SharedTraining shared_training(const Topologies& topologies) const;

    // A fixed synthetic fabric: one topology for the whole run, ranks on the fabric's nodes.
    void run_fabric_workload();

    // Each satellite's array, battery and radiator over [t_k, t_k+1) (physics/power.hpp): the training
    // (when there is one) asks for full compute; the policy allows what the battery and the heat permit,
    // and the ring runs at its slowest satellite's share. A satellite that browns out loses its links.
    void sample_power(std::size_t k);

    // When `work_s` of full-speed compute started at start_s is done, at a cluster's power-allowed share
    // (compute_fraction) of each sample interval; samples not yet simulated are produced now (their
    // topologies queued for the training's pulls).
    double compute_done_s(double start_s, double work_s, const std::vector<double>& compute_fraction);

    void sample_sunlight(double time_s);

    void finish_summary();

    const scenario::Scenario& sc_;
    workloads::TopologyTimeline timeline_;  // the pulled topologies, as keyframes (radiation, replays, serving)
    workloads::Backend backend_ = workloads::Backend::cpu;  // for batched work (fault draws, flow batches)
    std::vector<Recorder*> recorders_;
    const std::atomic<bool>* stop_;
    const RunRanks* ranks_;  // null: this process alone
    RunRecording recording_;
    std::vector<double> times_;
    std::chrono::steady_clock::time_point wall_start_ = std::chrono::steady_clock::now();
    RunSetup setup_;
    RunSummary summary_;

    std::optional<workloads::Fabric> fabric_;
    std::optional<ClusterSet> clusters_;                // every cluster's physics and links (one without a constellation)
    workloads::ClusterTrainingSetup fault_training_setup_;  // the training's, replayed over timeline_ (fault trials)
    workloads::ClusterTrainingContext fault_training_context_;  // and what its steps are handed there
    std::vector<workloads::StepDurations> every_step_steps_;  // per algorithm: its fault-free steps (empty: diloco, noloco)
    std::vector<physics::FormationPropagator> truth_;  // compare_to_nonlinear: one per cluster
    std::vector<double> delta_v_all_;                  // a constellation's clusters' delta-v, concatenated
    double epoch_julian_date_ = 0.0;
    Eigen::Vector3d sun_eci_m_ = Eigen::Vector3d::Zero();  // at the current sample
    std::vector<physics::PowerState> power_state_;     // [N]
    std::vector<std::vector<double>> cluster_fraction_;  // [cluster][sample]: compute share allowed until the next
    std::vector<double> satellite_share_;              // a serving run's: [sample][satellite]
    std::vector<physics::SampledOrbit> chief_orbits_;  // with ground stations: each cluster's chief, sample by sample
    std::vector<workloads::StationTimeline> ground_timelines_;  // with ground stations: each station's open link
    std::vector<double> cluster_beta_rad_;             // every cluster's β at the current sample
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
    // An orbital run's topologies, sample by sample. Last: destroyed first, its thread stopped before
    // the state it advances goes.
    std::optional<TopologyProducer> producer_;
};

}  // namespace skyfabric::simulation
