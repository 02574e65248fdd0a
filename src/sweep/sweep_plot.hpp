#pragma once
// The sweep's plots: viz/plot_sweep.py drawn into DIR/plots by Debian's python3.
#include "sweep/sweep_setup.hpp"
#include "sweep/sweep_table.hpp"

#include <vector>

namespace skyfabric::sweep {

// Draws the plots of the table in plan.dir; a missing script or interpreter, or a failed plot, is a
// warning (unless quiet), never an error. Its output goes to DIR/plots.log.
void draw_plot(const Plan& plan, const std::vector<Row>& rows, bool quiet);

}  // namespace skyfabric::sweep
