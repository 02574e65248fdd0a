#pragma once
// summary.json and the human table printed after a run.
#include "output/provenance.hpp"
#include "simulation/simulation.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>

namespace skyfabric::output {

// provenance: the run's (provenance_of(scenario)), computed once for all its files.
nlohmann::json summary_json(const scenario::Scenario& scenario, std::size_t satellite_count,
                            const simulation::RunSummary& summary, const Provenance& provenance);
// Writes via a temporary file and rename, so a reader never sees half a file.
void write_json_file(const std::filesystem::path& path, const nlohmann::json& value);
// The JSON in `path`, or nothing when the file is missing or not JSON.
std::optional<nlohmann::json> read_json_file(const std::filesystem::path& path);
std::string summary_table(const nlohmann::json& summary);

}  // namespace skyfabric::output
