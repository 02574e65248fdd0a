#pragma once
// The sweep's plots: viz/plot_sweep.py drawn into DIR/plots by Debian's python3.
#include "sweep/sweep_setup.hpp"
#include "sweep/sweep_table.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace skyfabric::sweep {

// viz/NAME in the source tree above the binary `exe` (or this source file's); the variable
// `env_override` names another path; "" when not found.
std::string viz_script(const std::filesystem::path& exe, const char* name, const char* env_override);

// Draws the plots of the table in plan.dir; a missing script or interpreter, or a failed plot, is a
// warning (unless quiet), never an error. Its output goes to DIR/plots.log.
void draw_plot(const Plan& plan, const std::vector<Row>& rows, bool quiet);

}  // namespace skyfabric::sweep
