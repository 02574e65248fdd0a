// The resolved settings' hash (scenario/settings_hash.hpp): alike for a scenario however it is written,
// different for any change of what it sets. That every field of every settings struct is hashed is
// checked by the compiler (settings_fields.hpp); tests/cli/check_provenance.py checks that the outputs
// record it and that it is the SHA-256 of `validate --settings`, recomputed by Python's hashlib.
#include "scenario/scenario.hpp"
#include "scenario/settings_fields.hpp"
#include "scenario/settings_hash.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace {

using skyfabric::scenario::load_scenario_text;
using skyfabric::scenario::Override;
using skyfabric::scenario::settings_sha256;

const std::string formation = R"(name: t
seed: 7
duration_s: 600
orbit:
  altitude_km: 650
  sun_synchronous: true
  ltan_h: 6.0
formation:
  layout: suncatcher_lattice
  radius_m: 200
links:
  topology: nearest_k
  terminals_per_satellite: 4
workload:
  model_parameters: 1.0e9
  tokens_per_step: 1.0e6
radiation:
  shielding_mm_al: 10
)";

// The same settings: sections in another order, a comment, the altitude as a semi-major axis
// (6378.137 + 650 km) and three defaults written out (docs/scenario-reference.md).
const std::string formation_written_otherwise = R"(# the same run
radiation:
  shielding_mm_al: 10.0
links:
  terminals_per_satellite: 4
  topology: nearest_k
workload:
  tokens_per_step: 1000000
  model_parameters: 1.0e9
formation:
  radius_m: 200
  layout: suncatcher_lattice
  radial_pitch_m: 100
orbit:
  ltan_h: 6
  semi_major_axis_km: 7028.137
  sun_synchronous: true
seed: 7
name: t
duration_s: 600
output_step_s: 10
)";

TEST(SettingsHash, TheSameSettingsWrittenOtherwiseHashAlike) {
    const auto a = load_scenario_text(formation, "a.yaml");
    const auto b = load_scenario_text(formation_written_otherwise, "b.yaml");
    ASSERT_NE(a.yaml_text, b.yaml_text);  // scenario_sha256 tells them apart
    EXPECT_EQ(settings_sha256(a), settings_sha256(b));
    EXPECT_EQ(settings_sha256(a).size(), 64u);
    // Nor does the machine's thread budget count (results do not depend on it).
    auto threaded = a;
    threaded.threads = 3;
    EXPECT_EQ(settings_sha256(threaded), settings_sha256(a));
}

TEST(SettingsHash, EachChangedSettingChangesIt) {
    // One key per kind of field and per depth: top level, a nested struct, an enum, an optional, a
    // string, a list and a key whose default another section resolves.
    const std::vector<std::string> changes = {
        "seed=8",
        "duration_s=601",
        "orbit.altitude_km=651",
        "orbit.epoch_utc=2027-03-20T00:00:01Z",
        "formation.radius_m=201",
        "dynamics.model=hcw",
        "dynamics.drag.enabled=true",
        "links.terminals_per_satellite=5",
        "links.aperture_m=0.11",
        "links.dwdm.transceiver=800zr",
        "workload.tokens_per_step=2.0e6",
        "workload.parallelism.data=4",
        "workload.all_reduce=double_binary_tree",
        "radiation.shielding_mm_al=11",
        "radiation.trials=2",
        "output.vtk=true",
    };
    std::set<std::string> hashes{settings_sha256(load_scenario_text(formation, "a.yaml"))};
    for (const auto& change : changes) {
        const auto eq = change.find('=');
        const Override set{change.substr(0, eq), change.substr(eq + 1), false};
        const auto hash = settings_sha256(load_scenario_text(formation, "a.yaml", {set}));
        EXPECT_TRUE(hashes.insert(hash).second) << change << " left the hash as another scenario's";
    }
}

TEST(SettingsHash, ARequestTraceCountsByItsRowsThroughTheirDigest) {
    // A trace (arrivals.trace) enters as its length and the SHA-256 of its rows, not row by row (a
    // million rows would make a JSON of hundreds of MB): equal rows hash alike, one arrival moved by
    // a nanosecond does not.
    auto a = load_scenario_text(formation, "a.yaml");
    a.inference.serving.trace = {{0, 0.0, 4000, 0, 10}, {1, 0.5, 30000, 2000, 20}};
    auto b = a;
    EXPECT_EQ(settings_sha256(a), settings_sha256(b));
    EXPECT_EQ(skyfabric::scenario::settings_json(a)["inference"]["serving"]["trace"]["requests"], 2);
    b.inference.serving.trace[1].arrival_s = 0.500000001;
    EXPECT_NE(settings_sha256(a), settings_sha256(b));
    b = a;
    b.inference.serving.trace[0].cached_tokens = 1;
    EXPECT_NE(settings_sha256(a), settings_sha256(b));
}

// The count that stops the build when a struct's SKYFABRIC_SETTINGS_FIELDS line misses a field.
struct ThreeFields {
    double a = 0.0;
    std::vector<int> b;
    std::string c;
    int method() const { return 0; }  // functions and statics are no fields
    static const int d = 0;
};
struct Nested {
    ThreeFields inner;
    bool flag = false;
};
static_assert(skyfabric::scenario::fields::field_count<ThreeFields>() == 3);
static_assert(skyfabric::scenario::fields::field_count<Nested>() == 2);
static_assert(skyfabric::scenario::fields::names_listed("a, b, c") == 3);

}  // namespace
