#pragma once
// The sweep's table: one row per finished point (every varied value, the overrides the
// `satellites` pseudo-key computed, every numeric summary metric flattened with dots,
// status, error, wall time), written as DIR/sweep.csv and DIR/sweep.h5, each through a
// temporary file and a rename so a reader never sees half a table.
#include "sweep/sweep_plan.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace skyfabric::sweep {

// A point's outcome. status: "ok", "failed" or "incomplete".
struct Row {
    std::size_t index = 0;
    std::string name;
    std::string status;
    std::string error;
    double wall_s = 0.0;          // the point's process, start to exit
    nlohmann::json summary;       // the point's summary.json, or null when it wrote none

    nlohmann::json to_json() const;
    static Row from_json(const nlohmann::json& j);
};

// Numeric leaves of a summary ("formation.min_separation_m" -> value); booleans as 0/1,
// arrays of numbers as name.0, name.1, ...; text and `complete` are left out.
std::map<std::string, double> flatten_metrics(const nlohmann::json& summary);

struct TableInput {
    std::vector<Axis> axes;
    const std::vector<Point>* points = nullptr;  // indexed by Row::index
    std::vector<Row> rows;                       // finished points, any order
    bool complete = false;                       // every point has a row
    std::string scenario_yaml;                   // the sweep's scenario with its --set overrides (provenance)
};

// Column names and cell texts, rows sorted by index (what sweep.csv holds).
struct Table {
    std::vector<std::string> columns;
    std::vector<std::vector<std::string>> cells;
};
Table make_table(const TableInput& input);

// Writes DIR/sweep.csv and DIR/sweep.h5 atomically. Throws output::OutputError.
void write_table(const std::filesystem::path& directory, const TableInput& input);

}  // namespace skyfabric::sweep
