// `skyfabric sweep`: many runs of one scenario with keys varied (see docs/sweeps.md).
#include "cli/sweep_command.hpp"

#include "cli/command_support.hpp"
#include "sweep/sweep_runner.hpp"

#include <memory>

namespace skyfabric::cli {

std::function<int()> add_sweep_command(CLI::App& app, CLI::App*& command) {
    auto o = std::make_shared<sweep::SweepOptions>();
    command = app.add_subcommand(
        "sweep",
        "Run a scenario over varied keys (cartesian product or zipped lists), each point in its own folder; "
        "writes DIR/sweep.csv, DIR/sweep.h5 and plots. Under mpirun (MPI build) points are spread over ranks.");
    command->add_option("scenario", o->scenario_file, "Base scenario YAML file (may hold a sweep: block)")->required();
    command
        ->add_option("--vary", o->vary,
                     "Vary a key over values, e.g. --vary formation.radius_m=500,1000 (repeatable); the pseudo-key "
                     "'satellites' sets the cluster size, scaling formation.radius_m so N ∝ R²")
        ->type_name("KEY.PATH=V1,V2,...")
        ->allow_extra_args(false);
    command->add_flag("--zip", o->zip, "Pair the lists element by element (equal lengths) instead of all combinations");
    command->add_option("-j,--jobs", o->jobs, "Points run at once (default: the number of cores; 1 per rank under mpirun)");
    command->add_option("-o,--output", o->output_dir, "Sweep folder (default: out/<scenario name>-sweep)");
    add_set_option(*command, o->overrides, "Override a key of the base scenario");
    command->add_flag("--resume", o->resume, "Run only the points without a complete result in DIR/points");
    command->add_flag("--force", o->force, "Run again into a folder that holds a complete sweep");
    command->add_flag("-q,--quiet", o->quiet, "No progress and no summary (failed points are still reported)");
    add_threads_option(*command, o->threads)->description(
        "At most N CPU threads for each point's propagation, physics thread and Monte Carlo trials (0: every core)");
    add_yes_flag(*command, o->yes);
    auto no_plot_flag = std::make_shared<bool>(false);
    command->add_flag("--no-plot", *no_plot_flag, "Do not draw DIR/plots with viz/plot_sweep.py");
    return [o, no_plot_flag] {
        o->plot = !*no_plot_flag;
        return sweep::run_sweep(*o);
    };
}

}  // namespace skyfabric::cli
