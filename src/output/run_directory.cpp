#include "output/run_directory.hpp"

#include "output/output_folder.hpp"
#include "output/result_writer.hpp"
#include "output/summary.hpp"
#include "output/trace_writer.hpp"
#include "output/vtk_recorder.hpp"
#include "scenario/yaml_reader.hpp"

#include <fstream>
#include <optional>

namespace skyfabric::output {

namespace fs = std::filesystem;

namespace {

// A complete run in `dir` is kept unless --force (checked with the folder's lock held).
void refuse_to_overwrite(const fs::path& dir, bool force) {
    const auto summary = dir / "summary.json";
    if (force || !fs::exists(summary)) return;
    std::ifstream in(summary);
    const auto j = nlohmann::json::parse(in, nullptr, false);
    if (!j.is_discarded() && j.value("complete", false)) {
        throw scenario::ScenarioError(dir.string() + " already holds a complete run; choose another -o folder or pass --force");
    }
}

// The training timeline, with fault events on a track per satellite.
void write_trace(const scenario::Scenario& sc, const simulation::RunSummary& summary, const fs::path& path) {
    TraceOptions options;
    options.max_events = sc.output.trace_max_events;
    if (sc.output.trace_window_start_s >= 0.0) {
        options.window_start_s = sc.output.trace_window_start_s;
        options.window_end_s = sc.output.trace_window_end_s;
    }
    TraceWriter writer(path, options);
    writer.metadata("scenario", sc.name);
    writer.metadata("seed", sc.seed);
    writer.metadata("complete", summary.complete);
    if (summary.training) {
        write_training_trace(writer, *summary.training, sc.workload.job.data_parallel);
    }
    if (summary.radiation) {
        constexpr std::int32_t faults_pid = 4;
        writer.process_name(faults_pid, "radiation faults");
        std::vector<bool> named(scenario::node_count(sc), false);
        const auto& r = *summary.radiation;
        for (std::size_t i = 0; i < r.events.size(); ++i) {
            const auto& e = r.events[i];
            if (!named[static_cast<std::size_t>(e.satellite)]) {
                writer.thread_name(faults_pid, e.satellite, "satellite " + std::to_string(e.satellite));
                named[static_cast<std::size_t>(e.satellite)] = true;
            }
            nlohmann::json args{{"kind", workloads::fault_kind_name(e.kind)}};
            if (r.goodput) args["effect"] = workloads::fault_effect_name(r.goodput->effects[i]);
            writer.instant(faults_pid, e.satellite, workloads::fault_kind_name(e.kind), "fault", e.time_s, args);
        }
    }
    writer.close();
}

}  // namespace

nlohmann::json run_to_directory(const scenario::Scenario& sc, const fs::path& dir, bool force,
                                std::vector<simulation::Recorder*> extra, const std::atomic<bool>* stop,
                                const fs::path& trace_path) {
    refuse_unreplaceable_folder(dir);
    const FolderLock lock(dir);  // a second run into dir is refused here (exit 2)
    refuse_to_overwrite(dir, force);
    // Every file is written into a fresh staging folder and the whole set replaces dir in one step at
    // the end (output_folder.hpp): a kill at any instant leaves dir the previous run or this one.
    StagedFolder staged(dir);
    const fs::path& out = staged.path();
    std::vector<simulation::Recorder*> recorders;
    std::optional<ResultWriter> writer;
    if (sc.output.hdf5) {
        writer.emplace(out / "result.h5");
        recorders.push_back(&*writer);
    }
    std::optional<VtkRecorder> vtk;
    if (sc.output.vtk && !sc.fabric) {
        vtk.emplace(out / "vtk");
        recorders.push_back(&*vtk);
    }
    recorders.insert(recorders.end(), extra.begin(), extra.end());

    const auto summary = simulation::run(sc, recorders, stop);
    writer.reset();
    const bool vtk_written = vtk.has_value();
    vtk.reset();
    const bool trace_inside = trace_path.empty() && sc.output.trace;
    const fs::path trace = trace_inside ? out / "trace.json" : trace_path;
    if (!trace.empty()) write_trace(sc, summary, trace);
    auto j = summary_json(sc, scenario::node_count(sc), summary);
    if (!trace.empty()) j["trace"] = (trace_inside ? dir / "trace.json" : trace).string();
    // What this run published beside summary.json (sweep --resume checks them before reusing a point).
    j["files"] = nlohmann::json::array();
    if (sc.output.hdf5) j["files"].push_back("result.h5");
    if (vtk_written) j["files"].push_back("vtk/formation.pvd");
    if (trace_inside) j["files"].push_back("trace.json");
    write_json_file(out / "summary.json", j);
    staged.publish();
    return j;
}

}  // namespace skyfabric::output
