#pragma once
// What a sweep keeps of an earlier one in its folder: a complete sweep only with --resume or
// --force; with --resume, the points whose published result is whole and was run with the
// settings the plan has now.
#include "sweep/sweep_runner.hpp"
#include "sweep/sweep_setup.hpp"
#include "sweep/sweep_table.hpp"

#include <cstddef>
#include <vector>

namespace skyfabric::sweep {

// Refuses a folder holding a complete sweep unless --resume or --force (like `run`).
// Throws scenario::ScenarioError.
void refuse_to_overwrite(const Plan& plan, const SweepOptions& options);

// Creates the folder and returns the points to run: all, or with --resume those without a
// complete result (their rows are put in `kept`). Without --resume, the rows of the complete points
// an earlier sweep left that the plan runs again are put in `earlier`: the table keeps them until
// each is replaced. Throws output::OutputError.
std::vector<std::size_t> prepare_directory(const Plan& plan, const SweepOptions& options, std::vector<Row>& kept,
                                           std::vector<Row>& earlier);

// Removes the folders under points/ that the plan does not name (an earlier sweep's); symlinks are
// removed, never followed.
void remove_points_not_in(const Plan& plan);

}  // namespace skyfabric::sweep
