// Nothing lost, round two (issue 29): each attack of the independent review planted against the
// real program — devices, FIFOs and links as output files, planted staging/replaced links and
// hard links, a concurrent run into a folder whose name extends ours, unwritable folders, mount
// points, ulimit -f, Ctrl-C in the first second. After each, nothing outside the output folder
// has changed (a victim folder hashed, the device node stat'ed) and the exit status is the one
// README.md documents (0 ok, 1 run failure, 2 bad input, 130 interrupted).
#include "cli_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using namespace skyfabric_test;

namespace {

// Every file under `dir` with its content, and every link with its target: equal before and after
// means nothing in it changed.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        const std::string rel = fs::relative(e.path(), dir).string();
        if (e.is_symlink()) out[rel] = "-> " + fs::read_symlink(e.path()).string();
        else if (e.is_regular_file()) out[rel] = read_file(e.path());
        else out[rel] = "folder";
    }
    return out;
}

fs::path victim_folder(const fs::path& dir) {
    const fs::path v = dir / "victim";
    fs::create_directories(v / "inner");
    std::ofstream(v / "precious.txt") << "precious";
    std::ofstream(v / "inner" / "notes.txt") << "notes";
    return v;
}

struct NodeStat {
    mode_t mode = 0;
    dev_t rdev = 0;
    ino_t ino = 0;
    bool operator==(const NodeStat&) const = default;
};

NodeStat node(const fs::path& p) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return {};
    return {st.st_mode, st.st_rdev, st.st_ino};
}

std::string smoke() { return source("scenarios/smoke.yaml") + " --set output.vtk=false"; }

std::string run_into(const fs::path& out, const std::string& extra = "") {
    return skyfabric() + " run -q " + smoke() + " -o " + out.string() + " " + extra;
}

bool is_root() { return ::geteuid() == 0; }

}  // namespace

TEST(Attack, TraceAndSeasonCsvRefuseDevicesFifosAndLinksAndNeverReplaceThem) {
    // Finding 1: --trace and --csv replaced a character device, a FIFO or a symlink (/dev/stdout)
    // with a regular file; as root that destroyed a real device node.
    const auto dir = fresh_dir("attack_targets");
    std::vector<fs::path> targets;
    targets.push_back(dir / "fifo");
    ASSERT_EQ(::mkfifo(targets.back().c_str(), 0644), 0);
    targets.push_back(dir / "to_dev_null");
    fs::create_symlink("/dev/null", targets.back());
    if (::mknod((dir / "null_device").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) {
        targets.push_back(dir / "null_device");  // a real device node (root only)
    }
    const NodeStat dev_null = node("/dev/null");
    for (const auto& target : targets) {
        const NodeStat before = node(target);
        auto r = run_command(run_into(dir / "out", "--trace " + target.string()));
        EXPECT_EQ(r.status, 2) << target << r.output;
        EXPECT_NE(r.output.find(target.string()), std::string::npos) << r.output;
        EXPECT_FALSE(fs::exists(dir / "out")) << "refused before the run";
        r = run_command(skyfabric() + " season " + source("scenarios/smoke.yaml") + " --csv " + target.string());
        EXPECT_EQ(r.status, 2) << target << r.output;
        EXPECT_TRUE(node(target) == before) << target << " was replaced";
    }
    EXPECT_TRUE(node("/dev/null") == dev_null);
    // Standard output is the explicit "-": the trace alone on stdout, the table on stderr.
    const auto r = run_command(skyfabric() + " run " + smoke() + " -o " + (dir / "out").string() + " --trace - 2>/dev/null");
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.output.rfind("{\"traceEvents\":[", 0), 0u) << r.output.substr(0, 200);
    fs::remove_all(dir);
}

TEST(Attack, TraceNamedInsideTheOutputFolderIsKeptWithTheRun) {
    // Finding 11: run -o D --trace D/trace.json wrote the trace, then swapped D away with it.
    const auto dir = fresh_dir("attack_trace_inside");
    const fs::path out = dir / "D";
    auto r = run_command(run_into(out, "--trace " + (out / "trace.json").string()));
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(read_file(out / "trace.json").find("\"complete\":true"), std::string::npos);
    // A trace deeper inside the folder would be swapped away: refused up front.
    r = run_command(run_into(out, "--force --trace " + (out / "sub" / "t.json").string()));
    EXPECT_EQ(r.status, 2) << r.output;
    fs::remove_all(dir);
}

TEST(Attack, PlantedStagingAndReplacedLinksNeverEmptyAnotherFolder) {
    // Finding 3: a symlink planted at PARENT/.NAME.staging.N (or .replaced.N) pointing at another
    // folder made the run move that folder's files into the output folder. Planted here too: a
    // forged lock record naming a link as the previous holder's staging folder.
    const auto dir = fresh_dir("attack_planted");
    const fs::path victim = victim_folder(dir);
    const auto before = snapshot(victim);
    for (const std::string name : {".out.staging.1", ".out.replaced.1", ".out.staging.1.abcdef", ".out.replaced.1.abcdef"})
        fs::create_directory_symlink(victim, dir / name);
    std::ofstream(dir / ".out.lock") << "1 host abcdef\n";
    auto r = run_command(run_into(dir / "out"));
    EXPECT_EQ(r.status, 0) << r.output;
    r = run_command(run_into(dir / "out", "--force"));
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(snapshot(victim), before);
    EXPECT_FALSE(fs::exists(dir / "out" / "precious.txt"));
    fs::remove_all(dir);
}

TEST(Attack, AHardLinkPlantedAsTheLockFileKeepsItsTarget) {
    // Finding 8: the run truncated the file a hard link at PARENT/.NAME.lock named.
    const auto dir = fresh_dir("attack_hardlink");
    const fs::path victim = victim_folder(dir);
    const auto before = snapshot(victim);
    fs::create_hard_link(victim / "precious.txt", dir / ".out.lock");
    const auto r = run_command(run_into(dir / "out"));
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("hard link"), std::string::npos) << r.output;
    EXPECT_EQ(snapshot(victim), before);
    fs::remove_all(dir);
}

TEST(Attack, ARunIntoANameThatPrefixesAnotherFolderLeavesThatRunAlone) {
    // Finding 4: a run into `a` deleted the lock and staging folder of a concurrent run into
    // `a.staging.1` (its entries share the prefix .a.staging.).
    const auto dir = fresh_dir("attack_prefix");
    const fs::path other = dir / "a.staging.1";
    const std::string first = skyfabric() + " run -q " + source("scenarios/suncatcher-81.yaml") +
                              " --set output.vtk=false --set duration_s=86400 -o " + other.string();  // a day: still running when the second ends
    const std::string script = "( exec " + first + " ) & pid=$!; i=0; while ! " + staged_exists(other, "result.h5") +
                               " && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; " + run_into(dir / "a") +
                               "; echo second=$?; ls -a " + dir.string() + " | grep -c '^.a.staging.1.staging.'; wait $pid; echo first=$?";
    const auto r = run_command("sh -c '" + script + "'");
    EXPECT_NE(r.output.find("second=0"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("\n1\n"), std::string::npos) << "the other run's staging folder was removed\n" << r.output;
    EXPECT_NE(r.output.find("first=0"), std::string::npos) << r.output;
    EXPECT_TRUE(fs::exists(other / "summary.json"));
    fs::remove_all(dir);
}

TEST(Attack, OutputFolderThatIsALinkOrAMountPointIsRefusedUpFront) {
    // Finding 5: -o naming a symlink or a mount point ran the whole simulation, then said the result
    // was kept in a staging folder it had deleted.
    const auto dir = fresh_dir("attack_link_mount");
    const fs::path victim = victim_folder(dir);
    const auto before = snapshot(victim);
    fs::create_directory_symlink(victim, dir / "link");
    const auto started = std::chrono::steady_clock::now();
    auto r = run_command(skyfabric() + " run -q " + source("scenarios/suncatcher-81.yaml") + " -o " + (dir / "link").string());
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("symbolic link"), std::string::npos) << r.output;
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), 5.0) << "refused before the run";
    EXPECT_EQ(snapshot(victim), before);
    EXPECT_TRUE(fs::is_symlink(dir / "link"));
    const fs::path mounted = dir / "mnt";
    fs::create_directories(mounted);
    if (::mount("tmpfs", mounted.c_str(), "tmpfs", 0, "size=1m") != 0) {
        fs::remove_all(dir);
        GTEST_SKIP() << "links checked; cannot mount a tmpfs here to check a mount point (needs root): " << std::strerror(errno);
    }
    std::ofstream(mounted / "kept.txt") << "kept";
    r = run_command(run_into(mounted));
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("mount point"), std::string::npos) << r.output;
    EXPECT_EQ(read_file(mounted / "kept.txt"), "kept");
    ::umount(mounted.c_str());
    fs::remove_all(dir);
}

TEST(Attack, ReplacedFolderKeepsItsMode) {
    // Finding 7: replacing a folder reset its mode (0700 -> 0755, 1777 -> 0755).
    const auto dir = fresh_dir("attack_mode");
    for (const fs::perms mode : {fs::perms(0700), fs::perms(01777)}) {
        const fs::path out = dir / ("out" + std::to_string(static_cast<int>(mode)));
        fs::create_directories(out);
        fs::permissions(out, mode);
        const auto r = run_command(run_into(out));
        EXPECT_EQ(r.status, 0) << r.output;
        EXPECT_EQ(fs::status(out).permissions() & fs::perms::mask, mode & fs::perms::mask);
        EXPECT_TRUE(fs::exists(out / "summary.json"));
    }
    fs::remove_all(dir);
}

TEST(Attack, AFolderTheUserCannotWriteIsRefusedNotSwappedOut) {
    // Finding 7: a folder the user cannot write, in a parent they can, was swapped out with exit 0.
    // Root's writes ignore permissions: as root the run is made as user nobody (setpriv).
    std::string as_user;
    if (is_root()) {
        as_user = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
        if (run_command(as_user + skyfabric() + " validate " + source("scenarios/smoke.yaml")).status != 0)
            GTEST_SKIP() << "running as root, and cannot run the program as user nobody (setpriv) to make a folder it cannot write";
    }
    const auto dir = fresh_dir("attack_unwritable");
    fs::permissions(dir, fs::perms(0777));  // the parent: writable by the user
    const fs::path out = dir / "out";
    fs::create_directories(out);
    std::ofstream(out / "theirs.txt") << "theirs";
    fs::permissions(out, fs::perms(0555));
    const auto r = run_command(as_user + run_into(out));
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("cannot be written"), std::string::npos) << r.output;
    EXPECT_EQ(read_file(out / "theirs.txt"), "theirs");
    EXPECT_EQ(leftovers_beside(out), 0);
    fs::permissions(out, fs::perms(0755));
    fs::remove_all(dir);
}

TEST(Attack, FileSizeLimitIsAWriteFailureWithTheReasonAndNothingLeft) {
    // Finding 11: ulimit -f killed the run with SIGXFSZ (exit 153) and left its staging folder.
    const auto dir = fresh_dir("attack_ulimit");
    const fs::path out = dir / "out";
    auto r = run_command("sh -c 'ulimit -f 50; exec " + skyfabric() + " run -q " + source("scenarios/smoke.yaml") + " -o " +
                         out.string() + "'");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("File too large"), std::string::npos) << r.output;
    EXPECT_EQ(leftovers_beside(out), 0);
    EXPECT_FALSE(fs::exists(out));
    // The trace, outside the folder: the same, and no temporary left beside it.
    r = run_command("sh -c 'ulimit -f 50; exec " + run_into(out, "--set output.hdf5=false --trace " + (dir / "t.json").string()) + "'");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("cannot write trace file " + (dir / "t.json").string() + ": File too large"), std::string::npos)
        << r.output;
    EXPECT_EQ(leftovers_beside(out), 0);
    for (const auto& e : fs::directory_iterator(dir)) EXPECT_EQ(e.path().filename().string().find("t.json"), std::string::npos) << e.path();
    fs::remove_all(dir);
}

TEST(Attack, CtrlCAtEveryTenthOfASecondOfTheFirstSecondExits130) {
    // Finding 6: Ctrl-C in the first 0.3-2.5 s exited 1 "NetworkClock: empty topology series".
    // The signal is sent to the program itself (fork + exec: SIGINT not ignored as in a shell's
    // background job). A run that finished first exits 0 with a complete folder; a stopped one 130
    // (or, before its handler is installed, dies of SIGINT, which a shell reports as 130).
    const auto dir = fresh_dir("attack_sigint");
    const fs::path out = dir / "out";
    const std::string exe = skyfabric(), scenario = source("scenarios/suncatcher-81.yaml");
    for (int tenth = 1; tenth <= 12; ++tenth) {
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            const int null = ::open("/dev/null", O_WRONLY);
            ::dup2(null, 1);
            ::dup2(null, 2);
            ::execl(exe.c_str(), exe.c_str(), "run", "-q", scenario.c_str(), "--set", "output.vtk=false", "--force", "-o",
                    out.c_str(), static_cast<char*>(nullptr));
            ::_exit(127);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100 * tenth));
        ::kill(pid, SIGINT);
        int status = 0;
        ::waitpid(pid, &status, 0);
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        EXPECT_TRUE(code == 130 || code == 0) << "Ctrl-C at " << tenth * 0.1 << " s: exit " << code;
        if (code == 0) {
            EXPECT_NE(read_file(out / "summary.json").find("\"complete\": true"), std::string::npos);
        }
        EXPECT_EQ(leftovers_beside(out), 0) << "at " << tenth * 0.1 << " s";
    }
    fs::remove_all(dir);
}

TEST(Attack, ErrorsNeverEchoAFileThatIsNotAnEdgeListAndSetsRefuseDuplicates) {
    // Finding 11: --topology file:/etc/shadow echoed the file's first line in the error;
    // constellation.algorithms: [ring, ring] was accepted.
    const auto dir = fresh_dir("attack_echo");
    std::ofstream(dir / "secret") << "root:SECRET-HASH:20228:0:99999:7:::\n";
    auto r = run_command(skyfabric() + " run -q " + smoke() + " -o " + (dir / "out").string() + " --topology file:" +
                         (dir / "secret").string());
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("not an edge list"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("SECRET"), std::string::npos) << r.output;
    std::ifstream in(source("scenarios/constellation-4x81.yaml"));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string all = "algorithms: [ring, hierarchical, diloco, noloco]";
    ASSERT_NE(text.find(all), std::string::npos);
    text.replace(text.find(all), all.size(), "algorithms: [ring, ring]");
    std::ofstream(dir / "twice.yaml") << text;
    r = run_command(skyfabric() + " validate " + (dir / "twice.yaml").string());
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("lists ring twice"), std::string::npos) << r.output;
    fs::remove_all(dir);
}

TEST(Attack, AConstellationWithEveryGatewayBlockedTrainsNothingAndSaysSo) {
    // Finding 9: clusters 9,000 km apart (the Earth blocks every gateway link) reported DiLoCo and
    // NoLoCo at full speed: the replicas' inner steps counted though no outer sync could happen.
    const auto dir = fresh_dir("attack_blocked_gateways");
    const std::string job = skyfabric() + " run " + source("scenarios/constellation-4x81.yaml") +
                            " --set constellation.spacing_km=9000 --set duration_s=600 --set output.vtk=false"
                            " --set output.hdf5=false --force -o " + (dir / "out").string();
    auto r = run_command(job + " --set constellation.algorithms=[diloco,noloco] 2>&1");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("warning: diloco, noloco could not train to the end"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("stopped: no path"), std::string::npos) << r.output;
    const auto summary = nlohmann::json::parse(read_file(dir / "out" / "summary.json"));
    for (const char* name : {"diloco", "noloco"}) {
        const auto& a = summary["constellation"]["algorithms"][name];
        EXPECT_TRUE(a["truncated"].get<bool>()) << name;
        EXPECT_EQ(a["steps"].get<std::int64_t>(), 0) << name;
        EXPECT_EQ(a["tokens_per_s"].get<double>(), 0.0) << name;
    }
    r = run_command(job + " --set constellation.algorithms=noloco --strict 2>&1");
    EXPECT_EQ(r.status, 3) << r.output;
    fs::remove_all(dir);
}

TEST(Attack, AFabricThatCannotTrainSaysSoAndStrictGivesItsOwnStatus) {
    // Finding 9: a disconnected edge list ran "0 steps, inf s lost" and exited 0 without a word.
    // Two separate pairs of ranks: the ring over all four has no path between the pairs.
    const auto dir = fresh_dir("attack_cannot_train");
    std::ofstream(dir / "split.csv") << "source,target,bw_gbps,latency_ns\n0,1,100,500\n2,3,100,500\n";
    std::ofstream(dir / "job.yaml") << "name: job\nduration_s: 600\ntopology: file:split.csv\n"
                                       "workload: {model_parameters: 1.0e9}\n";
    const std::string job = skyfabric() + " run -q " + (dir / "job.yaml").string() + " -o " + (dir / "out").string() + " --force";
    auto r = run_command(job + " 2>&1");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("warning: the job could not train to the end"), std::string::npos) << r.output;
    EXPECT_NE(read_file(dir / "out" / "summary.json").find("\"truncated\": true"), std::string::npos);
    r = run_command(job + " --strict 2>&1");
    EXPECT_EQ(r.status, 3) << r.output;
    // A fabric that trains is not flagged, strict or not.
    std::ofstream(dir / "ring.csv") << "source,target,bw_gbps,latency_ns\n0,1,100,500\n1,2,100,500\n2,3,100,500\n3,0,100,500\n";
    r = run_command(job + " --strict --topology file:" + (dir / "ring.csv").string() + " 2>&1");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(r.output.find("could not train"), std::string::npos) << r.output;
    fs::remove_all(dir);
}
