#pragma once
// The clock loop: at every output instant, advance the physics (every cluster: ClusterSet), derive
// the formation metrics, sunlight, power, links and dose, and hand one Sample to each recorder (HDF5,
// VTK, progress). Recorders do the I/O and stream the per-sample series out; the loop keeps no
// positions or per-sample series of its own. What it keeps grows with the run's length only where a
// later phase reads it: the dose-rate history (radiation: the fault trials are drawn on it once the
// physics is done), the fault-free topology timeline as keyframes (radiation with a workload, a
// constellation's trainings and a serving run's routings, replayed over it), the compute share power allows per sample, and the
// training's step records (docs/architecture.md, "One run").
#include "scenario/scenario.hpp"
#include "simulation/cluster_set.hpp"

#include <skyfabric/links/metrics.hpp>
#include <skyfabric/links/topology.hpp>
#include <skyfabric/physics/propagation.hpp>
#include <skyfabric/physics/radiation.hpp>
#include <skyfabric/workloads/cluster_faults.hpp>
#include <skyfabric/workloads/cluster_training.hpp>
#include <skyfabric/workloads/damaged_fabric.hpp>
#include <skyfabric/workloads/faults.hpp>
#include <skyfabric/workloads/synthetic_fabric.hpp>
#include <skyfabric/workloads/serving.hpp>
#include <skyfabric/workloads/training.hpp>

#include <atomic>
#include <cstdint>
#include <array>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace skyfabric::simulation {

struct RunSetup {
    const scenario::Scenario* scenario = nullptr;
    std::size_t satellite_count = 0;
    std::size_t sample_count = 0;  // output instants, including t = 0 and the end
    std::vector<physics::RelativeState> initial_lvlh;
    const workloads::Fabric* fabric = nullptr;  // synthetic fabric: no samples, only the workload
    // A constellation: each satellite's cluster, and each cluster's gateway satellites (empty: one cluster).
    std::vector<std::int32_t> cluster_of;
    std::vector<std::vector<std::int32_t>> gateway_nodes;
};

struct Sample {
    std::size_t index = 0;
    const physics::FormationSnapshot* snapshot = nullptr;
    std::vector<double> nearest_neighbour_m;      // [N] distance to each satellite's nearest
    std::vector<double> reference_neighbours_m;   // [k] reference satellite's k nearest, nearest first
    double min_separation_m = 0.0;
    std::int32_t min_separation_pair[2] = {0, 0};
    double envelope_m[3] = {0.0, 0.0, 0.0};       // max |x|, |y|, |z| in LVLH
    std::vector<double> model_error_m;            // [N] |r_model - r_nonlinear| when compared, else empty
    std::span<const double> delta_v_m_s;          // [N] cumulative station-keeping delta-v so far
    // Sunlight (physics/illumination.hpp).
    Eigen::Vector3d sun_direction_eci = Eigen::Vector3d::UnitX();
    double beta_angle_rad = 0.0;                  // the chief's orbit plane
    std::vector<double> shadow_fraction;          // [N] Sun's disk hidden by the Earth: 0 sunlit, 1 umbra
    // Power (empty when the scenario has no power section).
    std::vector<double> solar_w;                  // [N] array output
    std::vector<double> load_w;                   // [N] consumed until the next sample
    std::vector<double> state_of_charge;          // [N] battery, 0..1
    std::vector<double> temperature_k;            // [N] lumped thermal node
    double compute_fraction = 1.0;                // share of full compute the ring may use until the next sample
    // Links (null / empty when links are off).
    const links::Topology* topology = nullptr;
    std::span<const links::LinkEvent> link_events;  // events since the previous sample
    links::TopologyMetrics link_metrics;
    const AggregationSample* aggregation = nullptr;  // a constellation's gateway layer (null: one cluster)
    // Radiation (empty when off).
    std::span<const double> dose_rate_rad_s;  // [N] behind the shielding
    std::span<const double> dose_rad;         // [N] total ionising dose so far
    double flux_relative_mean = 0.0;          // mean over satellites, 1 = reference orbit average
};

// What the fault process did to training over the run.
struct RadiationOutcome {
    std::vector<workloads::FaultEvent> events;           // trial 0
    std::optional<workloads::GoodputResult> goodput;     // trial 0, when there is a workload
    std::optional<workloads::MonteCarloResult> monte_carlo;  // when trials > 1 and a workload
    // A constellation: each training algorithm's trials over the same draws (in the scenario's order;
    // goodput, monte_carlo and the job timeline above are then left out).
    std::vector<workloads::ClusterGoodput> constellation;
    // Algorithms whose fault-free run completed no step (it outlasts the run): no trial is played for them,
    // as for a formation's job that trained no step; they are left out of constellation.
    std::vector<workloads::ClusterAlgorithm> constellation_not_played;
    std::array<double, workloads::fault_kind_count> expected_events{};
    std::vector<double> expected_operational;            // operational faults (faults:) by cause, every satellite
    double interruption_mtbf_s = 0.0;                    // this run's dose history (its SAA passes)
    // At the long-term annual dose (below): what an automatic checkpoint interval is planned on.
    double long_term_interruption_mtbf_s = 0.0;
    // The fabric the trials damaged (0 / a note when faults could not act on it).
    std::int64_t fabric_topologies = 0;   // fault-free topologies the run produced
    std::int64_t fabric_keyframes = 0;    // of them kept (the link set or a capacity changed)
    std::int64_t fabric_memory_bytes = 0;
    std::int64_t fabric_evaluations = 0;  // distinct damaged steps solved, over all trials (DamagedFabric::evaluations)
    std::string fabric_note;
    double trials_wall_s = 0.0;           // drawing and playing the Monte Carlo trials (a benchmark figure)
    double dose_mean_rad = 0.0;                          // over satellites, at the end
    double dose_max_rad = 0.0;
    double dose_rate_mean_rad_per_yr = 0.0;              // this run's mean rate over satellites (its SAA passes)
    // Long-term annual dose at the chief's orbit behind the shielding: averaged over the orbit and over
    // every ground track (all node longitudes), independent of the run's length (quiet environment).
    double annual_dose_rad_per_yr = 0.0;
};

// Operational faults on a synthetic fabric (`faults:` without an orbit): the trials played against
// the training job's fault-free steps; the fabric itself is not damaged (docs/faults.md).
struct OperationalOutcome {
    std::int32_t ranks = 0;
    std::vector<workloads::FaultEvent> events;           // trial 0
    std::optional<workloads::GoodputResult> goodput;     // trial 0
    std::optional<workloads::MonteCarloResult> monte_carlo;  // trials > 1
    std::vector<double> expected_by_cause;               // over the run, every rank
    double interruption_mtbf_s = 0.0;                    // what Daly's interval is planned on
    double fault_free_goodput = 0.0;                     // completed fault-free steps over the run (no checkpoints)
};

struct RunSummary {
    bool complete = false;
    std::string stop_reason;  // empty when complete
    std::int32_t ranks = 1;   // the processes the run was shared among (RunRanks)
    std::size_t samples_written = 0;
    double simulated_s = 0.0;
    double wall_s = 0.0;
    double nearest_neighbour_min_m = 0.0;
    double nearest_neighbour_max_m = 0.0;
    double reference_neighbours_min_m = 0.0;
    double reference_neighbours_max_m = 0.0;
    double min_separation_m = 0.0;
    double min_separation_time_s = 0.0;
    std::int32_t min_separation_pair[2] = {0, 0};
    std::size_t separation_alarms = 0;  // samples below the alarm threshold
    double envelope_max_m[3] = {0.0, 0.0, 0.0};
    double model_error_max_m = 0.0;     // when compare_to: nonlinear
    // Sunlight over the run (every sample).
    double beta_angle_min_rad = 0.0;
    double beta_angle_max_rad = 0.0;
    double shadow_fraction_mean = 0.0;   // over satellites and samples: the run's share of time in shadow
    std::size_t samples_in_shadow = 0;   // samples with any satellite's shadow fraction > 0
    // Power (when the scenario has a power section).
    double power_state_of_charge_min = 0.0;
    double power_temperature_max_k = 0.0;
    double power_generated_kwh = 0.0;    // per satellite, mean
    double power_used_kwh = 0.0;
    double power_shunted_kwh = 0.0;      // array output neither used nor storable
    double power_compute_lost_s = 0.0;   // run time x (1 - allowed compute share), summed over intervals
    std::size_t power_samples_limited = 0;
    std::size_t power_brownouts = 0;     // satellite-intervals without power for the base loads
    std::vector<double> station_keeping_delta_v_m_s;              // [N] cumulative
    std::vector<double> station_keeping_acquisition_delta_v_m_s;  // [N] one-off, at the first control call
    double station_keeping_steady_since_s = 0.0;                  // steady holding counted from here
    double station_keeping_deviation_max_m = 0.0;                 // max |r - r_reference| over samples
    std::vector<double> differential_drag_delta_v_m_s;            // [N] integral |a_drag,i - a_drag,chief| dt
    // Links, over all samples (zero when links are off).
    double link_capacity_min_bps = 0.0;   // 0 when a link was re-acquiring at some sample
    double link_capacity_mean_bps = 0.0;  // mean over every link-sample
    std::int64_t link_samples = 0;                  // links summed over samples
    std::int64_t link_samples_acquiring = 0;        // of those, links still re-acquiring (capacity 0)
    double link_capacity_min_carrying_bps = 0.0;    // min over the link-samples carrying traffic
    double link_capacity_max_bps = 0.0;
    double bisection_capacity_min_bps = 0.0;
    double bisection_capacity_mean_bps = 0.0;
    double links_per_satellite_mean = 0.0;
    int links_per_satellite_max = 0;
    int components_max = 0;               // 1 = connected at every sample
    std::size_t link_events = 0;
    // A constellation's aggregation layer over all samples (zero for one cluster).
    double gateway_capacity_min_bps = 0.0;   // per direction, summed over the layer
    double gateway_capacity_mean_bps = 0.0;
    int gateway_links_min = 0;
    int gateway_links_max = 0;
    int gateway_blocked_max = 0;             // pairs the Earth hid at once, at most
    double oversubscription_min = 0.0;       // worst cluster's bisection / gateway capacity, over samples
    double oversubscription_mean = 0.0;
    double oversubscription_max = 0.0;
    // The training job, when the scenario has one (a constellation: its first algorithm's record,
    // when that one steps every rank together).
    std::optional<workloads::TrainingResult> training;
    // A constellation's training algorithms, side by side (constellation.algorithms, in order).
    std::vector<workloads::ClusterTrainingResult> constellation;
    std::optional<RadiationOutcome> radiation;
    std::optional<OperationalOutcome> operational;
    // A serving workload (workload.kind: inference): one run per routing, over the same requests and
    // the same fabric (the scenario's routing first, then with compare_routing the other one).
    std::vector<workloads::ServingRouting> inference_routing;
    std::vector<workloads::ServingResult> inference;
    // With ground_stations: each routing's ground segment (docs/inference.md "Serving from the ground").
    std::vector<workloads::GroundServingSummary> inference_ground;
    std::vector<std::vector<workloads::GroundJourney>> inference_ground_journeys;  // by trace id (= /inference/requests id)
    // A training job beside the serving one (`workloads:`, docs/inference.md "Serving beside training"):
    // per routing, as above, the same requests with the training on the fabric (request records not
    // kept); and the training on the same engine and fabric with no requests, the baseline of its slowdown.
    std::vector<workloads::ServingResult> inference_beside_training;
    std::optional<workloads::SharedTrainingSummary> training_without_serving;
};

class Recorder {
public:
    virtual ~Recorder() = default;
    virtual void begin(const RunSetup& setup) = 0;
    virtual void record(const Sample& sample) = 0;
    virtual void end(const RunSummary& summary) = 0;
    // Work after the samples that takes a while (a constellation's trainings): what is running now.
    virtual void phase(const std::string& what) { (void)what; }
    // A serving run's requests while it runs, in arrival order, each once (workloads::RequestSink); `run` is its
    // index in RunSummary::inference, whose `requests` stay empty: nothing holds every request of a run.
    virtual void requests(std::size_t run, workloads::ServingRouting routing, std::span<const workloads::RequestRecord> rows) {
        (void)run, (void)routing, (void)rows;
    }
};

// Output instants: 0, step, 2 step, ..., and the end time if it falls between.
std::vector<double> sample_times(double duration_s, double output_step_s);

// The scenario's formation and its link topology at one instant (links taken as
// already acquired). Throws ScenarioError if the scenario has no links.
links::Topology topology_at(const scenario::Scenario& scenario, double time_s);

// One run shared among processes (`mpirun -n N skyfabric run`; cli/run_ranks.hpp gives it over MPI,
// this library knows only these callbacks). Every rank runs the physics and the fault-free training
// of a formation alike (deterministic: the same on every rank); a constellation's fault-free
// algorithms are split by their position in constellation.algorithms (rank r computes those at
// r, r + N, ...; only without radiation: the trials reuse every algorithm's routes) and gathered on
// every rank; the fault trials of every algorithm by trial index (trials: TrialShare). Every rank thus ends with the summary one process gives; only rank 0 has
// recorders (writes files).
struct RunRanks {
    workloads::TrialShare trials;  // part: this rank, parts: the ranks
    // results[i], computed here where i % ranks == rank, is filled in for every other i.
    std::function<void(std::vector<workloads::ClusterTrainingResult>& results)> gather_algorithms;
    std::int32_t rank() const { return trials.part; }
    std::int32_t size() const { return trials.parts; }
};

// What a run records beyond its summary, as its outputs ask (not the scenario: the same scenario
// traced or not is the same settings).
struct RunRecording {
    // The training's busy links per topology epoch (TrainingResult::link_epochs): a trace, VTK frames.
    bool link_epochs = false;
};

// Runs the scenario, feeding every recorder. `stop` is polled between samples (signals);
// a stop or a numerical failure ends the run with summary.complete = false and still
// calls end() on every recorder. `ranks`: this process's share of a run over several (above).
RunSummary run(const scenario::Scenario& scenario, std::vector<Recorder*> recorders,
               const std::atomic<bool>* stop = nullptr, const RunRanks* ranks = nullptr, RunRecording recording = {});

}  // namespace skyfabric::simulation
