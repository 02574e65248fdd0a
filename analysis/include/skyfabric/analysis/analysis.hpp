#pragma once
// Why a run was slow (issue 49): the analysis model behind `skyfabric analyze`. Plain structs in,
// plain structs out; no files, no JSON, no HDF5 (src/cli/analyze_command.cpp reads a run folder into
// an `Input` and writes the `Analysis` as analysis.json and a table). docs/analysis.md describes
// every breakdown, detector (threshold, evidence) and recommendation.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <skyfabric/physics/enum_names.hpp>

namespace skyfabric::analysis {

enum class RunKind { formation, constellation, fabric, serving };
inline constexpr auto run_kind_names = physics::enum_names<RunKind>({{RunKind::formation, "formation"},
                                                                     {RunKind::constellation, "constellation"},
                                                                     {RunKind::fabric, "fabric"},
                                                                     {RunKind::serving, "serving"}});
inline const char* to_string(RunKind kind) { return run_kind_names.name(kind); }

// A collective of a step (/workload/collectives): its kind ("all_reduce ring") and when it ran.
struct CollectiveSpan {
    std::string name;
    double start_s = 0.0;
    double end_s = 0.0;
};

// One training step of the run's /workload/steps, with the stalls of its collectives.
struct StepRecord {
    double start_s = 0.0;
    double end_s = 0.0;
    double compute_s = 0.0;
    double stalled_s = 0.0;  // its collectives' stalled_s + lost_s (waiting for a path, topology changes)
    std::vector<CollectiveSpan> collectives;  // empty: not recorded (the exposed transfer stays one part)
};

// The step-by-step record of the run's training (a constellation: its first algorithm's).
struct TrainingInput {
    std::string algorithm = "ring";
    std::vector<StepRecord> steps;
    double compute_full_speed_s = 0.0;  // one step's compute at full speed (summary compute_per_step_s)
    double throttled_s = 0.0;           // compute beyond full speed from power, summed over steps
    double straggler_s = 0.0;           // compute added by stragglers, summed over steps
};

// One row of a constellation's algorithm table (/constellation/algorithms, summary.json).
struct AlgorithmRecord {
    std::string name;
    double steps = 0.0;
    double step_time_mean_s = 0.0;
    double compute_per_step_s = 0.0;
    double compute_throttled_s = 0.0;  // DiLoCo/NoLoCo: mean over replicas
    double straggler_s = 0.0;
    double outer_rounds = 0.0;
    double outer_sync_mean_s = 0.0;
    double outer_wait_mean_s = 0.0;
};

// One DiLoCo/NoLoCo replica's round (/constellation/rounds): its inner steps over [start_s, ready_s),
// then the wait for the replicas it syncs with until sync_start_s, then the outer sync until end_s.
struct ReplicaRoundRecord {
    std::string algorithm;
    int replica = 0;  // = its cluster
    double inner_steps = 0.0;
    double start_s = 0.0, ready_s = 0.0, sync_start_s = 0.0, end_s = 0.0;
};

// A link's training traffic over the run (/workload/link_utilisation).
struct LinkUse {
    int source = 0;
    int target = 0;
    double bytes = 0.0;
    double capacity_bytes = 0.0;
    bool gateway = false;  // ends in different clusters
    double utilisation() const { return capacity_bytes > 0.0 ? bytes / capacity_bytes : 0.0; }
};

// A cluster's eclipse and battery over the run (a formation is cluster 0).
struct ClusterPower {
    int cluster = 0;
    double shadow_fraction_mean = 0.0;    // satellite-time in the Earth's shadow
    double state_of_charge_min = 1.0;     // over its satellites and samples
    double energy_deficit_max_wh = 0.0;   // most energy a satellite drew from its battery at full compute (below)
};

struct PowerInput {
    bool enabled = false;
    double battery_capacity_wh = 0.0;
    double min_state_of_charge = 0.0;  // power.battery_min_state_of_charge
    double discharge_efficiency = 1.0;
    std::vector<ClusterPower> clusters;
};

// Faults against one algorithm's job: the trials' means (their sums hold per trial, so for the mean).
struct FaultInput {
    std::string algorithm = "ring";
    int trials = 0;
    double elapsed_s = 0.0;                 // the run's length
    double goodput = 0.0;                   // mean over trials
    double lost_faults_s = 0.0, lost_restarts_s = 0.0, lost_checkpoints_s = 0.0, lost_fabric_s = 0.0,
           lost_shrunk_s = 0.0, lost_waiting_s = 0.0, gained_fabric_s = 0.0;
    double checkpoint_interval_s = 0.0;     // τ the run used
    bool interval_from_scenario = false;    // radiation.checkpoint_interval set (not auto)
    double checkpoint_cost_s = 0.0;         // δ
    double restart_s = 0.0;                 // R
    double mtbi_long_term_s = 0.0;          // what auto plans on (the orbit's annual dose)
    double mtbi_run_s = 0.0;                // this run's dose history
};

// One serving request (/inference/requests); times NaN where not reached.
struct RequestRecord {
    double arrival_s = 0.0;
    double prefill_start_s = 0.0;
    double prefill_end_s = 0.0;
    double first_token_s = 0.0;
    int status = 0;  // 0 completed
};

struct ServingInput {
    bool enabled = false;
    std::string routing = "local";
    double ttft_slo_s = 0.0;
    int prefill_instances = 0;
    int decode_instances = 0;
    int satellites_per_prefill_instance = 0;
    std::string network_routing = "shortest_latency";
    std::vector<RequestRecord> requests;
};

// The scenario's settings the recommendations change.
struct Settings {
    std::string routing = "shortest_latency";  // workload.routing
    int gradient_buckets = 4;
    int gateways_per_cluster = 0;              // 0: no constellation
    double oversubscription_mean = 0.0;
    int clusters = 1;
};

struct Input {
    RunKind kind = RunKind::formation;
    std::string scenario;
    std::optional<TrainingInput> training;
    std::vector<AlgorithmRecord> algorithms;  // a constellation's
    std::vector<ReplicaRoundRecord> rounds;   // its replicated algorithms' rounds
    std::vector<LinkUse> links;
    PowerInput power;
    std::vector<FaultInput> faults;  // one per algorithm played against faults
    ServingInput serving;
    Settings settings;
};

// ---- what the analysis gives ----

struct Part {
    std::string name;
    double seconds = 0.0;
};

// A time split into parts that add up to it: `total_s` = Σ parts. Where a part is what is left of
// the total after the others (a derived residual), its name says so.
struct Breakdown {
    std::string subject;     // "ring step (mean of 873 steps)"
    std::string total_name;  // "step time"
    double total_s = 0.0;
    std::vector<Part> parts;
    // Largest |Σ parts − total| / total over the records it averages (each step, each request).
    double max_relative_residual = 0.0;
    double parts_sum_s() const;
};

struct HotSpot {
    std::string kind;  // "link", "gateway link", "cluster"
    std::string name;  // "3-4", "cluster 3"
    double value = 0.0;
    std::string unit;  // "utilisation", "shadow fraction"
    std::string note;
};

// A concrete `--set key=value` and what it should do to one metric of the run's summary.json.
struct Recommendation {
    std::string key;
    std::string value;
    // The metric the effect is measured on: "step_time_mean_s" (of `algorithm`), "goodput" (of
    // `algorithm`), "slo_attainment" (of the serving routing `algorithm`).
    std::string metric;
    std::string algorithm;
    // Where the change replaces the algorithm (constellation.algorithms): the one whose metric the
    // rerun is measured on; "" = `algorithm`.
    std::string after_algorithm;
    bool lower_is_better = true;
    double expected_relative_change = 0.0;  // (new − old) / old of the metric, signed
    std::string expected;                   // in words
    std::string why;
    std::string set_argument() const { return key + "=" + value; }
};

struct AntiPattern {
    std::string id;         // exposed_communication, slow_link, routing_imbalance, gateway_oversubscription,
                            // straggling_cluster, checkpoint_interval, rollback_losses, serving_kv_transfer,
                            // serving_queueing, serving_prefill
    std::string title;
    std::string threshold;  // the detector's rule, in words with its numbers
    std::string evidence;   // the run's numbers that met it
    std::string cause;      // the cause, as specific as the data allows
    double impact = 0.0;    // share of the time it costs (of the step, the run, or the missed requests' TTFT)
    std::string explained_by;  // id of a more specific anti-pattern that explains this one's time ("" if none)
    std::vector<Recommendation> recommendations;
};

struct Analysis {
    RunKind kind = RunKind::formation;
    std::vector<Breakdown> breakdowns;
    std::vector<HotSpot> hot_spots;
    std::vector<AntiPattern> anti_patterns;  // causes first (by impact), then the symptoms they explain
};

// Detector thresholds (docs/analysis.md).
inline constexpr double exposed_communication_share = 0.20;   // of the step
inline constexpr double slow_link_capacity_ratio = 0.5;       // of the median link's capacity
inline constexpr double slow_link_utilisation_ratio = 4.0;    // × the median link's utilisation
inline constexpr double imbalance_idle_ratio = 0.05;          // a link below 5 % of the hottest's utilisation is idle
inline constexpr double imbalance_idle_share = 0.25;          // ... and at least a quarter of the links are
inline constexpr double imbalance_hot_utilisation = 0.2;      // while the hottest is at least this busy
inline constexpr double gateway_utilisation_ratio = 4.0;      // gateway links × busier than the cluster links
inline constexpr double straggler_share = 0.02;               // throttled/straggling compute, share of the step
inline constexpr double checkpoint_ratio = 2.0;               // τ / τ_Daly outside [1/2, 2]
inline constexpr double checkpoint_min_gain = 0.005;          // ... and the model's waste falls by ≥ 0.5 % of the run
inline constexpr double rollback_share_of_losses = 0.5;       // rework + restarts, share of the losses to faults
inline constexpr double rollback_min_share_of_run = 0.05;     // ... and of the run
inline constexpr double serving_min_misses = 0.01;            // at least 1 % of completed requests miss the TTFT objective
inline constexpr double exposed_min_share_for_links = 0.05;   // link detectors need the step ≥ 5 % exposed

Analysis analyse(const Input& input);

}  // namespace skyfabric::analysis
