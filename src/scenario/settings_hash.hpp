#pragma once
// The resolved settings of a scenario as canonical JSON, and its SHA-256: what a run was set to do,
// whatever the file's spelling (units, key order, comments, defaults left out or written out). Every
// output's provenance records the hash beside the scenario text's (docs/output-format.md,
// "Provenance"): two runs with the same settings_sha256 were set alike, and a change of a default in
// the code changes it even for the same file. `skyfabric validate --settings` prints the JSON.
#include "scenario/scenario.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace skyfabric::scenario {

// Every setting of the loaded (resolved) scenario by its struct's field names, SI units, enums as
// their values; keys sorted. Not settings, so left out: the source file's name, the scenario text
// (hashed on its own: scenario_sha256) and the machine's thread budget (results do not depend on it).
nlohmann::json settings_json(const Scenario& scenario);
// SHA-256 of settings_json's compact dump, as 64 lowercase hex digits.
std::string settings_sha256(const Scenario& scenario);

}  // namespace skyfabric::scenario
