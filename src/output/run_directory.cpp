#include "output/run_directory.hpp"

#include "output/background_recorders.hpp"

#include "output/output_folder.hpp"
#include "output/provenance.hpp"
#include "output/result_writer.hpp"
#include "output/summary.hpp"
#include "output/trace_writer.hpp"
#include "output/vtk_recorder.hpp"
#include "scenario/yaml_reader.hpp"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>

namespace skyfabric::output {

namespace fs = std::filesystem;

namespace {

// A complete run in `dir` is kept unless --force (checked with the folder's lock held).
void refuse_to_overwrite(const fs::path& dir, bool force) {
    const auto summary = dir / "summary.json";
    if (force || !fs::exists(summary)) return;
    const auto j = read_json_file(summary);
    if (j && j->is_object() && j->value("complete", false)) {
        throw scenario::ScenarioError(dir.string() + " already holds a complete run; choose another -o folder or pass --force");
    }
}

// A constellation's algorithms, one group of processes each (pids 10 + 4k ...), sharing the event
// budget: ring and hierarchical as the training timeline; DiLoCo and NoLoCo one track per replica
// (cluster), each round its inner steps, its wait for the other replica(s) and its outer sync.
void write_constellation_trace(TraceWriter& writer, const scenario::Scenario& sc, const simulation::RunSummary& summary) {
    const auto count = static_cast<std::int64_t>(summary.constellation.size());
    const std::int64_t budget = sc.output.trace_max_events < 0 ? -1 : sc.output.trace_max_events / count;
    for (std::int64_t k = 0; k < count; ++k) {
        const auto& a = summary.constellation[static_cast<std::size_t>(k)];
        const std::string name(workloads::to_string(a.algorithm));
        const auto pid = static_cast<std::int32_t>(10 + 4 * k);
        if (a.rounds.empty()) {
            TrainingTraceOptions o;
            o.pid = pid;
            o.collectives_pid = pid + 1;
            o.links_pid = pid + 2;
            o.label = name;
            o.event_budget = budget;
            o.sort_index = static_cast<std::int32_t>(4 * k);
            const auto stride = write_training_trace(writer, a.training, sc.workload.job.data_parallel, o);
            if (stride > 1)
                std::cerr << "skyfabric: trace: " << name << ": 1 step in " << stride << " written, to stay within its share of "
                          << "output.trace_max_events = " << sc.output.trace_max_events << "\n";
            continue;
        }
        writer.process_name(pid, name + ": replicas");
        writer.process_sort_index(pid, static_cast<std::int32_t>(4 * k));
        std::int32_t replicas = 0;
        for (const auto& r : a.rounds) replicas = std::max(replicas, r.replica + 1);
        for (std::int32_t r = 0; r < replicas; ++r) writer.thread_name(pid, r, "replica " + std::to_string(r) + " (cluster " + std::to_string(r) + ")");
        for (const auto& r : a.rounds) {
            const nlohmann::json args{{"round", r.round}, {"inner_steps", r.inner_steps}, {"peer", r.peer}};
            writer.complete(pid, r.replica, "round " + std::to_string(r.round), "round", r.start_s, r.end_s - r.start_s, args);
            writer.complete(pid, r.replica, "inner steps", "compute", r.start_s, r.ready_s - r.start_s, args);
            if (r.sync_start_s > r.ready_s)
                writer.complete(pid, r.replica, "waiting for replicas", "wait", r.ready_s, r.sync_start_s - r.ready_s, args);
            if (r.end_s > r.sync_start_s)
                writer.complete(pid, r.replica, r.peer >= 0 ? "outer sync with " + std::to_string(r.peer) : "outer sync", "collective",
                                r.sync_start_s, r.end_s - r.sync_start_s, args);
        }
        writer.metadata(name + "_outer_rounds", a.outer_rounds);
    }
}

// The serving runs' requests, for the trace drawn after the run.
class RequestsForTrace final : public simulation::Recorder {
public:
    void begin(const simulation::RunSetup&) override {}
    void record(const simulation::Sample&) override {}
    void end(const simulation::RunSummary&) override {}
    void requests(std::size_t run, workloads::ServingRouting, std::span<const workloads::RequestRecord> rows) override {
        if (runs.size() <= run) runs.resize(run + 1);
        runs[run].insert(runs[run].end(), rows.begin(), rows.end());
    }
    std::vector<std::vector<workloads::RequestRecord>> runs;  // by serving run
};

// A serving run, per routing (pids 30 + 3k): each prefill instance a track with a slice per request
// it prefilled (one request in `stride` when they would not fit the routing's share of the event
// budget), and each decode instance a counter of the sequences it holds, per output step.
void write_serving_trace(TraceWriter& writer, const scenario::Scenario& sc, const simulation::RunSummary& summary,
                         const std::vector<std::vector<workloads::RequestRecord>>& requests_of_run) {
    const auto routings = static_cast<std::int64_t>(summary.inference.size());
    const std::int64_t budget = sc.output.trace_max_events < 0 ? -1 : sc.output.trace_max_events / routings;
    const auto& engines = sc.inference.serving.engines;
    for (std::int64_t k = 0; k < routings; ++k) {
        static const std::vector<workloads::RequestRecord> none;
        const auto run = static_cast<std::size_t>(k);
        const auto& requests = run < requests_of_run.size() ? requests_of_run[run] : none;
        const std::string name(workloads::to_string(summary.inference_routing[static_cast<std::size_t>(k)]));
        const auto pid = static_cast<std::int32_t>(30 + 3 * k);
        const auto steps = static_cast<std::int64_t>(std::floor(summary.simulated_s / sc.output_step_s)) + 1;
        const std::int64_t counters = steps * engines.decode.instances;
        std::int64_t stride = 1;
        if (budget >= 0 && static_cast<std::int64_t>(requests.size()) + counters > budget)
            stride = (static_cast<std::int64_t>(requests.size()) + std::max<std::int64_t>(1, budget - counters) - 1) /
                     std::max<std::int64_t>(1, budget - counters);
        writer.process_name(pid, name + ": prefill instances");
        writer.process_sort_index(pid, static_cast<std::int32_t>(30 + 3 * k));
        for (std::int32_t i = 0; i < engines.prefill.instances; ++i) writer.thread_name(pid, i, "prefill " + std::to_string(i));
        for (std::size_t r = 0; r < requests.size(); r += static_cast<std::size_t>(stride)) {
            const auto& q = requests[r];
            if (q.prefill_instance < 0 || !std::isfinite(q.prefill_start_s) || !std::isfinite(q.prefill_end_s)) continue;
            writer.complete(pid, q.prefill_instance, "request " + std::to_string(q.request.id), "prefill", q.prefill_start_s,
                            q.prefill_end_s - q.prefill_start_s,
                            {{"prompt_tokens", q.request.prompt_tokens}, {"cached_tokens", q.request.cached_tokens},
                             {"kv_bytes", q.kv_bytes}, {"decode_instance", q.decode_instance}});
        }
        // Sequences held by each decode instance: from its first token to its last (or the run's end).
        std::vector<std::vector<std::pair<double, int>>> changes(static_cast<std::size_t>(engines.decode.instances));
        for (const auto& q : requests) {
            if (q.decode_instance < 0 || !std::isfinite(q.first_token_s)) continue;
            auto& c = changes[static_cast<std::size_t>(q.decode_instance)];
            c.emplace_back(q.first_token_s, 1);
            if (std::isfinite(q.finish_s)) c.emplace_back(q.finish_s, -1);
        }
        for (std::size_t d = 0; d < changes.size(); ++d) {
            auto& c = changes[d];
            std::sort(c.begin(), c.end());
            std::size_t next = 0;
            int running = 0;
            for (std::int64_t j = 0; j < steps; ++j) {
                const double t = static_cast<double>(j) * sc.output_step_s;
                for (; next < c.size() && c[next].first <= t; ++next) running += c[next].second;
                writer.counter(pid + 1, "decode " + std::to_string(d), t, {{"sequences", running}});
            }
        }
        writer.process_name(pid + 1, name + ": decode instances (sequences held)");
        writer.process_sort_index(pid + 1, static_cast<std::int32_t>(31 + 3 * k));
        writer.metadata(name + "_requests", static_cast<std::int64_t>(requests.size()));
        writer.metadata(name + "_request_stride", stride);
        if (stride > 1)
            std::cerr << "skyfabric: trace: " << name << ": 1 request in " << stride << " written, to stay within its share "
                      << "of output.trace_max_events = " << sc.output.trace_max_events << "\n";
    }
}

// The training timeline, with fault events on a track per satellite.
void write_trace(const scenario::Scenario& sc, const Provenance& run_provenance, const simulation::RunSummary& summary,
                 const std::vector<std::vector<workloads::RequestRecord>>& requests_of_run, const fs::path& path) {
    TraceOptions options;
    options.max_events = sc.output.trace_max_events;
    if (sc.output.trace_window_start_s >= 0.0) {
        options.window_start_s = sc.output.trace_window_start_s;
        options.window_end_s = sc.output.trace_window_end_s;
    }
    TraceWriter writer(path, options);
    const nlohmann::json provenance = provenance_json(run_provenance);
    for (auto it = provenance.begin(); it != provenance.end(); ++it) writer.metadata(it.key(), *it);
    writer.metadata("scenario", sc.name);
    writer.metadata("seed", sc.seed);
    writer.metadata("complete", summary.complete);
    if (!summary.inference.empty()) write_serving_trace(writer, sc, summary, requests_of_run);
    if (!summary.constellation.empty()) {
        write_constellation_trace(writer, sc, summary);
    } else if (summary.training) {
        std::vector<LinkCounterSample> samples;
        samples.reserve(summary.training->link_epochs.size());
        for (const auto& e : summary.training->link_epochs)
            samples.push_back({e.start_s, e.source, e.target, e.capacity_bps, e.utilisation});
        const auto stride = write_training_trace(writer, *summary.training, sc.workload.job.data_parallel, {}, samples);
        if (stride > 1) {
            const auto total = summary.training->steps.size();
            std::cerr << "skyfabric: trace: 1 step in " << stride << " written (" << (total + stride - 1) / stride << " of "
                      << total << ") to stay within output.trace_max_events = " << sc.output.trace_max_events
                      << "; raise it, or narrow output.trace_window_start_s/_end_s, for every step\n";
        }
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
        if (r.goodput) {
            // Trial 0 as played against those faults: the job's phases (steps, checkpoints, rollbacks,
            // recoveries, stalls) and the links its terminal outages took down, rerouting the ring.
            constexpr std::int32_t job_pid = 5;
            writer.process_name(job_pid, "faults in the loop (trial 0)");
            writer.thread_name(job_pid, 0, "job");
            for (const auto& iv : r.goodput->timeline) {
                if (iv.phase == workloads::JobPhase::step) continue;  // the training tracks show the steps
                writer.complete(job_pid, 0, workloads::job_phase_name(iv.phase), "recovery", iv.start_s, iv.end_s - iv.start_s);
            }
            writer.thread_name(job_pid, 1, "links down (rerouted)");
            for (const auto& o : r.goodput->link_outages) {
                writer.complete(job_pid, 1, "link " + std::to_string(o.source) + "-" + std::to_string(o.target) + " down",
                                "link_outage", o.start_s, std::min(o.end_s, summary.simulated_s) - o.start_s,
                                {{"source", o.source}, {"target", o.target}});
            }
            writer.metadata("trial0_ranks_lost", r.goodput->ranks_lost);
            writer.metadata("trial0_links_lost", r.goodput->links_lost);
            writer.metadata("trial0_damaged_steps", r.goodput->damaged_steps);
        }
    }
    writer.close();
}

bool lies_within(const fs::path& path, const fs::path& folder) {
    return std::mismatch(folder.begin(), folder.end(), path.begin(), path.end()).first == folder.end();
}

// The trace's name inside DIR when it goes there (output.trace: trace.json; --trace naming a file
// directly in DIR): it is then staged with the run's other files, and listed as one of them. Empty
// when it goes elsewhere. A --trace deeper inside DIR is refused (exit 2): it would be swapped away
// with the previous folder at the end of the run; so is a device, FIFO, link or folder.
std::string trace_name_inside(const scenario::Scenario& sc, const fs::path& dir, const fs::path& trace_path) {
    if (trace_path.empty()) return sc.output.trace ? "trace.json" : "";
    if (is_standard_output(trace_path)) return "";
    const fs::path folder = fs::absolute(dir).lexically_normal(), trace = fs::absolute(trace_path).lexically_normal();
    std::error_code ec;
    const fs::path real_folder = fs::weakly_canonical(folder, ec), real_trace = fs::weakly_canonical(trace, ec);
    const bool within = lies_within(trace, folder) || (!ec && lies_within(real_trace, real_folder));
    if (!within) {
        refuse_non_regular_target(trace_path);
        return "";
    }
    const bool directly_in = trace.parent_path() == folder || (!ec && real_trace.parent_path() == real_folder);
    if (directly_in && !trace.filename().empty() && !is_run_output(trace.filename().string())) return trace.filename().string();
    if (directly_in && trace.filename() == "trace.json") return "trace.json";
    throw scenario::ScenarioError("--trace " + trace_path.string() + " lies inside the output folder " + dir.string() +
                                  ", which a run replaces as a whole: give a file directly in it (e.g. " +
                                  (dir / "trace.json").string() + ", kept with the run) or one outside it");
}

}  // namespace

simulation::RunRecording run_recording(const scenario::Scenario& sc, const fs::path& trace_path) {
    // A trace draws the busiest links' capacity and utilisation over time, the VTK frames each link's
    // utilisation: the training records them.
    const bool traced = !trace_path.empty() || sc.output.trace;
    simulation::RunRecording recording;
    recording.link_epochs = (traced || (sc.output.vtk && !sc.fabric)) && sc.workload.enabled;
    return recording;
}

nlohmann::json run_to_directory(const scenario::Scenario& sc, const fs::path& dir, bool force,
                                std::vector<simulation::Recorder*> extra, const std::atomic<bool>* stop,
                                const fs::path& trace_path, const simulation::RunRanks* ranks) {
    const auto start = std::chrono::steady_clock::now();
    refuse_unreplaceable_folder(dir);
    const std::string trace_in_folder = trace_name_inside(sc, dir, trace_path);
    const FolderLock lock(dir);  // a second run into dir is refused here (exit 2)
    refuse_to_overwrite(dir, force);
    // Every file is written into a fresh staging folder and the whole set replaces dir in one step at
    // the end (output_folder.hpp): a kill at any instant leaves dir the previous run or this one.
    StagedFolder staged(dir, lock);
    const fs::path& out = staged.path();
    // Every file's provenance, computed once (the settings' hash reads every setting, a request trace's rows included).
    const Provenance provenance = provenance_of(sc);
    std::vector<simulation::Recorder*> files;
    std::optional<ResultWriter> writer;
    if (sc.output.hdf5) {
        writer.emplace(out / "result.h5", provenance);
        files.push_back(&*writer);
    }
    std::optional<VtkRecorder> vtk;
    if (sc.output.vtk && !sc.fabric) {
        vtk.emplace(out / "vtk");
        files.push_back(&*vtk);
    }
    // The files are written on a thread of their own, overlapping the simulation (declared after
    // the writers, so it stops before they close).
    std::optional<BackgroundRecorders> background;
    std::vector<simulation::Recorder*> recorders;
    if (!files.empty()) {
        background.emplace(files);
        recorders.push_back(&*background);
    }
    recorders.insert(recorders.end(), extra.begin(), extra.end());
    RequestsForTrace for_trace;  // only a trace holds every request (result.h5 takes them as they come)

    const fs::path trace = !trace_in_folder.empty() ? out / trace_in_folder : trace_path;
    if (!trace.empty() && sc.inference.enabled) recorders.push_back(&for_trace);
    const auto summary = simulation::run(sc, recorders, stop, ranks, run_recording(sc, trace));
    background.reset();
    writer.reset();
    const bool vtk_written = vtk.has_value();
    vtk.reset();
    if (!trace.empty()) write_trace(sc, provenance, summary, for_trace.runs, trace);
    auto j = summary_json(sc, scenario::node_count(sc), summary, provenance);
    if (!trace.empty()) j["trace"] = is_standard_output(trace) ? "-" : (!trace_in_folder.empty() ? dir / trace_in_folder : trace).string();
    // What this run published beside summary.json (sweep --resume checks them before reusing a point).
    j["files"] = nlohmann::json::array();
    if (sc.output.hdf5) j["files"].push_back("result.h5");
    if (vtk_written) j["files"].push_back("vtk/formation.pvd");
    if (!trace_in_folder.empty()) j["files"].push_back(trace_in_folder);
    // The wall time a user waited: the simulation (summary.json's simulation_wall_s) and every file written.
    j["wall_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    write_json_file(out / "summary.json", j);
    const auto kept = staged.publish();
    if (!kept.empty()) {
        std::string names;
        for (const auto& name : kept) names += (names.empty() ? "" : ", ") + name;
        std::cerr << "skyfabric: note: kept in " << dir.string() << " from before this run (not made by it; plots and "
                  << "renders there show the previous run's results): " << names << "\n";
    }
    return j;
}

}  // namespace skyfabric::output
