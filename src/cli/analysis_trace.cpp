#include "cli/analysis_trace.hpp"

#include "output/file_output.hpp"
#include "output/hdf5_file.hpp"  // OutputError

#include <skyfabric/analysis/critical_path.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

namespace skyfabric::cli {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// One training track of the trace: its ranks' process (steps, compute) and its collective stream.
struct Track {
    std::string algorithm;  // "" for a formation's or a fabric's job
    int ranks_pid = -1, collectives_pid = -1;
    std::vector<analysis::StepSlice> steps;
    std::vector<double> compute_start_s;  // per step
    std::vector<analysis::CollectiveSlice> collectives;
};

constexpr double us = 1e-6;

// "ring: ranks" → ("ring", "ranks"); "ranks" → ("", "ranks").
std::pair<std::string, std::string> split_process_name(const std::string& name) {
    const auto colon = name.find(": ");
    if (colon == std::string::npos) return {"", name};
    return {name.substr(0, colon), name.substr(colon + 2)};
}

std::vector<Track> read_tracks(const json& events) {
    std::map<std::string, Track> by_algorithm;
    for (const auto& e : events) {
        if (e.value("ph", "") != "M" || e.value("name", "") != "process_name" || !e.contains("args")) continue;
        const auto [algorithm, role] = split_process_name(e["args"].value("name", ""));
        if (role == "ranks") by_algorithm[algorithm].ranks_pid = e.value("pid", -1);
        if (role == "collectives") by_algorithm[algorithm].collectives_pid = e.value("pid", -1);
    }
    std::map<int, Track*> by_pid;
    for (auto& [algorithm, t] : by_algorithm) {
        t.algorithm = algorithm;
        if (t.ranks_pid >= 0) by_pid[t.ranks_pid] = &t;
        if (t.collectives_pid >= 0) by_pid[t.collectives_pid] = &t;
    }
    std::map<const Track*, std::map<double, double>> compute_end_at;  // per track: compute start → end, seconds
    for (const auto& e : events) {
        if (e.value("ph", "") != "X" || !e.contains("ts") || !e.contains("dur")) continue;
        const auto it = by_pid.find(e.value("pid", -1));
        if (it == by_pid.end()) continue;
        Track& t = *it->second;
        const double start = e["ts"].get<double>() * us, end = start + e["dur"].get<double>() * us;
        const std::string category = e.value("cat", "");
        if (e.value("pid", -1) == t.ranks_pid && category == "step") {
            const std::string name = e.value("name", "");
            std::int64_t step = static_cast<std::int64_t>(t.steps.size());
            if (name.rfind("step ", 0) == 0) step = std::stoll(name.substr(5));
            t.steps.push_back({step, start, start, end});
        } else if (e.value("pid", -1) == t.ranks_pid && category == "compute") {
            compute_end_at[&t][start] = end;
        } else if (e.value("pid", -1) == t.collectives_pid && category == "collective" && e.contains("args") &&
                   e["args"].contains("step")) {
            t.collectives.push_back({e["args"]["step"].get<std::int64_t>(), start, end});
        }
    }
    std::vector<Track> tracks;
    for (auto& [algorithm, t] : by_algorithm) {
        if (t.ranks_pid < 0 || t.steps.empty()) continue;
        std::sort(t.steps.begin(), t.steps.end(), [](const auto& a, const auto& b) { return a.start_s < b.start_s; });
        for (auto& s : t.steps) {
            const auto& ends = compute_end_at[&t];
            const auto c = ends.find(s.start_s);
            s.compute_end_s = c == ends.end() ? s.start_s : c->second;
            t.compute_start_s.push_back(s.start_s);
        }
        tracks.push_back(std::move(t));
    }
    return tracks;
}

json flow_event(char phase, long id, int pid, double t_s) {
    json e = {{"ph", std::string(1, phase)}, {"id", id}, {"pid", pid}, {"tid", 0}, {"ts", t_s / us},
              {"name", "critical path"}, {"cat", "critical_path"}};
    if (phase == 'f') e["bp"] = "e";  // binds to the slice enclosing ts
    return e;
}

}  // namespace

std::optional<AnalysisTrace> write_analysis_trace(const fs::path& run_dir, const json& analysis) {
    const fs::path source = run_dir / "trace.json";
    std::error_code ec;
    if (!fs::is_regular_file(source, ec)) return std::nullopt;
    std::ifstream in(source, std::ios::binary);
    json trace = json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!in.good() && !in.eof()) throw output::OutputError("cannot read " + source.string());
    if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array())
        throw output::OutputError(source.string() + ": not a Chrome trace-event JSON document (no traceEvents array)");
    json& events = trace["traceEvents"];
    const auto tracks = read_tracks(events);
    AnalysisTrace out;
    out.path = run_dir / "analysis_trace.json";
    std::vector<json> added;
    // Arrows bind to the slices around their timestamps, so each is put at a slice's middle.
    const auto mid = [](double a, double b) { return 0.5 * (a + b); };
    long id = 1;
    double first_step_s = 0.0, worst_exposed_s = -1.0, worst_exposed_at_s = 0.0;
    bool any_step = false;
    for (const Track& t : tracks) {
        const auto path = analysis::critical_path(t.steps, t.collectives);
        for (const auto& p : path) {
            const auto& s = t.steps[static_cast<std::size_t>(p.step_index)];
            if (!any_step || s.start_s < first_step_s) first_step_s = s.start_s;
            any_step = true;
            if (s.end_s - s.compute_end_s > worst_exposed_s) {
                worst_exposed_s = s.end_s - s.compute_end_s;
                worst_exposed_at_s = s.compute_end_s;
            }
            const double compute_mid = mid(s.start_s, s.compute_end_s);
            double from_mid = compute_mid;
            int from_pid = t.ranks_pid;
            if (p.gating_collective >= 0 && t.collectives_pid >= 0) {
                const auto& c = t.collectives[static_cast<std::size_t>(p.gating_collective)];
                added.push_back(flow_event('s', id, t.ranks_pid, compute_mid));
                added.push_back(flow_event('f', id, t.collectives_pid, mid(c.start_s, c.end_s)));
                ++id, ++out.flows;
                from_mid = mid(c.start_s, c.end_s);
                from_pid = t.collectives_pid;
            }
            if (p.next_step_index >= 0) {
                const auto& n = t.steps[static_cast<std::size_t>(p.next_step_index)];
                added.push_back(flow_event('s', id, from_pid, from_mid));
                added.push_back(flow_event('f', id, t.ranks_pid, mid(n.start_s, n.compute_end_s)));
                ++id, ++out.flows;
            }
        }
    }
    // The anti-patterns on a track of their own, each a global instant (a line across every track): the
    // exposed communication at the step that exposed the most, the others at the first step.
    int pid = 0;
    for (const auto& e : events) pid = std::max(pid, e.value("pid", 0));
    ++pid;
    added.push_back({{"ph", "M"}, {"pid", pid}, {"tid", 0}, {"name", "process_name"}, {"args", {{"name", "analysis: anti-patterns"}}}});
    for (const auto& p : analysis.value("anti_patterns", json::array())) {
        json recommendations = json::array();
        for (const auto& r : p.value("recommendations", json::array())) recommendations.push_back("--set " + r.value("set", ""));
        const double at = p.value("id", "") == "exposed_communication" && worst_exposed_s >= 0.0 ? worst_exposed_at_s : first_step_s;
        added.push_back({{"ph", "i"}, {"s", "g"}, {"pid", pid}, {"tid", 0}, {"ts", at / us},
                         {"name", p.value("id", "") + ": " + p.value("title", "")}, {"cat", "anti_pattern"},
                         {"args", {{"cause", p.value("cause", "")}, {"impact", p.value("impact", 0.0)}, {"threshold", p.value("threshold", "")},
                                   {"evidence", p.value("evidence", "")}, {"explained_by", p.value("explained_by", json(nullptr))},
                                   {"recommendations", recommendations}}}});
        ++out.anti_patterns;
    }
    for (auto& e : added) events.push_back(std::move(e));
    trace["metadata"]["analysis"] = {{"source", "trace.json"}, {"critical_path_flows", out.flows}, {"anti_patterns", out.anti_patterns},
                                     {"document", "analysis.json"}};
    output::write_file_atomically(out.path, trace.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
    return out;
}

}  // namespace skyfabric::cli
