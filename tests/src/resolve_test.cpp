// resolve (src/scenario/resolve.cpp): the values one section's defaults take from another's, derived
// into a new scenario from what was read, each against a hand count on a small scenario; resolving a
// resolved scenario changes nothing; what was read stays as read.
#include "scenario/scenario.hpp"
#include "scenario/settings_hash.hpp"

#include <skyfabric/physics/random.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <utility>

#include <numeric>
#include <string>
#include <vector>

using skyfabric::scenario::load_scenario_file;
using skyfabric::scenario::load_scenario_text;
using skyfabric::scenario::read_scenario_text;
using skyfabric::scenario::resolve;
using skyfabric::scenario::Scenario;
using skyfabric::scenario::settings_json;
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

// Every value resolve derives, the derived fields one by one (for their messages), then every setting.
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
    EXPECT_EQ(a.duration_s, b.duration_s);
    EXPECT_EQ(a.dynamics.drag.seed, b.dynamics.drag.seed);
    EXPECT_EQ(a.radiation.environment.epoch_julian_date_days, b.radiation.environment.epoch_julian_date_days);
    EXPECT_EQ(a.ground.segment.epoch_julian_date_days, b.ground.segment.epoch_julian_date_days);
    EXPECT_EQ(a.ground.segment.seed, b.ground.segment.seed);
    EXPECT_EQ(a.workload.options.seed, b.workload.options.seed);
    EXPECT_EQ(a.workload.options.stragglers.seed, b.workload.options.stragglers.seed);
    EXPECT_EQ(a.inference.serving.requests.seed, b.inference.serving.requests.seed);
    EXPECT_EQ(a.constellation.routing_model, b.constellation.routing_model);
    EXPECT_EQ(a.faults.operational.causes, b.faults.operational.causes);
    EXPECT_EQ(a.duration_orbits, b.duration_orbits);
    EXPECT_EQ(a.inference.arrivals_seed, b.inference.arrivals_seed);
    EXPECT_EQ(a.faults.causes, b.faults.causes);
    // Every other setting, by its canonical JSON (operator== fails on the NaN velocity that marks an explicit
    // satellite's bounded-orbit velocity; the dump writes it as null).
    EXPECT_EQ(settings_json(a).dump(), settings_json(b).dump());
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

// A section's values taken from another's: the scenario's seed and the orbit's epoch, set by resolve; the
// read scenario keeps its sections as written. 2026-01-01 00:00 UTC is JD 2461041.5 (2025-01-01 is
// 2460676.5, plus 365 days).
TEST(Resolve, TheSeedAndTheEpochAreTheScenariosAndTheOrbits) {
    std::string text = six + "seed: 7\nworkload: {stragglers: {probability: 0.1}}\nradiation: {}\ndynamics: {drag: {}}\n";
    text.replace(text.find("orbit: { altitude_km: 650 }"), 27, "orbit: { altitude_km: 650, epoch_utc: 2026-01-01T00:00:00Z }");
    const Scenario read = read_scenario_text(text, "test.yaml");
    const Scenario sc = load_scenario_text(text, "test.yaml");
    EXPECT_EQ(sc.dynamics.drag.seed, 7u);
    EXPECT_EQ(sc.workload.options.seed, 7u);
    EXPECT_EQ(sc.workload.options.stragglers.seed, skyfabric::physics::rng::derive_seed(7, 0x5354524147ull));  // "STRAG"
    EXPECT_DOUBLE_EQ(sc.radiation.environment.epoch_julian_date_days, 2461041.5);
    // As read: the libraries' own defaults, nothing taken from the top level or the orbit.
    EXPECT_EQ(read.dynamics.drag.seed, skyfabric::physics::DragSettings{}.seed);
    EXPECT_EQ(read.workload.options.seed, skyfabric::workloads::TrainingOptions{}.seed);
    EXPECT_EQ(read.workload.options.stragglers.seed, skyfabric::workloads::StragglerModel{}.seed);
    EXPECT_EQ(read.radiation.environment.epoch_julian_date_days, skyfabric::physics::EnvironmentParameters{}.epoch_julian_date_days);
    expect_idempotent(read, sc);
}

// A serving workload's arrivals draw from arrivals.seed, else from the scenario's seed; its ground
// stations' clouds from the scenario's seed, dated by the orbit's epoch.
TEST(Resolve, ServingDrawsFromItsOwnSeedOrTheScenarios) {
    const std::string file = std::string(SKYFABRIC_SOURCE_DIR) + "/scenarios/serving-orbit-to-ground.yaml";
    const std::vector<skyfabric::scenario::Override> seed_9{{"seed", "9"}, {"orbit.epoch_utc", "2026-01-01T00:00:00Z"}};
    const Scenario read = read_scenario_text(skyfabric::scenario::read_scenario_file(file), file, seed_9);
    const Scenario sc = load_scenario_file(file, seed_9);
    EXPECT_FALSE(read.inference.arrivals_seed.has_value());
    EXPECT_EQ(sc.inference.serving.requests.seed, 9u);
    ASSERT_TRUE(sc.ground.enabled);
    EXPECT_EQ(sc.ground.segment.seed, 9u);
    EXPECT_DOUBLE_EQ(sc.ground.segment.epoch_julian_date_days, 2461041.5);
    EXPECT_EQ(read.ground.segment.seed, skyfabric::workloads::GroundSegmentConfig{}.seed);
    expect_idempotent(read, sc);

    auto own = seed_9;
    own.push_back({"workload.inference.arrivals.seed", "5"});
    const Scenario own_read = read_scenario_text(skyfabric::scenario::read_scenario_file(file), file, own);
    const Scenario own_seed = load_scenario_file(file, own);
    EXPECT_EQ(own_read.inference.arrivals_seed, std::optional<std::uint64_t>{5});
    EXPECT_EQ(own_seed.inference.serving.requests.seed, 5u);
    EXPECT_EQ(own_seed.ground.segment.seed, 9u);  // the stations' clouds keep the scenario's
    expect_idempotent(own_read, own_seed);
}

// duration_orbits: orbits of the nodal period; without J2 the Keplerian 2 pi sqrt(a^3 / mu), a = 6,378,137 m + 650 km.
TEST(Resolve, DurationInOrbitsIsTheirPeriodTimesTheirCount) {
    std::string text = six + "dynamics: {j2: false}\n";
    text.replace(text.find("duration_s: 100"), 15, "duration_orbits: 2.5");
    const Scenario read = read_scenario_text(text, "test.yaml");
    const Scenario sc = load_scenario_text(text, "test.yaml");
    const double a = 6378137.0 + 650e3;
    const double period_s = 2.0 * 3.14159265358979323846 * std::sqrt(a * a * a / 3.986004418e14);
    EXPECT_NEAR(sc.duration_s, 2.5 * period_s, 1e-9 * period_s);
    EXPECT_EQ(read.duration_orbits, std::optional<double>{2.5});
    EXPECT_EQ(read.duration_s, 0.0);
    expect_idempotent(read, sc);
}

// routing_model auto: flat while every cluster's gateway links into it (gateways x (clusters - 1)) stay
// within the guided search's 64 (workloads::max_entries), two-level past them; a model named is kept.
TEST(Resolve, RoutingModelAutoIsPickedByTheConstellationsSize) {
    const auto model_of = [](const std::string& constellation) {
        const std::string text = six + "constellation: " + constellation + "\n";
        const Scenario read = read_scenario_text(text, "test.yaml");
        const Scenario sc = load_scenario_text(text, "test.yaml");
        expect_idempotent(read, sc);
        return std::pair{read.constellation.routing_model, sc.constellation.routing_model.value()};
    };
    using skyfabric::workloads::RoutingModel;
    const auto two = model_of("{clusters: 2, spacing_km: 10}");  // 4 x 1 = 4 links
    EXPECT_FALSE(two.first.has_value());
    EXPECT_EQ(two.second, RoutingModel::flat);
    EXPECT_EQ(model_of("{clusters: 17, spacing_km: 10}").second, RoutingModel::flat);       // 4 x 16 = 64
    EXPECT_EQ(model_of("{clusters: 18, spacing_km: 10}").second, RoutingModel::two_level);  // 4 x 17 = 68
    const auto named = model_of("{clusters: 2, spacing_km: 10, routing_model: two_level}");
    EXPECT_EQ(named.first, std::optional{RoutingModel::two_level});
    EXPECT_EQ(named.second, RoutingModel::two_level);
}

// faults.rate_scale: the read scenario keeps each cause at its written rate (0.864 per GPU-day = 1e-5 /s)
// and the scale; resolve scales them once (x 10 = 1e-4 /s), however often it is applied.
TEST(Resolve, RateScaleScalesTheWrittenRatesOnce) {
    const std::string text = R"(name: t
duration_s: 3600
topology: "switch:p=8,bw_gbps=400,latency_ns=1000"
workload: {model_parameters: 1.0e9, tokens_per_step: 1.0e6}
faults: {causes: [{name: gpu, per_gpu_day: 0.864, effect: reboot}], rate_scale: 10}
)";
    const Scenario read = read_scenario_text(text, "test.yaml");
    const Scenario sc = load_scenario_text(text, "test.yaml");
    ASSERT_EQ(read.faults.causes.size(), 1u);
    EXPECT_NEAR(read.faults.causes[0].rate_per_gpu_s, 1e-5, 1e-18);
    EXPECT_EQ(read.faults.rate_scale, 10.0);
    EXPECT_TRUE(read.faults.operational.causes.empty());
    ASSERT_EQ(sc.faults.operational.causes.size(), 1u);
    EXPECT_NEAR(sc.faults.operational.causes[0].rate_per_gpu_s, 1e-4, 1e-17);
    EXPECT_EQ(sc.faults.causes, read.faults.causes);  // kept as written beside the scaled ones
    expect_idempotent(read, sc);
    EXPECT_NEAR(resolve(resolve(sc)).faults.operational.causes[0].rate_per_gpu_s, 1e-4, 1e-17);
}
