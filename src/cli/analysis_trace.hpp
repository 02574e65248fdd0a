#pragma once
// `skyfabric analyze`'s trace (issue 49, item 3): the run's Perfetto trace (RUN_DIR/trace.json,
// written with output.trace) with the analysis drawn over it — each training track's critical path
// (compute → the collective whose tail is the step's exposed communication → the next step) as flow
// arrows, and each detected anti-pattern as an instant event on its own track — published atomically
// as RUN_DIR/analysis_trace.json. docs/analysis.md "The trace".
#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>

namespace skyfabric::cli {

struct AnalysisTrace {
    std::filesystem::path path;
    long flows = 0;          // arrows drawn
    long anti_patterns = 0;  // instant events
};

// Nothing (nullopt) when the run wrote no RUN_DIR/trace.json; throws OutputError when it cannot be
// read or written.
std::optional<AnalysisTrace> write_analysis_trace(const std::filesystem::path& run_dir, const nlohmann::json& analysis);

}  // namespace skyfabric::cli
