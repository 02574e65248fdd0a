// The scenario file: read whole, --set overrides applied, each section read in order, then the checks between sections.
#include "scenario/scenario.hpp"

#include "scenario/section_readers.hpp"
#include "scenario/yaml_reader.hpp"

#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/frames.hpp>
#include <skyfabric/physics/orbit.hpp>
#include <skyfabric/physics/random.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <regex>
#include <sstream>

namespace skyfabric::scenario {

using namespace detail;

namespace {

// The document parsed, the overrides applied.
YAML::Node parse_document(const std::string& yaml_text, SourceInfo& source, const std::vector<Override>& overrides) {
    const std::string& source_name = source.file_name;
    check_document(yaml_text, source_name);
    YAML::Node root;
    try {
        root = YAML::Load(yaml_text);
    } catch (const YAML::ParserException& e) {
        throw ScenarioError(source_name + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                            ": YAML syntax error: " + e.msg);
    } catch (const YAML::Exception& e) {
        const int line = e.mark.is_null() ? 0 : e.mark.line, column = e.mark.is_null() ? 0 : e.mark.column;
        throw ScenarioError(source_name + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1) +
                            ": cannot read YAML: " + e.msg);
    }
    if (!root.IsDefined() || root.IsNull()) throw ScenarioError(source_name + ":1:1: the scenario is empty; expected a mapping with name, orbit and formation");
    if (!root.IsMap()) throw ScenarioError(location(root, "(top level)", source) + "expected a mapping of keys to values at the top level");

    for (const auto& o : overrides) {
        apply_override(root, o);
        source.overridden_paths.insert(o.path);
    }
    return root;
}

// Each section as written in the file, read in order (a section's reader may use those read before it).
Scenario read_sections(Section& top, const YAML::Node& root, const std::string& yaml_text, const std::string& source_name,
                       const std::vector<Override>& overrides) {
    Scenario sc;
    sc.source_file = source_name;
    if (overrides.empty()) {
        sc.yaml_text = yaml_text;
    } else {
        YAML::Emitter out;
        out << root;
        sc.yaml_text = std::string("# ") + source_name + " with --set overrides applied\n" + out.c_str() + "\n";
    }

    sc.name = top.text("name");
    if (sc.name.empty()) top.fail("name", "must not be empty");
    check_name(top, sc.name);
    sc.seed = static_cast<std::uint64_t>(top.integer("seed", 0, std::numeric_limits<std::int64_t>::max(), 42));
    sc.fabric = read_fabric(top, source_name);
    const bool orbital = !sc.fabric;
    if (orbital || top.has("orbit")) sc.orbit = read_orbit(top.section("orbit", true));
    else top.allow("orbit");
    sc.dynamics = read_dynamics(top.section("dynamics"));

    top.refuse_empty("duration_s", "a number of seconds");
    top.refuse_empty("duration_orbits", "a number of orbits");
    if (!orbital && !top.has("orbit") && top.has("duration_orbits")) {
        top.fail("duration_orbits", "needs an orbit; with a synthetic topology give duration_s");
    }
    if (top.has("duration_s") == top.has("duration_orbits")) {
        top.fail(top.has("duration_s") ? "duration_orbits" : "duration_s", "give exactly one of duration_s or duration_orbits");
    }
    if (top.has("duration_s")) {
        sc.duration_s = top.number("duration_s", 0.0, 10.0 * physics::seconds_per_julian_year, {}, "s");
        top.allow("duration_orbits");
    } else {
        // In seconds once resolved: an orbit is the nodal period under the dynamics' J2.
        sc.duration_orbits = top.number("duration_orbits", 0.0, 100000.0, {}, "orbits");
        top.allow("duration_s");
    }
    sc.output_step_s = top.number("output_step_s", 1e-3, 1e7, sc.output_step_s, "s");

    if (orbital || top.has("formation")) sc.formation = read_formation(top.section("formation", true));
    else top.allow("formation");
    sc.station_keeping = read_station_keeping(top.section("station_keeping"));
    sc.metrics = read_metrics(top.section("metrics"));
    sc.links = read_links(top.section("links"), top.has("links"));
    sc.constellation = read_constellation(top.section("constellation"), top.has("constellation"), sc.formation);
    if (top.has("workloads")) {
        auto jobs = read_workloads_list(top, sc, source_name);
        sc.workload = std::move(jobs.training);
        sc.inference = std::move(jobs.inference);
    } else if (top.section("workload").choice("kind", {"training", "inference"}, "training") == "inference")
        sc.inference = read_inference(top.section("workload"), source_name);
    else
        sc.workload = read_workload(top.section("workload"), top.has("workload"));
    sc.ground = read_ground_stations(top, sc);
    sc.ground = read_ground_datacentres(top, sc);
    sc.radiation = read_radiation(top.section("radiation"), top.has("radiation"));
    sc.faults = read_faults(top.section("faults"), top.has("faults"));
    sc.power = read_power(top.section("power"), top.has("power"));
    if (sc.power.enabled && sc.fabric) top.fail("power", "needs an orbit; a synthetic topology has no Sun");
    sc.output = read_output(top.section("output"));
    top.allow("sweep");
    top.finish();
    return sc;
}

}  // namespace

Scenario read_scenario_text(const std::string& yaml_text, const std::string& source_name, const std::vector<Override>& overrides) {
    SourceInfo source{source_name, {}};
    const YAML::Node root = parse_document(yaml_text, source, overrides);
    Section top(root, "", &source);
    return read_sections(top, root, yaml_text, source_name, overrides);
}

Scenario load_scenario_text(const std::string& yaml_text, const std::string& source_name,
                            const std::vector<Override>& overrides, const LoadOptions& options) {
    SourceInfo source{source_name, {}};
    const YAML::Node root = parse_document(yaml_text, source, overrides);
    Section top(root, "", &source);
    // What was read is not written again: resolve derives the resolved values into a new scenario,
    // and the checks between sections only report, on both.
    const Scenario read = read_sections(top, root, yaml_text, source_name, overrides);
    check_satellite_count(top, read);
    const Scenario resolved = resolve(read);
    check_across_sections(top, read, resolved, options);
    return resolved;
}

std::string read_scenario_file(const std::filesystem::path& file) {
    return read_input_file(file, max_scenario_bytes, "scenario file");
}

Scenario load_scenario_file(const std::filesystem::path& file, const std::vector<Override>& overrides,
                            const LoadOptions& options) {
    return load_scenario_text(read_scenario_file(file), file.string(), overrides, options);
}

}  // namespace skyfabric::scenario
