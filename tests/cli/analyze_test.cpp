// `skyfabric analyze` on three runs whose cause is known by construction (issue 49 "Done when"):
// a ring fabric with one slow link, a constellation with one cluster in eclipse and power on, and a
// checkpoint interval 10x shorter than Daly's. Each: the cause is named first, the matching --set
// is recommended, and --verify measures a gain for it. Plus bad input (exit 2) and the breakdowns
// adding up.
#include "cli_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <string>

namespace {

using namespace skyfabric_test;
using nlohmann::json;

json read_json(const fs::path& path) { return json::parse(read_file(path)); }

// tests/cli/check_report.py on a report: its structure (every section, every figure named an inline
// svg, nothing fetched or run), and with `screenshot` Chromium's DOM and a screenshot not blank.
Result check_report(const fs::path& report, const std::string& figures, const fs::path& screenshot = {}) {
    return run_command("/usr/bin/python3 " + source("tests/cli/check_report.py") + " " + report.string() + " --figures '" + figures + "'" +
                       (screenshot.empty() ? std::string() : " --screenshot " + screenshot.string()));
}

// Every breakdown's parts add up to its total within 1e-9 relative.
void expect_breakdowns_add_up(const json& analysis) {
    ASSERT_FALSE(analysis["breakdowns"].empty());
    for (const auto& b : analysis["breakdowns"]) {
        double sum = 0.0;
        for (const auto& p : b["parts"]) sum += p["seconds"].get<double>();
        const double total = b["total_s"].get<double>();
        EXPECT_LE(std::fabs(sum - total), 1e-9 * std::fabs(total)) << b["subject"];
        EXPECT_LE(b["max_relative_residual"].get<double>(), 1e-9) << b["subject"];
    }
}

// The verification row of `set`, which must exist.
json verification_of(const json& analysis, const std::string& set) {
    for (const auto& v : analysis["verification"]["reruns"])
        if (v["set"] == set) return v;
    ADD_FAILURE() << "no verification of " << set << " in " << analysis["verification"].dump();
    return json::object();
}

// DIR/job.yaml: eight ranks on a ring of 400 Gbit/s links (DIR/ring.csv), but link 3-4 at 10 Gbit/s;
// `more` appended to the scenario.
void write_slow_link_job(const fs::path& dir, const std::string& more = "") {
    std::ofstream(dir / "ring.csv") << "source,target,bw_gbps,latency_ns\n0,1,400,500\n1,2,400,500\n2,3,400,500\n3,4,10,500\n"
                                       "4,5,400,500\n5,6,400,500\n6,7,400,500\n7,0,400,500\n";
    std::ofstream(dir / "job.yaml") << "name: slow-link\nseed: 1\nduration_s: 120\ntopology: file:" << (dir / "ring.csv").string()
                                    << "\nworkload: {model_parameters: 1.0e9, tokens_per_step: 1.0e6}\n" << more;
}

TEST(Analyze, OneSlowLinkOnTheRingIsNamedFirstAndRoutingRoundItIsVerified) {
    const auto dir = fresh_dir("analyze_slow_link");
    write_slow_link_job(dir);
    auto r = run_command(skyfabric() + " run -q " + (dir / "job.yaml").string() + " -o " + (dir / "run").string());
    ASSERT_EQ(r.status, 0) << r.output;
    r = run_command(skyfabric() + " analyze " + (dir / "run").string() + " --verify");
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("cause named first: slow path: link 3-4"), std::string::npos) << r.output;
    const auto a = read_json(dir / "run" / "analysis.json");
    expect_breakdowns_add_up(a);
    ASSERT_FALSE(a["anti_patterns"].empty());
    const auto& first = a["anti_patterns"][0];
    EXPECT_EQ(first["id"], "slow_link");
    EXPECT_NE(first["cause"].get<std::string>().find("link 3-4"), std::string::npos);
    ASSERT_FALSE(first["recommendations"].empty());
    const auto& rec = first["recommendations"][0];
    EXPECT_EQ(rec["key"], "workload.routing");
    const auto v = verification_of(a, rec["set"]);
    EXPECT_EQ(v["verdict"], "helps") << v.dump();
    EXPECT_GT(v["measured_gain"].get<double>(), 0.0) << v.dump();
    // The rerun as it was reproduces the original run (same scenario text, same seed).
    EXPECT_EQ(v["baseline"].get<double>(), v["original"].get<double>());
    // The report: a fabric run without trace or VTK keeps one total per link, so the links are
    // ranked instead of the links x time heat map; the verified effect is shown.
    EXPECT_TRUE(fs::exists(dir / "run" / "analysis_figures" / "link_utilisation.svg"));
    EXPECT_FALSE(fs::exists(dir / "run" / "analysis_figures" / "link_heatmap.svg"));
    // Nor a trace: no analysis_trace.json, and analysis.json says so.
    EXPECT_TRUE(a["trace"].is_null());
    EXPECT_FALSE(fs::exists(dir / "run" / "analysis_trace.json"));
    const std::string html = read_file(dir / "run" / "report.html");
    EXPECT_NE(html.find("--set workload.routing=widest"), std::string::npos);
    EXPECT_NE(html.find("<tr class=\"helps\">"), std::string::npos);
    r = check_report(dir / "run" / "report.html", "breakdown,link_utilisation");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("structure: ok"), std::string::npos) << r.output;
    // Without its figure script the report is still written, saying why it has no figures.
    r = run_command("SKYFABRIC_PLOT_ANALYSIS=" + (dir / "absent.py").string() + " " + skyfabric() + " analyze " + (dir / "run").string());
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("warning: figures not drawn"), std::string::npos) << r.output;
    EXPECT_NE(read_file(dir / "run" / "report.html").find("Figures: not drawn"), std::string::npos);
    r = check_report(dir / "run" / "report.html", "");
    EXPECT_EQ(r.status, 0) << r.output;
    fs::remove_all(dir);
}

// Item 3: the run's trace with the analysis drawn over it. The slow-link ring with output.trace: every
// step's communication is exposed by construction (link 3-4 at 1/40 of the others), so the critical path
// of each of the N steps runs compute → the step's last collective → the next step: 2N − 1 arrows, each
// bound inside the slices it names; the anti-patterns are instants in analysis.json's order.
TEST(Analyze, TheTraceGainsTheCriticalPathAsArrowsAndTheAntiPatternsAsInstants) {
    const auto dir = fresh_dir("analyze_trace");
    write_slow_link_job(dir, "output: {trace: true}\n");
    auto r = run_command(skyfabric() + " run -q " + (dir / "job.yaml").string() + " -o " + (dir / "run").string());
    ASSERT_EQ(r.status, 0) << r.output;
    r = run_command(skyfabric() + " analyze " + (dir / "run").string());
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("analysis_trace.json"), std::string::npos) << r.output;
    const auto a = read_json(dir / "run" / "analysis.json");
    const auto t = read_json(dir / "run" / "analysis_trace.json");
    // The run's own events are all kept.
    const auto original = read_json(dir / "run" / "trace.json");
    ASSERT_GT(t["traceEvents"].size(), original["traceEvents"].size());
    EXPECT_EQ(t["traceEvents"][0], original["traceEvents"][0]);
    struct Slice {
        double start, end;
    };
    std::vector<Slice> steps, computes, collectives;
    std::map<long, json> starts, finishes;
    std::vector<std::string> instants;
    int anti_pid = -1;
    for (const auto& e : t["traceEvents"]) {
        if (e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "analysis: anti-patterns") anti_pid = e["pid"];
        if (e["ph"] == "X") {
            const Slice s{e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()};
            if (e["cat"] == "step") steps.push_back(s);
            if (e["cat"] == "compute") computes.push_back(s);
            if (e["cat"] == "collective") collectives.push_back(s);
        }
        if (e["ph"] == "s") starts[e["id"].get<long>()] = e;
        if (e["ph"] == "f") finishes[e["id"].get<long>()] = e;
        if (e["ph"] == "i" && e["cat"] == "anti_pattern") {
            EXPECT_EQ(e["s"], "g");
            EXPECT_EQ(e["pid"], anti_pid);
            instants.push_back(e["name"].get<std::string>());
        }
    }
    const std::size_t n = steps.size();
    ASSERT_GT(n, 2u);
    EXPECT_EQ(starts.size(), 2 * n - 1);
    EXPECT_EQ(finishes.size(), starts.size());
    EXPECT_EQ(a["trace"]["critical_path_flows"].get<std::size_t>(), 2 * n - 1);
    const auto inside = [](const std::vector<Slice>& slices, double ts) {
        return std::any_of(slices.begin(), slices.end(), [&](const Slice& s) { return s.start < ts && ts < s.end; });
    };
    // Each step's gating collective ends with the step (its exposed tail).
    const auto ends_a_step = [&](double ts) {
        for (const auto& c : collectives)
            if (c.start < ts && ts < c.end)
                for (const auto& s : steps)
                    if (std::fabs(c.end - s.end) <= 1e-6 * s.end) return true;
        return false;
    };
    int compute_to_collective = 0, collective_to_step = 0;
    for (const auto& [id, s] : starts) {
        ASSERT_TRUE(finishes.count(id)) << id;
        const auto& f = finishes.at(id);
        EXPECT_EQ(f["bp"], "e");
        const double from = s["ts"].get<double>(), to = f["ts"].get<double>();
        EXPECT_LT(from, to) << id;
        if (inside(computes, from)) {
            EXPECT_TRUE(ends_a_step(to)) << id;
            ++compute_to_collective;
        } else {
            EXPECT_TRUE(ends_a_step(from)) << id;
            EXPECT_TRUE(inside(computes, to)) << id;
            ++collective_to_step;
        }
    }
    EXPECT_EQ(compute_to_collective, static_cast<int>(n));
    EXPECT_EQ(collective_to_step, static_cast<int>(n) - 1);
    ASSERT_EQ(instants.size(), a["anti_patterns"].size());
    ASSERT_FALSE(instants.empty());
    for (std::size_t i = 0; i < instants.size(); ++i)
        EXPECT_EQ(instants[i].rfind(a["anti_patterns"][i]["id"].get<std::string>() + ": ", 0), 0u) << instants[i];
    EXPECT_EQ(instants[0].rfind("slow_link: ", 0), 0u);
    fs::remove_all(dir);
}

// constellation-4x81-stress as shipped, with its trace: the ring's losses to faults are mostly
// rollbacks while noloco, in the same run, keeps more: the detector names it, recommends the
// local-SGD algorithm and --verify measures its goodput against the ring's. The report has the
// links x time heat map (the trace's per-epoch link series, now in result.h5) and opens in
// headless Chromium: every section in its DOM, a screenshot that is not blank.
TEST(Analyze, RollbackDominatedLossesAndTheReportInHeadlessChromium) {
    const auto dir = fresh_dir("analyze_rollbacks");
    auto r = run_command(skyfabric() + " run -q " + source("scenarios/constellation-4x81-stress.yaml") + " -o " + (dir / "run").string() +
                         " --set output.vtk=false --set output.trace=true");
    ASSERT_EQ(r.status, 0) << r.output;
    r = run_command(skyfabric() + " analyze " + (dir / "run").string() + " --verify");
    ASSERT_EQ(r.status, 0) << r.output;
    const auto a = read_json(dir / "run" / "analysis.json");
    expect_breakdowns_add_up(a);
    const json* rollback = nullptr;
    for (const auto& p : a["anti_patterns"])
        if (p["id"] == "rollback_losses") rollback = &p;
    ASSERT_NE(rollback, nullptr) << a["anti_patterns"].dump();
    EXPECT_EQ((*rollback)["cause"].get<std::string>().rfind("rollbacks: one fault rolls every rank of ring back", 0), 0u) << rollback->dump();
    EXPECT_GE((*rollback)["impact"].get<double>(), 0.05);
    ASSERT_EQ((*rollback)["recommendations"].size(), 1u);
    const auto& rec = (*rollback)["recommendations"][0];
    EXPECT_EQ(rec["key"], "constellation.algorithms");
    EXPECT_EQ(rec["value"], "[" + rec["after_algorithm"].get<std::string>() + "]");
    EXPECT_TRUE(rec["after_algorithm"] == "noloco" || rec["after_algorithm"] == "diloco") << rec.dump();
    EXPECT_GT(rec["expected_relative_change"].get<double>(), 0.0);
    const auto v = verification_of(a, rec["set"]);
    EXPECT_EQ(v["verdict"], "helps") << v.dump();
    EXPECT_EQ(v["baseline"].get<double>(), v["original"].get<double>());  // the ring's goodput, rerun
    EXPECT_GT(v["measured_gain"].get<double>(), 0.0) << v.dump();

    for (const char* f : {"breakdown", "link_heatmap", "stragglers"}) EXPECT_TRUE(fs::exists(dir / "run" / "analysis_figures" / (std::string(f) + ".svg"))) << f;
    EXPECT_FALSE(fs::exists(dir / "run" / "analysis_figures" / "link_utilisation.svg"));
    const fs::path report = dir / "run" / "report.html";
    const std::string html = read_file(report);
    EXPECT_NE(html.find("--set constellation.algorithms=[" + rec["after_algorithm"].get<std::string>() + "]"), std::string::npos);
    r = check_report(report, "breakdown,link_heatmap,stragglers", dir / "report.png");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("structure: ok"), std::string::npos) << r.output;
    if (fs::exists("/usr/bin/chromium"))
        EXPECT_NE(r.output.find("screenshot: ok"), std::string::npos) << r.output;
    else
        EXPECT_NE(r.output.find("screenshot: skipped"), std::string::npos) << r.output;
    // The checker is not vacuous: an image fetched from the network, or a missing section, fails it.
    std::string fetched = html;
    fetched.insert(fetched.find("</body>"), "<img src=\"https://example.com/x.png\">");
    std::ofstream(dir / "fetched.html") << fetched;
    r = check_report(dir / "fetched.html", "breakdown");
    EXPECT_EQ(r.status, 1) << r.output;
    std::string cut = html;
    cut.replace(cut.find("id=\"anti-patterns\""), 18, "id=\"something\"");
    std::ofstream(dir / "cut.html") << cut;
    r = check_report(dir / "cut.html", "breakdown");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("sections missing"), std::string::npos) << r.output;
    fs::remove_all(dir);
}

TEST(Analyze, OneClusterInEclipseIsNamedFirstAndABatteryThatCarriesItIsVerified) {
    const auto dir = fresh_dir("analyze_eclipse");
    // constellation-4x81-stress turns cluster 3's plane into the Earth's shadow; small clusters, no
    // radiation, a small battery so that its eclipse throttles the compute every rank waits for.
    const std::string sets =
        " --set radiation.enabled=false --set formation.radius_m=250 --set output.vtk=false --set 'constellation.algorithms=[hierarchical]'"
        " --set workload.model_parameters=1e9 --set workload.tokens_per_step=8e6 --set power.battery_capacity_wh=200";
    auto r = run_command(skyfabric() + " run -q " + source("scenarios/constellation-4x81-stress.yaml") + " -o " + (dir / "run").string() + sets);
    ASSERT_EQ(r.status, 0) << r.output;
    r = run_command(skyfabric() + " analyze " + (dir / "run").string() + " --verify --format json");
    ASSERT_EQ(r.status, 0) << r.output;
    const auto a = read_json(dir / "run" / "analysis.json");
    EXPECT_EQ(a, json::parse(r.output));  // --format json prints the document it writes
    expect_breakdowns_add_up(a);
    ASSERT_FALSE(a["anti_patterns"].empty());
    const auto& first = a["anti_patterns"][0];
    EXPECT_EQ(first["id"], "straggling_cluster");
    EXPECT_EQ(first["cause"], "eclipse throttling (power) in cluster 3");
    ASSERT_FALSE(first["recommendations"].empty());
    const auto& rec = first["recommendations"][0];
    EXPECT_EQ(rec["key"], "power.battery_capacity_wh");
    EXPECT_GT(std::stod(rec["value"].get<std::string>()), 200.0);
    const auto v = verification_of(a, rec["set"]);
    EXPECT_EQ(v["verdict"], "helps") << v.dump();
    EXPECT_GT(v["measured_gain"].get<double>(), 0.0) << v.dump();
    fs::remove_all(dir);
}

TEST(Analyze, ACheckpointIntervalTenTimesShorterThanDalysIsNamedFirstAndDalysIsVerified) {
    const auto dir = fresh_dir("analyze_checkpoint");
    const std::string sets = " --set radiation.rate_scale=100 --set duration_s=7200 --set radiation.trials=20 --set output.vtk=false";
    auto r = run_command(skyfabric() + " run -q " + source("scenarios/smoke.yaml") + " -o " + (dir / "auto").string() + sets);
    ASSERT_EQ(r.status, 0) << r.output;
    const auto automatic = read_json(dir / "auto" / "summary.json");
    ASSERT_EQ(automatic["radiation"]["checkpoint_interval_from"], "long_term_mtbf");
    const double daly = automatic["radiation"]["checkpoint_interval_s"].get<double>();
    r = run_command(skyfabric() + " run -q " + source("scenarios/smoke.yaml") + " -o " + (dir / "run").string() + sets +
                    " --set radiation.checkpoint_interval=" + std::to_string(daly / 10.0));
    ASSERT_EQ(r.status, 0) << r.output;
    r = run_command(skyfabric() + " analyze " + (dir / "run").string() + " --verify");
    ASSERT_EQ(r.status, 0) << r.output;
    const auto a = read_json(dir / "run" / "analysis.json");
    expect_breakdowns_add_up(a);
    ASSERT_FALSE(a["anti_patterns"].empty());
    const auto& first = a["anti_patterns"][0];
    EXPECT_EQ(first["id"], "checkpoint_interval");
    EXPECT_NE(first["cause"].get<std::string>().find("too frequent"), std::string::npos) << first.dump();
    ASSERT_EQ(first["recommendations"].size(), 1u);
    const auto& rec = first["recommendations"][0];
    EXPECT_EQ(rec["key"], "radiation.checkpoint_interval");
    // Daly's interval as the run's own auto setting computes it, rounded to the second.
    EXPECT_NEAR(std::stod(rec["value"].get<std::string>()), daly, 0.5);
    const auto v = verification_of(a, rec["set"]);
    EXPECT_EQ(v["verdict"], "helps") << v.dump();
    EXPECT_GT(v["measured_gain"].get<double>(), 0.0) << v.dump();
    fs::remove_all(dir);
}

TEST(Analyze, BadInputIsRefusedWithExitTwoNamingTheFile) {
    const auto dir = fresh_dir("analyze_bad");
    auto r = run_command(skyfabric() + " analyze " + (dir / "missing").string());
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("no such folder"), std::string::npos) << r.output;
    fs::create_directories(dir / "empty");
    r = run_command(skyfabric() + " analyze " + (dir / "empty").string());
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("summary.json: missing"), std::string::npos) << r.output;
    r = run_command(skyfabric() + " run -q " + source("scenarios/smoke.yaml") + " -o " + (dir / "run").string() +
                    " --set radiation.enabled=false --set output.vtk=false --set duration_s=60");
    ASSERT_EQ(r.status, 0) << r.output;
    const std::string summary = read_file(dir / "run" / "summary.json");
    std::ofstream(dir / "run" / "summary.json") << summary.substr(0, summary.size() / 2);
    r = run_command(skyfabric() + " analyze " + (dir / "run").string());
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("summary.json: not a JSON object"), std::string::npos) << r.output;
    std::ofstream(dir / "run" / "summary.json") << summary;
    std::ofstream(dir / "run" / "result.h5") << "not an HDF5 file";
    r = run_command(skyfabric() + " analyze " + (dir / "run").string());
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("result.h5: not an HDF5 file"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(dir / "run" / "analysis.json"));
    r = run_command(skyfabric() + " analyze --format yaml " + (dir / "run").string());
    EXPECT_EQ(r.status, 2) << r.output;
    fs::remove_all(dir);
}

}  // namespace

namespace {

// Every scenario in scenarios/, cut short: analyze reads it (formation, constellation, serving,
// serving beside training, the sweeps' base scenarios) and every breakdown adds up within 1e-9.
TEST(Analyze, EveryShippedScenarioIsAnalysedAndItsBreakdownsAddUp) {
    const auto dir = fresh_dir("analyze_every_scenario");
    int analysed = 0;
    for (const auto& entry : fs::directory_iterator(source("scenarios"))) {
        if (entry.path().extension() != ".yaml") continue;
        const std::string text = read_file(entry.path());
        const std::string duration = text.find("\nduration_orbits:") != std::string::npos ? "duration_orbits=0.03" : "duration_s=180";
        const auto out = dir / entry.path().stem();
        auto r = run_command(skyfabric() + " run -q " + entry.path().string() + " -o " + out.string() + " --set " + duration +
                             " --set output.vtk=false --threads 1");
        ASSERT_EQ(r.status, 0) << entry.path() << r.output;
        r = run_command(skyfabric() + " analyze --format json " + out.string());
        ASSERT_EQ(r.status, 0) << entry.path() << r.output;
        SCOPED_TRACE(entry.path().string());
        expect_breakdowns_add_up(read_json(out / "analysis.json"));
        ++analysed;
    }
    EXPECT_GE(analysed, 10);
    fs::remove_all(dir);
}

}  // namespace
