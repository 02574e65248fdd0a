#pragma once
// What every rank knows about a sweep: all compute the same Plan from the same options.
#include "sweep/sweep_plan.hpp"
#include "sweep/sweep_runner.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace skyfabric::sweep {

struct Plan {
    std::string scenario_file;
    std::string scenario_yaml;  // with the base overrides, before any point's
    std::vector<std::string> base_overrides;
    SweepSpec spec;
    std::vector<Point> points;
    std::vector<std::string> fingerprints;  // per point: its scenario after every override (resume compares)
    std::filesystem::path dir;
    std::filesystem::path exe;
    int threads = 0;  // passed to every point's `run`, with --yes
    bool yes = false;
};

// Loads the base scenario and every point, so that a value a point cannot take is refused
// before anything runs. Throws scenario::ScenarioError (exit 2).
Plan make_plan(const SweepOptions& options);

std::filesystem::path point_dir(const Plan& plan, const Point& p);

}  // namespace skyfabric::sweep
