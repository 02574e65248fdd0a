// `mpirun -n 3 skyfabric run` (issue 48 item 4): one run's fault trials, and a constellation's
// algorithms, shared among the ranks and gathered, give what one process gives: summary.json field
// for field (but the wall times, the command line, the rank count and the per-rank work counters),
// result.h5 by h5diff (but the command line and history attributes) and the trace's events.
#include "cli_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace skyfabric_test;

namespace {

const std::string mpirun = "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 "
                           "timeout 300 mpirun --allow-run-as-root --oversubscribe -n 3 ";

// Fields that legitimately differ between one process and three: wall-clock times, provenance (the
// command line and the trace's path name another folder), the rank count, and counters of this
// process's own work (damaged steps it solved, the memory its keyframe cache holds after the trials
// it played).
const std::set<std::string> differing = {"wall_s", "simulation_wall_s",    "constellation_wall_s", "command_line", "trace",
                                         "ranks",  "damaged_steps_solved", "memory_bytes"};

// Every path where a and b differ, or one lacks what the other has.
void compare(const nlohmann::json& a, const nlohmann::json& b, const std::string& path, std::vector<std::string>& out) {
    if (a.is_object() && b.is_object()) {
        for (const auto& [key, value] : a.items()) {
            if (differing.count(key)) continue;
            if (!b.contains(key)) out.push_back(path + "/" + key + " only in one process's");
            else compare(value, b[key], path + "/" + key, out);
        }
        for (const auto& [key, value] : b.items())
            if (!differing.count(key) && !a.contains(key)) out.push_back(path + "/" + key + " only in three ranks'");
        return;
    }
    if (a.is_array() && b.is_array() && a.size() == b.size()) {
        for (std::size_t i = 0; i < a.size(); ++i) compare(a[i], b[i], path + "[" + std::to_string(i) + "]", out);
        return;
    }
    if (a != b) out.push_back(path + ": " + a.dump() + " vs " + b.dump());
}

std::vector<std::string> summary_differences(const fs::path& one, const fs::path& three) {
    const auto a = nlohmann::json::parse(read_file(one / "summary.json"));
    const auto b = nlohmann::json::parse(read_file(three / "summary.json"));
    std::vector<std::string> out;
    compare(a, b, "", out);
    return out;
}

// h5diff's differences other than the provenance attributes (command_line, history).
std::string result_differences(const fs::path& one, const fs::path& three) {
    const auto r = run_command("h5diff -c " + (one / "result.h5").string() + " " + (three / "result.h5").string());
    if (r.status != 0 && r.status != 1) return "h5diff failed: " + r.output;
    std::istringstream lines(r.output);
    std::string line, header, out;
    int provenance = 0;
    while (std::getline(lines, line)) {
        if (line.rfind("attribute: ", 0) == 0 || line.rfind("dataset: ", 0) == 0 || line.rfind("group: ", 0) == 0) header = line;
        if (line.find("differences found") == std::string::npos) continue;
        if (header.rfind("attribute: <command_line of </>>", 0) == 0 || header.rfind("attribute: <history of </>>", 0) == 0)
            ++provenance;
        else out += header + ": " + line + "\n";
    }
    if (r.status == 1 && out.empty() && provenance == 0) out = "h5diff reports differences it did not list:\n" + r.output;
    return out;
}

bool have_mpirun() { return run_command("command -v mpirun && command -v h5diff").status == 0; }

}  // namespace

// One process and three ranks run `args` into dir/one and dir/three (with a trace beside each):
// the same summary.json, result.h5 and trace events; the three ranks' summary.json.
static nlohmann::json expect_same_run(const fs::path& dir, const std::string& args) {
    const auto one = run_command(skyfabric() + args + " -o " + (dir / "one").string() + " --trace " + (dir / "one" / "trace.json").string());
    EXPECT_EQ(one.status, 0) << one.output;
    const auto three = run_command(mpirun + skyfabric() + args + " -o " + (dir / "three").string() + " --trace " +
                                   (dir / "three" / "trace.json").string());
    EXPECT_EQ(three.status, 0) << three.output;
    if (one.status != 0 || three.status != 0) return {};
    for (const auto& d : summary_differences(dir / "one", dir / "three")) ADD_FAILURE() << "summary.json" << d;
    EXPECT_EQ(result_differences(dir / "one", dir / "three"), "");
    // The trace draws every algorithm's record, some of them computed on other ranks and sent.
    auto events = [&](const char* run) { return nlohmann::json::parse(read_file(dir / run / "trace.json"))["traceEvents"]; };
    EXPECT_EQ(events("one"), events("three"));
    auto j = nlohmann::json::parse(read_file(dir / "three" / "summary.json"));
    EXPECT_EQ(j["ranks"], 3);
    return j;
}

TEST(RunMpi, ThreeRanksShareAConstellationsAlgorithmsAsOneProcessWould) {
#if !SKYFABRIC_WITH_MPI
    GTEST_SKIP() << "built without MPI (SKYFABRIC_MPI=OFF or no MPI found)";
#else
    if (!have_mpirun()) GTEST_SKIP() << "mpirun or h5diff is not on PATH";
    // 4 x 81 for 5 minutes, no faults: the four algorithms split (ring and noloco, hierarchical, diloco).
    const auto dir = fresh_dir("run_mpi_algorithms");
    const auto j = expect_same_run(dir, " run -q " + source("scenarios/constellation-4x81.yaml") +
                                            " --set duration_s=300 --set output.vtk=false --threads 1");
    ASSERT_TRUE(j.is_object());
    EXPECT_EQ(j["constellation"]["algorithms"].size(), 4u) << j["constellation"].dump();
    fs::remove_all(dir);
#endif
}

TEST(RunMpi, ThreeRanksShareAConstellationsTrialsAsOneProcessWould) {
#if !SKYFABRIC_WITH_MPI
    GTEST_SKIP() << "built without MPI (SKYFABRIC_MPI=OFF or no MPI found)";
#else
    if (!have_mpirun()) GTEST_SKIP() << "mpirun or h5diff is not on PATH";
    // 4 x 81 for 5 minutes, faults 100x as frequent so that the trials differ; 7 trials: the ranks'
    // parts are unequal (3, 2, 2).
    const auto dir = fresh_dir("run_mpi_trials");
    const auto j = expect_same_run(dir, " run -q " + source("scenarios/constellation-4x81.yaml") +
                                            " --set duration_s=300 --set radiation.enabled=true --set radiation.rate_scale=100"
                                            " --set radiation.trials=7 --set output.vtk=false --threads 1");
    ASSERT_TRUE(j.is_object());
    const auto& ring = j["radiation"]["constellation"]["ring"];
    ASSERT_EQ(ring["trials"], 7) << ring.dump();
    EXPECT_GT(ring["goodput"]["stddev"].get<double>(), 0.0) << "the trials differ, so a trial out of place would show";
    fs::remove_all(dir);
#endif
}

TEST(RunMpi, ThreeRanksShareAFormationsTrialsAsOneProcessWould) {
#if !SKYFABRIC_WITH_MPI
    GTEST_SKIP() << "built without MPI (SKYFABRIC_MPI=OFF or no MPI found)";
#else
    if (!have_mpirun()) GTEST_SKIP() << "mpirun or h5diff is not on PATH";
    const auto dir = fresh_dir("run_mpi_formation");
    // The smoke formation, its nominal trial and 8 Monte Carlo trials over a coupled fabric.
    const std::string args = " run -q " + source("scenarios/smoke.yaml") +
                             " --set radiation.rate_scale=3000 --set radiation.trials=8 --set output.vtk=false";
    const auto one = run_command(skyfabric() + args + " -o " + (dir / "one").string());
    ASSERT_EQ(one.status, 0) << one.output;
    const auto three = run_command(mpirun + skyfabric() + args + " -o " + (dir / "three").string());
    ASSERT_EQ(three.status, 0) << three.output;
    const auto j = nlohmann::json::parse(read_file(dir / "three" / "summary.json"));
    EXPECT_EQ(j["ranks"], 3);
    ASSERT_EQ(j["radiation"]["monte_carlo"]["trials"], 8) << j["radiation"].dump();
    EXPECT_GT(j["radiation"]["monte_carlo"]["goodput"]["stddev"].get<double>(), 0.0);
    for (const auto& d : summary_differences(dir / "one", dir / "three")) ADD_FAILURE() << "summary.json" << d;
    EXPECT_EQ(result_differences(dir / "one", dir / "three"), "");
    fs::remove_all(dir);
#endif
}

TEST(RunMpi, AnErrorOnOneRankEndsEveryRank) {
#if !SKYFABRIC_WITH_MPI
    GTEST_SKIP() << "built without MPI (SKYFABRIC_MPI=OFF or no MPI found)";
#else
    if (!have_mpirun()) GTEST_SKIP() << "mpirun or h5diff is not on PATH";
    const auto dir = fresh_dir("run_mpi_error");
    const std::string args = " run -q " + source("scenarios/smoke.yaml") + " --set output.vtk=false -o " + (dir / "run").string();
    ASSERT_EQ(run_command(skyfabric() + args).status, 0);
    // Rank 0 alone finds the folder holding a complete run (the others write nothing): every rank
    // ends (timeout would give 124), with the reason and the bad-input status.
    const auto again = run_command(mpirun + skyfabric() + args);
    EXPECT_NE(again.status, 0) << again.output;
    EXPECT_NE(again.status, 124) << "a rank was left waiting: " << again.output;
    EXPECT_NE(again.output.find("already holds a complete run"), std::string::npos) << again.output;
    EXPECT_NE(again.output.find("on rank 0 of 3"), std::string::npos) << again.output;
    fs::remove_all(dir);
#endif
}

TEST(RunMpi, InterruptEndsEveryRank) {
#if !SKYFABRIC_WITH_MPI
    GTEST_SKIP() << "built without MPI (SKYFABRIC_MPI=OFF or no MPI found)";
#else
    if (!have_mpirun()) GTEST_SKIP() << "mpirun or h5diff is not on PATH";
    // Ctrl-C during the run: mpirun signals every rank; rank 0 publishes what it has (when it gets
    // there before mpirun ends it) and every rank ends (MPI_Abort), none left waiting for another's part.
    const auto dir = fresh_dir("run_mpi_interrupt");
    const auto r = signal_when(mpirun + skyfabric() + " run -q " + source("scenarios/constellation-4x81.yaml") +
                                   " --set duration_s=600 --set radiation.enabled=true --set radiation.rate_scale=100"
                                   " --set radiation.trials=5000 --threads 1 -o " + (dir / "run").string(),
                               staged_exists(dir / "run", "vtk/formation_000010.vtp"), "INT", 120);
    EXPECT_NE(r.status, 0) << r.output;
    EXPECT_NE(r.status, 124) << "a rank was left waiting: " << r.output;
    // It had started writing (so the signal came during the run): the folder rank 0 published, or the
    // staging folder of a rank 0 that mpirun ended first (the next run into the folder removes it).
    EXPECT_TRUE(fs::exists(dir / "run" / "summary.json") || leftovers_beside(dir / "run") > 0) << r.output;
    if (fs::exists(dir / "run" / "summary.json")) {
        EXPECT_EQ(nlohmann::json::parse(read_file(dir / "run" / "summary.json"))["complete"], false);
    }
    fs::remove_all(dir);
#endif
}
