#pragma once
// What a sweep runs: the varied keys (from --vary and the scenario's `sweep:` block),
// expanded into points (cartesian product or zipped lists), each point a list of
// `--set` overrides on the base scenario and a short folder name.
#include "scenario/scenario.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace skyfabric::sweep {

// The pseudo-key that sweeps the cluster size: it sets formation.radius_m so that
// N ∝ R² from the base scenario (or, when formation.radius_m is varied too, the lattice
// pitch so that N ∝ (R/pitch)²).
inline constexpr const char* satellites_key = "satellites";

// One varied key and its values, each value YAML text as --set takes it.
struct Axis {
    std::string key;
    std::vector<std::string> values;
};

struct SweepSpec {
    std::vector<Axis> axes;
    bool zip = false;
};

// "key.path=v1,v2,..." (commas inside [...] or {...} do not split). Throws ScenarioError.
Axis parse_vary_argument(const std::string& argument);

// The `sweep:` block of a scenario file ({vary: {key: [values...]}, zip: bool}), or an
// empty spec when there is none. Errors name file:line:column. Throws ScenarioError.
SweepSpec read_sweep_block(const std::string& yaml_text, const std::string& source_name);

// --vary axes replace the block's axis of the same key and are appended otherwise; one key given
// twice on the command line is refused (ScenarioError: it used to keep the last silently);
// zip is on when either asks for it.
SweepSpec merge(SweepSpec from_file, const std::vector<Axis>& from_command_line, bool zip_flag);

// What the base scenario contributes to the `satellites` pseudo-key.
struct BaseFormation {
    std::size_t satellites = 0;  // N0
    double radius_m = 0.0;       // R0
    scenario::FormationLayout layout = scenario::FormationLayout::suncatcher_lattice;
    double radial_pitch_m = 0.0, along_track_pitch_m = 0.0, pitch_m = 0.0;
};
BaseFormation base_formation(const scenario::Scenario& base);

struct Point {
    std::size_t index = 0;
    std::string name;                         // "0003-radius_m=1000-terminals_per_satellite=8"
    std::vector<std::string> values;          // one per axis, as given
    std::vector<scenario::Override> overrides;  // what the run receives as --set
    std::vector<scenario::Override> derived;  // overrides computed from `satellites` (also in `overrides`)
    std::string error;                        // non-empty: the point cannot be run (bad pseudo-key value)
};

// Throws ScenarioError when zipped lists differ in length, there is nothing to vary,
// or `satellites` is varied on a layout without a radius.
std::vector<Point> expand(const SweepSpec& spec, const BaseFormation& base);

// Column name of an axis in the table: the key, or "satellites_requested" for the
// pseudo-key (the table's "satellites" column is the count the lattice produced).
std::string axis_column(const Axis& axis);

}  // namespace skyfabric::sweep
