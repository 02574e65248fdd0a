// Scenario loading: valid files load, and every kind of bad input names
// file:line:column, the key path and what was expected.
#include "scenario/scenario.hpp"
#include "scenario/yaml_reader.hpp"

#include <skyfabric/physics/constants.hpp>

#include <gtest/gtest.h>

#include <string>

using skyfabric::scenario::load_scenario_file;
using skyfabric::scenario::load_scenario_text;
using skyfabric::scenario::ScenarioError;

namespace {

const std::string minimal = R"(name: t
duration_s: 100
orbit:
  altitude_km: 650
  sun_synchronous: true
formation:
  layout: suncatcher_lattice
)";

std::string error_of(const std::string& text, std::vector<skyfabric::scenario::Override> overrides = {}) {
    try {
        load_scenario_text(text, "test.yaml", overrides);
    } catch (const ScenarioError& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST(ScenarioLoader, ShippedScenariosLoad) {
    const auto sc = load_scenario_file(std::string(SKYFABRIC_SOURCE_DIR) + "/scenarios/suncatcher-81.yaml");
    EXPECT_EQ(sc.name, "suncatcher-81");
    EXPECT_EQ(skyfabric::scenario::initial_formation(sc).size(), 81u);
    EXPECT_NEAR(sc.orbit.semi_major_axis_m, skyfabric::physics::earth_equatorial_radius_m + 650e3, 1e-6);
    EXPECT_NO_THROW(load_scenario_file(std::string(SKYFABRIC_SOURCE_DIR) + "/scenarios/smoke.yaml"));
}

TEST(ScenarioLoader, DurationInOrbitsUsesTheNodalPeriod) {
    // One orbit is node to node under J2. For the mean 650 km SSO that is 5,870.9 s (first-order theory,
    // checked against the numerical orbit's equator crossings in MeanElements.* of test_physics), where
    // the Keplerian period 2 pi sqrt(a^3/mu) is 5,863.7 s.
    std::string text = minimal;
    text.replace(text.find("duration_s: 100"), 15, "duration_orbits: 2");
    const auto sc = load_scenario_text(text, "t.yaml");
    EXPECT_NEAR(sc.duration_s, 2 * 5870.94, 2 * 0.01);
    const double a = sc.orbit.semi_major_axis_m;
    const double keplerian = 2 * skyfabric::physics::pi * std::sqrt(a * a * a / skyfabric::physics::earth_mu_m3_s2);
    EXPECT_NEAR(keplerian, 5863.7, 0.1);
    // Without J2 in the dynamics one orbit is the Keplerian period.
    const auto two_body = load_scenario_text(text + "dynamics: { model: hcw }\n", "t.yaml");
    EXPECT_NEAR(two_body.duration_s, 2 * keplerian, 1e-6);
}

TEST(ScenarioLoader, UnknownKeySuggestsNearestWithLocation) {
    const std::string e = error_of(minimal + "  radius_mm: 5\n");
    EXPECT_NE(e.find("test.yaml:8:3"), std::string::npos) << e;
    EXPECT_NE(e.find("formation.radius_mm"), std::string::npos) << e;
    EXPECT_NE(e.find("did you mean 'radius_m'"), std::string::npos) << e;
}

TEST(ScenarioLoader, WrongTypeNamesKeyAndExpectation) {
    std::string text = minimal;
    text.replace(text.find("altitude_km: 650"), 16, "altitude_km: high");
    const std::string e = error_of(text);
    EXPECT_NE(e.find("test.yaml:4:16"), std::string::npos) << e;
    EXPECT_NE(e.find("orbit.altitude_km"), std::string::npos) << e;
    EXPECT_NE(e.find("expected a finite number"), std::string::npos) << e;
}

TEST(ScenarioLoader, OutOfRangeIsRejected) {
    std::string text = minimal;
    text.replace(text.find("altitude_km: 650"), 16, "altitude_km: 50");
    const std::string e = error_of(text);
    EXPECT_NE(e.find("out of range"), std::string::npos) << e;
}

TEST(ScenarioLoader, MissingRequiredKeyIsNamed) {
    const std::string e = error_of("name: t\nduration_s: 10\nformation: {}\n");
    EXPECT_NE(e.find("'orbit'"), std::string::npos) << e;
    EXPECT_NE(e.find("missing"), std::string::npos) << e;
}

TEST(ScenarioLoader, BadChoiceListsOptions) {
    const std::string e = error_of(minimal + "dynamics:\n  model: hcwx\n");
    EXPECT_NE(e.find("test.yaml:9:10"), std::string::npos) << e;
    EXPECT_NE(e.find("did you mean 'hcw'"), std::string::npos) << e;
}

TEST(ScenarioLoader, SyntaxErrorHasLineAndColumn) {
    const std::string e = error_of("name: t\norbit: [1, 2\n");
    EXPECT_NE(e.find("test.yaml:"), std::string::npos) << e;
    EXPECT_NE(e.find("YAML syntax error"), std::string::npos) << e;
}

TEST(ScenarioLoader, OverridesApplyAndAreValidated) {
    const auto sc = load_scenario_text(minimal, "t.yaml", {{"orbit.altitude_km", "550"}, {"dynamics.model", "hcw"}});
    EXPECT_NEAR(sc.orbit.semi_major_axis_m, skyfabric::physics::earth_equatorial_radius_m + 550e3, 1e-6);
    EXPECT_EQ(sc.dynamics.model, skyfabric::physics::RelativeMotionModel::hcw);
    EXPECT_NE(sc.yaml_text.find("550"), std::string::npos);

    const std::string e = error_of(minimal, {{"orbit.altitude_kmm", "550"}});
    EXPECT_NE(e.find("--set orbit.altitude_kmm"), std::string::npos) << e;
    EXPECT_NE(e.find("did you mean 'altitude_km'"), std::string::npos) << e;
    EXPECT_THROW(skyfabric::scenario::parse_override("no_equals_sign"), ScenarioError);
}

TEST(ScenarioLoader, AbsurdStepCountRefusedUpFront) {
    std::string text = minimal;
    text.replace(text.find("duration_s: 100"), 15, "duration_s: 3e8");
    const std::string e = error_of(text + "output_step_s: 0.01\n");
    EXPECT_NE(e.find("output steps"), std::string::npos) << e;
}

TEST(ScenarioLoader, DragNeedsNonlinearModel) {
    const std::string e = error_of(minimal + "dynamics:\n  model: hcw\n  drag: {solar_activity: high}\n");
    EXPECT_NE(e.find("dynamics.drag"), std::string::npos) << e;
}

TEST(ScenarioLoader, SolarActivityPresetsAndIndexOverrides) {
    const auto high = load_scenario_text(minimal + "dynamics:\n  drag: {solar_activity: high}\n", "t.yaml");
    EXPECT_EQ(high.dynamics.drag.solar_activity.f107_daily_sfu, 250.0);
    EXPECT_EQ(high.dynamics.drag.solar_activity.f107_81day_mean_sfu, 250.0);
    EXPECT_EQ(high.dynamics.drag.solar_activity.ap, 25.0);
    // A daily flux alone sets the 81-day mean too; Ap keeps the preset's value.
    const auto custom = load_scenario_text(minimal + "dynamics:\n  drag: {solar_activity: low, f107_sfu: 180}\n", "t.yaml");
    EXPECT_EQ(custom.dynamics.drag.solar_activity.f107_daily_sfu, 180.0);
    EXPECT_EQ(custom.dynamics.drag.solar_activity.f107_81day_mean_sfu, 180.0);
    EXPECT_EQ(custom.dynamics.drag.solar_activity.ap, 4.0);
    const auto both = load_scenario_text(minimal + "dynamics:\n  drag: {f107_sfu: 180, f107_81day_sfu: 120, ap: 50}\n", "t.yaml");
    EXPECT_EQ(both.dynamics.drag.solar_activity.f107_81day_mean_sfu, 120.0);
    EXPECT_EQ(both.dynamics.drag.solar_activity.ap, 50.0);
    const std::string e = error_of(minimal + "dynamics:\n  drag:\n    f107_sfu: 900\n");
    EXPECT_NE(e.find("test.yaml:10:15"), std::string::npos) << e;
    EXPECT_NE(e.find("dynamics.drag.f107_sfu"), std::string::npos) << e;
    const std::string e_ap = error_of(minimal + "dynamics:\n  drag: {ap: -3}\n");
    EXPECT_NE(e_ap.find("dynamics.drag.ap"), std::string::npos) << e_ap;
}

TEST(ScenarioLoader, SolarProtonTermIsOffByDefault) {
    EXPECT_FALSE(load_scenario_text(minimal + "radiation: {shielding_mm_al: 10}\n", "t.yaml").radiation.environment.solar_protons);
    EXPECT_TRUE(load_scenario_text(minimal + "radiation: {solar_protons: esp_psychic_95}\n", "t.yaml")
                    .radiation.environment.solar_protons);
    const std::string e = error_of(minimal + "radiation:\n  solar_protons: jpl91\n");
    EXPECT_NE(e.find("radiation.solar_protons"), std::string::npos) << e;
    EXPECT_NE(e.find("esp_psychic_95"), std::string::npos) << e;
}
