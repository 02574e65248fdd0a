// Each library's check(settings) walked problem by problem (issue 30): a valid settings object has
// none; breaking one field names that field first; the loader's table maps every field to a scenario
// key (or says no scenario key sets it); and a scenario that breaks the same setting fails in the real
// `skyfabric validate` with exit status 2 at FILE:LINE:COLUMN of that key.
#include "cli_support.hpp"
#include "scenario/section_readers.hpp"

#include <skyfabric/links/aggregation.hpp>
#include <skyfabric/physics/radiation.hpp>
#include <skyfabric/workloads/cluster_faults.hpp>
#include <skyfabric/workloads/cluster_training.hpp>
#include <skyfabric/workloads/faults.hpp>
#include <skyfabric/workloads/job.hpp>
#include <skyfabric/workloads/serving.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <regex>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace {

using namespace skyfabric_test;
using skyfabric::scenario::detail::FieldKey;
namespace sp = skyfabric::physics;
namespace sw = skyfabric::workloads;

template <class Settings>
struct Case {
    std::string field;                       // the key check() must name first
    std::function<void(Settings&)> breaks;   // one field made invalid
    std::string yaml;                        // the scenario text that breaks it ("" where no key sets the field)
    std::string says = "";                   // text the loader's message must hold (the check's own, not a reader's)
};

// The scenario key path the loader reports, the section's path before the table's key (none: from the top).
template <class Settings, class Check>
void walk(const std::string& name, const Settings& valid, Check check, std::span<const FieldKey> table,
          const std::string& section, const std::vector<Case<Settings>>& cases) {
    EXPECT_TRUE(check(valid).empty()) << name << ": the valid settings have a problem: " << check(valid).front().key;
    const fs::path dir = fresh_dir("settings_check_" + name);
    std::set<std::string> provoked;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto& c = cases[i];
        Settings broken = valid;
        c.breaks(broken);
        const auto problems = check(broken);
        ASSERT_FALSE(problems.empty()) << name << ": breaking " << c.field << " gave no problem";
        EXPECT_EQ(problems.front().key, c.field) << name << ": " << problems.front().message;
        provoked.insert(c.field);
        const auto entry = std::find_if(table.begin(), table.end(), [&](const FieldKey& k) { return k.field == c.field; });
        ASSERT_NE(entry, table.end()) << name << ": the loader's table lacks " << c.field;
        if (entry->key.empty()) {
            EXPECT_TRUE(c.yaml.empty()) << name << ": " << c.field << " has a scenario case but no scenario key";
            continue;
        }
        ASSERT_FALSE(c.yaml.empty()) << name << ": " << c.field << " is read from " << entry->key << ": give a scenario case";
        const fs::path file = dir / (name + "_" + std::to_string(i) + ".yaml");
        std::ofstream(file) << c.yaml;
        const auto r = run_command(skyfabric_test::skyfabric() + " validate " + file.string());
        EXPECT_EQ(r.status, 2) << c.field << ": " << r.output;
        const std::string key = section.empty() ? std::string(entry->key) : section + "." + std::string(entry->key);
        const std::regex located("skyfabric: error: " + std::regex_replace(file.string(), std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                                 R"(:[0-9]+:[0-9]+: key ')" + std::regex_replace(key, std::regex(R"(\.)"), R"(\.)") + "'");
        EXPECT_TRUE(std::regex_search(r.output, located)) << c.field << " -> " << key << ": " << r.output;
        if (!c.says.empty()) {
            EXPECT_NE(r.output.find(c.says), std::string::npos) << c.field << ": " << r.output;
        }
    }
    for (const auto& k : table) EXPECT_TRUE(provoked.count(std::string(k.field))) << name << ": no case provokes " << k.field;
    fs::remove_all(dir);
}

const std::string formation = R"(name: t
duration_s: 60
orbit: {altitude_km: 650}
formation: {layout: suncatcher_lattice, radius_m: 200, radial_pitch_m: 100, along_track_pitch_m: 200}
)";
const std::string training = formation + R"(links: {topology: nearest_k, terminals_per_satellite: 4}
workload:
  model_parameters: 1.0e9
)";
const std::string radiation = formation + "radiation:\n  trials: 1\n";
const std::string serving = R"(name: t
duration_s: 100
topology: "fully_connected:p=8,bw_gbps=100,latency_ns=1000"
workload:
  kind: inference
  inference:
    model: { parameters: 8.0e9, layers: 32, kv_heads: 8, head_dim: 128 }
    arrivals: { rate_per_s: 2 }
    threshold_tokens: 1000
)";

}  // namespace

TEST(SettingsCheck, RadiationEnvironment) {
    using E = sp::EnvironmentParameters;
    walk<E>("environment", E{}, [](const E& e) { return sp::check(e); }, skyfabric::scenario::detail::radiation_environment_keys,
            "radiation",
            {
                {"shielding_table", [](E& e) { e.shielding_table.dose_rad_per_yr.back() = 0.0; }, ""},
                {"saa_sigma_latitude_deg", [](E& e) { e.saa_sigma_latitude_deg = 0.0; },
                 radiation + "  saa: {sigma_latitude_deg: 0}\n"},
                {"saa_sigma_longitude_deg", [](E& e) { e.saa_sigma_longitude_deg = -1.0; },
                 radiation + "  saa: {sigma_longitude_deg: -1}\n"},
                {"trapped_scale_height_m", [](E& e) { e.trapped_scale_height_m = 0.0; }, ""},
                {"gcr_polar_dose_rate_rad_per_yr", [](E& e) { e.gcr_polar_dose_rate_rad_per_yr = -1.0; }, ""},
                {"gcr_rigidity_scale_gv", [](E& e) { e.gcr_rigidity_scale_gv = 0.0; }, ""},
                {"spe_rigidity_scale_gv", [](E& e) { e.spe_rigidity_scale_gv = 0.0; }, ""},
                {"calibration_samples_along_orbit", [](E& e) { e.calibration_samples_along_orbit = 0; }, ""},
                {"calibration_node_longitudes", [](E& e) { e.calibration_node_longitudes = 0; }, ""},
                {"target_dose_rad_per_yr", [](E& e) { e.target_dose_rad_per_yr = 1.0; },
                 radiation + "  dose_at_650km_rad_per_yr: 1\n"},
            });
}

TEST(SettingsCheck, FaultModel) {
    using F = sw::FaultModel;
    walk<F>("faults", F{}, [](const F& f) { return sw::check(f); }, skyfabric::scenario::detail::fault_model_keys, "radiation",
            {
                {"sdc_detection_probability", [](F& f) { f.sdc_detection_probability = 1.5; },
                 radiation + "  sdc_detection_probability: 1.5\n"},
                {"link_outage_rate_per_s", [](F& f) { f.link_outage_rate_per_s = -1.0; }, radiation + "  link_outages_per_day: -1\n"},
                {"gateway_outage_rate_per_s", [](F& f) { f.gateway_outage_rate_per_s = -1.0; },
                 radiation + "  gateway_outages_per_day: -1\n"},
                {"rate_scale", [](F& f) { f.rate_scale = -1.0; }, radiation + "  rate_scale: -1\n"},
            });
}

TEST(SettingsCheck, Recovery) {
    using R = sw::RecoveryConfig;
    const auto check = [](const R& r) { return sw::check(r, 5); };  // the formation's 5 satellites
    walk<R>("recovery", R{}, check, skyfabric::scenario::detail::recovery_keys, "radiation",
            {
                {"checkpoint_interval_s", [](R& r) { r.checkpoint_interval_s = -1.0; }, radiation + "  checkpoint_interval: -1\n"},
                {"checkpoint_cost_s", [](R& r) { r.checkpoint_cost_s = 0.0; }, radiation + "  checkpoint_cost_s: 0\n"},
                {"restart_s", [](R& r) { r.restart_s = -1.0; }, radiation + "  restart_s: -1\n"},
                {"reboot_s", [](R& r) { r.reboot_s = -1.0; }, radiation + "  reboot_s: -1\n"},
                {"link_outage_s", [](R& r) { r.link_outage_s = -1.0; }, radiation + "  link_outage_s: -1\n"},
                {"spare_satellites", [](R& r) { r.spare_satellites = 5; }, radiation + "  spare_satellites: 5\n"},
                {"gateway_failover_s", [](R& r) { r.gateway_failover_s = -1.0; }, ""},
                {"rank_multiple", [](R& r) { r.rank_multiple = 0; }, ""},
                {"snapshot_bytes_per_rank",
                 [](R& r) { r.checkpoint_mode = sw::CheckpointMode::async, r.snapshot_bandwidth_Bps = 1e10; },
                 radiation + "  checkpoint_mode: async\n  snapshot_bandwidth_gbs: 10\n"},
                {"snapshot_bandwidth_Bps", [](R& r) { r.checkpoint_mode = sw::CheckpointMode::async, r.snapshot_bytes_per_rank = 1e10; },
                 radiation + "  checkpoint_mode: async\n  snapshot_gb_per_rank: 10\n"},
            });
}

TEST(SettingsCheck, OperationalFaults) {
    using O = sw::OperationalFaults;
    // A fabric's faults; the reader's ranges keep every field but the cause count in range.
    std::string causes;
    for (int k = 0; k <= sw::max_operational_causes; ++k) causes += "    - {name: c" + std::to_string(k) + ", per_gpu_day: 0.001}\n";
    const std::string ground = "name: t\nduration_s: 600\ntopology: \"switch:p=4\"\nworkload: {model_parameters: 1.0e9}\nfaults:\n";
    walk<O>("operational", sw::operational_preset("llama3_405b"), [](const O& o) { return sw::check(o); },
            skyfabric::scenario::detail::operational_keys, "faults",
            {
                {"causes", [](O& o) { o.causes.resize(sw::max_operational_causes + 1, o.causes.front()); }, ground + "  causes:\n" + causes},
                {"gpus_per_rank", [](O& o) { o.gpus_per_rank = 0; }, ""},
                {"hot_ranks", [](O& o) { o.hot_ranks = -1; }, ""},
                {"hot_share", [](O& o) { o.hot_share = 2.0; }, ""},
                {"retry_success_probability", [](O& o) { o.retry_success_probability = -0.5; }, ""},
                {"retry_attempts", [](O& o) { o.retry_attempts = -1; }, ""},
                {"retry_interval_s", [](O& o) { o.retry_interval_s = -1.0; }, ""},
                {"manual_recovery_s", [](O& o) { o.manual_recovery_s = -1.0; }, ""},
            });
}

TEST(SettingsCheck, TrainingJob) {
    using J = sw::TrainingJob;
    J valid;
    valid.data_parallel = 4;
    valid.parameters = 1e9;
    valid.moe.layers = 2;
    valid.moe.expert_parallel = 2;
    const std::string moe = "  parallelism: {data: 4, expert: 2}\n  moe: {layers: 2, ";
    walk<J>("job", valid, [](const J& j) { return sw::check(j); }, skyfabric::scenario::detail::training_job_keys, "workload",
            {
                {"data_parallel", [](J& j) { j.data_parallel = 0; }, training + "  parallelism: {data: 1}\n"},
                {"tensor_parallel", [](J& j) { j.tensor_parallel = 0; }, training + "  parallelism: {tensor: 0}\n"},
                {"mfu", [](J& j) { j.mfu = 0.0; }, training + "  mfu: 0\n"},
                {"active_parameters", [](J& j) { j.active_parameters = 2e9; }, training + "  active_parameters: 2.0e9\n"},
                {"local_steps", [](J& j) { j.sync = sw::SyncMode::local_steps, j.local_steps = 0; },
                 training + "  sync: local_steps\n  local_steps: 0\n"},
                {"moe.expert_parallel", [](J& j) { j.moe.expert_parallel = 3; },
                 training + "  parallelism: {data: 4, expert: 3}\n  moe: {layers: 2}\n"},
                {"moe.experts_per_token", [](J& j) { j.moe.experts_per_token = 0; }, training + moe + "experts_per_token: 0}\n"},
                {"moe.hidden_size", [](J& j) { j.moe.hidden_size = 0.0; }, training + moe + "hidden_size: 0}\n"},
                {"moe.load_imbalance", [](J& j) { j.moe.load_imbalance = 0.5; }, training + moe + "load_imbalance: 0.5}\n"},
                {"moe.expert_parameters", [](J& j) { j.moe.expert_parameters = 2e9; }, training + moe + "expert_parameters: 2.0e9}\n"},
            });
}

TEST(SettingsCheck, Serving) {
    using S = sw::ServingConfig;
    S valid;
    valid.routing = sw::ServingRouting::prfaas;
    valid.engines.prefill.instances = 2;
    valid.dedicated_prefill_instances = 1;
    const std::string prfaas = serving + "    routing: prfaas\n    engines:\n";
    const std::string groups = prfaas + "      decode: { instances: 1 }\n";
    walk<S>("serving", valid, [](const S& s) { return sw::check(s); }, skyfabric::scenario::detail::serving_keys,
            "workload.inference",
            {
                {"engines.prefill.instances", [](S& s) { s.engines.prefill.instances = 1; },
                 prfaas + "      prefill: { instances: 1 }\n      decode: { instances: 1 }\n"},
                {"engines.prefill.satellites_per_instance", [](S& s) { s.engines.prefill.satellites_per_instance = 0; },
                 groups + "      prefill: { instances: 2, satellites_per_instance: 0 }\n"},
                {"engines.decode.instances", [](S& s) { s.engines.decode.instances = 0; },
                 prfaas + "      prefill: { instances: 2 }\n      decode: { instances: 0 }\n"},
                {"engines.decode.satellites_per_instance", [](S& s) { s.engines.decode.satellites_per_instance = 0; },
                 prfaas + "      prefill: { instances: 2 }\n      decode: { instances: 1, satellites_per_instance: 0 }\n"},
                {"dedicated_prefill_instances", [](S& s) { s.dedicated_prefill_instances = 2; },
                 groups + "      prefill: { instances: 2 }\n    dedicated_prefill_instances: 2\n"},
                {"max_queued_requests", [](S& s) { s.max_queued_requests = 0; },
                 groups + "      prefill: { instances: 2 }\n    max_queued_requests: 0\n"},
            });
}

// Issue 51: a model that cannot fit its instances is refused up front, not run to every request unservable.
TEST(SettingsCheck, ServingFits) {
    using S = sw::ServingConfig;
    const sw::Accelerator accelerator;  // tpu_v6e: 32 GB of HBM a chip, the scenario's default
    S valid;
    const std::string engines = serving + "    routing: prfaas\n    engines:\n";
    std::string big_model = serving;
    big_model.replace(big_model.find("parameters: 8.0e9"), 17, "parameters: 2.0e10");
    walk<S>("serving_fits", valid, [&](const S& s) { return sw::check_fits(s, accelerator); },
            skyfabric::scenario::detail::serving_fit_keys, "workload.inference",
            {
                {"engines.prefill.satellites_per_instance", [](S& s) { s.model.parameters = 2e10; },
                 big_model + "    routing: prfaas\n    engines:\n      prefill: { instances: 2 }\n      decode: { instances: 1 }\n",
                 "do not fit a prefill instance's HBM"},
                {"engines.decode.satellites_per_instance",
                 [](S& s) {
                     s.model.parameters = 2e10;
                     s.engines.prefill.satellites_per_instance = 2;
                 },
                 big_model + "    routing: prfaas\n    engines:\n      prefill: { instances: 2, satellites_per_instance: 2 }\n"
                             "      decode: { instances: 1 }\n",
                 "leave no room for a KV cache"},
                {"engines.max_tokens", [](S& s) { s.engines.max_tokens = 1000; },
                 engines + "      prefill: { instances: 2 }\n      decode: { instances: 1 }\n      max_tokens: 1000\n",
                 "every request would be unservable"},
            });
}

namespace {

// Two clusters of the formation's 5 satellites each, 10 km apart; `clusters` the count or the list.
const std::string two = "  clusters: 2\n  spacing_km: 10\n";
// Cluster 1 larger (radius 500 m): unequal sizes.
const std::string unequal = "  clusters: [{along_track_km: 0}, {along_track_km: 10, radius_m: 500}]\n";
std::string clusters(const std::string& clusters, const std::string& constellation_keys = "", const std::string& workload_keys = "",
                     const std::string& rest = "") {
    return formation + "links: {topology: nearest_k, terminals_per_satellite: 4}\nconstellation:\n" + clusters +
           constellation_keys + "workload:\n  model_parameters: 1.0e9\n" + workload_keys + rest;
}
const std::string moe_layers = "  moe: {layers: 2, hidden_size: 1024, expert_parameters: 5.0e8}\n";

// A check over settings and the algorithms they run.
template <class Settings>
struct ForAlgorithms {
    Settings settings;
    std::vector<sw::ClusterAlgorithm> algorithms{sw::cluster_algorithms.begin(), sw::cluster_algorithms.end()};
};

// Two clusters of 4 ranks, a mixture of experts in groups of 2 inside each, every algorithm.
sw::ClusterTrainingSetup four_by_two() {
    sw::ClusterTrainingSetup s;
    s.cluster_nodes = {{0, 1, 2, 3}, {4, 5, 6, 7}};
    s.job.data_parallel = 8;
    s.job.moe.layers = 2;
    s.job.moe.expert_parallel = 2;
    return s;
}

}  // namespace

TEST(SettingsCheck, ClusterTraining) {
    using T = ForAlgorithms<sw::ClusterTrainingSetup>;
    const T valid{four_by_two()};
    const auto check = [](const T& t) { return sw::check(t.settings, t.algorithms); };
    const auto across = [](T& t) {
        t.settings.experts_across_clusters = true;
        t.algorithms = {sw::ClusterAlgorithm::ring, sw::ClusterAlgorithm::hierarchical};
    };
    walk<T>("cluster_training", valid, check, skyfabric::scenario::detail::cluster_training_keys, "",
            {
                {"cluster_nodes", [](T& t) { t.settings.cluster_nodes.resize(1); }, clusters("  clusters: 1\n  spacing_km: 10\n")},
                {"job.local_steps", [](T& t) { t.settings.job.local_steps = 0; }, clusters(two, "", "  local_steps: 0\n")},
                {"job.sync", [](T& t) { t.settings.job.sync = sw::SyncMode::local_steps; }, clusters(two, "", "  sync: local_steps\n"),
                 "diloco and noloco make each cluster one"},
                {"algorithms", [](T& t) { t.settings.cluster_nodes[1].pop_back(), t.settings.job.data_parallel = 7; },
                 clusters(unequal, "  algorithms: [ring, diloco]\n"), "diloco needs clusters of equal size"},
                {"job.data_parallel", [](T& t) { t.settings.job.data_parallel = 4; }, clusters(two, "", "  parallelism: {data: 4}\n"),
                 "a constellation trains on every satellite but its hot spares: give all 10"},
                {"job.moe.expert_parallel", [](T& t) { t.settings.job.moe.expert_parallel = 8; },
                 clusters(two, "", "  parallelism: {expert: 2}\n" + moe_layers), "inside a cluster must divide every cluster's size (5)"},
                {"job.moe.expert_parallel", [&](T& t) { across(t), t.settings.job.moe.expert_parallel = 3; },
                 clusters(two, "  algorithms: [ring, hierarchical]\n", "  parallelism: {expert: 3, expert_placement: across_clusters}\n" + moe_layers),
                 "across_clusters takes expert / clusters ranks from each of the 2 clusters"},
                {"experts_across_clusters", [](T& t) { t.settings.experts_across_clusters = true; },
                 clusters(two, "", "  parallelism: {expert: 2, expert_placement: across_clusters}\n" + moe_layers),
                 "across_clusters cannot run with diloco"},
                // Expert parallel 1 too: a diloco replica (one cluster) cannot hold experts of other clusters.
                {"experts_across_clusters", [](T& t) { t.settings.experts_across_clusters = true, t.settings.job.moe.expert_parallel = 1; },
                 clusters(two, "", "  parallelism: {expert: 1, expert_placement: across_clusters}\n" + moe_layers),
                 "across_clusters cannot run with diloco"},
                {"experts_across_clusters",
                 [&](T& t) { across(t), t.algorithms = {sw::ClusterAlgorithm::ring}, t.settings.cluster_nodes[1].resize(6, 9),
                             t.settings.job.data_parallel = 10; },
                 clusters(unequal, "  algorithms: ring\n", "  parallelism: {expert: 2, expert_placement: across_clusters}\n" + moe_layers),
                 "across_clusters needs clusters of equal size"},
            });
    // An empty cluster, which no scenario gives (a cluster holds at least its chief).
    T empty = valid;
    empty.settings.cluster_nodes[1].clear();
    ASSERT_FALSE(check(empty).empty());
    EXPECT_EQ(check(empty).front().key, "cluster_nodes");
}

TEST(SettingsCheck, ClusterFaults) {
    using F = ForAlgorithms<sw::ClusterFaultSetup>;
    F valid;
    valid.settings.training = four_by_two();
    const auto check = [](const F& f) { return sw::check(f.settings, f.algorithms); };
    const std::string radiation = "radiation: {trials: 1}\n";
    walk<F>("cluster_faults", valid, check, skyfabric::scenario::detail::cluster_fault_keys, "",
            {
                // Spares the setup does not lay out as each cluster's last ones (the loader always does; a
                // scenario's spares fail when they leave a cluster no rank).
                {"recovery.spare_satellites", [](F& f) { f.settings.recovery.spare_satellites = 2; },
                 clusters(two, "", "", "radiation: {spare_satellites: 5}\n"), "must leave at least one of each cluster's 5 satellites"},
                {"recovery.on_rank_loss", [](F& f) { f.settings.recovery.on_rank_loss = sw::RankLossPolicy::shrink; },
                 clusters(two, "", "  on_rank_loss: shrink\n", radiation), "shrink with the hierarchical algorithm"},
                {"recovery.on_rank_loss",
                 [](F& f) { f.settings.recovery.on_rank_loss = sw::RankLossPolicy::shrink, f.algorithms = {sw::ClusterAlgorithm::ring}; },
                 clusters(two, "  algorithms: ring\n", "  on_rank_loss: shrink\n  parallelism: {expert: 5}\n" + moe_layers, radiation),
                 "shrink with a mixture of experts across a constellation"},
            });
}

TEST(SettingsCheck, Gateways) {
    using G = ForAlgorithms<skyfabric::links::GatewayParameters>;  // the algorithms unused
    const std::vector<std::size_t> sizes{5, 5};
    const auto check = [&](const G& g) { return skyfabric::links::check(g.settings, sizes); };
    const G valid;
    walk<G>("gateways", valid, check, skyfabric::scenario::detail::gateway_keys, "constellation",
            {
                {"gateways_per_cluster", [](G& g) { g.settings.gateways_per_cluster = -1; }, clusters(two, "  gateways: {per_cluster: -1}\n")},
                {"gateways_per_cluster", [](G& g) { g.settings.gateways_per_cluster = 6; }, clusters(two, "  gateways: {per_cluster: 6}\n"),
                 "a cluster has only 5 satellites"},
            });
}
