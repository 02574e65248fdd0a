#include "cli/cli.hpp"

#include "cli/collective_command.hpp"
#include "cli/command_support.hpp"
#include "cli/link_budget_command.hpp"
#include "cli/analyze_command.hpp"
#include "cli/oem_command.hpp"
#include "cli/season_command.hpp"
#include "cli/serve_capacity_command.hpp"
#include "cli/progress.hpp"
#include "cli/run_ranks.hpp"
#include "cli/sweep_command.hpp"
#include "common/stop_signal.hpp"
#include "output/provenance.hpp"
#include "output/run_directory.hpp"
#include "output/summary.hpp"
#include "scenario/scenario.hpp"
#include "scenario/settings_hash.hpp"
#include "scenario/yaml_reader.hpp"
#include "simulation/simulation.hpp"
#include "sweep/sweep_plan.hpp"

#include <skyfabric/workloads/flow_solver.hpp>
#include <skyfabric/workloads/synthetic_fabric.hpp>

#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdlib>
#include <sys/prctl.h>
#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace skyfabric::cli {
namespace {

namespace fs = std::filesystem;

struct RunOptions {
    std::string scenario_file;
    std::string output_dir;
    std::vector<std::string> overrides;
    std::string topology;
    std::string trace;
    int threads = 0;
    bool quiet = false;
    bool progress = false;  // progress lines even when stderr is no terminal
    bool force = false;
    bool yes = false;
    bool strict = false;
};

// A sweep's point (SKYFABRIC_PARENT_PID set by the sweep) stops, like on Ctrl-C, when the sweep dies.
void stop_with_parent() {
    const char* parent = std::getenv("SKYFABRIC_PARENT_PID");
    if (parent == nullptr) return;
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (std::to_string(static_cast<long>(getppid())) != parent) common::stop_requested().store(true);  // it died already
}

// The run into its folder, the summary table and the exit status (rank 0 of a run shared among ranks).
int run_and_publish(const RunOptions& o, const scenario::Scenario& sc, const fs::path& dir,
                    const simulation::RunRanks* ranks = nullptr) {
    ProgressBar progress(o.progress                           ? ProgressBar::Style::lines
                         : !o.quiet && stderr_is_terminal() ? ProgressBar::Style::bar
                                                            : ProgressBar::Style::off);
    const auto j = output::run_to_directory(sc, dir, o.force, {&progress}, &common::stop_requested(), o.trace, ranks);
    if (common::stop_requested().load() && j["complete"].get<bool>()) {
        // A stop after the last sample, while the files were written: the run is whole and
        // published, and the exit still says it was interrupted (130 at any instant).
        std::fprintf(stderr, "skyfabric: interrupted as the run ended; its outputs are complete in %s\n", dir.c_str());
        return exit_interrupted;
    }
    if (!o.quiet) {
        std::ostream& table = o.trace == "-" ? std::cerr : std::cout;  // standard output carries the trace alone
        table << output::summary_table(j);
        table << "  output                             " << dir.string() << "/\n";
    }
    if (j["complete"].get<bool>()) {
        // A job that could not train is a result, never a silent figure: a warning always, and
        // with --strict its own exit status.
        const auto w = j.find("workload");
        if (w != j.end() && w->is_object() && w->value("truncated", false)) {
            std::fprintf(stderr,
                         "skyfabric: warning: the job could not train to the end: after %lld steps a collective found no "
                         "path between its ranks (workload.truncated in summary.json)\n",
                         w->value("steps", 0LL));
            if (o.strict) return exit_cannot_train;
        }
        if (w != j.end() && w->is_object() && !w->value("truncated", false) && w->contains("steps") &&
            (*w)["steps"].is_number_integer() && (*w)["steps"].get<long long>() == 0) {
            std::fprintf(stderr,
                         "skyfabric: warning: the job trained no step in the run's %g s: one step takes longer than "
                         "the run (workload.steps in summary.json)\n",
                         sc.duration_s);
            if (o.strict) return exit_cannot_train;
        }
        std::string stopped;  // constellation algorithms that could not train to the end
        if (const auto c = j.find("constellation"); c != j.end() && c->is_object() && c->contains("algorithms"))
            for (const auto& [name, a] : (*c)["algorithms"].items())
                if (a.value("truncated", false)) stopped += (stopped.empty() ? "" : ", ") + name;
        if (!stopped.empty()) {
            std::fprintf(stderr,
                         "skyfabric: warning: %s could not train to the end: a collective or outer sync found no path "
                         "between clusters (constellation.algorithms.*.truncated in summary.json)\n",
                         stopped.c_str());
            if (o.strict) return exit_cannot_train;
        }
        // Requests dropped on arrival, the queue full: the run served less than was asked of it.
        if (const auto in = j.find("inference"); in != j.end() && in->is_object() && in->contains("routings")) {
            std::string dropped;
            for (const auto& [name, r] : (*in)["routings"].items())
                if (const auto n = r.value("dropped", std::int64_t{0}); n > 0)
                    dropped += (dropped.empty() ? "" : ", ") + std::to_string(n) + " of " +
                               std::to_string(r.value("arrived", std::int64_t{0})) + " (" + name + ")";
            if (!dropped.empty()) {
                std::fprintf(stderr,
                             "skyfabric: warning: requests dropped on arrival, %lld already held "
                             "(workload.inference.max_queued_requests): %s; the arrivals outpace the engines "
                             "(inference.routings.*.dropped in summary.json)\n",
                             static_cast<long long>(in->value("max_queued_requests", std::int64_t{0})), dropped.c_str());
                if (o.strict) return exit_cannot_train;
            }
        }
        return exit_ok;
    }
    std::fprintf(stderr, "skyfabric: run stopped: %s (outputs so far are in %s, marked incomplete)\n",
                 j.value("stop_reason", std::string()).c_str(), dir.c_str());
    return common::stop_requested().load() ? exit_interrupted : exit_run_failure;
}

#if SKYFABRIC_WITH_MPI
// Under mpirun (cli/run_ranks.hpp): every rank runs, rank 0 alone writes. An error on any rank, or a
// stop (Ctrl-C: mpirun signals every rank), ends every rank through MPI_Abort once rank 0 has
// published what it has, so that no rank waits for a part that will not come.
int run_on_ranks(const RunOptions& o, const scenario::Scenario& sc, const fs::path& dir) {
    const auto mpi = sweep::start_mpi();
    const simulation::RunRanks ranks = run_ranks(*mpi);
    int status = exit_ok;
    try {
        if (mpi->rank() == 0) {
            status = run_and_publish(o, sc, dir, &ranks);
        } else {
            const auto summary = simulation::run(sc, {}, &common::stop_requested(), &ranks, output::run_recording(sc, o.trace));
            status = summary.complete || !common::stop_requested().load() ? exit_ok : exit_interrupted;
        }
    } catch (const std::exception& e) {
        const bool bad_input = dynamic_cast<const scenario::ScenarioError*>(&e) != nullptr;
        std::fprintf(stderr, "skyfabric: %s on rank %d of %d: %s\n", bad_input ? "error" : "run failed", mpi->rank(), mpi->size(),
                     e.what());
        mpi->abort(common::stop_requested().load() ? exit_interrupted : bad_input ? exit_bad_input : exit_run_failure);
    }
    if (common::stop_requested().load()) mpi->abort(exit_interrupted);
    return status;  // the messenger finalizes MPI
}
#endif

int command_run(const RunOptions& o) {
    // From the start: a Ctrl-C at any instant is an interrupted run (130).
    common::install_stop_handlers(common::InterruptedCalls::restart);
    stop_with_parent();
    auto overrides = parse_overrides(o.overrides);
    if (!o.topology.empty()) overrides.push_back({"topology", o.topology});
    auto sc = scenario::load_scenario_file(o.scenario_file, overrides, {.refuse_large_runs = !o.yes});
    sc.threads = o.threads;
    const fs::path dir = o.output_dir.empty() ? fs::path("out") / sc.name : fs::path(o.output_dir);
    if (common::stop_requested().load()) {
        std::fprintf(stderr, "skyfabric: interrupted before the run started; nothing was written\n");
        return exit_interrupted;
    }
#if SKYFABRIC_WITH_MPI
    if (run_shared_among_ranks()) return run_on_ranks(o, sc, dir);
#endif
    return run_and_publish(o, sc, dir);
}

int command_validate(const std::string& file, const std::vector<std::string>& overrides, bool yes, bool settings) {
    const auto sc = scenario::load_scenario_file(file, parse_overrides(overrides), {.refuse_large_runs = !yes});
    // The sweep block is read only by `sweep`; validate checks it too.
    (void)sweep::read_sweep_block(scenario::read_scenario_file(file), file);
    if (settings) {  // what an output's settings_sha256 hashes: diffing two shows why two hashes differ
        std::cout << scenario::settings_json(sc).dump(2) << "\n";
        return exit_ok;
    }
    const auto satellites = scenario::node_count(sc);
    std::cout << file << ": ok — '" << sc.name << "', ";
    if (sc.fabric) {
        std::cout << satellites << " ranks on a synthetic " << workloads::to_string(sc.fabric->kind) << " fabric, " << sc.duration_s
                  << " s";
    } else {
        std::cout << satellites << " satellites, " << scenario::to_string(sc.dynamics.model) << " dynamics, " << sc.duration_s
                  << " s in steps of " << sc.output_step_s << " s";
    }
    std::cout << "\n  a run takes " << scenario::describe(scenario::estimate_run(sc, satellites))
              << " (estimates)\n";
    return exit_ok;
}

int command_info() {
    std::cout << "skyfabric " << output::build_description() << "\n"
              << "  CUDA backend: " << (SKYFABRIC_WITH_CUDA ? "built" : "not built");
    if (SKYFABRIC_WITH_CUDA) {
        const int devices = workloads::cuda_device_count();
        std::cout << (devices > 0 ? ", " + std::to_string(devices) + " device(s) present"
                                  : ", not usable here: " + workloads::cuda_unavailable_reason());
    }
    std::cout << "\n  MPI:          " << (SKYFABRIC_WITH_MPI ? "built (sweep and run under mpirun)" : "not built") << "\n";
    return exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
    output::record_command_line(argc, argv);  // every output's provenance
    // A file-size limit (ulimit -f) or a closed pipe is a write failure like a full disk: the write
    // returns EFBIG or EPIPE, the command fails with the reason (exit 1) and removes its staging,
    // instead of dying by the signal with a staging folder left behind.
    std::signal(SIGXFSZ, SIG_IGN);
    std::signal(SIGPIPE, SIG_IGN);
    CLI::App app{"skyfabric — simulate orbital compute constellations: formation flight, optical links, "
                 "training collectives and radiation faults, coupled in one run."};
    app.set_version_flag("--version", "skyfabric " + output::build_description());
    app.require_subcommand(1);

    RunOptions run;
    auto* run_cmd = app.add_subcommand("run", "Run a scenario: writes DIR/result.h5 and DIR/summary.json and prints a summary");
    run_cmd->add_option("scenario", run.scenario_file, "Scenario YAML file (see docs/scenario-reference.md)")->required();
    run_cmd->add_option("-o,--output", run.output_dir, "Output folder (default: out/<scenario name>)");
    add_set_option(*run_cmd, run.overrides);
    run_cmd->add_option("--topology", run.topology,
                        "Run the workload on a synthetic fabric instead of the orbit: ring:p=64,bw_gbps=400,latency_ns=500, "
                        "switch:p=16,..., torus2d:x=8,y=8,..., fully_connected:p=8,..., file:edges.csv")
        ->type_name("SPEC");
    run_cmd->add_option("--trace", run.trace,
                        "Write a Chrome trace-event / Perfetto timeline of the training job (and faults) to FILE (- : standard "
                        "output, the summary table then goes to standard error; DIR/trace.json: kept with the run)")
        ->type_name("FILE");
    run_cmd->add_flag("-q,--quiet", run.quiet, "No progress bar and no summary table");
    run_cmd->add_flag("--progress", run.progress,
                      "Report progress on standard error as lines, also when it is no terminal (a log, a batch job): every "
                      "tenth of the samples, then each phase after them (training replays, fault trials, serving)");
    run_cmd->add_flag("--force", run.force, "Overwrite a folder that already holds a complete run");
    run_cmd->add_flag("--strict", run.strict,
                      "Exit 3 when the run completes but its training job could not train (a collective or, in a constellation, an "
                      "outer sync found no path), or its serving dropped requests (the queue full)");
    add_threads_option(*run_cmd, run.threads);
    add_yes_flag(*run_cmd, run.yes);

    std::string validate_file;
    std::vector<std::string> validate_overrides;
    bool validate_yes = false;
    bool validate_settings = false;
    auto* validate_cmd = app.add_subcommand(
        "validate", "Check a scenario file without running it; prints its size and the estimated memory, CPU time and output");
    validate_cmd->add_option("scenario", validate_file, "Scenario YAML file")->required();
    add_set_option(*validate_cmd, validate_overrides);
    add_yes_flag(*validate_cmd, validate_yes);
    validate_cmd->add_flag("--settings", validate_settings,
                           "Print the resolved settings as JSON (every key, defaults included: what an output's "
                           "settings_sha256 is the SHA-256 of) instead of the summary");

    auto* info_cmd = app.add_subcommand("info", "Print the version and the features this build has (CUDA, MPI)");

    CLI::App* link_budget_cmd = nullptr;
    const auto link_budget = add_link_budget_command(app, link_budget_cmd);
    CLI::App* collective_cmd = nullptr;
    const auto collective = add_collective_command(app, collective_cmd);
    CLI::App* sweep_cmd = nullptr;
    const auto sweep = add_sweep_command(app, sweep_cmd);
    CLI::App* season_cmd = nullptr;
    const auto season = add_season_command(app, season_cmd);
    CLI::App* serve_capacity_cmd = nullptr;
    const auto serve_capacity = add_serve_capacity_command(app, serve_capacity_cmd);
    CLI::App* oem_cmd = nullptr;
    const auto oem = add_oem_command(app, oem_cmd);
    CLI::App* analyze_cmd = nullptr;
    const auto analyze = add_analyze_command(app, analyze_cmd);

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return exit_bad_input;
    }

    try {
        if (run_cmd->parsed()) return command_run(run);
        if (validate_cmd->parsed()) return command_validate(validate_file, validate_overrides, validate_yes, validate_settings);
        if (info_cmd->parsed()) return command_info();
        if (link_budget_cmd->parsed()) return link_budget();
        if (collective_cmd->parsed()) return collective();
        if (sweep_cmd->parsed()) return sweep();
        if (season_cmd->parsed()) return season();
        if (serve_capacity_cmd->parsed()) return serve_capacity();
        if (oem_cmd->parsed()) return oem();
        if (analyze_cmd->parsed()) return analyze();
    } catch (const scenario::ScenarioError& e) {
        std::fprintf(stderr, "skyfabric: error: %s\n", e.what());
        return exit_bad_input;
    } catch (const std::exception& e) {
        // A stop asked for before the run had its first sample ends it on the way (the staging
        // is removed): the run was interrupted, not broken.
        if (common::stop_requested().load()) {
            // What the stop broke on the way (a topology source that ended early) is no news to the user.
            std::fprintf(stderr, "skyfabric: interrupted before the run had its first sample; nothing was written\n");
            return exit_interrupted;
        }
        // Named after the command that failed (`collective` resolves the backend too, for one).
        const auto parsed = app.get_subcommands();
        const std::string command = parsed.empty() ? std::string("run") : parsed.front()->get_name();
        std::fprintf(stderr, "skyfabric: %s failed: %s\n", command.c_str(), e.what());
        return exit_run_failure;
    }
    return exit_bad_input;
}

}  // namespace skyfabric::cli
