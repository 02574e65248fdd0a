#pragma once
// A scenario as plain, validated config structs, SI units inside. Nothing YAML-shaped
// leaks out of src/scenario: the model libraries receive their own parameter structs.
#include <skyfabric/physics/enum_names.hpp>
#include <skyfabric/physics/formation.hpp>
#include <skyfabric/physics/power.hpp>
#include <skyfabric/physics/propagation.hpp>
#include <skyfabric/physics/time.hpp>
#include <skyfabric/links/aggregation.hpp>
#include <skyfabric/links/topology_policy.hpp>
#include <skyfabric/physics/radiation.hpp>
#include <skyfabric/workloads/cluster_training.hpp>
#include <skyfabric/workloads/faults.hpp>
#include <skyfabric/workloads/flow_solver.hpp>
#include <skyfabric/workloads/job.hpp>
#include <skyfabric/workloads/ground_segment.hpp>
#include <skyfabric/workloads/serving.hpp>
#include <skyfabric/workloads/synthetic_fabric.hpp>
#include <skyfabric/workloads/training.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace skyfabric::scenario {

struct OrbitConfig {
    double semi_major_axis_m = 0.0;  // from altitude_km or semi_major_axis_km
    double eccentricity = 0.0;
    bool sun_synchronous = true;     // inclination from J2 nodal precession
    double inclination_rad = 0.0;    // used when not sun_synchronous
    std::optional<double> ltan_h;    // sets RAAN from the Sun at the epoch
    double raan_rad = 0.0;           // used when ltan_h is absent
    double arg_perigee_rad = 0.0;
    double arg_latitude_rad = 0.0;   // chief position along the orbit at the epoch
    physics::UtcEpoch epoch;
    std::string epoch_text = "2027-03-20T00:00:00Z";
    bool operator==(const OrbitConfig&) const = default;
};

enum class FormationLayout { suncatcher_lattice, hexagonal, explicit_states };
inline constexpr auto formation_layout_names = physics::enum_names<FormationLayout>({
    {FormationLayout::suncatcher_lattice, "suncatcher_lattice"},
    {FormationLayout::hexagonal, "hexagonal"},
    {FormationLayout::explicit_states, "explicit"},
});

// formation.relative_orbits: j2_mean_elements = physics::j2_mean_element_formation (bounded under J2),
// hcw = the plain HCW 2:1 ellipse with the Keplerian n, schweighart_sedwick = the SS-trimmed ellipse.
enum class RelativeOrbits { automatic, j2_mean_elements, hcw, schweighart_sedwick };
inline constexpr auto relative_orbits_names = physics::enum_names<RelativeOrbits>({
    {RelativeOrbits::automatic, "auto"},
    {RelativeOrbits::j2_mean_elements, "j2_mean_elements"},
    {RelativeOrbits::hcw, "hcw"},
    {RelativeOrbits::schweighart_sedwick, "schweighart_sedwick"},
});

struct FormationConfig {
    FormationLayout layout = FormationLayout::suncatcher_lattice;
    double radius_m = 1000.0;
    double radial_pitch_m = 100.0;       // suncatcher_lattice
    double along_track_pitch_m = 200.0;  // suncatcher_lattice
    double pitch_m = 150.0;              // hexagonal
    double out_of_plane_amplitude_m = 0.0;
    // How each relative orbit is made bounded; auto follows dynamics.model (see resolved_relative_orbits).
    RelativeOrbits relative_orbits = RelativeOrbits::automatic;
    std::vector<physics::RelativeState> explicit_states;  // layout: explicit
    bool operator==(const FormationConfig&) const = default;
};

struct DynamicsConfig {
    physics::RelativeMotionModel model = physics::RelativeMotionModel::nonlinear;
    bool j2 = true;
    physics::DragSettings drag;
    double relative_tolerance = physics::PropagationSettings{}.relative_tolerance;
    double absolute_tolerance = physics::PropagationSettings{}.absolute_tolerance;
    bool compare_to_nonlinear = false;
    bool operator==(const DynamicsConfig&) const = default;
};

struct MetricsConfig {
    double min_separation_alarm_m = 20.0;
    int neighbour_count = 8;          // neighbours tracked for the reference satellite
    int reference_satellite = 0;
    bool operator==(const MetricsConfig&) const = default;
};

enum class VtkFrame { lvlh, eci };
inline constexpr auto vtk_frame_names = physics::enum_names<VtkFrame>({{VtkFrame::lvlh, "lvlh"}, {VtkFrame::eci, "eci"}});

struct OutputConfig {
    bool hdf5 = true;
    bool eci = true;          // write /formation/*_eci_*
    bool vtk = false;
    int vtk_every = 1;
    VtkFrame vtk_frame = VtkFrame::lvlh;
    int compression_level = 1;  // deflate level of the compressible series (docs/output-format.md)
    bool trace = false;                    // DIR/trace.json, Chrome trace-event / Perfetto
    std::int64_t trace_max_events = 200000;
    double trace_window_start_s = -1.0;    // < 0: from the start
    double trace_window_end_s = -1.0;      // < 0: to the end
    bool operator==(const OutputConfig&) const = default;
};

struct LinksConfig {
    bool enabled = false;
    links::TopologyParameters topology;  // policy, terminals, optics (budget) in SI
    bool operator==(const LinksConfig&) const = default;
};

struct WorkloadConfig {
    bool enabled = false;
    workloads::Accelerator accelerator;
    workloads::TrainingJob job;       // data_parallel 0 in the file = every satellite
    workloads::TrainingOptions options;
    workloads::Backend backend = workloads::Backend::automatic;
    physics::PowerPolicy power_policy = physics::PowerPolicy::throttle;  // with a power section
    // What a rank's crash does (with radiation); unset: spare when there are spares, else wait.
    std::optional<workloads::RankLossPolicy> on_rank_loss;
    // parallelism.expert_placement: a constellation's expert groups inside one cluster each, or
    // spread over every cluster (workloads::ClusterTrainingSetup::experts_across_clusters).
    bool experts_across_clusters = false;
    // `workloads:` with a serving job beside it (docs/inference.md "Serving beside training"): the
    // clusters whose satellites, those no serving instance holds, run this job. Empty: the job alone.
    std::vector<std::int32_t> clusters;
    bool operator==(const WorkloadConfig&) const = default;
};

// workload.kind: inference (docs/inference.md): serving a model with disaggregated prefill and decode.
// The scenario's accelerator keys (workload.accelerator, peak_tflops, hbm_gb, hbm_bandwidth_gbs) apply.
struct InferenceConfig {
    bool enabled = false;
    workloads::Accelerator accelerator;
    workloads::ServingConfig serving;  // requests (or the trace), engines, routing; nodes and times set by the run
    std::string trace_file;            // arrivals.trace as resolved (empty: the Poisson stream)
    bool compare_routing = false;      // run local PD and PrfaaS on the same requests, side by side
    // engines.prefill.site / decode.site as written: "orbit" or a ground data centre's name (resolved
    // into GroundConfig::placement by resolve).
    std::string prefill_site = "orbit", decode_site = "orbit";
    physics::PowerPolicy power_policy = physics::PowerPolicy::throttle;  // with a power section
    // arrivals.seed as written (absent: the scenario's seed); resolve sets serving.requests.seed from it.
    std::optional<std::uint64_t> arrivals_seed;
    bool operator==(const InferenceConfig&) const = default;
};

// ground_stations: present = the serving workload's users are on the ground (docs/inference.md
// "Serving from the ground"): requests go up through the stations, tokens come down.
struct GroundConfig {
    bool enabled = false;
    workloads::GroundSegmentConfig segment;  // epoch and seed: the orbit's and the scenario's (resolve)
    workloads::GroundPlacement placement;    // the serving roles on ground data centres (engines.*.site)
    bool operator==(const GroundConfig&) const = default;
};

// power: present = enabled. Each satellite's array, battery, loads and radiator (physics/power.hpp);
// the workload's compute follows workload.power_policy.
struct PowerConfig {
    bool enabled = false;
    physics::PowerParameters parameters = physics::suncatcher_class_power();
    bool operator==(const PowerConfig&) const = default;
};

struct RadiationConfig {
    bool enabled = false;
    physics::EnvironmentParameters environment;  // epoch: the orbit's (resolve)
    workloads::FaultModel faults;
    workloads::RecoveryConfig recovery;          // checkpoint_interval_s 0 = auto (Daly)
    std::int32_t trials = 1;                     // Monte Carlo repetitions of the fault process
    std::int32_t threads = 0;                    // CPU threads playing the trials (0: every core)
    bool operator==(const RadiationConfig&) const = default;
};

// faults: operational failures as clusters on the ground see them (docs/faults.md "Operational
// faults"): rates per GPU-day by cause, each with its effect. On a synthetic fabric (no orbit) they
// are the run's only faults, played with this section's recovery settings; beside `radiation` they
// join its draws and its recovery settings apply (the recovery keys here are then refused).
struct FaultsConfig {
    bool enabled = false;
    std::string preset = "none";             // llama3_405b, b200_504 or none (causes given)
    // The causes as written (the preset's, or `causes`), at their own rates; resolve puts them into
    // operational.causes with rate_scale applied (empty as read).
    std::vector<workloads::OperationalCause> causes;
    workloads::OperationalFaults operational;
    double rate_scale = 1.0;
    // A fabric's; checkpoint_interval_s 0 = auto (Daly). Without an orbit a failed node is swapped out at
    // once (the job's restart covers the rejoin): no reboot, where radiation's satellites take 600 s.
    workloads::RecoveryConfig recovery = [] {
        workloads::RecoveryConfig c;
        c.reboot_s = 0.0;
        return c;
    }();
    std::int32_t trials = 1;
    std::int32_t threads = 0;
    bool operator==(const FaultsConfig&) const = default;
};

// constellation: present = several clusters (docs/constellations.md). Each cluster is the formation
// section's formation flying its own chief: cluster c's chief leads the orbit section's by
// along_track_m along the same orbit, with its plane's node turned by raan_offset_rad.
struct ClusterConfig {
    double along_track_m = 0.0;
    double raan_offset_rad = 0.0;
    std::optional<double> radius_m;  // this cluster's formation radius (absent: formation.radius_m)
    // This cluster's chips (absent: the workload's): serving instances placed here run on them; a training
    // job refuses clusters whose chips differ (mixed hardware is not modelled for training).
    std::optional<workloads::Accelerator> accelerator;
    bool operator==(const ClusterConfig&) const = default;
};

struct ConstellationConfig {
    bool enabled = false;
    std::vector<ClusterConfig> clusters;        // cluster 0 first; its chief is the orbit section's
    links::GatewayParameters gateways;          // the aggregation layer's terminals, topology and failover
    std::vector<workloads::ClusterAlgorithm> algorithms;  // compared in one run, the first one's record kept
    // routing_model: how routes between clusters are searched (docs/routing.md); absent = `auto`, which
    // resolve picks by the constellation's size. Versioned in the outputs, since ties and UCMP's later
    // paths may differ.
    std::optional<workloads::RoutingModel> routing_model;
    bool operator==(const ConstellationConfig&) const = default;
};

struct Scenario {
    std::string name;
    std::uint64_t seed = 42;
    double duration_s = 0.0;                // duration_s, or duration_orbits resolved (0 as read then)
    std::optional<double> duration_orbits;  // as written; resolve turns it into duration_s
    double output_step_s = 10.0;
    OrbitConfig orbit;
    FormationConfig formation;
    DynamicsConfig dynamics;
    physics::StationKeepingSettings station_keeping;
    MetricsConfig metrics;
    LinksConfig links;
    WorkloadConfig workload;    // a training job (workload.kind: training)
    InferenceConfig inference;  // a serving workload (workload.kind: inference)
    GroundConfig ground;        // its users on the ground (ground_stations)
    RadiationConfig radiation;
    FaultsConfig faults;
    PowerConfig power;
    // A synthetic fabric (ring, switch, torus, ...) instead of an orbit: the workload runs on
    // its fixed topology and orbit, formation and links are not simulated.
    std::optional<workloads::FabricSpec> fabric;
    ConstellationConfig constellation;
    OutputConfig output;

    std::string source_file;  // for messages
    std::string yaml_text;    // the full scenario after overrides, stored in outputs
    // The most CPU threads the run uses (propagation and Monte Carlo trials); 0 = every core. Not a
    // scenario key: the command line's --threads sets it (a machine's share, not the scenario's).
    std::int32_t threads = 0;
    bool operator==(const Scenario&) const = default;
};

// One `--set key.path=value` override; value is parsed as YAML.
struct Override {
    std::string path;
    std::string value;
    bool remove = false;  // drop the key (if there) instead of setting it; value unused
};
// Parses "key.path=value"; throws ScenarioError on a malformed argument.
Override parse_override(const std::string& argument);

// For a synthetic topology given in place of a scenario's orbit (`collective SCENARIO
// --topology SPEC`): overrides that drop the orbit-only sections the text has (orbit,
// formation, dynamics, station_keeping, metrics, links, radiation, power), turn
// duration_orbits into duration_s: 0, and drop workload.parallelism.data so that the ranks
// follow the fabric. Appends the keys dropped to `ignored`. Text that is no YAML mapping
// gives none (loading it says what is wrong).
std::vector<Override> overrides_replacing_orbit(const std::string& yaml_text, const std::string& source_name,
                                                std::vector<std::string>& ignored);

// What a run of a scenario takes, roughly (within a factor of about two on the machines measured):
// linear in satellite-samples (satellites x output samples), by what the run simulates, calibrated on
// suncatcher-81 runs of 973 and 3,853 satellites (docs/scenario-reference.md, "Run size").
struct RunEstimate {
    std::size_t satellites = 0;  // satellites, or a synthetic fabric's ranks
    double samples = 0.0;        // output samples
    double memory_bytes = 0.0;   // peak resident memory
    double cpu_s = 0.0;          // CPU time, all threads together
    double output_bytes = 0.0;   // HDF5 series and VTK frames before compression
};
RunEstimate estimate_run(const Scenario& scenario, std::size_t satellites);
// "about 14.5 GB of memory, 31 CPU-minutes and 36.2 GB of output before compression"
std::string describe(const RunEstimate& estimate);

// A run estimated over either limit starts only when confirmed (`run --yes`).
inline constexpr double unconfirmed_run_max_memory_bytes = 4e9;
inline constexpr double unconfirmed_run_max_cpu_s = 3600.0;

struct LoadOptions {
    // Refuse a run estimated over the limits above (ScenarioError naming the key that makes it
    // large, the estimate and --yes): `run` and `validate` without --yes.
    bool refuse_large_runs = false;
};

// The text of a scenario file: refuses what is not a regular file and files over 32 MiB
// (ScenarioError naming the path).
std::string read_scenario_file(const std::filesystem::path& file);
// Reads, applies overrides, resolves, validates; returns the resolved scenario. Throws ScenarioError
// with file:line:column.
Scenario load_scenario_file(const std::filesystem::path& file, const std::vector<Override>& overrides = {},
                            const LoadOptions& options = {});
Scenario load_scenario_text(const std::string& yaml_text, const std::string& source_name,
                            const std::vector<Override>& overrides = {}, const LoadOptions& options = {});

// The values one section's defaults take from another's, derived into a new scenario (docs/scenario-
// reference.md names each): workload.parallelism.data 0 = every rank (the satellites before a formation's
// hot spares, a constellation's ranks, a shared job's free satellites) and a formation's ranks placed
// before its spares (TrainingOptions::rank_nodes); a constellation's spares per cluster
// (RecoveryConfig::spare_group_size); workload.on_rank_loss unset = spare with spares, else wait;
// radiation.chips_per_satellite and faults.gpus_per_rank 0 = the workload's; the operational faults beside radiation joined to
// its draws; a serving role's chips from where its instances stand; the power loads' chips. Resolving
// a resolved scenario changes nothing. load_scenario_* return the resolved form.
Scenario resolve(const Scenario& read);
// The scenario as written: every section read and checked alone, nothing derived and nothing checked
// between sections (no run takes it; load_scenario_text is resolve(this) checked).
Scenario read_scenario_text(const std::string& yaml_text, const std::string& source_name,
                            const std::vector<Override>& overrides = {});

// Satellites' initial LVLH states for the formation of a loaded scenario.
std::vector<physics::RelativeState> initial_formation(const Scenario& scenario);
// Cluster c of a constellation as a scenario of its own (its chief, its formation; no constellation).
// The scenario itself for c = 0 without a constellation.
Scenario cluster_scenario(const Scenario& scenario, std::size_t c);
// Clusters: 1 without a constellation section.
std::size_t cluster_count(const Scenario& scenario);
// Satellites of each cluster (one entry without a constellation section).
std::vector<std::size_t> cluster_sizes(const Scenario& scenario);
// Each cluster's satellites (numbered cluster after cluster) and, of those, its training ranks: all
// but its last radiation.spare_satellites when radiation is on (hot spares serve their own cluster).
std::vector<std::vector<std::int32_t>> cluster_satellites(const Scenario& scenario);
std::vector<std::vector<std::int32_t>> cluster_ranks(const Scenario& scenario);
// Satellites of the formation (every cluster's), or ranks of the synthetic fabric.
std::size_t node_count(const Scenario& scenario);
// The satellites of a serving workload's instances, in ServingConfig::nodes order (prefill instances,
// then decode; satellites_per_instance each): packed from node 0, except in a constellation, where the
// dedicated prefill instances (prfaas, compare_routing) start at cluster 0's first satellite and every
// other instance at the last cluster's. A role on a ground data centre (engines.*.site) stands on the
// data centre's node instead (after the satellites, workloads::ground_datacentre_node) and takes no
// satellite. Empty when they do not fit.
std::vector<std::int32_t> inference_nodes(const Scenario& scenario);
// Each cluster's ground terminal (the satellite a station's open link joins to a ground data centre):
// the cluster's satellite nearest its chief at the start.
std::vector<std::int32_t> cluster_ground_terminals(const Scenario& scenario);
// A training job beside a serving one (workload.clusters): the satellites of its clusters that hold no
// serving instance, in node order; empty without such a job.
std::vector<std::int32_t> shared_training_nodes(const Scenario& scenario);
// Both kinds of workload in one run (`workloads:`), sharing the fabric.
inline bool workloads_share_fabric(const Scenario& scenario) { return scenario.workload.enabled && scenario.inference.enabled; }
// The chief's initial ECI state: the orbit section's elements are mean elements, mapped to osculating
// when the dynamics include J2 (nonlinear with j2: true).
physics::CartesianState initial_chief_state(const Scenario& scenario);
// The chief's mean elements at the epoch (true_anomaly_rad: the mean true anomaly).
physics::KeplerianElements chief_mean_elements(const Scenario& scenario);
// J2 coefficient the dynamics apply to the chief (0 for hcw, hcw_ode, schweighart_sedwick or j2: false).
double dynamics_j2(const Scenario& scenario);
// One orbit for duration_orbits and plots: the nodal period of the mean orbit under the dynamics' J2.
double orbit_period_s(const Scenario& scenario);
// relative_orbits with automatic resolved: nonlinear -> j2_mean_elements, hcw/hcw_ode -> hcw,
// schweighart_sedwick -> schweighart_sedwick.
RelativeOrbits resolved_relative_orbits(const Scenario& scenario);
const char* to_string(RelativeOrbits relative_orbits);
const char* to_string(physics::PowerPolicy policy);
// The propagation settings the scenario asks for (threads: Scenario::threads).
physics::PropagationSettings propagation_settings(const Scenario& scenario);
// CPU threads playing the Monte Carlo trials: radiation.threads (a fabric's operational faults: faults.threads), capped by Scenario::threads (0: every core).
std::int32_t monte_carlo_threads(const Scenario& scenario);
// The orbit's epoch as ISO-8601 UTC, 2027-03-20T00:00:00Z (fractional seconds when it has them).
std::string epoch_iso8601(const Scenario& scenario);

const char* to_string(physics::RelativeMotionModel model);

}  // namespace skyfabric::scenario
