// `skyfabric collective`: an nccl-tests style table of one collective on a scenario's
// topology at one instant: size, time, algBw, busBw and the bandwidth bound.
#include "cli/collective_command.hpp"

#include "output/trace_writer.hpp"
#include "scenario/scenario.hpp"
#include "scenario/yaml_reader.hpp"
#include "simulation/simulation.hpp"

#include <skyfabric/workloads/collectives.hpp>
#include <skyfabric/workloads/flow_simulation.hpp>
#include <skyfabric/workloads/synthetic_fabric.hpp>

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <regex>

namespace skyfabric::cli {
namespace {

// "1MiB", "4GB", "512" -> bytes.
double parse_size_bytes(const std::string& text) {
    static const std::regex pattern(R"(\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([KMGT]i?B|B)?\s*)");
    std::smatch m;
    if (!std::regex_match(text, m, pattern)) {
        throw scenario::ScenarioError("--sizes: '" + text + "' is not a size (e.g. 512, 64KiB, 1MiB, 4GB)");
    }
    const double value = std::stod(m[1]);
    const std::string unit = m[2];
    double scale = 1.0;
    if (!unit.empty() && unit != "B") {
        const bool binary = unit.size() == 3;
        const int power = std::string("KMGT").find(unit[0]) + 1;
        scale = std::pow(binary ? 1024.0 : 1000.0, power);
    }
    if (!(value * scale >= 1.0)) throw scenario::ScenarioError("--sizes: '" + text + "' must be at least 1 byte");
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
    int ranks = 0;
};

int run(const Options& o) {
    std::vector<scenario::Override> overrides;
    for (const auto& a : o.overrides) overrides.push_back(scenario::parse_override(a));
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
    std::vector<workloads::CollectiveTableRow> rows;
    try {
        rows = fabric ? workloads::fabric_collective_table(*fabric, op, algorithm, sizes, options.flow, options.schedule)
                      : workloads::collective_table(topology, op, algorithm, sizes, options);
    } catch (const std::invalid_argument& e) {
        throw scenario::ScenarioError(std::string("collective: ") + e.what());
    }
    const int ranks = fabric ? fabric->ranks : o.ranks > 0 ? o.ranks : topology.node_count;
    if (fabric) {
        std::printf("# %s, %s over %d ranks on %s (%zu links)\n", workloads::to_string(op).c_str(),
                    workloads::to_string(algorithm).c_str(), ranks, fabric->description.c_str(), topology.links.size());
    } else {
        std::printf("# %s, %s over %d ranks on '%s' at t = %.1f s (%zu links)\n", workloads::to_string(op).c_str(),
                    workloads::to_string(algorithm).c_str(), ranks, sc.name.c_str(), o.at_s, topology.links.size());
    }
    std::printf("# busBw = algBw x %.4f (nccl-tests); bound: busBw limited by one link per rank (%.1f GB/s)\n",
                workloads::bus_bandwidth_factor(op, ranks), rows.empty() ? 0.0 : rows.front().bound_bus_bw_Bps / 1e9);
    std::printf("%14s %14s %12s %12s %12s %14s\n", "size(B)", "time(us)", "algbw(GB/s)", "busbw(GB/s)",
                "bound(GB/s)", "bound_time(us)");
    for (const auto& r : rows) {
        std::printf("%14.0f %14.2f %12.2f %12.2f %12.2f %14.2f\n", r.bytes, r.time_s * 1e6, r.alg_bw_Bps / 1e9,
                    r.bus_bw_Bps / 1e9, r.bound_bus_bw_Bps / 1e9, r.lower_bound_s * 1e6);
    }
    if (!o.trace.empty()) {
        // The sizes one after another on one track, as nccl-tests runs them.
        output::TraceWriter writer(o.trace);
        writer.metadata("scenario", sc.name);
        writer.metadata("op", workloads::to_string(op));
        writer.metadata("algorithm", workloads::to_string(algorithm));
        writer.metadata("ranks", ranks);
        writer.process_name(1, "collective");
        writer.thread_name(1, 0, workloads::to_string(op) + " " + workloads::to_string(algorithm));
        double t = 0.0;
        for (const auto& r : rows) {
            writer.complete(1, 0, std::to_string(static_cast<long long>(r.bytes)) + " B", "collective", t, r.time_s,
                            {{"bytes", r.bytes}, {"algBw_GBps", r.alg_bw_Bps / 1e9}, {"busBw_GBps", r.bus_bw_Bps / 1e9},
                             {"bound_time_us", r.lower_bound_s * 1e6}});
            t += r.time_s;
        }
        writer.close();
    }
    return 0;
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
    command->add_option("--set", o->overrides, "Override a scenario key (repeatable)")->type_name("KEY.PATH=VALUE");
    command->add_option("--at-s", o->at_s, "Simulation time whose topology is used")->capture_default_str();
    command->add_option("--op", o->op, "all_reduce, reduce_scatter, all_gather, all_to_all, point_to_point")->capture_default_str();
    command->add_option("--algorithm", o->algorithm,
                        "ring, double_binary_tree, halving_doubling, hierarchical_ring, pairwise, direct (default: the op's usual one)");
    command->add_option("--sizes", o->sizes, "MIN..MAX (doubling) or a comma list, e.g. 1MiB..16GiB")->capture_default_str();
    command->add_option("--trace", o->trace, "Write the sizes' collectives as a Chrome trace-event timeline to FILE")
        ->type_name("FILE");
    command->add_option("--ranks", o->ranks, "Ranks (0 = every satellite)")->capture_default_str()->check(CLI::NonNegativeNumber);
    return [o] { return run(*o); };
}

}  // namespace skyfabric::cli
