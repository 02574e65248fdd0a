#include "sweep/process_pool.hpp"

#include "common/stop_signal.hpp"
#include "output/summary.hpp"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <thread>
#include <utility>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

extern char** environ;

namespace skyfabric::sweep {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

bool stopping() { return common::stop_signal() != 0; }

std::vector<std::string> environment_without(std::initializer_list<std::string_view> names) {
    std::vector<std::string> out;
    for (char** e = environ; *e; ++e) {
        const std::string_view entry(*e);
        bool named = false;
        for (const auto name : names) named |= entry.starts_with(name) && entry.substr(name.size()).starts_with('=');
        if (!named) out.push_back(*e);
    }
    return out;
}

int spawn_logged(const std::vector<std::string>& args, const std::vector<std::string>& environment,
                 const fs::path& log, pid_t& pid) {
    // posix_spawn's arrays are char* const[]; it does not write through them.
    auto pointers = [](const std::vector<std::string>& text) {
        std::vector<char*> out;
        for (const auto& s : text) out.push_back(const_cast<char*>(s.c_str()));
        out.push_back(nullptr);
        return out;
    };
    const std::vector<char*> argv = pointers(args), envp = pointers(environment);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    ::unlink(log.c_str());  // a planted symlink is removed, never followed (O_EXCL | O_NOFOLLOW below)
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    return rc;
}

namespace {

// Ours plus SKYFABRIC_PARENT_PID, which makes `skyfabric run` ask the kernel to stop it when this
// process dies (cli.cpp: PR_SET_PDEATHSIG), so a killed sweep leaves no point running.
const std::vector<std::string>& child_environment() {
    static const std::vector<std::string> text = [] {
        auto t = environment_without({"SKYFABRIC_PARENT_PID"});
        t.push_back("SKYFABRIC_PARENT_PID=" + std::to_string(static_cast<long>(getpid())));
        return t;
    }();
    return text;
}

std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The message a failed `skyfabric run` printed: its "skyfabric: ..." lines without the
// prefix, else its last non-empty line.
std::string error_from_log(const std::string& log) {
    std::vector<std::string> lines, messages;
    std::stringstream in(log);
    for (std::string line; std::getline(in, line);) {
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
        if (line.empty()) continue;
        lines.push_back(line);
        // A note (e.g. the sweep's own log.txt and point.json kept in the point's folder) says
        // nothing about why the run failed.
        if (line.rfind("skyfabric: note: ", 0) == 0) continue;
        for (const char* prefix : {"skyfabric: error: ", "skyfabric: run failed: ", "skyfabric: run stopped: ",
                                   "skyfabric: "}) {
            if (line.rfind(prefix, 0) == 0) {
                messages.push_back(line.substr(std::strlen(prefix)));
                break;
            }
        }
    }
    std::string out;
    for (const auto& m : messages) out += (out.empty() ? "" : "; ") + m;
    if (out.empty() && !lines.empty()) out = lines.back();
    if (out.size() > 2000) out.resize(2000);
    return out;
}

}  // namespace

void Pool::start(std::size_t index) {
    const Point& p = plan_.points.at(index);
    const fs::path dir = point_dir(plan_, p);
    std::error_code ec;
    fs::create_directories(dir, ec);
    // An earlier run's summary.json and row.json stay until this run replaces them: a sweep killed now
    // leaves the point as it was (`run` publishes its folder in one rename).
    const auto earlier_summary = stamp_of(dir / "summary.json");
    nlohmann::json description = {{"index", p.index}, {"name", p.name}, {"values", p.values},
                                  {"scenario_fingerprint", plan_.fingerprints.at(index)}};
    for (const auto& o : p.overrides) description["set"].push_back(o.path + "=" + o.value);
    try {
        output::write_json_file(dir / "point.json", description);
    } catch (const std::exception&) {
    }
    if (!p.error.empty()) {
        finished_.push_back(make_row(p, "failed", p.error, 0.0, nlohmann::json()));
        return;
    }
    std::vector<std::string> args = {plan_.exe.string(), "run", plan_.scenario_file, "-o", dir.string(),
                                     "--quiet", "--force", "--threads", std::to_string(plan_.threads)};
    if (plan_.yes) args.push_back("--yes");
    for (const auto& o : plan_.base_overrides) args.insert(args.end(), {"--set", o});
    for (const auto& o : p.overrides) args.insert(args.end(), {"--set", o.path + "=" + o.value});
    pid_t pid = -1;
    const int rc = spawn_logged(args, child_environment(), dir / "log.txt", pid);
    if (rc != 0) {
        finished_.push_back(make_row(p, "failed", "cannot start " + args[0] + ": " + std::strerror(rc), 0.0,
                                     nlohmann::json()));
        return;
    }
    running_.push_back({pid, index, Clock::now(), earlier_summary});
}

std::vector<Row> Pool::poll() {
    for (auto it = running_.begin(); it != running_.end();) {
        int status = 0;
        const pid_t r = waitpid(it->pid, &status, WNOHANG);
        if (r == 0 || (r < 0 && errno == EINTR)) {
            ++it;
            continue;
        }
        const double wall = std::chrono::duration<double>(Clock::now() - it->start).count();
        finished_.push_back(finish(plan_.points.at(it->index), status, r < 0, wall, it->earlier_summary));
        it = running_.erase(it);
    }
    return std::exchange(finished_, {});
}

void Pool::forward(int sig) {
    for (const auto& r : running_) kill(r.pid, sig);
}

Row Pool::make_row(const Point& p, std::string status, std::string error, double wall, nlohmann::json summary) {
    Row row;
    row.index = p.index;
    row.name = p.name;
    row.status = std::move(status);
    row.error = std::move(error);
    row.wall_s = wall;
    row.summary = std::move(summary);
    try {
        output::write_json_file(point_dir(plan_, p) / "row.json",
                                {{"status", row.status}, {"error", row.error}, {"wall_s", row.wall_s}});
    } catch (const std::exception&) {
    }
    return row;
}

std::optional<Pool::FileStamp> Pool::stamp_of(const fs::path& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
    return FileStamp{st.st_dev, st.st_ino, static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

Row Pool::finish(const Point& p, int status, bool lost, double wall, const std::optional<FileStamp>& earlier_summary) {
    const fs::path dir = point_dir(plan_, p);
    // The summary.json of an earlier run that this one did not replace (it failed before publishing) is not its own.
    const bool replaced = !earlier_summary || stamp_of(dir / "summary.json") != earlier_summary;
    const auto summary = replaced ? output::read_json_file(dir / "summary.json") : std::nullopt;
    const nlohmann::json s = summary ? *summary : nlohmann::json();
    const std::string log_error = error_from_log(read_text(dir / "log.txt"));
    if (lost) return make_row(p, "failed", "lost track of the point's process", wall, s);
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        const bool interrupted = sig == SIGINT || sig == SIGTERM;
        return make_row(p, interrupted ? "incomplete" : "failed",
                        std::string(interrupted ? "interrupted" : "crashed") + " (signal " + std::to_string(sig) +
                            ", " + strsignal(sig) + ")" + (log_error.empty() ? "" : ": " + log_error),
                        wall, s);
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    const bool complete = s.is_object() && s.value("complete", false);
    // 130 with a complete summary: stopped after its last sample, while its files were written (published whole).
    if ((code == 0 || code == 130) && complete) return make_row(p, "ok", "", wall, s);
    if (code == 130) return make_row(p, "incomplete", log_error.empty() ? "interrupted" : log_error, wall, s);
    std::string error = log_error.empty() ? "exit status " + std::to_string(code) : log_error;
    return make_row(p, "failed", error, wall, s);
}

void run_points(Pool& pool, PointSource& source, const PoolLoop& loop) {
    bool forwarded = false;
    while (true) {
        const bool busy = loop.serve && loop.serve();
        while (!stopping() && pool.has_room() && !source.exhausted()) {
            if (const auto index = source.next()) pool.start(*index);
        }
        if (stopping() && !forwarded) {
            pool.forward(common::stop_signal());
            forwarded = true;
        }
        auto rows = pool.poll();
        for (auto& r : rows) loop.deliver(std::move(r));
        if (pool.idle() && (stopping() || source.exhausted()) && (!loop.others_finished || loop.others_finished())) break;
        if (rows.empty() && !busy) {
            if (loop.idle) loop.idle();
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
}

}  // namespace skyfabric::sweep
