#pragma once
// One scenario run into one folder: result.h5, vtk/ frames, summary.json (and trace.json),
// published together. `sweep` runs each point through `skyfabric run`.
#include "scenario/scenario.hpp"
#include "simulation/simulation.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <filesystem>
#include <vector>

namespace skyfabric::output {

// Runs the scenario into `directory` (created if needed), owning it for the run (FolderLock:
// another process's run there is refused with ScenarioError) and refusing to replace a complete
// run unless `force`. The files are staged beside the folder and replace it as a whole when the
// run ends, complete or stopped (StagedFolder); on an exception nothing of the run is kept.
// `extra` recorders (a progress bar) see every sample too. Returns summary.json's content; its
// "complete" says whether the run reached its end. Throws OutputError when files cannot be
// written. `trace_path` (or output.trace: DIR/trace.json) receives a Chrome trace-event timeline.
// `ranks`: the run shared among processes (simulation::RunRanks), this one rank 0, the only one
// that writes; the others run the scenario with run_recording(scenario, trace_path) and no recorders.
nlohmann::json run_to_directory(const scenario::Scenario& scenario, const std::filesystem::path& directory, bool force,
                                std::vector<simulation::Recorder*> extra = {},
                                const std::atomic<bool>* stop = nullptr,
                                const std::filesystem::path& trace_path = {},
                                const simulation::RunRanks* ranks = nullptr);

// What run_to_directory's run records: with a trace (trace_path or output.trace) or VTK frames, the
// training's busy links per topology epoch.
simulation::RunRecording run_recording(const scenario::Scenario& scenario, const std::filesystem::path& trace_path);

}  // namespace skyfabric::output
