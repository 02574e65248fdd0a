#include "sweep/sweep_runner.hpp"

#include "common/stop_signal.hpp"
#include "output/output_folder.hpp"
#include "output/summary.hpp"
#include "scenario/yaml_reader.hpp"
#include "sweep/messenger.hpp"
#include "sweep/process_pool.hpp"
#include "sweep/sweep_gather.hpp"
#include "sweep/sweep_mpi.hpp"
#include "sweep/sweep_plot.hpp"
#include "sweep/sweep_resume.hpp"
#include "sweep/sweep_setup.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <optional>
#include <thread>

namespace skyfabric::sweep {

namespace {

nlohmann::json manifest(const Plan& plan, const SweepOptions& o, bool complete, std::size_t ranks, int jobs) {
    nlohmann::json axes = nlohmann::json::array();
    for (const auto& a : plan.spec.axes) axes.push_back({{"key", a.key}, {"values", a.values}});
    nlohmann::json points = nlohmann::json::array();
    for (const auto& p : plan.points) points.push_back(p.name);
    return {{"scenario", plan.scenario_file}, {"set", plan.base_overrides}, {"axes", axes},
            {"zip", plan.spec.zip},          {"points", points},          {"complete", complete},
            {"ranks", ranks},                {"jobs_per_rank", jobs}};
}

int finish_root(const Plan& plan, const SweepOptions& o, Gatherer& gather, std::size_t ranks, int jobs) {
    // Complete: every point has a final result (ok or failed); an interrupted point is not one.
    bool all_ran = gather.rows().size() == plan.points.size() && !stopping();
    for (const auto& r : gather.rows()) all_ran = all_ran && r.status != "incomplete";
    gather.reporter().end();
    if (all_ran) remove_points_not_in(plan);
    gather.write(all_ran);
    output::write_json_file(plan.dir / "sweep.json", manifest(plan, o, all_ran, ranks, jobs));
    std::size_t ok = 0, failed = 0, incomplete = 0;
    for (const auto& r : gather.rows()) {
        if (r.status == "ok") ++ok;
        else if (r.status == "failed") ++failed;
        else ++incomplete;
    }
    if (o.plot && !stopping() && !gather.rows().empty()) draw_plot(plan, gather.rows(), o.quiet);
    if (!o.quiet) {
        std::printf("sweep: %zu points: %zu ok, %zu failed, %zu incomplete, %zu not run\n", plan.points.size(), ok,
                    failed, incomplete, plan.points.size() - gather.rows().size());
        std::printf("  table   %s  %s\n", (plan.dir / "sweep.csv").c_str(), (plan.dir / "sweep.h5").c_str());
        std::printf("  points  %s/\n", (plan.dir / "points").c_str());
    }
    if (stopping()) {
        std::fprintf(stderr, "sweep: interrupted; the table holds the %zu points finished (re-run with --resume)\n",
                     gather.rows().size());
        return 130;
    }
    return (failed || incomplete) ? 1 : 0;
}

int default_jobs() {
    const unsigned n = std::thread::hardware_concurrency();
    return n ? static_cast<int>(n) : 1;
}

}  // namespace

int run_sweep(const SweepOptions& o) {
    if (o.jobs < 0) throw scenario::ScenarioError("--jobs must be at least 1");
    const Plan plan = make_plan(o);  // bad input throws here, on every rank alike, before MPI starts
    refuse_to_overwrite(plan, o);
    common::install_stop_handlers(common::InterruptedCalls::fail);

#if SKYFABRIC_WITH_MPI
    if (launched_under_mpi()) {
        const auto mpi = start_mpi();
        const int jobs = o.jobs > 0 ? o.jobs : 1;
        int result = 0;
        if (mpi->rank() == 0) {
            std::vector<Row> preset, earlier;
            std::vector<std::size_t> todo;
            std::string setup_error;
            std::optional<output::FolderLock> lock;
            try {
                lock.emplace(plan.dir);
                todo = prepare_directory(plan, o, preset, earlier);
                output::write_json_file(plan.dir / "sweep.json", manifest(plan, o, false, mpi->size(), jobs));
            } catch (const std::exception& e) {
                setup_error = e.what();
            }
            if (!setup_error.empty()) {
                std::fprintf(stderr, "skyfabric: sweep failed: %s\n", setup_error.c_str());
                mpi->abort(1);
            }
            mpi->barrier();
            Gatherer gather(plan, o.quiet, std::move(preset), std::move(earlier));
            gather.write(false);
            run_mpi_root(plan, todo, gather, jobs, *mpi);
            result = finish_root(plan, o, gather, static_cast<std::size_t>(mpi->size()), jobs);
        } else {
            mpi->barrier();
            run_mpi_worker(plan, jobs, *mpi);
            result = stopping() ? 130 : 0;
        }
        return result;  // the messenger finalizes MPI as it goes
    }
#endif

    const int jobs = o.jobs > 0 ? o.jobs : default_jobs();
    const output::FolderLock lock(plan.dir);  // another sweep (or run) in this folder is refused (exit 2)
    refuse_to_overwrite(plan, o);             // again, now that the folder is ours
    std::vector<Row> preset, earlier;
    const auto todo = prepare_directory(plan, o, preset, earlier);
    output::write_json_file(plan.dir / "sweep.json", manifest(plan, o, false, 1, jobs));
    Gatherer gather(plan, o.quiet, std::move(preset), std::move(earlier));
    gather.write(false);
    Pool pool(plan, jobs);
    TodoList points(todo);
    run_points(pool, points, gather.loop_for(pool));
    return finish_root(plan, o, gather, 1, jobs);
}

}  // namespace skyfabric::sweep
