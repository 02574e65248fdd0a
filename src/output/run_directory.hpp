#pragma once
// One scenario run into one folder: result.h5 (via result.h5.partial + rename),
// vtk/ frames, summary.json. Shared by `run` and `sweep`.
#include "scenario/scenario.hpp"
#include "simulation/simulation.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <filesystem>
#include <vector>

namespace skyfabric::output {

// Throws ScenarioError when `directory` already holds a complete run and !force.
void refuse_to_overwrite(const std::filesystem::path& directory, bool force);

// Runs the scenario into `directory` (created if needed). `extra` recorders (a progress
// bar) see every sample too. Returns summary.json's content; its "complete" says
// whether the run reached its end. Throws OutputError when files cannot be written.
// `trace_path` (or output.trace: DIR/trace.json) receives a Chrome trace-event timeline.
nlohmann::json run_to_directory(const scenario::Scenario& scenario, const std::filesystem::path& directory,
                                std::vector<simulation::Recorder*> extra = {},
                                const std::atomic<bool>* stop = nullptr,
                                const std::filesystem::path& trace_path = {});

}  // namespace skyfabric::output
