#include "sweep/sweep_setup.hpp"

#include "output/sha256.hpp"
#include "scenario/yaml_reader.hpp"

#include <stdexcept>

namespace skyfabric::sweep {

namespace fs = std::filesystem;

Plan make_plan(const SweepOptions& o) {
    Plan plan;
    plan.scenario_file = o.scenario_file;
    plan.base_overrides = o.overrides;
    plan.threads = o.threads;
    plan.yes = o.yes;
    std::vector<scenario::Override> base_overrides;
    for (const auto& a : o.overrides) base_overrides.push_back(scenario::parse_override(a));
    const auto base = scenario::load_scenario_file(o.scenario_file, base_overrides);
    plan.scenario_yaml = base.yaml_text;

    std::vector<Axis> cli_axes;
    for (const auto& v : o.vary) cli_axes.push_back(parse_vary_argument(v));
    plan.spec = merge(read_sweep_block(scenario::read_scenario_file(o.scenario_file), o.scenario_file), cli_axes, o.zip);
    plan.points = expand(plan.spec, base_formation(base));
    // Every point is loaded now, so a value a point cannot take is refused before anything runs (exit 2),
    // and each point's full scenario text fingerprints it for --resume.
    std::string refused;
    std::size_t refused_count = 0;
    for (const auto& p : plan.points) {
        std::string point_text;
        if (p.error.empty()) {
            auto overrides = base_overrides;
            overrides.insert(overrides.end(), p.overrides.begin(), p.overrides.end());
            try {
                point_text = scenario::load_scenario_file(o.scenario_file, overrides, {.refuse_large_runs = !o.yes}).yaml_text;
            } catch (const scenario::ScenarioError& e) {
                if (++refused_count <= 5) refused += "\n  point " + p.name + ": " + e.what();
            }
        }
        plan.fingerprints.push_back(output::sha256_hex(point_text));  // = the point's summary.json scenario_sha256
    }
    if (refused_count > 0) {
        throw scenario::ScenarioError(std::to_string(refused_count) + " of " + std::to_string(plan.points.size()) +
                                      " sweep points are not valid scenarios" + refused +
                                      (refused_count > 5 ? "\n  ..." : ""));
    }
    plan.dir = o.output_dir.empty() ? fs::path("out") / (base.name + "-sweep") : fs::path(o.output_dir);

    std::error_code ec;
    plan.exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw std::runtime_error("cannot find the skyfabric program (/proc/self/exe): " + ec.message());
    return plan;
}

fs::path point_dir(const Plan& plan, const Point& p) { return plan.dir / "points" / p.name; }

}  // namespace skyfabric::sweep
