#include "output/run_directory.hpp"

#include "output/result_writer.hpp"
#include "output/summary.hpp"
#include "output/trace_writer.hpp"
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

namespace {

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

nlohmann::json run_to_directory(const scenario::Scenario& sc, const fs::path& dir,
                                std::vector<simulation::Recorder*> extra, const std::atomic<bool>* stop,
                                const fs::path& trace_path) {
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
    // Frames go to vtk.partial/ and replace vtk/ when the run ends (complete or stopped),
    // so a killed run never touches an earlier run's frames.
    const fs::path vtk_partial = dir / "vtk.partial";
    std::optional<VtkRecorder> vtk;
    if (sc.output.vtk && !sc.fabric) {
        fs::remove_all(vtk_partial);  // frames of an earlier killed run would mix in
        vtk.emplace(vtk_partial);
        recorders.push_back(&*vtk);
    }
    recorders.insert(recorders.end(), extra.begin(), extra.end());

    const auto summary = simulation::run(sc, recorders, stop);
    writer.reset();
    if (sc.output.hdf5) {
        fs::rename(h5_partial, dir / "result.h5", ec);
        if (ec) throw OutputError("cannot rename " + h5_partial.string() + ": " + ec.message());
    }
    if (vtk) {
        vtk.reset();
        fs::remove_all(dir / "vtk", ec);
        fs::rename(vtk_partial, dir / "vtk", ec);
        if (ec) throw OutputError("cannot rename " + vtk_partial.string() + ": " + ec.message());
    }
    const fs::path trace = !trace_path.empty() ? trace_path : sc.output.trace ? dir / "trace.json" : fs::path();
    if (!trace.empty()) write_trace(sc, summary, trace);
    auto j = summary_json(sc, scenario::node_count(sc), summary);
    if (!trace.empty()) j["trace"] = trace.string();
    write_json_file(dir / "summary.json", j);
    return j;
}

}  // namespace skyfabric::output
