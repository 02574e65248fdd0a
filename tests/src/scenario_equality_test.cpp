// Settings apart from run state (docs/architecture.md "Settings and context"): a loaded scenario is
// plain values, so two loads of the same text compare equal and any key set differently does not.
// The static_assert fails to compile the day a struct reachable from Scenario takes a member with no
// value equality (a std::function callback, a live object without operator==). Pointers, shared
// pointers and atomics do compare (by address, by value read), so those the review keeps out.
#include "scenario/scenario.hpp"

#include <gtest/gtest.h>

#include <concepts>
#include <filesystem>
#include <string>
#include <vector>

namespace sc = skyfabric::scenario;

static_assert(std::equality_comparable<sc::Scenario>);
// The library settings a scenario fills, each on its own (so a failure names the struct).
static_assert(std::equality_comparable<skyfabric::workloads::FlowOptions>);
static_assert(std::equality_comparable<skyfabric::workloads::TrainingOptions>);
static_assert(std::equality_comparable<skyfabric::workloads::ServingConfig>);
static_assert(std::equality_comparable<skyfabric::workloads::ClusterTrainingSetup>);
static_assert(std::equality_comparable<skyfabric::workloads::FaultModel>);
static_assert(std::equality_comparable<skyfabric::workloads::RecoveryConfig>);
static_assert(std::equality_comparable<skyfabric::links::TopologyParameters>);
static_assert(std::equality_comparable<skyfabric::physics::PowerParameters>);

namespace {

// Every shipped scenario whose kinds of section differ: a formation, a constellation, serving,
// serving beside training, ground stations.
const char* const shipped[] = {"smoke.yaml", "suncatcher-81.yaml", "constellation-4x81.yaml", "serving-4x81.yaml",
                               "serving-beside-training-4x81.yaml", "serving-orbit-to-ground.yaml"};

std::filesystem::path scenario_file(const char* name) { return std::filesystem::path(SKYFABRIC_SOURCE_DIR) / "scenarios" / name; }

}  // namespace

TEST(ScenarioEquality, TwoLoadsOfOneScenarioAreEqual) {
    for (const char* name : shipped) {
        SCOPED_TRACE(name);
        const sc::Scenario a = sc::load_scenario_file(scenario_file(name));
        const sc::Scenario b = sc::load_scenario_file(scenario_file(name));
        EXPECT_TRUE(a == b);
    }
}

TEST(ScenarioEquality, OneOverrideMakesThemDiffer) {
    // A key deep in a library's settings (the flow's per-message overhead), one in the scenario's own
    // (the output step) and one in serving's: each set differently is a different scenario.
    const struct {
        const char* file;
        std::string key;
        std::string value;
    } cases[] = {{"suncatcher-81.yaml", "workload.per_message_overhead_us", "3"},
                 {"smoke.yaml", "output_step_s", "7"},
                 {"serving-4x81.yaml", "workload.inference.slo.ttft_s", "1.5"}};
    for (const auto& c : cases) {
        SCOPED_TRACE(c.key);
        const sc::Scenario base = sc::load_scenario_file(scenario_file(c.file));
        const sc::Scenario set = sc::load_scenario_file(scenario_file(c.file), {sc::parse_override(c.key + "=" + c.value)});
        EXPECT_FALSE(base == set);
        // Not only the recorded text (yaml_text holds the scenario after overrides): the settings.
        sc::Scenario base_settings = base, set_settings = set;
        base_settings.yaml_text.clear();
        set_settings.yaml_text.clear();
        EXPECT_FALSE(base_settings == set_settings) << "the override changed only the recorded text";
    }
}
