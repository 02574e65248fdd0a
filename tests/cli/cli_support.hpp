#pragma once
// Running the real skyfabric program from tests: its output, exit status, and
// signals sent once the run has made visible progress (not after a fixed sleep,
// which breaks on slow builds such as the sanitizer preset).
#include <array>
#include <fstream>
#include <cstdio>
#include <filesystem>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace skyfabric_test {

namespace fs = std::filesystem;

struct Result {
    int status = -1;  // exit status; 128 + n when killed by signal n
    std::string output;
};

// Runs a shell command, stdout and stderr together.
inline Result run_command(const std::string& command) {
    Result r;
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    if (!pipe) return r;
    std::array<char, 4096> buffer{};
    while (fgets(buffer.data(), buffer.size(), pipe)) r.output += buffer.data();
    const int raw = pclose(pipe);
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    return r;
}

// Starts `command`, waits (up to timeout_s) until the shell test `ready` holds
// (e.g. staged_exists(DIR, "vtk/formation_000002.vtp")), sends `signal` (INT, TERM,
// KILL) and returns the command's exit status as the shell reports it.
inline Result signal_when(const std::string& command, const std::string& ready, const std::string& signal,
                          int timeout_s = 300) {
    const std::string script = "( exec " + command + " ) & pid=$!; i=0; while ! " + ready + " && [ $i -lt " +
                               std::to_string(timeout_s * 10) + " ] && kill -0 $pid 2>/dev/null; do sleep 0.1; i=$((i+1)); done; " +
                               "kill -s " + signal + " $pid 2>/dev/null; wait $pid";
    return run_command("sh -c '" + script + "'");
}

// Shell test: a run into `dir` has staged `relative` (it writes into PARENT/.NAME.staging.PID until it
// publishes the folder as a whole).
inline std::string staged_exists(const fs::path& dir, const std::string& relative) {
    return "ls " + dir.parent_path().string() + "/." + dir.filename().string() + ".staging.*/" + relative + " >/dev/null 2>&1";
}

// Staging or replaced folders left beside `dir` (a killed run's; the next run into dir removes them).
inline int leftovers_beside(const fs::path& dir) {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir.parent_path())) {
        const std::string name = e.path().filename().string();
        const std::string prefix = "." + dir.filename().string() + ".";
        if (name.rfind(prefix + "staging.", 0) == 0 || name.rfind(prefix + "replaced.", 0) == 0) ++n;
    }
    return n;
}

// A file's whole content ("" when it cannot be read).
inline std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::string skyfabric() { return SKYFABRIC_EXE; }
inline std::string source(const std::string& relative) { return std::string(SKYFABRIC_SOURCE_DIR) + "/" + relative; }

// The tests' run set-up: `skyfabric run [-q] <scenario> <args> -o <out>`, the scenario a path in the
// source tree and args its `--set`s and flags (each with a leading space). run_line gives the
// command, for more flags after it or for signal_when; run_scenario runs it.
inline std::string run_line(const std::string& scenario, const std::string& args, const fs::path& out, bool quiet = true) {
    return skyfabric() + (quiet ? " run -q " : " run ") + source(scenario) + args + " -o " + out.string();
}
inline Result run_scenario(const std::string& scenario, const std::string& args, const fs::path& out, bool quiet = true) {
    return run_command(run_line(scenario, args, out, quiet));
}

// An empty folder of its own for one test.
inline fs::path fresh_dir(const std::string& name) {
    const fs::path dir = fs::temp_directory_path() / ("skyfabric_test_" + name + "_" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

}  // namespace skyfabric_test
