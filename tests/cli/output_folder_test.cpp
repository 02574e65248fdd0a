// Output folders under concurrency, kills, full disks and planted symlinks (issue 15, findings 1-5):
// src/output/output_folder.cpp through the real program.
#include "cli_support.hpp"

#include <gtest/gtest.h>

#include <sys/mount.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace fs = std::filesystem;
using namespace skyfabric_test;

namespace {

std::string h5_complete_check(const fs::path& h5) {
    return "/usr/bin/python3 -c \"import h5py,sys; f=h5py.File(sys.argv[1],'r'); assert f.attrs['complete'] == True; "
           "print('ok')\" " + h5.string();
}

// `skyfabric run` processes whose command line mentions `marker` (a test's own folder).
int runs_mentioning(const std::string& marker) {
    const std::string count = run_command("pgrep -f -c -- '[s]kyfabric run .*" + marker + "'").output;  // [s]: not this shell
    return count.empty() ? 0 : std::stoi(count);
}

}  // namespace

TEST(OutputFolder, TwoRunsIntoOneFolderOneWinsTheOtherIsRefusedWithExit2) {
    // Finding 1: without --force the second run was not refused (the folder was not complete yet),
    // both wrote, and the first ended "complete" with an unreadable result.h5.
    const auto dir = fresh_dir("concurrent");
    const fs::path out = dir / "out";
    const std::string first = skyfabric() + " run -q " + source("scenarios/suncatcher-81.yaml") +
                              " --set duration_orbits=3 --set output.vtk=false -o " + out.string();
    const std::string script = "( exec " + first + " ) & pid=$!; i=0; while ! " + staged_exists(out, "result.h5") +
                               " && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; " + skyfabric() + " run -q " +
                               source("scenarios/smoke.yaml") + " -o " + out.string() +
                               "; echo second=$?; wait $pid; echo first=$?";
    const auto r = run_command("sh -c '" + script + "' 2>&1");
    EXPECT_NE(r.output.find("second=2"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("in use by another skyfabric process"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("first=0"), std::string::npos) << r.output;
    EXPECT_EQ(run_command(h5_complete_check(out / "result.h5")).status, 0);
    EXPECT_NE(read_file(out / "summary.json").find("\"scenario\": \"suncatcher-81\""), std::string::npos);
    fs::remove_all(dir);
}

TEST(OutputFolder, KillAtFiftyInstantsLeavesThePreviousOrTheNewCompleteRun) {
    // Finding 5: a SIGKILL in the end-of-run window left the new result.h5 beside the previous run's
    // summary.json, or a formation.pvd listing deleted frames. tests/cli/kill_at_instants.py kills a
    // forced run at 50 instants spread over its life and past its end (the swap included) and checks
    // after each that every file of the folder belongs to one complete run, the old or the new.
    const auto dir = fresh_dir("kill_instants");
#if defined(__SANITIZE_ADDRESS__)
    const char* instants = " 20";  // each run is ~10x slower here; the release suite covers the 50
#else
    const char* instants = " 50";
#endif
    const auto r = run_command("/usr/bin/python3 " + source("tests/cli/kill_at_instants.py") + " " + skyfabric() + " " +
                               source("scenarios/smoke.yaml") + " " + dir.string() + instants + " 2>&1");
    EXPECT_EQ(r.status, 0) << r.output;
    fs::remove_all(dir);
}

TEST(OutputFolder, FullDiskIsARunFailureWithTheOsReasonAndLeavesNothingBehind) {
    // Finding 3: on a full disk HDF5's flush failed, then the process died with SIGSEGV in HDF5's exit
    // handler and left result.h5.partial filling the disk, with no OS reason given.
    const auto dir = fresh_dir("full_disk");
    const fs::path small = dir / "small";
    fs::create_directories(small);
    if (mount("tmpfs", small.c_str(), "tmpfs", 0, "size=1m") != 0) {
        fs::remove_all(dir);
        GTEST_SKIP() << "cannot mount a 1 MiB tmpfs here (needs root): " << std::strerror(errno);
    }
    // Under the sanitizers: HDF5 itself leaks the buffers of the file whose flush failed (the .supp says).
    const std::string hdf5_leak_ok = "LSAN_OPTIONS=suppressions=" + source("tests/cli/hdf5_failed_flush.supp") + " ";
    const auto r = run_command(hdf5_leak_ok + skyfabric() + " run -q " + source("scenarios/suncatcher-81.yaml") +
                               " --set output.vtk=false -o " + (small / "out").string() + " 2>&1");
    EXPECT_EQ(r.status, 1) << r.output;  // a run failure, not a crash (139)
    EXPECT_NE(r.output.find("No space left on device"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(small / "out"));
    EXPECT_EQ(leftovers_beside(small / "out"), 0) << "the staged files were removed";
    // Read-only: the OS reason too.
    ASSERT_EQ(mount("tmpfs", small.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, "size=1m"), 0) << std::strerror(errno);
    const auto ro = run_command(hdf5_leak_ok + skyfabric() + " run -q " + source("scenarios/smoke.yaml") + " -o " + (small / "ro").string() +
                                " 2>&1");
    EXPECT_EQ(ro.status, 1) << ro.output;
    EXPECT_NE(ro.output.find("Read-only file system"), std::string::npos) << ro.output;
    umount(small.c_str());
    fs::remove_all(dir);
}

TEST(OutputFolder, SymlinksPlantedInTheOutputFolderAreNeverFollowed) {
    // Finding 4: a symlink planted as result.h5.partial, summary.json.tmp or trace.json in the folder,
    // or as a point's log.txt / result.h5.partial under a sweep's points/ with --resume, made skyfabric
    // overwrite the file it pointed to.
    const auto dir = fresh_dir("symlinks");
    const fs::path victim = dir / "victim.txt";
    std::ofstream(victim) << "precious";
    const fs::path out = dir / "out";
    fs::create_directories(out);
    for (const char* name : {"result.h5.partial", "summary.json.tmp", "trace.json", "trace.json.tmp", "result.h5", "summary.json"}) {
        fs::create_symlink(victim, out / name);
    }
    const auto r = run_command(skyfabric() + " run -q " + source("scenarios/smoke.yaml") + " --set output.trace=true -o " +
                               out.string() + " 2>&1");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(read_file(victim), "precious");
    EXPECT_FALSE(fs::is_symlink(out / "trace.json"));
    EXPECT_EQ(run_command(h5_complete_check(out / "result.h5")).status, 0);

    // A sweep point's files, planted before --resume.
    const fs::path sweep = dir / "sweep";
    ASSERT_EQ(run_command(skyfabric() + " sweep -q " + source("scenarios/smoke.yaml") +
                          " --vary seed=1,2 --jobs 1 -o " + sweep.string()).status, 0);
    std::string point;
    for (const auto& e : fs::directory_iterator(sweep / "points")) {
        if (fs::is_directory(e) && e.path().filename().string()[0] != '.') point = e.path().string();
    }
    ASSERT_FALSE(point.empty());
    fs::remove(fs::path(point) / "summary.json");  // so --resume runs it again
    for (const char* name : {"log.txt", "result.h5.partial"}) {
        fs::remove(fs::path(point) / name);
        fs::create_symlink(victim, fs::path(point) / name);
    }
    const auto resumed = run_command(skyfabric() + " sweep -q " + source("scenarios/smoke.yaml") +
                                     " --vary seed=1,2 --jobs 1 --resume -o " + sweep.string() + " 2>&1");
    EXPECT_EQ(resumed.status, 0) << resumed.output;
    EXPECT_EQ(read_file(victim), "precious");
    EXPECT_EQ(run_command(h5_complete_check(fs::path(point) / "result.h5")).status, 0);
    fs::remove_all(dir);
}

TEST(OutputFolder, AKilledSweepTakesItsPointsWithItAndResumeRerunsThem) {
    // Finding 2: after a SIGKILL of the sweep its points kept running; an immediate --resume ran them
    // again beside themselves, both ended unreadable, and the next --resume counted them ok.
    const auto dir = fresh_dir("sweep_kill");
    const fs::path sweep = dir / "sweep";
    const std::string args = " sweep -q " + source("scenarios/suncatcher-81.yaml") +
                             " --set duration_orbits=6 --set output.vtk=false --vary seed=1,2 --jobs 2 -o " + sweep.string();
    const auto killed = signal_when(skyfabric() + args,
                                    "ls " + (sweep / "points").string() + "/.*.staging.*/result.h5 >/dev/null 2>&1", "KILL");
    EXPECT_EQ(killed.status, 128 + 9) << killed.output;
    // The points stop when their sweep dies (they get SIGTERM, stop within a sample and exit), long
    // before their six orbits (several seconds) would end on their own.
    int running = 1;
    for (int i = 0; i < 20 && running > 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        running = runs_mentioning(sweep.string());
    }
    EXPECT_EQ(running, 0) << "points still running after their sweep was killed";
    // --resume runs the two unfinished points again, verifies what it reuses, and all end ok.
    const auto resumed = run_command(skyfabric() + args + " --resume 2>&1");
    EXPECT_EQ(resumed.status, 0) << resumed.output;
    int readable = 0;
    for (const auto& e : fs::directory_iterator(sweep / "points")) {
        if (!fs::exists(e.path() / "result.h5")) continue;
        EXPECT_EQ(run_command(h5_complete_check(e.path() / "result.h5")).status, 0) << e.path();
        ++readable;
    }
    EXPECT_EQ(readable, 2);
    fs::remove_all(dir);
}

TEST(OutputFolder, ASweepRunAgainKeepsEarlierPointsUntilItReplacesThem) {
    // Issue 29 finding 10: `sweep --force`, or a rerun over an interrupted sweep, deleted every
    // earlier point before it started, so a kill then left nothing. Here the rerun's first point is
    // long and the rerun is killed while it runs: the two later points, not yet redone, must still be
    // there, complete, and the next --resume must reuse them (their settings are the same) and, once
    // complete, remove the earlier sweep's point that the new plan no longer has.
    const auto dir = fresh_dir("sweep_force_keeps");
    const fs::path sweep = dir / "sweep";
    const std::string base = " sweep -q " + source("scenarios/suncatcher-81.yaml") +
                             " --set output.vtk=false --set output.hdf5=false --set radiation.trials=1 --jobs 1 -o " +
                             sweep.string();
    ASSERT_EQ(run_command(skyfabric() + base + " --vary duration_s=600,1200,1800 2>&1").status, 0);
    const fs::path kept1 = sweep / "points" / "0001-duration_s=1200";
    const fs::path kept2 = sweep / "points" / "0002-duration_s=1800";
    ASSERT_TRUE(fs::exists(kept1 / "summary.json") && fs::exists(kept2 / "summary.json"));
    const std::string rerun = base + " --vary duration_s=86400,1200,1800";
    const auto killed = signal_when(skyfabric() + rerun + " --force",
                                    "ls -d " + (sweep / "points").string() + "/.0000-*.staging.* >/dev/null 2>&1", "KILL");
    EXPECT_EQ(killed.status, 128 + 9) << killed.output;
    for (const auto& kept : {kept1, kept2}) {
        EXPECT_NE(read_file(kept / "summary.json").find("\"complete\": true"), std::string::npos) << kept;
    }
    // The killed sweep's point run gets SIGTERM (its parent died) and publishes its outputs so far; until
    // it lets go of the point's lock, the folder is another run's and a resume would rightly refuse it
    // (a failed point: exit 1). Wait for the lock.
    run_command("i=0; while ! flock -n " + (sweep / "points" / ".0000-duration_s=86400.lock").string() +
                " true 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done");
    const auto resumed = run_command(skyfabric() + rerun + " --resume 2>&1");
    EXPECT_EQ(resumed.status, 0) << resumed.output;
    EXPECT_FALSE(fs::exists(sweep / "points" / "0000-duration_s=600"));
    EXPECT_TRUE(fs::exists(sweep / "points" / "0000-duration_s=86400" / "summary.json"));
    fs::remove_all(dir);
}

TEST(OutputFolder, TheCurrentDirectoryOrAnAncestorIsRefusedAsAnOutputFolder) {
    // A run replaces its folder as a whole; -o . would leave the shell in the deleted previous run.
    const auto dir = fresh_dir("cwd_out");
    for (const char* out : {".", "..", "./", "/"}) {
        const auto r = run_command("cd " + dir.string() + " && " + skyfabric() + " run -q " + source("scenarios/smoke.yaml") +
                                   " -o " + out + " 2>&1");
        EXPECT_EQ(r.status, 2) << out << ": " << r.output;
        EXPECT_NE(r.output.find("is the current directory or contains it"), std::string::npos) << r.output;
    }
    EXPECT_TRUE(fs::is_empty(dir));
    EXPECT_FALSE(fs::exists("/..lock"));  // nothing written for the refused root
    EXPECT_EQ(run_command("cd " + dir.string() + " && " + skyfabric() + " run -q " + source("scenarios/smoke.yaml") + " -o sub/").status, 0);
    EXPECT_TRUE(fs::exists(dir / "sub" / "result.h5"));
    fs::remove_all(dir);
}

TEST(OutputFolder, ForceSaysWhatItKeptFromThePreviousRun) {
    // Issue 28 item 8: --force replaced the run's own files but kept plots/ and render/ (made from the
    // previous result) without a word. They are still kept (nothing of the user's is deleted), and the
    // run names every one of them; the previous run's own files go.
    const auto dir = fresh_dir("force_keeps");
    const fs::path out = dir / "out";
    const std::string run = skyfabric() + " run -q " + source("scenarios/smoke.yaml") + " --set output.vtk=false -o " + out.string();
    auto r = run_command(run + " 2>&1");
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(r.output.find("kept in"), std::string::npos) << r.output;  // a fresh folder: nothing kept
    fs::create_directories(out / "plots");
    std::ofstream(out / "plots" / "timeline.png") << "old";
    std::ofstream(out / "notes.txt") << "mine";
    r = run_command(run + " --force 2>&1");
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("from before this run"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(": notes.txt, plots/"), std::string::npos) << r.output;
    EXPECT_TRUE(fs::exists(out / "plots" / "timeline.png"));
    EXPECT_TRUE(fs::exists(out / "notes.txt"));
    EXPECT_TRUE(fs::exists(out / "result.h5"));
    fs::remove_all(dir);
}
