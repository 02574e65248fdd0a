// `skyfabric collective`: an nccl-tests style table of one collective on a scenario's
// topology at one instant: size, time, algBw, busBw and the bandwidth bound (or CSV / JSON),
// a row as each size is timed; Ctrl-C stops it between sizes (exit 130).
#include "cli/collective_command.hpp"

#include "cli/command_support.hpp"
#include "cli/progress.hpp"
#include "common/stop_signal.hpp"
#include "output/provenance.hpp"
#include "output/trace_writer.hpp"
#include "scenario/scenario.hpp"
#include "scenario/yaml_reader.hpp"
#include "simulation/simulation.hpp"

#include <skyfabric/workloads/collectives.hpp>
#include <skyfabric/workloads/collective_table.hpp>
#include <skyfabric/workloads/collective_engine.hpp>
#include <skyfabric/workloads/idle_helpers.hpp>
#include <skyfabric/workloads/input_text.hpp>
#include <skyfabric/workloads/synthetic_fabric.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <regex>
#include <span>

namespace skyfabric::cli {
namespace {

// "1MiB", "4GB", "512" -> bytes.
double parse_size_bytes(const std::string& text) {
    static const std::regex pattern(R"(\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([KMGT]i?B|B)?\s*)");
    std::smatch m;
    if (!std::regex_match(text, m, pattern)) {
        throw scenario::ScenarioError("--sizes: " + workloads::quoted_input(text) + " is not a size (e.g. 512, 64KiB, 1MiB, 4GB)");
    }
    const double value = std::stod(m[1]);
    const std::string unit = m[2];
    double scale = 1.0;
    if (!unit.empty() && unit != "B") {
        const bool binary = unit.size() == 3;
        const int power = std::string("KMGT").find(unit[0]) + 1;
        scale = std::pow(binary ? 1024.0 : 1000.0, power);
    }
    if (!(value * scale >= 1.0)) throw scenario::ScenarioError("--sizes: " + workloads::quoted_input(text) + " must be at least 1 byte");
    return value * scale;
}

// "1MiB..16GiB" (doubling), or "1MiB,8MiB,64MiB".
std::vector<double> parse_sizes(const std::string& text) {
    const auto range = text.find("..");
    if (range != std::string::npos) {
        const double lo = parse_size_bytes(text.substr(0, range));
        const double hi = parse_size_bytes(text.substr(range + 2));
        if (hi < lo) throw scenario::ScenarioError("--sizes: the range's end is below its start");
        return workloads::size_sweep(lo, hi, 2.0);
    }
    std::vector<double> sizes;
    std::size_t start = 0;
    while (start <= text.size()) {
        const auto comma = text.find(',', start);
        const auto item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!item.empty()) sizes.push_back(parse_size_bytes(item));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    if (sizes.empty()) throw scenario::ScenarioError("--sizes: no size given");
    return sizes;
}

struct Options {
    std::string scenario_file;
    std::string topology;
    std::string trace;
    std::vector<std::string> overrides;
    double at_s = 0.0;
    std::string op = "all_reduce";
    std::string algorithm;
    std::string sizes = "1MiB..16GiB";
    std::string format = "table";
    int ranks = 0;
    int threads = 0;
};

// Where the table goes, row by row as each size is timed: nccl-tests' table (what a person reads),
// CSV or JSON (what a program reads; SI units, the names of /workload/collectives in result.h5).
class TablePrinter {
public:
    TablePrinter(std::string format, std::string title, double bus_factor)
        : format_(std::move(format)), title_(std::move(title)), bus_factor_(bus_factor) {}

    void row(const workloads::CollectiveTableRow& r) {
        if (rows_.empty()) header(r.bound_bus_bw_Bps);
        rows_.push_back(r);
        if (format_ == "table") {
            std::printf("%14.0f %14.2f %12.2f %12.2f %12.2f %14.2f\n", r.bytes, r.time_s * 1e6, r.alg_bw_Bps / 1e9,
                        r.bus_bw_Bps / 1e9, r.bound_bus_bw_Bps / 1e9, r.lower_bound_s * 1e6);
        } else if (format_ == "csv") {
            std::printf("%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", r.bytes, r.time_s, r.alg_bw_Bps, r.bus_bw_Bps,
                        r.bound_bus_bw_Bps, r.lower_bound_s);
        }
        std::fflush(stdout);  // each size as soon as it is timed
    }

    // After the last size, or the sizes run before an interruption.
    void end(std::size_t sizes_asked, nlohmann::json description) {
        if (rows_.empty()) header(0.0);
        double bus_sum = 0.0;
        for (const auto& r : rows_) bus_sum += r.bus_bw_Bps;
        const double avg_bus = rows_.empty() ? 0.0 : bus_sum / static_cast<double>(rows_.size());
        const bool complete = rows_.size() == sizes_asked;
        if (format_ == "table") {
            std::printf("# Avg bus bandwidth : %.4g GB/s", avg_bus / 1e9);
            if (!complete) std::printf(" (over the %zu of %zu sizes run before the interruption)", rows_.size(), sizes_asked);
            std::printf("\n");
        } else if (format_ == "json") {
            description["bus_bandwidth_factor"] = bus_factor_;
            description["complete"] = complete;
            description["avg_bus_bw_B_s"] = avg_bus;
            nlohmann::json rows = nlohmann::json::array();
            for (const auto& r : rows_) {
                rows.push_back({{"bytes", r.bytes}, {"time_s", r.time_s}, {"alg_bw_B_s", r.alg_bw_Bps},
                                {"bus_bw_B_s", r.bus_bw_Bps}, {"bound_bus_bw_B_s", r.bound_bus_bw_Bps},
                                {"bound_time_s", r.lower_bound_s}});
            }
            description["rows"] = std::move(rows);
            std::printf("%s\n", description.dump(2).c_str());
        }
        std::fflush(stdout);
    }

    const std::vector<workloads::CollectiveTableRow>& rows() const { return rows_; }

private:
    void header(double bound_Bps) {
        if (format_ == "table") {
            std::printf("# %s\n", title_.c_str());
            std::printf("# busBw = algBw x %.4f (nccl-tests); bound: busBw limited by one link per rank (%.1f GB/s)\n",
                        bus_factor_, bound_Bps / 1e9);
            std::printf("%14s %14s %12s %12s %12s %14s\n", "size(B)", "time(us)", "algbw(GB/s)", "busbw(GB/s)",
                        "bound(GB/s)", "bound_time(us)");
        } else if (format_ == "csv") {
            std::printf("bytes,time_s,alg_bw_B_s,bus_bw_B_s,bound_bus_bw_B_s,bound_time_s\n");
        }
    }

    std::string format_, title_;
    double bus_factor_;
    std::vector<workloads::CollectiveTableRow> rows_;
};

int run(const Options& o) {
    if (!o.trace.empty() && !output::is_standard_output(o.trace)) output::refuse_non_regular_target(o.trace);  // before the timing
    auto overrides = parse_overrides(o.overrides);
    if (!o.topology.empty()) overrides.push_back({"topology", o.topology});
    if (o.scenario_file.empty() && o.topology.empty()) {
        throw scenario::ScenarioError("collective: give a SCENARIO file, or --topology SPEC for a synthetic fabric");
    }
    // A synthetic fabric needs no scenario file: an empty one with only the topology. In
    // place of a scenario's orbit it makes the orbit's sections moot: they are dropped, and
    // the ranks follow the fabric.
    const std::string text = o.scenario_file.empty() ? std::string("name: fabric\nduration_s: 0\n")
                                                     : scenario::read_scenario_file(o.scenario_file);
    const std::string source = o.scenario_file.empty() ? std::string("--topology") : o.scenario_file;
    if (!o.scenario_file.empty() && !o.topology.empty()) {
        std::vector<std::string> ignored;
        for (auto& drop : scenario::overrides_replacing_orbit(text, source, ignored)) overrides.push_back(std::move(drop));
        std::string list;
        for (const auto& key : ignored) list += (list.empty() ? "" : ", ") + key;
        if (!list.empty())
            std::fprintf(stderr, "note: --topology replaces the orbit of %s: ignoring %s\n", source.c_str(), list.c_str());
    }
    const auto sc = scenario::load_scenario_text(text, source, overrides);
    workloads::CollectiveOp op{};
    workloads::Algorithm algorithm{};
    try {
        op = workloads::parse_collective_op(o.op);
        algorithm = o.algorithm.empty() ? workloads::default_algorithm(op) : workloads::parse_algorithm(o.algorithm);
    } catch (const std::invalid_argument& e) {
        throw scenario::ScenarioError(std::string("--op/--algorithm: ") + e.what());
    }
    if (o.at_s < 0.0 || o.at_s > sc.duration_s) {
        throw scenario::ScenarioError("--at-s: " + std::to_string(o.at_s) + " is outside the scenario's [0, " +
                                      std::to_string(sc.duration_s) + "] s");
    }
    const auto sizes = parse_sizes(o.sizes);
    std::optional<workloads::Fabric> fabric;
    if (sc.fabric) fabric = workloads::make_fabric(*sc.fabric);
    const auto topology = fabric ? fabric->topology : simulation::topology_at(sc, o.at_s);
    if (fabric && o.ranks > 0 && o.ranks != fabric->ranks) {
        throw scenario::ScenarioError("--ranks: a synthetic fabric's ranks are set by its spec (" +
                                      std::to_string(fabric->ranks) + ")");
    }
    if (o.ranks > topology.node_count) {
        throw scenario::ScenarioError("--ranks: " + std::to_string(o.ranks) + " exceeds the " +
                                      std::to_string(topology.node_count) + " satellites");
    }
    workloads::CollectiveTableOptions options;
    options.ranks = o.ranks;
    options.flow = sc.workload.options.flow;
    // Large batches of phases drain on the GPU where workload.backend resolves to it
    // (batch_flow_solver); cuda on a machine without one fails here, before any solve.
    options.flow.backend = workloads::resolve_backend(sc.workload.backend);
    const int ranks = fabric ? fabric->ranks : o.ranks > 0 ? o.ranks : topology.node_count;
    nlohmann::json description = {{"op", workloads::to_string(op)}, {"algorithm", workloads::to_string(algorithm)},
                                  {"ranks", ranks}, {"links", topology.links.size()}};
    char title[512];
    if (fabric) {
        description["fabric"] = fabric->description;
        std::snprintf(title, sizeof title, "%s, %s over %d ranks on %s (%zu links)", workloads::to_string(op).c_str(),
                      workloads::to_string(algorithm).c_str(), ranks, fabric->description.c_str(), topology.links.size());
    } else {
        description["scenario"] = sc.name;
        description["at_s"] = o.at_s;
        std::snprintf(title, sizeof title, "%s, %s over %d ranks on '%s' at t = %.1f s (%zu links)",
                      workloads::to_string(op).c_str(), workloads::to_string(algorithm).c_str(), ranks, sc.name.c_str(),
                      o.at_s, topology.links.size());
    }
    TablePrinter printer(o.format, title, workloads::bus_bandwidth_factor(op, ranks));

    // One size at a time, so that Ctrl-C (or SIGTERM) stops the sweep between two sizes.
    common::install_stop_handlers(common::InterruptedCalls::restart);
    const bool progress = stderr_is_terminal();  // which size is being timed, on stderr, erased before its row
    workloads::FlowContext context;
    context.stop = &common::stop_requested();  // and inside a size: its solve stops at the next event
    // Threads beside this one for a large phase's solve (SpreadMaxMin): the same numbers sooner.
    auto helpers = std::make_shared<workloads::IdleHelpers>();
    const workloads::HelperThreads helper_threads(*helpers, o.threads);
    context.helpers = helpers;
    for (std::size_t i = 0; i < sizes.size() && !common::stop_requested().load(); ++i) {
        if (progress) std::fprintf(stderr, "[size %zu of %zu: %.0f B]\r", i + 1, sizes.size(), sizes[i]), std::fflush(stderr);
        const std::span<const double> size(&sizes[i], 1);
        std::vector<workloads::CollectiveTableRow> rows;
        try {
            rows = fabric ? workloads::fabric_collective_table(*fabric, op, algorithm, size, options.flow, options.schedule, context)
                          : workloads::collective_table(topology, op, algorithm, size, options, context);
        } catch (const std::invalid_argument& e) {
            throw scenario::ScenarioError(std::string("collective: ") + e.what());
        } catch (const workloads::Interrupted&) {
            break;  // the size in progress is not printed
        }
        if (progress) std::fprintf(stderr, "%50s\r", ""), std::fflush(stderr);
        printer.row(rows.at(0));
    }
    printer.end(sizes.size(), std::move(description));
    if (!o.trace.empty()) {
        // The sizes one after another on one track, as nccl-tests runs them.
        output::TraceWriter writer(o.trace);
        const nlohmann::json provenance = output::provenance_json(output::provenance_of(sc));
        for (auto it = provenance.begin(); it != provenance.end(); ++it) writer.metadata(it.key(), *it);
        writer.metadata("scenario", sc.name);
        writer.metadata("op", workloads::to_string(op));
        writer.metadata("algorithm", workloads::to_string(algorithm));
        writer.metadata("ranks", ranks);
        writer.process_name(1, "collective");
        writer.thread_name(1, 0, workloads::to_string(op) + " " + workloads::to_string(algorithm));
        double t = 0.0;
        for (const auto& r : printer.rows()) {
            writer.complete(1, 0, std::to_string(static_cast<long long>(r.bytes)) + " B", "collective", t, r.time_s,
                            {{"bytes", r.bytes}, {"algBw_GBps", r.alg_bw_Bps / 1e9}, {"busBw_GBps", r.bus_bw_Bps / 1e9},
                             {"bound_time_us", r.lower_bound_s * 1e6}});
            t += r.time_s;
        }
        writer.close();
    }
    if (printer.rows().size() == sizes.size()) return exit_ok;
    std::fprintf(stderr, "skyfabric: collective interrupted after %zu of %zu sizes (the rows so far are above)\n",
                 printer.rows().size(), sizes.size());
    return exit_interrupted;
}

}  // namespace

std::function<int()> add_collective_command(CLI::App& app, CLI::App*& command) {
    auto o = std::make_shared<Options>();
    command = app.add_subcommand("collective",
                                 "Time one collective over a range of sizes on a scenario's topology (nccl-tests style table)");
    command->add_option("scenario", o->scenario_file, "Scenario YAML file with a links section (or use --topology)");
    command->add_option("--topology", o->topology,
                        "Synthetic fabric instead of the scenario's orbit (whose orbit-only sections are then "
                        "ignored): ring:p=64,bw_gbps=400,latency_ns=500, "
                        "switch:p=16,..., torus2d:x=8,y=8,..., fully_connected:p=8,..., file:edges.csv")
        ->type_name("SPEC");
    add_set_option(*command, o->overrides);
    command->add_option("--at-s", o->at_s, "Simulation time whose topology is used")->capture_default_str();
    command->add_option("--op", o->op, workloads::collective_op_names.joined())->capture_default_str();
    command->add_option("--algorithm", o->algorithm,
                        workloads::algorithm_names.joined() + " (default: the op's usual one)");
    command->add_option("--sizes", o->sizes, "MIN..MAX (doubling) or a comma list, e.g. 1MiB..16GiB")->capture_default_str();
    command->add_option("--trace", o->trace, "Write the sizes' collectives as a Chrome trace-event timeline to FILE (- : standard output)")
        ->type_name("FILE");
    command->add_option("--ranks", o->ranks, "Ranks (0 = every satellite)")->capture_default_str()->check(CLI::NonNegativeNumber);
    add_threads_option(*command, o->threads)
        ->description("At most N CPU threads for the flow solve of a phase of " + std::to_string(workloads::spread_min_flows) +
                      " or more flows, which they share (0: every core; the same numbers at any N)");
    command
        ->add_option("--format", o->format,
                     "table (nccl-tests style, ending with '# Avg bus bandwidth : X GB/s'), csv or json (SI units: "
                     "bytes, time_s, alg_bw_B_s, bus_bw_B_s, bound_bus_bw_B_s, bound_time_s)")
        ->capture_default_str()
        ->check(CLI::IsMember({"table", "csv", "json"}));
    return [o] { return run(*o); };
}

}  // namespace skyfabric::cli
