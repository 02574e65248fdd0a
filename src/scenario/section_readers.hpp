// The scenario reader's sections, one file each (read_geometry.cpp, read_links.cpp, read_workload.cpp,
// read_ground.cpp, read_environment.cpp, read_output.cpp), the resolve (resolve.cpp) and the checks
// between them (check_scenario.cpp). Internal to src/scenario: load_scenario_text (scenario.cpp) calls
// them in order; outside it only tests/cli/settings_check_test.cpp includes this header (for the
// checks' field-to-key tables).
#pragma once

#include "scenario/scenario.hpp"
#include "scenario/yaml_reader.hpp"

#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/settings_problem.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace skyfabric::scenario::detail {

inline constexpr double deg = physics::pi / 180.0;
// Step and satellite counts past which a run cannot fit a workstation: refused up front.
inline constexpr double max_output_steps = 5.0e6;
inline constexpr std::int64_t max_satellites = 200000;
// Links of a synthetic fabric (fully_connected grows as p^2).
inline constexpr std::int64_t max_fabric_links = 10000000;
// Uncompressed output (HDF5 series and VTK frames) past which a run is refused unless
// its output is reduced: it would fill a workstation's disk.
inline constexpr double max_output_bytes = 200e9;
// Explicit LVLH states further out than this are not a formation (the chief's orbit is
// about 7,000 km in radius): refused rather than integrated into nonsense.
inline constexpr double max_explicit_offset_m = 1.0e7;
inline constexpr double max_explicit_velocity_m_s = 1.0e4;
// Input files are read whole: a scenario of 200,000 explicit satellites is about 16 MB, an
// edge list of max_fabric_links lines about 300 MB.
// Orbits (the chief's and every satellite's) must stay above this altitude: below it a
// satellite re-enters within hours (the propagator stops there too).
inline constexpr double min_perigee_altitude_m = 100e3;
// The highest apogee a scenario's chief orbit can have (altitude 50,000 km, e = 0.5): a
// satellite flying further out has left the formation.
inline constexpr double max_apogee_radius_m = 1.5 * (physics::earth_equatorial_radius_m + 50000e3);
// Training steps a run may simulate: each keeps a step record and its collectives (about
// 150 bytes) and costs a flow simulation; a model of a few parameters took ~1e10 steps in
// ten minutes of simulated time (std::bad_alloc).
inline constexpr double max_training_steps = 1e7;
// Memory for the dose-rate history of a run with radiation.
inline constexpr double max_dose_series_bytes = 8e9;
inline constexpr std::size_t max_scenario_bytes = 32u << 20;
// Clusters of a constellation: every gateway has a terminal for each other cluster, and the layer's
// pairs grow as clusters²; 256 clusters of 4 gateways (20,736 satellites) are 130,560 pairs a
// sample. Past the run-size limits a constellation is refused without --yes, with its estimate.
inline constexpr std::size_t max_clusters = 256;
inline constexpr std::size_t max_edge_list_bytes = 512u << 20;

// A count for a message: "1.2e+07" style past a million, plain below.
std::string format_count(double x);

OrbitConfig read_orbit(Section s);
FormationConfig read_formation(Section s);
// Refuses, at s's radius_m, a lattice of f's layout and pitch at radius_m estimated over
// max_satellites (before anything counts or builds it).
void check_lattice_size(Section& s, const FormationConfig& f, double radius_m);
DynamicsConfig read_dynamics(Section s);
physics::StationKeepingSettings read_station_keeping(Section s);
MetricsConfig read_metrics(Section s);
LinksConfig read_links(Section s, bool present);
ConstellationConfig read_constellation(Section s, bool present, const FormationConfig& formation);
InferenceConfig read_inference(Section s, const std::string& source_name);
WorkloadConfig read_workload(Section s, bool present);
// `workloads:`, a list of a training job and a serving job sharing the fabric: each entry as a
// `workload:` section of its kind; the training entry names its `clusters`.
struct SharedWorkloads {
    WorkloadConfig training;
    InferenceConfig inference;
};
SharedWorkloads read_workloads_list(Section& top, const Scenario& sc, const std::string& source_name);
// Where a job's keys are: `workload`, or the `workloads` entry of that kind (for messages).
Section workload_section(Section& top, bool inference);
std::optional<workloads::FabricSpec> read_fabric(Section& top, const std::string& source_name);
PowerConfig read_power(Section s, bool present);
// `ground_stations:` at the top level: a serving workload's users on the ground (after the workload and orbit).
GroundConfig read_ground_stations(Section& top, const Scenario& sc);
// `ground_datacentres:` at the top level (after ground_stations): data centres on the ground holding
// serving instances. Returns sc.ground with the data centres added.
GroundConfig read_ground_datacentres(Section& top, const Scenario& sc);
// The ground data centre named `site` (a serving role's engines.*.site, resolved into GroundConfig::placement
// by resolve); -1: none (orbit).
std::int32_t datacentre_index(const GroundConfig& ground, const std::string& site);
// The serving roles' sites: orbit or a ground data centre, not both on the ground.
void check_site_names(Section& top, const Scenario& sc);
// The serving roles' instances as ranges of inference_nodes(sc): the dedicated prefill group
// [0, dedicated) (prfaas, compare_routing; else empty), the other prefill instances [dedicated,
// prefill_end), the decode instances [prefill_end, decode_end).
struct ServingRoleRanges {
    std::size_t dedicated = 0, prefill_end = 0, decode_end = 0;
};
ServingRoleRanges serving_role_ranges(const Scenario& sc);
// The chips where nodes[from, to) stand: a ground data centre's, or a cluster's `accelerator` (a
// cluster that gives none holds the workload's); none when no site there gives any. `first` is the
// node whose site gave them; `mixed`, when not `none`, the first node on chips of another kind.
struct SiteChips {
    static constexpr std::size_t none = static_cast<std::size_t>(-1);
    std::optional<workloads::Accelerator> chips;
    std::size_t first = 0, mixed = none;
};
SiteChips site_accelerator(const Scenario& sc, std::span<const std::int32_t> nodes, std::size_t from, std::size_t to);
// Each serving role's chips as written (`read`) against where its instances stand (`sc` resolved, `nodes`
// inference_nodes'; resolve gives the role its site's chips): a role's own keys that contradict them are
// refused, as are a role's instances on chips of two kinds and a data centre too small for its instances.
void check_site_accelerators(Section& top, const Scenario& read, const Scenario& sc, const std::vector<std::int32_t>& nodes);
// An accelerator preset and its overrides (workload.accelerator, a serving role's, a cluster's, a ground
// data centre's); `base`: what custom starts from.
workloads::Accelerator read_accelerator(Section& s, workloads::Accelerator base = workloads::tpu_v6e());
// Given when any accelerator key is (accelerator, peak_tflops, hbm_gb, hbm_bandwidth_gbs).
std::optional<workloads::Accelerator> read_optional_accelerator(Section& s, const workloads::Accelerator& base);
RadiationConfig read_radiation(Section s, bool present);
// The checkpoint and restart keys `radiation` and `faults` share, into `c`.
void read_recovery(Section& s, workloads::RecoveryConfig& c);
FaultsConfig read_faults(Section s, bool present);
// faults' recovery and trial keys, refused beside radiation (whose own apply).
inline constexpr std::array<const char*, 10> faults_recovery_keys{"checkpoint_interval", "checkpoint_cost_s", "checkpoint_mode", "snapshot_gb_per_rank",
                                                                 "snapshot_bandwidth_gbs", "restart_s", "reboot_s", "spare_satellites", "trials", "threads"};
OutputConfig read_output(Section s);

// A library's check(settings) names the struct's fields; each table says where in the scenario a
// field is read from, relative to the section its problems are reported in (dotted into nested
// sections). An empty key: the program sets the field, no scenario key does (its problems would be
// a reader's bug). tests/src/settings_check_test.cpp provokes every entry.
struct FieldKey {
    std::string_view field;
    std::string_view key;
};
// physics::check(EnvironmentParameters), in `radiation`.
inline constexpr std::array<FieldKey, 10> radiation_environment_keys{{
    {"shielding_table", ""},  // the built-in table
    {"saa_sigma_latitude_deg", "saa.sigma_latitude_deg"},
    {"saa_sigma_longitude_deg", "saa.sigma_longitude_deg"},
    {"trapped_scale_height_m", ""},
    {"gcr_polar_dose_rate_rad_per_yr", ""},
    {"gcr_rigidity_scale_gv", ""},
    {"spe_rigidity_scale_gv", ""},
    {"calibration_samples_along_orbit", ""},
    {"calibration_node_longitudes", ""},
    {"target_dose_rad_per_yr", "dose_at_650km_rad_per_yr"},
}};
// workloads::check(FaultModel), in `radiation`.
inline constexpr std::array<FieldKey, 4> fault_model_keys{{
    {"sdc_detection_probability", "sdc_detection_probability"},
    {"link_outage_rate_per_s", "link_outages_per_day"},
    {"gateway_outage_rate_per_s", "gateway_outages_per_day"},
    {"rate_scale", "rate_scale"},
}};
// workloads::check(OperationalFaults), in `faults`: the reader's ranges keep all but the cause count
// in range (gpus_per_rank 0 is the workload's parallelism.tensor).
inline constexpr std::array<FieldKey, 8> operational_keys{{
    {"causes", "causes"},
    {"gpus_per_rank", ""},
    {"hot_ranks", ""},
    {"hot_share", ""},
    {"retry_success_probability", ""},
    {"retry_attempts", ""},
    {"retry_interval_s", ""},
    {"manual_recovery_s", ""},
}};
// workloads::check(RecoveryConfig, satellites), in `radiation`.
inline constexpr std::array<FieldKey, 10> recovery_keys{{
    {"checkpoint_interval_s", "checkpoint_interval"},
    {"checkpoint_cost_s", "checkpoint_cost_s"},
    {"restart_s", "restart_s"},
    {"reboot_s", "reboot_s"},
    {"link_outage_s", "link_outage_s"},
    {"spare_satellites", "spare_satellites"},
    {"gateway_failover_s", ""},  // the run copies constellation.gateways.failover_s in
    {"rank_multiple", ""},       // the run sets it from the mixture of experts
    {"snapshot_bytes_per_rank", "snapshot_gb_per_rank"},
    {"snapshot_bandwidth_Bps", "snapshot_bandwidth_gbs"},
}};
// workloads::check(TrainingJob), in the training workload's section.
inline constexpr std::array<FieldKey, 10> training_job_keys{{
    {"data_parallel", "parallelism.data"},
    {"tensor_parallel", "parallelism.tensor"},
    {"mfu", "mfu"},
    {"active_parameters", "active_parameters"},
    {"local_steps", "local_steps"},
    {"moe.expert_parallel", "parallelism.expert"},
    {"moe.experts_per_token", "moe.experts_per_token"},
    {"moe.hidden_size", "moe.hidden_size"},
    {"moe.load_imbalance", "moe.load_imbalance"},
    {"moe.expert_parameters", "moe.expert_parameters"},
}};
// workloads::check(ServingConfig), in `workload.inference`.
inline constexpr std::array<FieldKey, 6> serving_keys{{
    {"engines.prefill.instances", "engines.prefill.instances"},
    {"engines.prefill.satellites_per_instance", "engines.prefill.satellites_per_instance"},
    {"engines.decode.instances", "engines.decode.instances"},
    {"engines.decode.satellites_per_instance", "engines.decode.satellites_per_instance"},
    {"dedicated_prefill_instances", "dedicated_prefill_instances"},
    {"max_queued_requests", "max_queued_requests"},
}};
// workloads::check_fits(ServingConfig, Accelerator), in `workload.inference`.
inline constexpr std::array<FieldKey, 3> serving_fit_keys{{
    {"engines.prefill.satellites_per_instance", "engines.prefill.satellites_per_instance"},
    {"engines.decode.satellites_per_instance", "engines.decode.satellites_per_instance"},
    {"engines.max_tokens", "engines.max_tokens"},
}};
// links::check(GatewayParameters, cluster sizes), in `constellation`.
inline constexpr std::array<FieldKey, 1> gateway_keys{{
    {"gateways_per_cluster", "gateways.per_cluster"},
}};
// workloads::check(ClusterTrainingSetup, algorithms), from the scenario's top: the constellation's and
// the training job's keys (a job alone on the clusters; one beside a serving job is checked apart).
inline constexpr std::array<FieldKey, 7> cluster_training_keys{{
    {"cluster_nodes", "constellation.clusters"},
    {"job.local_steps", "workload.local_steps"},
    {"job.sync", "workload.sync"},
    {"algorithms", "constellation.algorithms"},
    {"job.data_parallel", "workload.parallelism.data"},
    {"job.moe.expert_parallel", "workload.parallelism.expert"},
    {"experts_across_clusters", "workload.parallelism.expert_placement"},
}};
// workloads::check(ClusterFaultSetup, algorithms), from the scenario's top.
inline constexpr std::array<FieldKey, 2> cluster_fault_keys{{
    {"recovery.spare_satellites", "radiation.spare_satellites"},
    {"recovery.on_rank_loss", "workload.on_rank_loss"},
}};
// Fails (ScenarioError, file:line:column) at the scenario key of the first problem, with its message.
void fail_on_problems(Section s, const physics::SettingsProblems& problems, std::span<const FieldKey> keys);

void check_name(Section& top, const std::string& name);
// What resolve needs in range (the satellites counted): checked before it.
void check_satellite_count(Section& top, const Scenario& read);
// Constraints between sections, once every section has been read and the scenario resolved: on what
// was read (`read`) where a key's value as written matters, else on what the run receives (`resolved`).
void check_across_sections(Section& top, const Scenario& read, const Scenario& resolved, const LoadOptions& options);
// What a constellation's training receives (the simulation's RunState::training_setup): satellites
// numbered cluster after cluster, each cluster's ranks (all but its hot spares), and the training job
// when one runs alone on them; without one (or with one beside a serving job, checked apart) a dense
// job over every rank, so that only what the algorithms need of the clusters is checked.
workloads::ClusterTrainingSetup cluster_training(const Scenario& sc);
void check_output_volume(Section& top, const Scenario& sc, std::size_t satellites);
void check_run_size(Section& top, const Scenario& sc, std::size_t satellites);

// --set key.path=value applied to the parsed document before any section is read.
void apply_override(YAML::Node root, const Override& o);

}  // namespace skyfabric::scenario::detail
