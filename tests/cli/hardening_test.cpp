// Hardening (issue 8): interruptions, a killed run beside a complete one, numerical
// guards, the separation alarm and output folders that cannot escape. Malformed input
// is covered by tests/scenarios/malformed (ctest label `malformed`) and scripts/fuzz.
#include "cli_support.hpp"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <vector>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace skyfabric_test;

namespace {



std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

fs::path write_file(const fs::path& path, const std::string& text) {
    std::ofstream(path) << text;
    return path;
}

// A run long enough to be stopped part way (81 satellites, 20 orbits: tens of seconds).
std::string long_run_args() {
    return source("scenarios/suncatcher-81.yaml") + " --set duration_orbits=20";
}

}  // namespace

TEST(Hardening, SigkillDuringForcedRunLeavesThePreviousCompleteRunIntact) {
    const auto dir = fresh_dir("sigkill");
    ASSERT_EQ(run_command(skyfabric() + " run -q " + source("scenarios/smoke.yaml") + " -o " + dir.string()).status, 0);
    const std::string h5_before = read_file(dir / "result.h5");
    const std::string summary_before = read_file(dir / "summary.json");
    const std::string pvd_before = read_file(dir / "vtk" / "formation.pvd");
    ASSERT_FALSE(h5_before.empty());
    ASSERT_NE(summary_before.find("\"complete\": true"), std::string::npos);

    // Overwrite it with --force, then SIGKILL part way (no handler can run).
    const auto killed = signal_when(skyfabric() + " run -q --force " + long_run_args() + " --set output.vtk=true -o " +
                                        dir.string(),
                                    staged_exists(dir, "vtk/formation_000002.vtp"), "KILL");
    EXPECT_EQ(killed.status, 128 + 9) << "expected death by SIGKILL: " << killed.output;
    EXPECT_EQ(leftovers_beside(dir), 1) << "the killed run writes into a staging folder beside the output";

    // The complete run is byte for byte what it was, and still reads as complete.
    EXPECT_EQ(read_file(dir / "result.h5"), h5_before);
    EXPECT_EQ(read_file(dir / "summary.json"), summary_before);
    EXPECT_EQ(read_file(dir / "vtk" / "formation.pvd"), pvd_before);
    const auto check = run_command(
        "/usr/bin/python3 -c \"import h5py,sys; f=h5py.File(sys.argv[1],'r'); "
        "assert f.attrs['complete'] == True; assert f.attrs['scenario_name'] == 'smoke'; "
        "assert f['formation/position_lvlh_m'].shape[0] == len(f['time_s']) == 21; print('ok')\" " +
        (dir / "result.h5").string());
    EXPECT_EQ(check.status, 0) << check.output;

    // Without --force the complete run is still protected; with it a new run replaces all.
    const auto again = run_command(skyfabric() + " run -q " + source("scenarios/smoke.yaml") + " -o " + dir.string());
    EXPECT_EQ(again.status, 2) << again.output;
    ASSERT_EQ(run_command(skyfabric() + " run -q --force " + source("scenarios/smoke.yaml") + " -o " + dir.string()).status, 0);
    EXPECT_EQ(leftovers_beside(dir), 0) << "the next run cleans the killed run's staging folder";
    EXPECT_TRUE(fs::exists(dir / "vtk" / "formation.pvd"));
    fs::remove_all(dir);
}

TEST(Hardening, SigtermDuringRunStopsPromptlyWithValidIncompleteOutputs) {
    const auto dir = fresh_dir("sigterm");
    const auto r = signal_when(skyfabric() + " run -q " + long_run_args() + " --set output.vtk=true -o " + dir.string(),
                               staged_exists(dir, "vtk/formation_000002.vtp"), "TERM");
    EXPECT_EQ(r.status, 130) << r.output;
    EXPECT_NE(r.output.find("marked incomplete"), std::string::npos) << r.output;
    const auto check = run_command(
        "/usr/bin/python3 -c \"import h5py,sys; f=h5py.File(sys.argv[1],'r'); "
        "assert f.attrs['complete'] == False; assert 'interrupted' in f.attrs['stop_reason']; "
        "n=len(f['time_s']); assert n > 0 and f['formation/position_lvlh_m'].shape[0] == n; print('ok', n)\" " +
        (dir / "result.h5").string());
    EXPECT_EQ(check.status, 0) << check.output;
    EXPECT_NE(read_file(dir / "summary.json").find("\"complete\": false"), std::string::npos);
    const std::string pvd = read_file(dir / "vtk" / "formation.pvd");
    EXPECT_NE(pvd.find("</VTKFile>"), std::string::npos) << pvd;
    EXPECT_EQ(leftovers_beside(dir), 0);
    // An incomplete run is not protected: running again into the folder needs no --force.
    EXPECT_EQ(run_command(skyfabric() + " run -q " + source("scenarios/smoke.yaml") + " -o " + dir.string()).status, 0);
    fs::remove_all(dir);
}

TEST(Hardening, SigintDuringSweepStopsWithIncompletePointsAndATable) {
    const auto dir = fresh_dir("sweep_int");
    const auto r = signal_when(skyfabric() + " sweep -q " + long_run_args() +
                                   " --vary formation.radius_m=1000,1100 --jobs 1 -o " + (dir / "sweep").string(),
                               "ls " + (dir / "sweep" / "points").string() + "/.*.staging.*/vtk/formation_000002.vtp >/dev/null 2>&1",
                               "INT");
    EXPECT_EQ(r.status, 130) << r.output;
    EXPECT_TRUE(fs::exists(dir / "sweep" / "sweep.csv")) << r.output;
    EXPECT_NE(read_file(dir / "sweep" / "sweep.json").find("\"complete\": false"), std::string::npos)
        << read_file(dir / "sweep" / "sweep.json");
    // The point that was running stopped and marked itself incomplete, readable.
    int incomplete_points = 0;
    for (const auto& entry : fs::recursive_directory_iterator(dir / "sweep" / "points")) {
        if (entry.path().filename() != "result.h5") continue;
        const auto check = run_command(
            "/usr/bin/python3 -c \"import h5py,sys; f=h5py.File(sys.argv[1],'r'); "
            "assert f.attrs['complete'] == False; assert len(f['time_s']) > 0; print('ok')\" " + entry.path().string());
        EXPECT_EQ(check.status, 0) << check.output;
        ++incomplete_points;
    }
    EXPECT_EQ(incomplete_points, 1) << r.output;
    fs::remove_all(dir);
}

TEST(Hardening, NumericalFailureStopsTheRunNamingSatelliteAndTime) {
    // Satellite 1 starts 7,000 km below the chief: through the Earth's centre. The
    // integrator's step collapses (or the state goes non-finite): the run must stop with
    // exit 1, name the satellite and the time, and leave readable incomplete outputs.
    const auto dir = fresh_dir("numerical");
    const auto file = write_file(dir / "plunge.yaml", R"(name: plunge
duration_s: 3000
output_step_s: 10
orbit: { altitude_km: 650, sun_synchronous: true, ltan_h: 6.0 }
formation:
  layout: explicit
  satellites:
    - { position_m: [0, 0, 0] }
    - { position_m: [-7028137, 0, 0], velocity_m_s: [0, 0, 0] }
)");
    const auto r = run_command(skyfabric() + " run -q " + file.string() + " -o " + (dir / "out").string());
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("numerical failure"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("satellite 1"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("t = "), std::string::npos) << r.output;
    const std::string summary = read_file(dir / "out" / "summary.json");
    EXPECT_NE(summary.find("\"complete\": false"), std::string::npos) << summary;
    const auto check = run_command(
        "/usr/bin/python3 -c \"import h5py,sys,numpy as np; f=h5py.File(sys.argv[1],'r'); "
        "assert f.attrs['complete'] == False; assert 'satellite 1' in f.attrs['stop_reason']; "
        "assert np.all(np.isfinite(f['formation/position_lvlh_m'][:])); print('ok')\" " +
        (dir / "out" / "result.h5").string());
    EXPECT_EQ(check.status, 0) << check.output;
    fs::remove_all(dir);
}

TEST(Hardening, SatellitesCloserThanTheAlarmAreReported) {
    const auto dir = fresh_dir("alarm");
    const auto file = write_file(dir / "close.yaml", R"(name: close
duration_s: 600
output_step_s: 60
orbit: { altitude_km: 650, sun_synchronous: true, ltan_h: 6.0 }
formation:
  layout: explicit
  satellites:
    - { position_m: [0, 0, 0] }
    - { position_m: [0, 5, 0] }
    - { position_m: [0, 300, 0] }
metrics: { min_separation_alarm_m: 20 }
)");
    const auto r = run_command(skyfabric() + " run " + file.string() + " -o " + (dir / "out").string());
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("SEPARATION ALARM"), std::string::npos) << r.output;
    const std::string summary = read_file(dir / "out" / "summary.json");
    EXPECT_NE(summary.find("\"samples_below_alarm\": 11"), std::string::npos) << summary;
    const auto check = run_command(
        "/usr/bin/python3 -c \"import h5py,sys,numpy as np; f=h5py.File(sys.argv[1],'r'); "
        "d=f['formation/min_separation_m'][:]; assert np.all(d < 20) and np.all(d > 0), d; "
        "p=f['formation/min_separation_pair'][:]; assert np.all(np.sort(p, axis=1) == [0, 1]), p; print('ok')\" " +
        (dir / "out" / "result.h5").string());
    EXPECT_EQ(check.status, 0) << check.output;
    fs::remove_all(dir);
}

TEST(Hardening, ScenarioNamesCannotEscapeTheOutputFolder) {
    // The default output folder is out/<name>, relative to the working directory.
    const auto dir = fresh_dir("escape");
    fs::create_directories(dir / "work");
    for (const std::string name : {"../escaped", "../../escaped", "/tmp/escaped", "..", "a/../../escaped"}) {
        const auto file = write_file(dir / "work" / "escape.yaml",
                                     "name: '" + name + "'\nduration_s: 60\norbit: {altitude_km: 650}\nformation: {}\n");
        const auto r = run_command("cd " + (dir / "work").string() + " && " + skyfabric() + " run -q escape.yaml");
        EXPECT_EQ(r.status, 2) << name << ": " << r.output;
        EXPECT_NE(r.output.find("escape.yaml:1:7: key 'name'"), std::string::npos) << r.output;
        const auto set = run_command("cd " + (dir / "work").string() + " && " + skyfabric() +
                                     " run -q " + source("scenarios/smoke.yaml") + " --set 'name=" + name + "'");
        EXPECT_EQ(set.status, 2) << name << ": " << set.output;
        EXPECT_NE(set.output.find("--set name"), std::string::npos) << set.output;
    }
    EXPECT_FALSE(fs::exists(dir / "escaped"));
    EXPECT_FALSE(fs::exists(dir / "work" / "out"));
    // A plain name lands in out/<name>.
    write_file(dir / "work" / "ok.yaml", "name: plain-name_1.0\nduration_s: 60\noutput_step_s: 30\norbit: {altitude_km: 650}\nformation: {radius_m: 1}\n");
    const auto ok = run_command("cd " + (dir / "work").string() + " && " + skyfabric() + " run -q ok.yaml");
    EXPECT_EQ(ok.status, 0) << ok.output;
    EXPECT_TRUE(fs::exists(dir / "work" / "out" / "plain-name_1.0" / "result.h5"));
    fs::remove_all(dir);
}

TEST(Hardening, AbsurdSizesAreRefusedUpFrontAndQuickly) {
    const auto dir = fresh_dir("sizes");
    const auto base = write_file(dir / "base.yaml",
                                 "name: sizes\nduration_s: 600\norbit: {altitude_km: 650}\nformation: {radius_m: 200}\n");
    struct Case {
        std::string set;
        std::string expect;
    };
    const std::vector<Case> cases = {
        {"--set formation.radius_m=1000000 --set formation.radial_pitch_m=0.1", "satellites; at most 200000"},
        {"--set duration_s=315000000 --set output_step_s=0.01", "output steps"},
        {"--set formation.radius_m=20000 --set duration_s=31557600 --set output_step_s=10", "GB are allowed"},
        {"--set topology=torus2d:x=100000,y=100000 --set workload.enabled=true", "too large"},
    };
    for (const auto& c : cases) {
        const auto start = std::chrono::steady_clock::now();
        const auto r = run_command("timeout -s KILL 30 " + skyfabric() + " run -q " + base.string() + " " + c.set +
                                   " -o " + (dir / "out").string());
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        EXPECT_EQ(r.status, 2) << c.set << ": " << r.output;
        EXPECT_NE(r.output.find("--set "), std::string::npos) << r.output;
        EXPECT_NE(r.output.find(c.expect), std::string::npos) << r.output;
        EXPECT_LT(seconds, 10.0) << c.set;
        EXPECT_FALSE(fs::exists(dir / "out" / "result.h5.partial"));
    }
    // The volume estimate names what to change, and reducing the output passes it.
    const auto reduced = run_command(skyfabric() + " validate " + base.string() +
                                     " --set formation.radius_m=20000 --set duration_s=31557600 --set output_step_s=600");
    EXPECT_EQ(reduced.status, 0) << reduced.output;
    fs::remove_all(dir);
}

TEST(Hardening, CudaBackendWithoutAGpuFailsAtStartNotAfterThePhysics) {
    const auto info = run_command(skyfabric() + " info");
    if (info.output.find("device(s) present") != std::string::npos)
        GTEST_SKIP() << "a CUDA device is present here";
    const auto dir = fresh_dir("cuda_backend");
    const auto r = run_command(skyfabric() + " run -q " + source("scenarios/smoke.yaml") +
                               " --set workload.backend=cuda -o " + (dir / "out").string());
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("CUDA backend requested but unavailable"), std::string::npos) << r.output;
    // auto falls back to the CPU and runs.
    const auto ok = run_command(skyfabric() + " run -q " + source("scenarios/smoke.yaml") +
                                " --set workload.backend=auto -o " + (dir / "auto").string());
    EXPECT_EQ(ok.status, 0) << ok.output;
}
