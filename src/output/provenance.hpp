#pragma once
// Where an output came from: the build (version, git commit, dirty tree), the command that made it,
// and the scenario (its resolved text, that text's SHA-256 and its settings' SHA-256). Written into summary.json, the root
// attributes of result.h5 and sweep.h5, and a trace's metadata (docs/output-format.md, "Provenance").
#include "output/hdf5_file.hpp"
#include "scenario/scenario.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace skyfabric::output {

struct Provenance {
    std::string version;          // skyfabric's
    std::string git_commit;       // of the source tree at build time; "unknown" outside git
    bool git_dirty = false;       // tracked files had uncommitted changes at build time
    std::string command_line;     // this process's arguments, shell-quoted where needed
    std::string scenario_sha256;  // of scenario_yaml
    std::string scenario_yaml;    // the scenario after every override, as loaded
    // Of its resolved settings (scenario/settings_hash.hpp); empty where no one scenario made the file
    // (sweep.h5), and then not written.
    std::string settings_sha256;
};

// Call once at the start of main: every provenance afterwards carries these arguments.
void record_command_line(int argc, const char* const* argv);
Provenance provenance_of(const std::string& scenario_yaml);
// The same with the scenario's settings hash: what every run's output carries.
Provenance provenance_of(const scenario::Scenario& scenario);
// "0.1.0 (commit 476c2f1171cf, dirty)": what --version and `info` print.
std::string build_description();

// {"skyfabric_version", "git_commit", "git_dirty", "command_line", "scenario_sha256", "scenario_yaml",
//  "settings_sha256" (when known)}
nlohmann::json provenance_json(const Provenance& provenance);
// The same names as root attributes of an HDF5 file, with CF's global attributes: Conventions
// ("CF-1.8"), source (the build) and history ("<UTC time>: <command line>").
void write_provenance_attributes(Hdf5File& file, const Provenance& provenance);
// The time now, UTC, "2026-11-26T12:00:00" (no zone letter: CCSDS time code A).
std::string utc_now_iso8601();

}  // namespace skyfabric::output
