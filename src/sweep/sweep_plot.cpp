#include "sweep/sweep_plot.hpp"

#include "sweep/process_pool.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <sys/wait.h>

namespace skyfabric::sweep {

namespace fs = std::filesystem;

std::string viz_script(const fs::path& exe, const char* name, const char* env_override) {
    if (const char* env = std::getenv(env_override)) return env;
    // The source tree above the running binary (build/<preset>/src/skyfabric), then this file's
    // (src/sweep/sweep_plot.cpp), which is relative when ccache's base_dir rewrote the compile.
    std::error_code ec;
    for (fs::path dir = exe.parent_path(); !dir.empty(); dir = dir.parent_path()) {
        const fs::path script = dir / "viz" / name;
        if (fs::exists(script, ec)) return script.string();
        if (dir == dir.root_path()) break;
    }
    const fs::path script = fs::path(__FILE__).parent_path().parent_path().parent_path() / "viz" / name;
    return script.is_absolute() && fs::exists(script) ? script.string() : std::string();
}

void draw_plot(const Plan& plan, const std::vector<Row>& rows, bool quiet) {
    const std::string script = viz_script(plan.exe, "plot_sweep.py", "SKYFABRIC_PLOT_SWEEP");
    const char* python = "/usr/bin/python3";
    const fs::path log = plan.dir / "plots.log";
    auto warn = [&](const std::string& why) {
        if (!quiet) std::fprintf(stderr, "sweep: warning: no plot: %s\n", why.c_str());
    };
    if (script.empty()) return warn("viz/plot_sweep.py not found (set SKYFABRIC_PLOT_SWEEP)");
    if (access(python, X_OK) != 0) return warn(std::string(python) + " not found");
    std::vector<std::string> args = {python, script, plan.dir.string(), "--out", (plan.dir / "plots").string()};
    bool has_satellites_metric = false;
    for (const auto& r : rows) has_satellites_metric |= r.summary.contains("satellites");
    for (const auto& a : plan.spec.axes) {
        args.push_back("--param");
        args.push_back(a.key == satellites_key && has_satellites_metric ? std::string("satellites") : axis_column(a));
    }
    // Debian's interpreter with its own packages: no PYTHONPATH/PYTHONHOME from a venv.
    auto environment = environment_without({"PYTHONPATH", "PYTHONHOME"});
    environment.push_back("MPLBACKEND=Agg");
    pid_t pid = -1;
    const int rc = spawn_logged(args, environment, log, pid);
    if (rc != 0) return warn(std::string("cannot start ") + python + ": " + std::strerror(rc));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        warn("viz/plot_sweep.py failed (see " + log.string() + ")");
    }
}

}  // namespace skyfabric::sweep
