// Trace files: valid JSON (also when closed early or cut short by the bound), one track per
// rank, slices nested and ordered per track, durations equal to the step timings given.
#include "output/trace_writer.hpp"
#include "scenario/yaml_reader.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

namespace so = skyfabric::output;
namespace sw = skyfabric::workloads;
using nlohmann::json;

namespace {

std::filesystem::path temp_file(const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() / "skyfabric_trace_test";
    std::filesystem::create_directories(dir);
    return dir / name;
}

json read_json(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return json::parse(ss.str());  // throws on invalid JSON
}

// A data-parallel run: step k starts at 10 + 2.5k, computes 2 s, and from step 3 on
// communication runs 0.25 s past compute; two buckets per step, the second ends the step.
sw::TrainingResult synthetic_run(int steps) {
    sw::TrainingResult r;
    for (int k = 0; k < steps; ++k) {
        sw::StepRecord s;
        s.step = k;
        s.start_s = 10.0 + 2.5 * k;
        s.compute_s = 2.0;
        s.exposed_communication_s = k >= 3 ? 0.25 : 0.0;
        s.end_s = s.start_s + s.compute_s + s.exposed_communication_s;
        s.communication_s = 1.2;
        s.status = k == 5 ? sw::StepStatus::stalled : sw::StepStatus::ok;
        r.steps.push_back(s);
        for (int b = 0; b < 2; ++b) {
            sw::CollectiveRecord c;
            c.step = k;
            c.bytes = 1e9;
            c.start_s = s.start_s + 1.0 + 0.6 * b;
            c.end_s = b == 1 ? s.end_s : c.start_s + 0.5;
            c.alg_bw_Bps = c.bytes / (c.end_s - c.start_s);
            c.bus_bw_Bps = c.alg_bw_Bps * 1.9;
            c.stalled_s = k == 5 && b == 1 ? 0.1 : 0.0;
            r.collectives.push_back(c);
        }
    }
    for (int l = 0; l < 12; ++l) {
        sw::LinkUtilisation u;
        u.source = l;
        u.target = l + 1;
        u.utilisation = 0.05 * l;
        r.links.push_back(u);
    }
    return r;
}

struct Slice {
    double ts, dur;
    std::string name;
};

// Timeline events grouped by (pid, tid), in file order.
std::map<std::pair<int, int>, std::vector<Slice>> slices_by_track(const json& trace) {
    std::map<std::pair<int, int>, std::vector<Slice>> out;
    for (const auto& e : trace["traceEvents"])
        if (e["ph"] == "X")
            out[{e["pid"].get<int>(), e["tid"].get<int>()}].push_back(
                {e["ts"].get<double>(), e["dur"].get<double>(), e["name"].get<std::string>()});
    return out;
}

std::int64_t timeline_events(const json& trace) {
    std::int64_t n = 0;
    for (const auto& e : trace["traceEvents"])
        if (e["ph"] != "M") ++n;
    return n;
}

}  // namespace

TEST(TraceWriter, WritesTheChromeObjectFormatWithMicroseconds) {
    const auto path = temp_file("basic.json");
    {
        so::TraceWriter w(path);
        w.process_name(1, "sats \"quoted\"");
        w.thread_name(1, 7, "sat 7");
        EXPECT_TRUE(w.complete(1, 7, "compute", "compute", 1.5, 0.25, {{"flops", 1e15}}));
        EXPECT_TRUE(w.instant(1, 7, "SEFI", "fault", 1.6));
        EXPECT_TRUE(w.counter(1, "link 0-1", 1.5, {{"utilisation", 0.5}}));
        EXPECT_FALSE(w.complete(1, 7, "never", "x", 2.0, std::numeric_limits<double>::infinity()));
        w.metadata("scenario", "smoke");
    }  // destructor closes
    const json t = read_json(path);
    EXPECT_EQ(t["displayTimeUnit"], "ms");
    EXPECT_EQ(t["metadata"]["scenario"], "smoke");
    EXPECT_EQ(t["metadata"]["complete"], true);
    EXPECT_EQ(t["metadata"]["truncated"], false);
    const auto& ev = t["traceEvents"];
    ASSERT_EQ(ev.size(), 5u);
    EXPECT_EQ(ev[0]["args"]["name"], "sats \"quoted\"");
    EXPECT_EQ(ev[2]["ph"], "X");
    EXPECT_DOUBLE_EQ(ev[2]["ts"].get<double>(), 1.5e6);
    EXPECT_DOUBLE_EQ(ev[2]["dur"].get<double>(), 0.25e6);
    EXPECT_EQ(ev[3]["ph"], "i");
    EXPECT_EQ(ev[3]["s"], "t");
    EXPECT_EQ(ev[4]["ph"], "C");
    EXPECT_DOUBLE_EQ(ev[4]["args"]["utilisation"].get<double>(), 0.5);
}

TEST(TraceWriter, FileIsValidJsonWhileOpenAndAfterAnEarlyStop) {
    const auto path = temp_file("streamed.json");
    so::TraceOptions o;
    o.flush_bytes = 256;  // many blocks
    auto w = std::make_unique<so::TraceWriter>(path, o);
    w->thread_name(1, 0, "rank 0");
    for (int i = 0; i < 200; ++i) w->complete(1, 0, "compute", "compute", i, 0.5);
    // Not closed: what is on disk now (under the temporary until the close) must already parse.
    const auto temporary = w->temporary_path();
    ASSERT_EQ(temporary.parent_path(), path.parent_path());
    const json partial = read_json(temporary);
    EXPECT_EQ(partial["metadata"]["complete"], false);
    EXPECT_GT(partial["traceEvents"].size(), 100u);
    w.reset();
    const json done = read_json(path);
    EXPECT_EQ(done["metadata"]["complete"], true);
    EXPECT_EQ(done["traceEvents"].size(), 201u);
    EXPECT_FALSE(std::filesystem::exists(temporary));
}

TEST(TraceWriter, RefusesASymlinkPlantedAtItsPathAndNeverTouchesAFileAtItsOldTemporaryName) {
    // Issue 15: a symlink planted as trace.json made skyfabric overwrite the file it pointed to;
    // issue 29: replacing the link (or a device, a FIFO) is as bad. The link is refused and stays.
    const auto victim = temp_file("victim.txt");
    const auto path = temp_file("planted.json");
    { std::ofstream(victim) << "precious"; }
    std::filesystem::remove(path);
    std::filesystem::create_symlink(victim, path);
    EXPECT_THROW(so::TraceWriter(path, so::TraceOptions{}), skyfabric::scenario::ScenarioError);
    EXPECT_TRUE(std::filesystem::is_symlink(path));
    std::filesystem::remove(path);
    // A link at PATH.tmp (the name earlier versions wrote through) is neither followed nor removed.
    const std::string old_temporary = path.string() + ".tmp";
    std::filesystem::remove(old_temporary);
    std::filesystem::create_symlink(victim, old_temporary);
    {
        so::TraceWriter w(path, so::TraceOptions{});
        w.complete(1, 0, "compute", "compute", 0, 1);
    }
    std::ifstream in(victim);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, "precious");
    EXPECT_TRUE(std::filesystem::is_symlink(old_temporary));
    EXPECT_EQ(read_json(path)["metadata"]["complete"], true);
}

TEST(TraceWriter, MaxEventsBoundHoldsAndIsRecorded) {
    const auto path = temp_file("bounded.json");
    so::TraceOptions o;
    o.max_events = 50;
    {
        so::TraceWriter w(path, o);
        for (int r = 0; r < 4; ++r) w.thread_name(1, r, "rank " + std::to_string(r));
        for (int i = 0; i < 100; ++i) w.complete(1, i % 4, "s", "c", i * 0.1, 0.05);
        EXPECT_TRUE(w.truncated());
        EXPECT_EQ(w.events_written(), 50);
        EXPECT_EQ(w.events_dropped(), 50);
    }
    const json t = read_json(path);
    EXPECT_EQ(timeline_events(t), 50);
    EXPECT_EQ(t["metadata"]["truncated"], true);
    EXPECT_EQ(t["metadata"]["events_dropped"], 50);
    EXPECT_DOUBLE_EQ(t["metadata"]["truncated_at_s"].get<double>(), 5.0);
}

TEST(TraceWriter, TimeWindowKeepsOverlappingEventsOnly) {
    const auto path = temp_file("window.json");
    so::TraceOptions o;
    o.window_start_s = 10.0;
    o.window_end_s = 20.0;
    o.time_origin_s = 10.0;
    {
        so::TraceWriter w(path, o);
        EXPECT_FALSE(w.complete(1, 0, "before", "c", 0.0, 5.0));
        EXPECT_TRUE(w.complete(1, 0, "straddles", "c", 9.0, 2.0));
        EXPECT_TRUE(w.instant(1, 0, "inside", "c", 15.0));
        EXPECT_FALSE(w.instant(1, 0, "after", "c", 25.0));
    }
    const json t = read_json(path);
    EXPECT_EQ(t["traceEvents"].size(), 2u);
    EXPECT_DOUBLE_EQ(t["traceEvents"][0]["ts"].get<double>(), -1e6);  // relative to the origin
    EXPECT_EQ(t["metadata"]["events_outside_window"], 2);
}

TEST(TrainingTrace, OneTrackForTheRanksNestedOrderedAndMatchingStepTimings) {
    const auto path = temp_file("training.json");
    const int ranks = 9;
    const auto run = synthetic_run(12);
    {
        so::TraceWriter w(path);
        w.metadata("scenario", "unit");
        so::TrainingTraceOptions o;
        o.rank_nodes = {40, 41, 42, 43, 44, 45, 46, 47, 48};
        o.step_stride = 1;
        so::write_training_trace(w, run, ranks, o);
    }
    const json t = read_json(path);
    EXPECT_EQ(t["metadata"]["scenario"], "unit");
    EXPECT_EQ(t["metadata"]["ranks"], ranks);
    EXPECT_EQ(t["metadata"]["steps_written"], 12);

    // Every rank steps together: one track in the ranks process, named for all of them.
    std::vector<std::string> names;
    for (const auto& e : t["traceEvents"])
        if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 1) names.push_back(e["args"]["name"].get<std::string>());
    ASSERT_EQ(names.size(), 1u);
    EXPECT_EQ(names[0], "all 9 ranks (in step) · sats 40–48");

    const auto tracks = slices_by_track(t);
    constexpr double eps_us = 1e-3;  // 1 ns
    for (const auto& [track, slices] : tracks) {
        // Ordered by ts; parents before children at equal ts; every slice nested in the
        // enclosing open one or after it (no partial overlap).
        std::vector<const Slice*> open;
        double last_ts = -1e300;
        for (const auto& s : slices) {
            EXPECT_GE(s.ts, last_ts) << s.name;
            last_ts = s.ts;
            while (!open.empty() && s.ts >= open.back()->ts + open.back()->dur - eps_us) open.pop_back();
            if (!open.empty()) {
                EXPECT_LE(s.ts + s.dur, open.back()->ts + open.back()->dur + eps_us) << s.name;
            }
            open.push_back(&s);
        }
    }

    // The ranks' track carries every step with its exact duration and children, once.
    EXPECT_EQ(tracks.count({1, 1}), 0u);
    {
        const auto& slices = tracks.at({1, 0});
        std::size_t k = 0;
        for (const auto& step : run.steps) {
            while (k < slices.size() && slices[k].name != "step " + std::to_string(step.step)) ++k;
            ASSERT_LT(k, slices.size());
            EXPECT_NEAR(slices[k].ts, step.start_s * 1e6, 1e-6);
            EXPECT_NEAR(slices[k].dur, (step.end_s - step.start_s) * 1e6, 1e-6);
            ASSERT_LT(k + 1, slices.size());
            EXPECT_EQ(slices[k + 1].name, "compute");
            EXPECT_NEAR(slices[k + 1].dur, step.compute_s * 1e6, 1e-6);
            if (step.exposed_communication_s > 0.0) {
                EXPECT_EQ(slices[k + 2].name, step.status == sw::StepStatus::stalled ? "stalled" : "exposed communication");
                EXPECT_NEAR(slices[k + 2].dur, step.exposed_communication_s * 1e6, 1e-3);
            }
        }
    }
    // Collectives on their own track, one slice each; the stall is marked.
    EXPECT_EQ(tracks.at({2, 0}).size(), run.collectives.size());
    int stalls = 0, counters = 0;
    for (const auto& e : t["traceEvents"]) {
        if (e["ph"] == "i" && e["name"] == "stall") ++stalls;
        if (e["ph"] == "C") ++counters;
    }
    EXPECT_EQ(stalls, 1);
    EXPECT_EQ(counters, 2 * 8);  // 8 busiest links, mean utilisation at start and end
}

TEST(TrainingTrace, AutoStrideKeepsLongRunsWithinTheBound) {
    // 81 ranks × 15,000 steps would be ~3.7 M events: sampled down to the bound.
    const auto path = temp_file("long.json");
    const auto run = synthetic_run(15000);
    so::TraceOptions o;
    o.max_events = 20000;
    {
        so::TraceWriter w(path, o);
        so::write_training_trace(w, run, 81);
        EXPECT_FALSE(w.truncated());
    }
    const json t = read_json(path);
    EXPECT_LE(timeline_events(t), 20000);
    EXPECT_GT(t["metadata"]["step_stride"].get<int>(), 1);
    EXPECT_GT(t["metadata"]["steps_written"].get<int>(), 40);
    EXPECT_LT(std::filesystem::file_size(path), 8u << 20);
}

TEST(TrainingTrace, LinkSamplesBecomeCounterTracksForTheBusiestLinks) {
    const auto path = temp_file("links.json");
    auto run = synthetic_run(2);
    std::vector<so::LinkCounterSample> samples;
    for (int l = 0; l < 12; ++l)
        for (double time : {10.0, 12.0}) samples.push_back({time, l, l + 1, 400e9, 0.1});
    {
        so::TraceWriter w(path);
        so::TrainingTraceOptions o;
        o.busiest_links = 3;
        so::write_training_trace(w, run, 2, o, samples);
    }
    const json t = read_json(path);
    std::set<std::string> names;
    for (const auto& e : t["traceEvents"])
        if (e["ph"] == "C") {
            names.insert(e["name"].get<std::string>());
            EXPECT_DOUBLE_EQ(e["args"]["capacity_Gbps"].get<double>(), 400.0);
        }
    EXPECT_EQ(names, (std::set<std::string>{"link 9-10", "link 10-11", "link 11-12"}));
}
