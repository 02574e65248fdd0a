// Nothing lost, round three (issue 51): overload, serving that cannot fit, signals in every long
// loop, a forced sweep killed part way, and `oem` on hostile run folders.
#include "cli_support.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;
using namespace skyfabric_test;

namespace {

// Data rows of a CSV file (lines after the header).
int csv_rows(const fs::path& path) {
    std::ifstream in(path);
    std::string line;
    int n = -1;
    while (std::getline(in, line))
        if (!line.empty()) ++n;
    return n;
}

}  // namespace

// Finding 7: `sweep --force` killed early stripped every earlier point's summary.json and row.json
// and emptied sweep.csv at once. Each point is now replaced by its own run, one at a time.
TEST(NothingLost, ForcedSweepKilledPartWayLeavesEachPointOldOrNew) {
    const auto dir = fresh_dir("force_kill");
    const std::string sweep = skyfabric() + " sweep -q " + source("scenarios/smoke.yaml") +
                              " --set duration_s=1500 --set output.vtk=false --vary formation.radius_m=200,210,220"
                              " --jobs 1 --no-plot -o " + (dir / "sweep").string();
    const auto first = run_command(sweep);
    ASSERT_EQ(first.status, 0) << first.output;
    ASSERT_EQ(csv_rows(dir / "sweep" / "sweep.csv"), 3);

    // Again with --force, killed (no handler runs) while the second point runs.
    const auto killed = signal_when(sweep + " --force",
                                    "ls -d " + (dir / "sweep" / "points").string() + "/.0001-*.staging.* >/dev/null 2>&1",
                                    "KILL", 60);
    EXPECT_EQ(killed.status, 128 + 9) << killed.output;
    int points = 0;
    for (const auto& e : fs::directory_iterator(dir / "sweep" / "points")) {
        if (!e.is_directory() || e.path().filename().string().front() == '.') continue;
        ++points;
        EXPECT_TRUE(fs::exists(e.path() / "summary.json")) << e.path();
        EXPECT_TRUE(fs::exists(e.path() / "row.json")) << e.path();
    }
    EXPECT_EQ(points, 3);
    EXPECT_EQ(csv_rows(dir / "sweep" / "sweep.csv"), 3) << "the table keeps every point, old or new";
    fs::remove_all(dir);
}
