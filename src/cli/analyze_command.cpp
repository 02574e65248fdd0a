// `skyfabric analyze RUN_DIR`: reads a finished run's result.h5 and summary.json into the analysis
// model's plain structs (analysis/analysis.hpp), writes RUN_DIR/analysis.json (staged and renamed),
// the figures and report.html (cli/analysis_report.hpp)
// and prints the breakdown, the anti-patterns and the recommendations. `--verify` reruns the
// run's own scenario (summary.json scenario_yaml, the same seed) once as it was and once per
// recommendation, in parallel, and reports each one's measured change next to the expected one.
#include "cli/analyze_command.hpp"

#include "cli/analysis_report.hpp"
#include "cli/analysis_trace.hpp"

#include "cli/command_support.hpp"
#include "output/file_output.hpp"
#include "output/hdf5_reader.hpp"
#include "output/summary.hpp"
#include "scenario/scenario.hpp"
#include "scenario/yaml_reader.hpp"

#include <skyfabric/analysis/analysis.hpp>
#include <skyfabric/workloads/cluster_training.hpp>
#include <skyfabric/workloads/collectives.hpp>
#include <skyfabric/workloads/faults.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace skyfabric::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Options {
    std::string run_dir;
    std::string format = "table";
    bool verify = false;
    int jobs = 0;  // 0: every core
};

// The value at a path of keys in summary.json; null when a key is absent.
const json* at_path(const json& j, std::initializer_list<const char*> path) {
    const json* at = &j;
    for (const char* key : path) {
        if (!at->is_object()) return nullptr;
        const auto it = at->find(key);
        if (it == at->end()) return nullptr;
        at = &*it;
    }
    return at;
}

// A number (a text) at a path of keys; `fallback` when absent or of another type.
double number_at(const json& j, std::initializer_list<const char*> path, double fallback = 0.0) {
    const json* at = at_path(j, path);
    return at && at->is_number() ? at->get<double>() : fallback;
}

std::string string_at(const json& j, std::initializer_list<const char*> path, const std::string& fallback = "") {
    const json* at = at_path(j, path);
    return at && at->is_string() ? at->get<std::string>() : fallback;
}

struct Run {
    fs::path dir;
    json summary;
    std::unique_ptr<output::Hdf5Reader> h5;
    std::optional<scenario::Scenario> scenario;
};

Run open_run(const fs::path& dir) {
    Run run;
    run.dir = dir;
    std::error_code ec;
    if (!fs::exists(dir, ec)) throw scenario::ScenarioError(dir.string() + ": no such folder (expected a run's output folder)");
    if (!fs::is_directory(dir, ec)) throw scenario::ScenarioError(dir.string() + ": not a folder (expected a run's output folder)");
    const fs::path summary = dir / "summary.json", h5 = dir / "result.h5";
    if (!fs::is_regular_file(summary, ec))
        throw scenario::ScenarioError(summary.string() + ": missing (not a run folder: expected summary.json and result.h5 as `skyfabric run` writes them)");
    const auto j = output::read_json_file(summary);
    if (!j || !j->is_object()) throw scenario::ScenarioError(summary.string() + ": not a JSON object (a damaged or altered file?)");
    run.summary = *j;
    if (!run.summary.contains("scenario_yaml") || !run.summary["scenario_yaml"].is_string())
        throw scenario::ScenarioError(summary.string() + ": key scenario_yaml missing or not a string (expected the run's scenario text)");
    if (!fs::is_regular_file(h5, ec))
        throw scenario::ScenarioError(h5.string() + ": missing (analyze reads the run's series; run with output.hdf5: true)");
    run.h5 = std::make_unique<output::Hdf5Reader>(h5);
    try {
        run.scenario = scenario::load_scenario_text(run.summary["scenario_yaml"].get<std::string>(), summary.string() + ":scenario_yaml");
    } catch (const scenario::ScenarioError& e) {
        std::fprintf(stderr, "skyfabric: warning: the run's scenario_yaml does not load here (%s); analysing with the default settings\n", e.what());
    }
    return run;
}

// A whole dataset as float64, checked to hold `expected` values (0: any); empty when absent.
std::vector<double> column(const Run& run, const std::string& path, std::size_t expected = 0) {
    if (!run.h5->has_dataset(path)) return {};
    std::vector<hsize_t> shape;
    auto values = run.h5->float64(path, shape);
    if (expected > 0 && values.size() != expected)
        throw scenario::ScenarioError((run.dir / "result.h5").string() + ": " + path + " holds " + std::to_string(values.size()) +
                                      " values, expected " + std::to_string(expected) + " (a damaged or altered file?)");
    return values;
}

analysis::RunKind kind_of(const json& s) {
    if (s.contains("inference")) return analysis::RunKind::serving;
    if (s.contains("constellation") && s["constellation"].is_object() && s["constellation"].contains("clusters"))
        return analysis::RunKind::constellation;
    if (s.contains("fabric") && !s.contains("formation")) return analysis::RunKind::fabric;
    return analysis::RunKind::formation;
}

void read_training(const Run& run, analysis::Input& in) {
    const auto start = column(run, "/workload/steps/start_s");
    if (start.empty()) return;
    const auto end = column(run, "/workload/steps/end_s", start.size());
    const auto compute = column(run, "/workload/steps/compute_s", start.size());
    const auto step_index = column(run, "/workload/steps/step", start.size());
    std::map<long, double> stalled;  // step → its collectives' stalled + lost
    std::map<long, std::vector<analysis::CollectiveSpan>> spans;  // step → its collectives
    if (const auto c_step = column(run, "/workload/collectives/step"); !c_step.empty()) {
        const std::size_t n = c_step.size();
        const auto c_stalled = column(run, "/workload/collectives/stalled_s", n);
        const auto c_lost = column(run, "/workload/collectives/lost_s", n);
        const auto c_op = column(run, "/workload/collectives/op", n);
        const auto c_algorithm = column(run, "/workload/collectives/algorithm", n);
        const auto c_start = column(run, "/workload/collectives/start_s", n);
        const auto c_end = column(run, "/workload/collectives/end_s", n);
        const auto name_of = [](const auto& names, double code) {  // "unknown" for a code outside the table
            using Enum = std::decay_t<decltype(names.entries[0].value)>;
            return std::string(names.name(static_cast<Enum>(std::lround(code))));
        };
        for (std::size_t i = 0; i < n; ++i) {
            stalled[std::lround(c_step[i])] += c_stalled[i] + c_lost[i];
            if (c_op.empty() || c_algorithm.empty() || c_start.empty() || c_end.empty()) continue;
            spans[std::lround(c_step[i])].push_back({name_of(workloads::collective_op_names, c_op[i]) + " " +
                                                         name_of(workloads::algorithm_names, c_algorithm[i]),
                                                     c_start[i], c_end[i]});
        }
    }
    analysis::TrainingInput t;
    const auto& s = run.summary;
    t.compute_full_speed_s = number_at(s, {"workload", "compute_per_step_s"});
    t.straggler_s = number_at(s, {"workload", "straggler_s"});
    if (in.kind == analysis::RunKind::constellation) {
        // The first algorithm's record is the run's /workload (its code in first_algorithm).
        if (!in.algorithms.empty()) {
            t.algorithm = in.algorithms.front().name;
            t.throttled_s = in.algorithms.front().compute_throttled_s;
            t.straggler_s = in.algorithms.front().straggler_s;
        }
    } else {
        t.algorithm = "ring";
        t.throttled_s = number_at(s, {"power", "compute_lost_s"});
    }
    for (std::size_t i = 0; i < start.size(); ++i) {
        if (!std::isfinite(start[i]) || !std::isfinite(end[i]) || !std::isfinite(compute[i]) || end[i] < start[i])
            throw scenario::ScenarioError((run.dir / "result.h5").string() + ": /workload/steps row " + std::to_string(i) +
                                          " is not a finite step with end_s >= start_s (a damaged or altered file?)");
        const auto it = stalled.find(std::lround(step_index[i]));
        const auto collectives = spans.find(std::lround(step_index[i]));
        t.steps.push_back({start[i], end[i], compute[i], it == stalled.end() ? 0.0 : it->second,
                           collectives == spans.end() ? std::vector<analysis::CollectiveSpan>{} : collectives->second});
    }
    in.training = std::move(t);
}

void read_algorithms(const Run& run, analysis::Input& in) {
    const auto& algorithms = run.summary["constellation"]["algorithms"];
    if (!algorithms.is_object()) return;
    // In the scenario's order (/constellation/algorithms/algorithm; summary.json's object is sorted by name).
    constexpr auto& names = workloads::cluster_algorithm_names;
    std::vector<std::string> order;
    for (const double code : column(run, "/constellation/algorithms/algorithm"))
        if (code >= 0 && code < static_cast<double>(names.size()))
            order.push_back(names.name(static_cast<workloads::ClusterAlgorithm>(static_cast<int>(code))));
    if (order.empty())
        for (auto it = algorithms.begin(); it != algorithms.end(); ++it) order.push_back(it.key());
    for (const auto& name : order) {
        if (!algorithms.contains(name)) continue;
        analysis::AlgorithmRecord a;
        a.name = name;
        const auto& r = algorithms[name];
        a.steps = number_at(r, {"steps"});
        a.step_time_mean_s = number_at(r, {"step_time_mean_s"});
        a.compute_per_step_s = number_at(r, {"compute_per_step_s"});
        a.compute_throttled_s = number_at(r, {"compute_throttled_s"});
        a.straggler_s = number_at(r, {"straggler_s"});
        a.outer_rounds = number_at(r, {"outer_rounds"});
        a.outer_sync_mean_s = number_at(r, {"outer_sync_mean_s"});
        a.outer_wait_mean_s = number_at(r, {"outer_wait_mean_s"});
        in.algorithms.push_back(a);
    }
    // DiLoCo's and NoLoCo's rounds, each replica's (result.h5 of runs before they were written has none).
    const auto algorithm = column(run, "/constellation/rounds/algorithm");
    if (algorithm.empty()) return;
    const std::size_t n = algorithm.size();
    const auto replica = column(run, "/constellation/rounds/replica", n);
    const auto inner_steps = column(run, "/constellation/rounds/inner_steps", n);
    const auto start = column(run, "/constellation/rounds/start_s", n);
    const auto ready = column(run, "/constellation/rounds/ready_s", n);
    const auto sync_start = column(run, "/constellation/rounds/sync_start_s", n);
    const auto end = column(run, "/constellation/rounds/end_s", n);
    for (std::size_t i = 0; i < n; ++i) {
        if (!(algorithm[i] >= 0 && algorithm[i] < static_cast<double>(names.size()))) continue;
        in.rounds.push_back({std::string(names.name(static_cast<workloads::ClusterAlgorithm>(static_cast<int>(algorithm[i])))),
                             static_cast<int>(replica[i]), inner_steps[i], start[i], ready[i], sync_start[i], end[i]});
    }
}

void read_links(const Run& run, const std::vector<double>& cluster_of, analysis::Input& in) {
    const auto source = column(run, "/workload/link_utilisation/source");
    if (source.empty()) return;
    const auto target = column(run, "/workload/link_utilisation/target", source.size());
    const auto bytes = column(run, "/workload/link_utilisation/bytes", source.size());
    const auto capacity = column(run, "/workload/link_utilisation/capacity_bytes", source.size());
    for (std::size_t i = 0; i < source.size(); ++i) {
        analysis::LinkUse l;
        l.source = static_cast<int>(source[i]);
        l.target = static_cast<int>(target[i]);
        l.bytes = bytes[i];
        l.capacity_bytes = capacity[i];
        const auto a = static_cast<std::size_t>(std::max(0, l.source)), b = static_cast<std::size_t>(std::max(0, l.target));
        l.gateway = a < cluster_of.size() && b < cluster_of.size() && cluster_of[a] != cluster_of[b];
        in.links.push_back(l);
    }
}

// Each cluster's shadow, lowest charge, and the worst satellite's energy deficit at full compute:
// its full load taken as the most it drew at any sample, less its array's output, accumulated
// while it exceeds the array and recovered while the array exceeds it (a battery's running draw).
void read_power(const Run& run, const std::vector<double>& cluster_of, analysis::Input& in) {
    const auto time = column(run, "/time_s");
    const std::size_t samples = time.size();
    if (samples < 2) return;
    const auto shadow = column(run, "/sun/shadow_fraction");
    const std::size_t n = shadow.size() / samples;
    if (n == 0) return;
    const int clusters = cluster_of.empty() ? 1 : static_cast<int>(*std::max_element(cluster_of.begin(), cluster_of.end())) + 1;
    const auto cluster = [&](std::size_t satellite) { return satellite < cluster_of.size() ? static_cast<int>(cluster_of[satellite]) : 0; };
    std::vector<analysis::ClusterPower> out(static_cast<std::size_t>(clusters));
    std::vector<double> count(out.size(), 0.0);
    for (int c = 0; c < clusters; ++c) out[static_cast<std::size_t>(c)].cluster = c;
    for (std::size_t t = 0; t < samples; ++t)
        for (std::size_t i = 0; i < n; ++i) {
            out[static_cast<std::size_t>(cluster(i))].shadow_fraction_mean += shadow[t * n + i];
            count[static_cast<std::size_t>(cluster(i))] += 1.0;
        }
    for (std::size_t c = 0; c < out.size(); ++c) out[c].shadow_fraction_mean /= std::max(1.0, count[c]);
    in.power.enabled = run.summary.contains("power");
    if (in.power.enabled) {
        const auto soc = column(run, "/power/state_of_charge", samples * n);
        const auto load = column(run, "/power/load_w", samples * n);
        const auto solar = column(run, "/power/solar_w", samples * n);
        for (std::size_t i = 0; i < n && !soc.empty() && !load.empty() && !solar.empty(); ++i) {
            auto& c = out[static_cast<std::size_t>(cluster(i))];
            double full_w = 0.0;
            for (std::size_t t = 0; t < samples; ++t) full_w = std::max(full_w, load[t * n + i]);
            double draw_wh = 0.0, worst_wh = 0.0;
            for (std::size_t t = 0; t + 1 < samples; ++t) {
                c.state_of_charge_min = std::min(c.state_of_charge_min, soc[t * n + i]);
                draw_wh = std::max(0.0, draw_wh + (full_w - solar[t * n + i]) * (time[t + 1] - time[t]) / 3600.0);
                worst_wh = std::max(worst_wh, draw_wh);
            }
            c.energy_deficit_max_wh = std::max(c.energy_deficit_max_wh, worst_wh);
        }
        if (run.scenario) {
            const auto& p = run.scenario->power.parameters;
            in.power.battery_capacity_wh = p.battery.capacity_wh;
            in.power.min_state_of_charge = p.battery.min_state_of_charge;
            in.power.discharge_efficiency = p.battery.discharge_efficiency;
        }
    }
    in.power.clusters = std::move(out);
}

// Faults: the trials' mean losses per algorithm (their sums hold per trial, hence for the mean).
void read_faults(const Run& run, analysis::Input& in) {
    const auto& s = run.summary;
    if (!s.contains("radiation") || !s["radiation"].is_object()) return;
    const auto& r = s["radiation"];
    const auto mean = [](const std::vector<double>& v) {
        double sum = 0.0;
        for (double x : v) sum += x;
        return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
    };
    const auto fill = [&](const std::string& group, const std::string& algorithm) {
        const auto goodput = column(run, group + "/goodput");
        if (goodput.empty()) return;
        analysis::FaultInput f;
        f.algorithm = algorithm;
        f.trials = static_cast<int>(goodput.size());
        f.elapsed_s = number_at(s, {"simulated_s"});
        f.goodput = mean(goodput);
        f.lost_faults_s = mean(column(run, group + "/lost_faults_s"));
        f.lost_restarts_s = mean(column(run, group + "/lost_restarts_s"));
        f.lost_checkpoints_s = mean(column(run, group + "/lost_checkpoints_s"));
        f.lost_fabric_s = mean(column(run, group + "/lost_fabric_s"));
        f.lost_shrunk_s = mean(column(run, group + "/lost_shrunk_ring_s"));
        f.lost_waiting_s = mean(column(run, group + "/lost_waiting_s"));
        f.gained_fabric_s = mean(column(run, group + "/gained_fabric_s"));
        // One formation's τ is radiation's; a constellation's, each algorithm's (the same for all).
        f.checkpoint_interval_s = number_at(r, {"checkpoint_interval_s"}, number_at(r, {"constellation", algorithm.c_str(), "checkpoint_interval_s"}));
        f.interval_from_scenario = string_at(r, {"checkpoint_interval_from"}) == "scenario";
        f.mtbi_long_term_s = number_at(r, {"long_term_mean_time_between_interruptions_s"});
        f.mtbi_run_s = number_at(r, {"mean_time_between_interruptions_s"});
        if (run.scenario) {
            // What a checkpoint stops the job for: the write, or an async checkpoint's snapshot.
            f.checkpoint_cost_s = workloads::checkpoint_stall_s(run.scenario->radiation.recovery);
            f.restart_s = run.scenario->radiation.recovery.restart_s;
        }
        in.faults.push_back(f);
    };
    if (run.h5->has_dataset("/radiation/trials/goodput")) {
        fill("/radiation/trials", "ring");
    } else if (run.h5->has_dataset("/radiation/constellation/algorithm")) {
        for (const auto& a : in.algorithms) fill("/radiation/constellation/" + a.name, a.name);
    }
}

void read_serving(const Run& run, analysis::Input& in) {
    const auto arrival = column(run, "/inference/requests/arrival_s");
    if (arrival.empty()) return;
    const std::size_t n = arrival.size();
    const auto prefill_start = column(run, "/inference/requests/prefill_start_s", n);
    const auto prefill_end = column(run, "/inference/requests/prefill_end_s", n);
    const auto first_token = column(run, "/inference/requests/first_token_s", n);
    const auto status = column(run, "/inference/requests/status", n);
    auto& s = in.serving;
    s.enabled = true;
    s.routing = string_at(run.summary, {"inference", "routing"}, "local");
    s.ttft_slo_s = number_at(run.summary, {"inference", "ttft_slo_s"});
    s.prefill_instances = static_cast<int>(number_at(run.summary, {"inference", "prefill_instances"}));
    s.decode_instances = static_cast<int>(number_at(run.summary, {"inference", "decode_instances"}));
    s.satellites_per_prefill_instance = static_cast<int>(number_at(run.summary, {"inference", "satellites_per_prefill_instance"}));
    if (run.scenario) s.network_routing = run.scenario->inference.serving.network_routing == workloads::RoutingPolicy::widest ? "widest" : "shortest_latency";
    for (std::size_t i = 0; i < n; ++i)
        s.requests.push_back({arrival[i], prefill_start[i], prefill_end[i], first_token[i], static_cast<int>(status[i])});
}

analysis::Input read_input(const Run& run) {
    analysis::Input in;
    const auto& s = run.summary;
    in.kind = kind_of(s);
    in.scenario = string_at(s, {"scenario"});
    const auto cluster_of = column(run, "/constellation/cluster_of");
    if (in.kind == analysis::RunKind::constellation) read_algorithms(run, in);
    read_training(run, in);
    read_links(run, cluster_of, in);
    if (in.kind != analysis::RunKind::fabric) read_power(run, cluster_of, in);
    read_faults(run, in);
    read_serving(run, in);
    in.settings.routing = string_at(s, {"constellation", "routing"}, "");
    if (run.scenario) {
        const auto& w = run.scenario->workload;
        in.settings.routing = w.options.flow.split == workloads::MultipathSplit::capacity ? "ucmp"
                              : w.options.flow.routing == workloads::RoutingPolicy::widest ? "widest"
                                                                                            : "shortest_latency";
        in.settings.gradient_buckets = w.job.gradient_buckets;
    }
    in.settings.gateways_per_cluster = static_cast<int>(number_at(s, {"constellation", "gateways_per_cluster"}));
    in.settings.oversubscription_mean = number_at(s, {"constellation", "oversubscription_mean"});
    in.settings.clusters = static_cast<int>(number_at(s, {"constellation", "clusters"}, 1.0));
    return in;
}

// ---- verify: rerun the scenario as it was and with each recommendation ----

struct Rerun {
    std::vector<std::string> sets;  // --set arguments
    fs::path dir;
    pid_t pid = -1;
    int status = -1;
    std::optional<json> summary;
};

// The metric a recommendation names, from a summary.json; NaN when the run has none.
double metric_of(const json& s, const analysis::Recommendation& r, bool after = false) {
    const double nan = std::nan("");
    const std::string algorithm = after && !r.after_algorithm.empty() ? r.after_algorithm : r.algorithm;
    if (r.metric == "step_time_mean_s") {
        if (s.contains("constellation") && s["constellation"].is_object() && s["constellation"].contains("algorithms"))
            return number_at(s["constellation"]["algorithms"], {algorithm.c_str(), "step_time_mean_s"}, nan);
        return number_at(s, {"workload", "step_time_mean_s"}, nan);
    }
    if (r.metric == "goodput") {
        if (s.contains("radiation") && s["radiation"].contains("constellation"))
            return number_at(s["radiation"]["constellation"], {algorithm.c_str(), "goodput", "mean"}, nan);
        const double mc = number_at(s, {"radiation", "monte_carlo", "goodput", "mean"}, nan);
        return std::isfinite(mc) ? mc : number_at(s, {"radiation", "goodput"}, nan);
    }
    if (r.metric == "slo_attainment") return number_at(s, {"inference", "routings", algorithm.c_str(), "slo_attainment"}, nan);
    return nan;
}

// Starts `skyfabric run` (this program) quietly, its output to DIR/../NAME.log.
pid_t start_run(const fs::path& scenario_file, const Rerun& r, int threads) {
    std::vector<std::string> args = {"/proc/self/exe", "run", scenario_file.string(), "-o", r.dir.string(), "-q", "--yes",
                                     "--threads", std::to_string(threads)};
    for (const auto& s : r.sets) {
        args.push_back("--set");
        args.push_back(s);
    }
    const std::string log = r.dir.string() + ".log";
    const pid_t pid = fork();
    if (pid == 0) {
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        execv("/proc/self/exe", argv.data());
        _exit(127);
    }
    return pid;
}

json verify(const Run& run, const analysis::Analysis& a, int jobs) {
    // Every distinct recommendation, and the run as it was (the baseline, the same seed).
    std::vector<const analysis::Recommendation*> recommendations;
    for (const auto& p : a.anti_patterns)
        for (const auto& r : p.recommendations)
            if (std::none_of(recommendations.begin(), recommendations.end(), [&](auto* o) { return o->set_argument() == r.set_argument(); }))
                recommendations.push_back(&r);
    json out = json::object();
    out["reruns"] = json::array();
    if (recommendations.empty()) return out;
    const fs::path work = fs::temp_directory_path() / ("skyfabric-analyze-" + std::to_string(getpid()) + "-" + output::random_token());
    fs::create_directories(work);
    fs::permissions(work, fs::perms::owner_all, fs::perm_options::replace);
    const fs::path scenario_file = work / "scenario.yaml";
    output::write_file_atomically(scenario_file, run.summary["scenario_yaml"].get<std::string>());
    std::vector<Rerun> reruns(recommendations.size() + 1);
    reruns[0].dir = work / "baseline";
    for (std::size_t i = 0; i < recommendations.size(); ++i) {
        reruns[i + 1].sets = {recommendations[i]->set_argument()};
        reruns[i + 1].dir = work / ("rec" + std::to_string(i));
    }
    const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    const int parallel = std::max(1, std::min<int>(jobs > 0 ? jobs : cores, static_cast<int>(reruns.size())));
    const int threads = std::max(1, cores / parallel);
    std::size_t next = 0, running = 0;
    std::map<pid_t, std::size_t> by_pid;
    while (next < reruns.size() || running > 0) {
        while (next < reruns.size() && static_cast<int>(running) < parallel) {
            reruns[next].pid = start_run(scenario_file, reruns[next], threads);
            if (reruns[next].pid < 0) throw std::runtime_error("cannot start a rerun (fork failed)");
            by_pid[reruns[next].pid] = next;
            ++next;
            ++running;
        }
        int status = 0;
        const pid_t done = waitpid(-1, &status, 0);
        if (done < 0) break;
        const auto it = by_pid.find(done);
        if (it == by_pid.end()) continue;
        auto& r = reruns[it->second];
        r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        r.summary = output::read_json_file(r.dir / "summary.json");
        --running;
    }
    const auto log_tail = [](const fs::path& log) {
        const std::string text = [&] {
            std::FILE* f = std::fopen(log.c_str(), "r");
            if (!f) return std::string();
            std::string t;
            char buffer[4096];
            std::size_t got;
            while ((got = std::fread(buffer, 1, sizeof buffer, f)) > 0) t.append(buffer, got);
            std::fclose(f);
            return t;
        }();
        return text.size() > 400 ? text.substr(text.size() - 400) : text;
    };
    const auto& base = reruns[0];
    out["baseline_status"] = base.status;
    for (std::size_t i = 0; i < recommendations.size(); ++i) {
        const auto& r = *recommendations[i];
        const auto& rerun = reruns[i + 1];
        json v;
        v["set"] = r.set_argument();
        v["metric"] = r.metric;
        v["algorithm"] = r.algorithm;
        v["after_algorithm"] = r.after_algorithm.empty() ? r.algorithm : r.after_algorithm;
        v["expected_relative_change"] = r.expected_relative_change;
        v["exit_status"] = rerun.status;
        const double before = base.summary ? metric_of(*base.summary, r) : std::nan("");
        const double after = rerun.summary && rerun.status == 0 ? metric_of(*rerun.summary, r, true) : std::nan("");
        const double original = metric_of(run.summary, r);
        v["original"] = std::isfinite(original) ? json(original) : json(nullptr);
        v["baseline"] = std::isfinite(before) ? json(before) : json(nullptr);
        v["after"] = std::isfinite(after) ? json(after) : json(nullptr);
        if (std::isfinite(before) && std::isfinite(after) && before != 0.0) {
            const double change = (after - before) / std::fabs(before);
            const double gain = r.lower_is_better ? -change : change;
            v["measured_relative_change"] = change;
            v["measured_gain"] = gain;
            v["verdict"] = gain > 1e-3 ? "helps" : gain < -1e-3 ? "hurts" : "no effect";
        } else {
            v["measured_relative_change"] = nullptr;
            v["measured_gain"] = nullptr;
            v["verdict"] = rerun.status != 0 ? "rerun failed: " + log_tail(rerun.dir.string() + ".log") : "not measurable (metric absent)";
        }
        out["reruns"].push_back(v);
    }
    std::error_code ec;
    fs::remove_all(work, ec);
    return out;
}

// ---- output ----

json to_json(const Run& run, const analysis::Analysis& a) {
    json j;
    j["analysis_version"] = 1;
    j["run_dir"] = run.dir.string();
    j["scenario"] = string_at(run.summary, {"scenario"});
    j["scenario_sha256"] = string_at(run.summary, {"scenario_sha256"});
    j["kind"] = analysis::to_string(a.kind);
    j["primary_cause"] = a.anti_patterns.empty() ? json(nullptr) : json(a.anti_patterns.front().cause);
    j["breakdowns"] = json::array();
    for (const auto& b : a.breakdowns) {
        json parts = json::array();
        for (const auto& p : b.parts) parts.push_back({{"name", p.name}, {"seconds", p.seconds}, {"share", b.total_s != 0.0 ? p.seconds / b.total_s : 0.0}});
        j["breakdowns"].push_back({{"subject", b.subject}, {"total_name", b.total_name}, {"total_s", b.total_s}, {"parts", parts},
                                   {"parts_sum_s", b.parts_sum_s()}, {"max_relative_residual", b.max_relative_residual}});
    }
    j["hot_spots"] = json::array();
    for (const auto& h : a.hot_spots)
        j["hot_spots"].push_back({{"kind", h.kind}, {"name", h.name}, {"value", h.value}, {"unit", h.unit}, {"note", h.note}});
    j["anti_patterns"] = json::array();
    for (const auto& p : a.anti_patterns) {
        json recommendations = json::array();
        for (const auto& r : p.recommendations)
            recommendations.push_back({{"set", r.set_argument()}, {"key", r.key}, {"value", r.value}, {"metric", r.metric},
                                       {"algorithm", r.algorithm},
                                       {"after_algorithm", r.after_algorithm.empty() ? json(nullptr) : json(r.after_algorithm)},
                                       {"lower_is_better", r.lower_is_better},
                                       {"expected_relative_change", r.expected_relative_change}, {"expected", r.expected}, {"why", r.why}});
        j["anti_patterns"].push_back({{"id", p.id}, {"title", p.title}, {"cause", p.cause}, {"impact", p.impact}, {"threshold", p.threshold},
                                      {"evidence", p.evidence}, {"explained_by", p.explained_by.empty() ? json(nullptr) : json(p.explained_by)},
                                      {"recommendations", recommendations}});
    }
    return j;
}

void print_table(const json& j) {
    std::printf("skyfabric analyze — %s (%s run)\n", j["scenario"].get<std::string>().c_str(), j["kind"].get<std::string>().c_str());
    std::printf("  cause named first: %s\n", j["primary_cause"].is_string() ? j["primary_cause"].get<std::string>().c_str() : "none found");
    for (const auto& b : j["breakdowns"]) {
        std::printf("\n  %s: %s %.6g s\n", b["subject"].get<std::string>().c_str(), b["total_name"].get<std::string>().c_str(),
                    b["total_s"].get<double>());
        for (const auto& p : b["parts"])
            std::printf("    %-72s %12.6g s %6.1f %%\n", p["name"].get<std::string>().c_str(), p["seconds"].get<double>(),
                        100.0 * p["share"].get<double>());
        std::printf("    (parts sum to the total within %.2g relative)\n", b["max_relative_residual"].get<double>());
    }
    if (!j["hot_spots"].empty()) {
        std::printf("\n  hot spots\n");
        for (const auto& h : j["hot_spots"])
            std::printf("    %-13s %-12s %-16s %10.4g  %s\n", h["kind"].get<std::string>().c_str(), h["name"].get<std::string>().c_str(),
                        h["unit"].get<std::string>().c_str(), h["value"].get<double>(), h["note"].get<std::string>().c_str());
    }
    std::printf("\n  anti-patterns (causes first, by the share of time they cost)\n");
    if (j["anti_patterns"].empty()) std::printf("    none above the detectors' thresholds (docs/analysis.md)\n");
    int index = 1;
    for (const auto& p : j["anti_patterns"]) {
        std::printf("    %d. %s — %s (impact %.3g)%s\n", index++, p["id"].get<std::string>().c_str(), p["cause"].get<std::string>().c_str(),
                    p["impact"].get<double>(),
                    p["explained_by"].is_string() ? (" [explained by " + p["explained_by"].get<std::string>() + "]").c_str() : "");
        std::printf("       evidence: %s\n", p["evidence"].get<std::string>().c_str());
        for (const auto& r : p["recommendations"])
            std::printf("       --set %s\n         expected: %s\n         why: %s\n", r["set"].get<std::string>().c_str(),
                        r["expected"].get<std::string>().c_str(), r["why"].get<std::string>().c_str());
    }
    if (j.contains("verification")) {
        std::printf("\n  verification (the scenario rerun, same seed)\n");
        for (const auto& v : j["verification"]["reruns"]) {
            const auto shown = [](const json& x) { return x.is_number() ? x.get<double>() : std::nan(""); };
            std::printf("    --set %-48s %s: %.6g -> %.6g (expected %+.2f %%, measured %+.2f %%): %s\n", v["set"].get<std::string>().c_str(),
                        v["metric"].get<std::string>().c_str(), shown(v["baseline"]), shown(v["after"]),
                        100.0 * v["expected_relative_change"].get<double>(), 100.0 * shown(v["measured_relative_change"]),
                        v["verdict"].get<std::string>().c_str());
        }
    }
}

int run(const Options& o) {
    const Run r = open_run(o.run_dir);
    const auto input = read_input(r);
    const auto a = analysis::analyse(input);
    json j = to_json(r, a);
    if (o.verify) j["verification"] = verify(r, a, o.jobs);
    // The run's trace with the critical path and the anti-patterns drawn over it (cli/analysis_trace.hpp).
    const auto trace = write_analysis_trace(r.dir, j);
    j["trace"] = trace ? json{{"file", trace->path.filename().string()}, {"critical_path_flows", trace->flows},
                              {"anti_patterns", trace->anti_patterns}}
                       : json(nullptr);
    output::write_file_atomically(r.dir / "analysis.json", j.dump(2) + "\n");
    // The figures read analysis.json; report.html embeds them (src/cli/analysis_report.hpp).
    const auto report = write_report(r.dir, j, false);
    if (o.format == "json") {
        std::printf("%s\n", j.dump(2).c_str());
    } else {
        print_table(j);
        std::string drawn;
        for (const auto& f : report.figures) drawn += (drawn.empty() ? "" : ", ") + f;
        std::printf("\n  report: %s (figures: %s)\n", report.html.c_str(), drawn.empty() ? "none" : drawn.c_str());
        if (trace)
            std::printf("  trace: %s (the run's trace.json with %ld critical-path arrows and %ld anti-patterns; open in ui.perfetto.dev)\n",
                        trace->path.c_str(), trace->flows, trace->anti_patterns);
    }
    std::fflush(stdout);
    return exit_ok;
}

}  // namespace

std::function<int()> add_analyze_command(CLI::App& app, CLI::App*& command) {
    auto o = std::make_shared<Options>();
    command = app.add_subcommand(
        "analyze",
        "Why a run was slow: the step (and TTFT) broken into parts that add up to it, hot links and clusters, anti-patterns "
        "(each a documented detector with its threshold and evidence) and --set changes that fix them; writes RUN_DIR/analysis.json, figures, a self-contained report.html and, where the run wrote trace.json, analysis_trace.json (its critical path and anti-patterns drawn over it) "
        "(docs/analysis.md)");
    command->add_option("run_dir", o->run_dir, "A run's output folder (result.h5 and summary.json; a sweep point's folder too)")->required();
    command->add_option("--format", o->format, "table (default) or json (the analysis.json document on standard output)")
        ->check(CLI::IsMember({"table", "json"}));
    command->add_flag("--verify", o->verify,
                      "Rerun the run's scenario (summary.json scenario_yaml, same seed) as it was and with each recommendation, in "
                      "parallel, and report the measured change next to the expected one");
    command->add_option("--jobs", o->jobs, "Reruns at once with --verify (default: every core)")->check(CLI::Range(0, 1024));
    return [o] { return run(*o); };
}

}  // namespace skyfabric::cli
