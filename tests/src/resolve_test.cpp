// resolve (src/scenario/resolve.cpp): the values one section's defaults take from another's, derived
// into a new scenario from what was read, each against a hand count on a small scenario; resolving a
// resolved scenario changes nothing; what was read stays as read.
#include "scenario/scenario.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

using skyfabric::scenario::load_scenario_file;
using skyfabric::scenario::load_scenario_text;
using skyfabric::scenario::read_scenario_text;
using skyfabric::scenario::resolve;
using skyfabric::scenario::Scenario;
using skyfabric::workloads::RankLossPolicy;

namespace {

// Six satellites 100 m apart along-track: counts small enough to follow by hand.
const std::string six = R"(name: t
duration_s: 100
orbit: { altitude_km: 650 }
formation:
  layout: explicit
  satellites:
    - { position_m: [0, 0, 0] }
    - { position_m: [0, 100, 0] }
    - { position_m: [0, 200, 0] }
    - { position_m: [0, 300, 0] }
    - { position_m: [0, 400, 0] }
    - { position_m: [0, 500, 0] }
links: {}
)";

std::string accelerator_name(const std::optional<skyfabric::workloads::Accelerator>& a) { return a ? a->name : "(none)"; }

// Every value resolve derives (no operator== on the settings structs yet: the derived fields one by one).
void expect_same_resolution(const Scenario& a, const Scenario& b) {
    EXPECT_EQ(a.workload.job.data_parallel, b.workload.job.data_parallel);
    EXPECT_EQ(a.workload.options.rank_nodes, b.workload.options.rank_nodes);
    EXPECT_EQ(a.radiation.recovery.spare_group_size, b.radiation.recovery.spare_group_size);
    EXPECT_EQ(a.radiation.recovery.on_rank_loss, b.radiation.recovery.on_rank_loss);
    EXPECT_EQ(a.radiation.faults.chips_per_satellite, b.radiation.faults.chips_per_satellite);
    EXPECT_EQ(a.radiation.faults.operational.causes.size(), b.radiation.faults.operational.causes.size());
    EXPECT_EQ(a.faults.recovery.on_rank_loss, b.faults.recovery.on_rank_loss);
    EXPECT_EQ(a.faults.operational.gpus_per_rank, b.faults.operational.gpus_per_rank);
    EXPECT_EQ(a.power.parameters.loads.accelerators, b.power.parameters.loads.accelerators);
    const auto& ea = a.inference.serving.engines;
    const auto& eb = b.inference.serving.engines;
    EXPECT_EQ(accelerator_name(ea.prefill.accelerator), accelerator_name(eb.prefill.accelerator));
    EXPECT_EQ(accelerator_name(ea.decode.accelerator), accelerator_name(eb.decode.accelerator));
    EXPECT_EQ(accelerator_name(ea.dedicated_prefill_accelerator), accelerator_name(eb.dedicated_prefill_accelerator));
}

// resolve(resolve(x)) = resolve(x), and what load_scenario_text returns is resolve(x).
void expect_idempotent(const Scenario& read, const Scenario& loaded) {
    const Scenario once = resolve(read);
    const Scenario twice = resolve(once);
    expect_same_resolution(once, twice);
    expect_same_resolution(once, loaded);
}

}  // namespace

TEST(Resolve, AFormationsJobTrainsOnTheSatellitesBeforeItsSpares) {
    const std::string text = six + "workload: {}\nradiation: {spare_satellites: 2}\n";
    const Scenario read = read_scenario_text(text, "test.yaml");
    const Scenario sc = load_scenario_text(text, "test.yaml");
    // As written: parallelism.data 0, no placement, radiation.chips_per_satellite 0.
    EXPECT_EQ(read.workload.job.data_parallel, 0);
    EXPECT_TRUE(read.workload.options.rank_nodes.empty());
    EXPECT_EQ(read.radiation.faults.chips_per_satellite, 0);
    // Resolved: 6 satellites less 2 spares = 4 ranks on satellites 0..3; spares kept, so a lost rank is
    // replaced (spare); one chip per satellite (parallelism.tensor 1); one spare group (a formation).
    EXPECT_EQ(sc.workload.job.data_parallel, 4);
    EXPECT_EQ(sc.workload.options.rank_nodes, (std::vector<std::int32_t>{0, 1, 2, 3}));
    EXPECT_EQ(sc.radiation.recovery.spare_group_size, 0);
    EXPECT_EQ(sc.radiation.recovery.on_rank_loss, RankLossPolicy::spare);
    EXPECT_EQ(sc.radiation.faults.chips_per_satellite, 1);
    EXPECT_EQ(sc.power.parameters.loads.accelerators, 1);
    expect_idempotent(read, sc);
    // The read scenario is left as read by resolving it.
    EXPECT_EQ(read.workload.job.data_parallel, 0);
}

TEST(Resolve, WithoutSparesEverySatelliteTrainsAndALostRankIsWaitedFor) {
    const std::string text = six + "workload: {parallelism: {tensor: 4}}\nradiation: {}\n";
    const Scenario read = read_scenario_text(text, "test.yaml");
    const Scenario sc = load_scenario_text(text, "test.yaml");
    EXPECT_EQ(sc.workload.job.data_parallel, 6);
    EXPECT_TRUE(sc.workload.options.rank_nodes.empty());  // every satellite a rank: placed by the placement policy
    EXPECT_EQ(sc.radiation.recovery.on_rank_loss, RankLossPolicy::wait);
    EXPECT_EQ(sc.radiation.faults.chips_per_satellite, 4);  // the job's parallelism.tensor
    EXPECT_EQ(sc.power.parameters.loads.accelerators, 4);
    expect_idempotent(read, sc);
    // A count given is kept, and a policy given is the policy.
    const std::string given = six + "workload: {parallelism: {data: 3}, on_rank_loss: shrink}\nradiation: {spare_satellites: 2, chips_per_satellite: 2}\n";
    const Scenario kept = load_scenario_text(given, "test.yaml");
    EXPECT_EQ(kept.workload.job.data_parallel, 3);
    EXPECT_TRUE(kept.workload.options.rank_nodes.empty());  // 3 ranks are not the 4 before the spares
    EXPECT_EQ(kept.radiation.recovery.on_rank_loss, RankLossPolicy::shrink);
    EXPECT_EQ(kept.radiation.faults.chips_per_satellite, 2);
    expect_idempotent(read_scenario_text(given, "test.yaml"), kept);
}

TEST(Resolve, AConstellationKeepsItsSparesInEachCluster) {
    const std::string text = six + "workload: {}\nradiation: {spare_satellites: 1}\nconstellation: {clusters: 2, spacing_km: 10}\n";
    const Scenario read = read_scenario_text(text, "test.yaml");
    const Scenario sc = load_scenario_text(text, "test.yaml");
    EXPECT_EQ(read.radiation.recovery.spare_group_size, 0);
    // 2 clusters of 6, each keeping its last satellite spare: groups of 6, 2 x 5 = 10 ranks, placed
    // by the constellation's training (no formation placement).
    EXPECT_EQ(sc.radiation.recovery.spare_group_size, 6);
    EXPECT_EQ(sc.workload.job.data_parallel, 10);
    EXPECT_TRUE(sc.workload.options.rank_nodes.empty());
    EXPECT_EQ(sc.radiation.recovery.on_rank_loss, RankLossPolicy::spare);
    expect_idempotent(read, sc);
}

TEST(Resolve, OperationalFaultsJoinRadiationOrPlayOnAFabric) {
    const std::string orbit = six + "workload: {}\nradiation: {}\nfaults: {preset: llama3_405b}\n";
    const Scenario read = read_scenario_text(orbit, "test.yaml");
    const Scenario sc = load_scenario_text(orbit, "test.yaml");
    EXPECT_TRUE(read.radiation.faults.operational.causes.empty());
    ASSERT_FALSE(sc.faults.operational.causes.empty());
    EXPECT_EQ(sc.radiation.faults.operational.causes.size(), sc.faults.operational.causes.size());
    EXPECT_EQ(sc.radiation.faults.operational.gpus_per_rank, 1);  // parallelism.tensor 1
    EXPECT_EQ(sc.radiation.faults.operational.causes.front().rate_per_gpu_s, sc.faults.operational.causes.front().rate_per_gpu_s);
    expect_idempotent(read, sc);

    const std::string fabric = R"(name: t
duration_s: 3600
topology: "switch:p=8,bw_gbps=400,latency_ns=1000"
workload: {model_parameters: 1.0e9, tokens_per_step: 1.0e6, parallelism: {tensor: 2}}
faults: {preset: llama3_405b}
)";
    const Scenario fabric_read = read_scenario_text(fabric, "test.yaml");
    const Scenario on_fabric = load_scenario_text(fabric, "test.yaml");
    EXPECT_EQ(on_fabric.workload.job.data_parallel, 8);  // the fabric's 8 ranks
    EXPECT_EQ(on_fabric.faults.recovery.on_rank_loss, RankLossPolicy::wait);  // no spares on a fabric
    EXPECT_EQ(fabric_read.faults.recovery.on_rank_loss, skyfabric::workloads::RecoveryConfig{}.on_rank_loss);
    EXPECT_EQ(fabric_read.faults.operational.gpus_per_rank, 0);
    EXPECT_EQ(on_fabric.faults.operational.gpus_per_rank, 2);  // the job's parallelism.tensor
    expect_idempotent(fabric_read, on_fabric);
}

TEST(Resolve, AServingRoleTakesTheChipsOfWhereItsInstancesStand) {
    // serving-4x81: the dedicated prefill instances in cluster 0, the other prefill and the decode
    // instances in cluster 3. Cluster 3 given H200s: those roles take them; the dedicated group's
    // cluster gives none, so it keeps the workload's TPU v6e.
    const std::string file = std::string(SKYFABRIC_SOURCE_DIR) + "/scenarios/serving-4x81.yaml";
    const std::vector<skyfabric::scenario::Override> h200_in_cluster_3{
        {"constellation.spacing_km", "", true},
        {"constellation.clusters", "[{along_track_km: 0}, {along_track_km: 100}, {along_track_km: 200}, "
                                   "{along_track_km: 300, accelerator: h200}]"}};
    const Scenario read = read_scenario_text(skyfabric::scenario::read_scenario_file(file), file, h200_in_cluster_3);
    const Scenario sc = load_scenario_file(file, h200_in_cluster_3);
    const auto& e = sc.inference.serving.engines;
    EXPECT_EQ(accelerator_name(read.inference.serving.engines.decode.accelerator), "(none)");
    EXPECT_EQ(accelerator_name(e.prefill.accelerator), "h200");
    EXPECT_EQ(accelerator_name(e.decode.accelerator), "h200");
    EXPECT_EQ(accelerator_name(e.dedicated_prefill_accelerator), "tpu_v6e");
    expect_idempotent(read, sc);
}

TEST(Resolve, ShippedScenariosAreResolvedOnceAndForAll) {
    for (const char* name : {"smoke", "suncatcher-81", "constellation-4x81-stress", "serving-beside-training-4x81",
                             "serving-two-datacentres", "llama3-16k-ground"}) {
        SCOPED_TRACE(name);
        const std::string file = std::string(SKYFABRIC_SOURCE_DIR) + "/scenarios/" + name + ".yaml";
        const Scenario sc = load_scenario_file(file);
        expect_idempotent(read_scenario_text(skyfabric::scenario::read_scenario_file(file), file), sc);
    }
    // A job beside a serving one: data-parallel over its clusters' satellites that serve nothing.
    const std::string shared = std::string(SKYFABRIC_SOURCE_DIR) + "/scenarios/serving-beside-training-4x81.yaml";
    const Scenario sc = load_scenario_file(shared);
    EXPECT_EQ(static_cast<std::size_t>(sc.workload.job.data_parallel), skyfabric::scenario::shared_training_nodes(sc).size());
}
