// output, and the up-front refusals of runs too large for a workstation.
#include "scenario/scenario.hpp"

#include "scenario/section_readers.hpp"
#include "scenario/yaml_reader.hpp"

#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/frames.hpp>
#include <skyfabric/physics/orbit.hpp>
#include <skyfabric/physics/random.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <regex>
#include <sstream>

namespace skyfabric::scenario::detail {

OutputConfig read_output(Section s) {
    OutputConfig o;
    o.hdf5 = s.boolean("hdf5", o.hdf5);
    o.eci = s.boolean("eci", o.eci);
    o.vtk = s.boolean("vtk", o.vtk);
    o.vtk_every = static_cast<int>(s.integer("vtk_every", 1, 1000000, o.vtk_every));
    o.vtk_frame = s.choice("vtk_frame", vtk_frame_names, o.vtk_frame);
    o.compression_level = static_cast<int>(s.integer("compression_level", 0, 9, o.compression_level));
    o.trace = s.boolean("trace", o.trace);
    o.trace_max_events = s.integer("trace_max_events", 1, 100000000, o.trace_max_events);
    if (s.has("trace_window_s")) {
        const auto window = s.numbers("trace_window_s", 2, "s");
        if (window[0] < 0 || window[1] <= window[0]) s.fail("trace_window_s", "expected [start, end] with 0 <= start < end");
        o.trace_window_start_s = window[0];
        o.trace_window_end_s = window[1];
    } else {
        s.allow("trace_window_s");
    }
    s.finish();
    return o;
}

// Refused above max_output_bytes (uncompressed: estimate_run's output_bytes), naming what to change.
void check_output_volume(Section& top, const Scenario& sc, std::size_t satellites) {
    const RunEstimate e = estimate_run(sc, satellites);
    if (e.output_bytes <= max_output_bytes) return;
    const std::string what = format_count(e.samples) + " output steps x " + std::to_string(satellites) + " satellites";
    top.fail("output_step_s",
             "the outputs would take about " + format_count(e.output_bytes / 1e9) + " GB (" + what + "); at most " +
                 format_count(max_output_bytes / 1e9) +
                 " GB are allowed: raise output_step_s, shorten the run, set output.eci: false, output.vtk: false "
                 "(or a larger output.vtk_every), or output.hdf5: false");
}

// A run estimated over the unconfirmed limits is refused (LoadOptions::refuse_large_runs), naming the
// key that makes it large: a constellation's clusters past 16, the formation when it has more
// satellites than the run has samples, else the run's length.
void check_run_size(Section& top, const Scenario& sc, std::size_t satellites) {
    const RunEstimate e = estimate_run(sc, satellites);
    if (e.memory_bytes <= unconfirmed_run_max_memory_bytes && e.cpu_s <= unconfirmed_run_max_cpu_s) return;
    const std::string estimate = "this run is large: " + std::to_string(satellites) + (sc.fabric ? " ranks" : " satellites") +
                                 " x " + format_count(e.samples) + " output samples take " + describe(e) +
                                 " (estimates). Runs over " + format_count(unconfirmed_run_max_memory_bytes / 1e9) +
                                 " GB of memory or " + format_count(unconfirmed_run_max_cpu_s / 3600.0) +
                                 " CPU-hour start only with --yes";
    if (sc.inference.enabled) {  // the requests make a serving run large: their arrivals are named
        Section arrivals = top.section("workload").section("inference").section("arrivals");
        arrivals.fail(sc.inference.serving.trace.empty() ? "rate_per_s" : "trace",
                      estimate + " (or lower the arrival rate to what the engines serve, " +
                          format_count(workloads::sustainable_request_rate_per_s(sc.inference.serving, sc.inference.accelerator)) +
                          " requests/s, lower workload.inference.max_queued_requests, now " +
                          std::to_string(sc.inference.serving.max_queued_requests) +
                          ", the requests held beyond what the engines serve, add engines, or shorten the run)");
    }
    if (sc.fabric) top.fail("topology", estimate + " (or use fewer ranks, or shorten the run)");
    // Many clusters: the constellation's training grows as clusters^2.5 (estimate_run).
    if (sc.constellation.enabled && sc.constellation.clusters.size() > 16 && top.has("constellation"))
        top.section("constellation").fail("clusters", estimate + " (or fewer clusters, or shorten the run)");
    if (static_cast<double>(satellites) > e.samples) {
        Section formation = top.section("formation");
        const bool lattice = sc.formation.layout != FormationLayout::explicit_states;
        formation.fail(lattice ? "radius_m" : "satellites",
                       estimate + (lattice ? " (or lower radius_m)" : " (or list fewer satellites)"));
    }
    top.fail(top.has("duration_s") ? "duration_s" : "duration_orbits",
             estimate + " (or shorten the run, or raise output_step_s)");
}

}  // namespace skyfabric::scenario::detail
