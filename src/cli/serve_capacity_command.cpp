// `skyfabric serve-capacity`: the largest arrival rate at which a serving scenario's SLO attainment
// stays at or above a target, per routing (docs/inference.md "Capacity at SLO"). Each rate is a whole
// run of the scenario, in-process, as `run` does it (simulation::run, no recorders); the search is
// workloads::find_capacity.
#include "cli/serve_capacity_command.hpp"

#include "cli/command_support.hpp"

#include "common/stop_signal.hpp"
#include "output/file_output.hpp"
#include "scenario/scenario.hpp"
#include "scenario/yaml_reader.hpp"
#include "simulation/simulation.hpp"

#include <skyfabric/workloads/serving.hpp>
#include <skyfabric/workloads/serving_capacity.hpp>

#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace skyfabric::cli {
namespace {

struct Options {
    std::string scenario_file;
    std::vector<std::string> overrides;
    double target = 0.9;
    double resolution = 0.02;
    std::string output;
    int threads = 0;
};

struct Interrupted {};

// One run's SLO attainment per routing (in the run's order).
struct RateRun {
    std::vector<workloads::ServingRouting> routing;
    std::vector<workloads::ServingSummary> summary;
};

std::string rate_text(double rate) {
    char text[40];
    std::snprintf(text, sizeof text, "%.17g", rate);
    return text;
}

// Capacity at SLO: the lower end of the attainment's 95 % interval must reach the target, so that one
// realisation's luck does not pass a rate (docs/inference.md "Capacity at SLO").
bool meets(const workloads::ServingSummary& s, double target) {
    const double low = s.slo_attainment_ci95.low;
    return std::isfinite(low) && low >= target;
}

int run(const Options& o) {
    common::install_stop_handlers(common::InterruptedCalls::restart);
    const auto overrides = parse_overrides(o.overrides);
    const auto base = scenario::load_scenario_file(o.scenario_file, overrides);
    if (!base.inference.enabled)
        throw scenario::ScenarioError(o.scenario_file + ": serve-capacity needs a serving scenario (workload.kind: inference)");
    if (!base.inference.trace_file.empty())
        throw scenario::ScenarioError(o.scenario_file +
                                      ": serve-capacity varies workload.inference.arrivals.rate_per_s; this scenario replays a "
                                      "trace (arrivals.trace)");
    if (base.ground.enabled)
        throw scenario::ScenarioError(o.scenario_file +
                                      ": serve-capacity measures the serving in orbit; leave out ground_stations (the ground's "
                                      "waits for a pass would set the capacity, not the engines)");
    if (!o.output.empty()) output::refuse_non_regular_target(o.output);

    std::map<double, RateRun> runs;  // every rate run once, shared by the routings' searches
    const auto at = [&](double rate) -> const RateRun& {
        if (const auto it = runs.find(rate); it != runs.end()) return it->second;
        auto with_rate = overrides;
        with_rate.push_back({"workload.inference.arrivals.rate_per_s", rate_text(rate)});
        auto sc = scenario::load_scenario_file(o.scenario_file, with_rate);
        sc.threads = o.threads;
        const auto summary = simulation::run(sc, {}, &common::stop_requested());
        if (common::stop_requested().load()) throw Interrupted{};
        if (!summary.complete) throw std::runtime_error("the run at " + rate_text(rate) + " requests/s failed: " + summary.stop_reason);
        RateRun r;
        r.routing = summary.inference_routing;
        for (const auto& result : summary.inference) r.summary.push_back(result.summary);
        std::printf("  %12.5g requests/s:", rate);
        for (std::size_t k = 0; k < r.summary.size(); ++k)
            std::printf("  %s %.4f [%.4f, %.4f]", workloads::to_string(r.routing[k]), r.summary[k].slo_attainment,
                        r.summary[k].slo_attainment_ci95.low, r.summary[k].slo_attainment_ci95.high);
        std::printf("\n");
        std::fflush(stdout);
        return runs.emplace(rate, std::move(r)).first->second;
    };

    // Start where the engines' roofline throughput is halved: below saturation, near the capacity.
    workloads::CapacitySearch search;
    search.start_rate_per_s = 0.5 * workloads::sustainable_request_rate_per_s(base.inference.serving, base.inference.accelerator);
    search.resolution = o.resolution;
    std::printf("skyfabric serve-capacity — %s: the largest arrival rate with SLO attainment >= %.4g (the lower end of its 95 %% "
                "interval; TTFT <= %g s, TPOT <= %g s), bisected to %g %%, one run of %g s per rate\n",
                base.name.c_str(), o.target, base.inference.serving.ttft_slo_s, base.inference.serving.tpot_slo_s,
                100.0 * o.resolution, base.duration_s);
    std::vector<workloads::ServingRouting> routings;
    std::vector<workloads::CapacityResult> found;
    try {
        routings = at(search.start_rate_per_s).routing;
        for (std::size_t k = 0; k < routings.size(); ++k)
            found.push_back(workloads::find_capacity([&](double rate) { return meets(at(rate).summary.at(k), o.target); }, search));
    } catch (const Interrupted&) {
        std::fprintf(stderr, "skyfabric: serve-capacity interrupted; nothing was written\n");
        return exit_interrupted;
    }
    std::printf("\n  %-8s %14s %14s %22s %8s\n", "routing", "capacity/s", "misses at/s", "attainment at capacity", "runs");
    for (std::size_t k = 0; k < routings.size(); ++k) {
        const auto& f = found[k];
        std::printf("  %-8s %14.5g %14.5g", workloads::to_string(routings[k]), f.capacity_per_s, f.failing_rate_per_s);
        if (f.capacity_per_s > 0.0) {
            const auto& s = runs.at(f.capacity_per_s).summary[k];
            std::printf(" %8.4f [%.4f, %.4f]", s.slo_attainment, s.slo_attainment_ci95.low, s.slo_attainment_ci95.high);
        } else {
            std::printf(" %22s", "none met");
        }
        std::printf(" %8d\n", f.evaluations);
    }
    if (routings.size() == 2 && found[0].capacity_per_s > 0.0) {
        const std::size_t p = routings[0] == workloads::ServingRouting::prfaas ? 0 : 1;
        std::printf("\n  capacity of prfaas over local: %+.1f %% (each within %g %% below its capacity)\n",
                    100.0 * (found[p].capacity_per_s / found[1 - p].capacity_per_s - 1.0), 100.0 * o.resolution);
    }
    std::printf("  %zu runs in all\n", runs.size());
    if (!o.output.empty()) {
        std::ostringstream csv;
        csv.precision(10);
        csv << "rate_per_s,routing,slo_attainment,slo_attainment_ci95_low,slo_attainment_ci95_high,meets_target\n";
        for (const auto& [rate, r] : runs)
            for (std::size_t k = 0; k < r.summary.size(); ++k)
                csv << rate << ',' << workloads::to_string(r.routing[k]) << ',' << r.summary[k].slo_attainment << ','
                    << r.summary[k].slo_attainment_ci95.low << ',' << r.summary[k].slo_attainment_ci95.high << ','
                    << (meets(r.summary[k], o.target) ? 1 : 0) << '\n';
        output::write_file_atomically(o.output, csv.str());
        std::printf("  every run: %s\n", o.output.c_str());
    }
    return exit_ok;
}

}  // namespace

std::function<int()> add_serve_capacity_command(CLI::App& app, CLI::App*& command) {
    auto o = std::make_shared<Options>();
    command = app.add_subcommand(
        "serve-capacity",
        "Capacity at SLO of a serving scenario: the largest arrival rate (workload.inference.arrivals.rate_per_s) at which "
        "the SLO attainment stays at or above --target, for each routing it runs (compare_routing: both). The lower end of "
        "the attainment's 95 % interval must reach the target. Each rate tried is a whole run of the scenario; the rate is "
        "bracketed by halving or doubling from half the engines' roofline throughput, then bisected until the rate that "
        "misses is within --resolution of the one that meets. Prints a table; writes nothing unless -o");
    command->add_option("scenario", o->scenario_file, "Serving scenario YAML file (workload.kind: inference, Poisson arrivals)")
        ->required();
    add_set_option(*command, o->overrides);
    command->add_option("--target", o->target, "SLO attainment to hold, in (0, 1] (default 0.9)")->check(CLI::Range(1e-9, 1.0));
    command->add_option("--resolution", o->resolution, "Relative resolution of the rate (default 0.02: 2 %)")
        ->check(CLI::Range(1e-4, 1.0));
    command->add_option("-o,--output", o->output, "Write every run's rate and attainment per routing to FILE (CSV)")->type_name("FILE");
    add_threads_option(*command, o->threads);
    return [o] { return run(*o); };
}

}  // namespace skyfabric::cli
