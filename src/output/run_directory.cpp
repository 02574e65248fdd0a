#include "output/run_directory.hpp"

#include "output/result_writer.hpp"
#include "output/summary.hpp"
#include "output/vtk_recorder.hpp"
#include "scenario/yaml_reader.hpp"

#include <fstream>
#include <optional>

namespace skyfabric::output {

namespace fs = std::filesystem;

void refuse_to_overwrite(const fs::path& dir, bool force) {
    const auto summary = dir / "summary.json";
    if (force || !fs::exists(summary)) return;
    std::ifstream in(summary);
    const auto j = nlohmann::json::parse(in, nullptr, false);
    if (!j.is_discarded() && j.value("complete", false)) {
        throw scenario::ScenarioError(dir.string() + " already holds a complete run; choose another -o folder or pass --force");
    }
}

nlohmann::json run_to_directory(const scenario::Scenario& sc, const fs::path& dir,
                                std::vector<simulation::Recorder*> extra, const std::atomic<bool>* stop) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw OutputError("cannot create output folder " + dir.string() + ": " + ec.message());

    // Results go to temporary names and are renamed when the run ends, so a killed
    // process never leaves a half-written file under the final name.
    const fs::path h5_partial = dir / "result.h5.partial";
    std::vector<simulation::Recorder*> recorders;
    std::optional<ResultWriter> writer;
    if (sc.output.hdf5) {
        writer.emplace(h5_partial);
        recorders.push_back(&*writer);
    }
    std::optional<VtkRecorder> vtk;
    if (sc.output.vtk && !sc.fabric) {
        fs::remove_all(dir / "vtk");  // frames of an earlier run in this folder would mix in
        vtk.emplace(dir / "vtk");
        recorders.push_back(&*vtk);
    }
    recorders.insert(recorders.end(), extra.begin(), extra.end());

    const auto summary = simulation::run(sc, recorders, stop);
    writer.reset();
    if (sc.output.hdf5) {
        fs::rename(h5_partial, dir / "result.h5", ec);
        if (ec) throw OutputError("cannot rename " + h5_partial.string() + ": " + ec.message());
    }
    const auto j = summary_json(sc, scenario::node_count(sc), summary);
    write_json_file(dir / "summary.json", j);
    return j;
}

}  // namespace skyfabric::output
