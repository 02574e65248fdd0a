#include "sweep/sweep_resume.hpp"

#include "output/hdf5_file.hpp"
#include "output/summary.hpp"
#include "scenario/yaml_reader.hpp"

#include <filesystem>
#include <set>
#include <string>

namespace skyfabric::sweep {

namespace fs = std::filesystem;

namespace {

// The files a complete point's summary.json lists are there, and its result.h5 opens and says complete
// (a point killed while writing, or overwritten by a stray process, is run again).
bool published_files_intact(const fs::path& dir, const nlohmann::json& summary) {
    const auto files = summary.find("files");
    if (files == summary.end() || !files->is_array()) return false;  // written before files were listed
    for (const auto& f : *files) {
        if (!f.is_string()) return false;
        const fs::path path = dir / f.get<std::string>();
        std::error_code ec;
        if (!fs::is_regular_file(fs::symlink_status(path, ec))) return false;
        if (f.get<std::string>() == "result.h5" && !output::hdf5_run_file_is_complete(path)) return false;
    }
    return true;
}

// Rows of points already complete in their folders.
std::vector<Row> completed_rows(const Plan& plan) {
    std::vector<Row> rows;
    for (const auto& p : plan.points) {
        const fs::path dir = point_dir(plan, p);
        const auto summary = output::read_json_file(dir / "summary.json");
        if (!summary || !summary->value("complete", false) || !published_files_intact(dir, *summary)) continue;
        // Run with other settings (the scenario file or an override changed since): run it again.
        const auto point = output::read_json_file(dir / "point.json");
        if (!point || point->value("scenario_fingerprint", std::string()) != plan.fingerprints.at(p.index)) continue;
        // The run that wrote summary.json had these settings too: an earlier sweep's result stays in
        // the folder while the point runs again (point.json is then the new plan's), and a kill leaves it.
        if (summary->value("scenario_sha256", std::string()) != plan.fingerprints.at(p.index)) continue;
        Row r;
        r.index = p.index;
        r.name = p.name;
        r.status = "ok";
        r.summary = *summary;
        const auto row = output::read_json_file(dir / "row.json");
        r.wall_s = row ? row->value("wall_s", 0.0) : summary->value("wall_s", 0.0);
        rows.push_back(std::move(r));
    }
    return rows;
}

}  // namespace

void refuse_to_overwrite(const Plan& plan, const SweepOptions& o) {
    if (o.resume || o.force) return;
    const auto manifest = output::read_json_file(plan.dir / "sweep.json");
    if (manifest && manifest->value("complete", false)) {
        throw scenario::ScenarioError(plan.dir.string() +
                                      " already holds a complete sweep; choose another -o folder, pass --resume to "
                                      "re-run only points without a complete result, or --force to run it all again");
    }
}

std::vector<std::size_t> prepare_directory(const Plan& plan, const SweepOptions& o, std::vector<Row>& kept,
                                           std::vector<Row>& earlier) {
    std::error_code ec;
    fs::create_directories(plan.dir, ec);
    if (ec) throw output::OutputError("cannot create output folder " + plan.dir.string() + ": " + ec.message());
    // Earlier points stay until this plan replaces them (a point's folder is replaced when its
    // run starts; folders of points the plan no longer has go once the sweep is complete), so a
    // sweep killed after --force or a rerun loses nothing it had not yet redone (nor its row in the table).
    if (!o.resume) {
        fs::remove_all(plan.dir / "plots", ec);
        earlier = completed_rows(plan);
    } else {
        kept = completed_rows(plan);
    }
    fs::create_directories(plan.dir / "points", ec);
    std::vector<bool> done(plan.points.size(), false);
    for (const auto& r : kept) done[r.index] = true;
    std::vector<std::size_t> todo;
    for (std::size_t i = 0; i < plan.points.size(); ++i) {
        if (!done[i]) todo.push_back(i);
    }
    return todo;
}

void remove_points_not_in(const Plan& plan) {
    std::set<std::string> names;
    for (const auto& p : plan.points) names.insert(p.name);
    std::error_code ec;
    for (fs::directory_iterator it(plan.dir / "points", ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (!names.count(name) && name.front() != '.') fs::remove_all(it->path(), ec);
    }
}

}  // namespace skyfabric::sweep
