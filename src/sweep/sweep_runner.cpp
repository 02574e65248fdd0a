#include "sweep/sweep_runner.hpp"

#include "common/stop_signal.hpp"
#include "output/hdf5_file.hpp"
#include "output/output_folder.hpp"
#include "output/sha256.hpp"
#include "output/summary.hpp"
#include "scenario/yaml_reader.hpp"
#include "sweep/messenger.hpp"
#include "sweep/sweep_plan.hpp"
#include "sweep/sweep_table.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <spawn.h>
#include <sstream>
#include <thread>
#include <utility>
#include <unistd.h>
#include <sys/wait.h>

extern char** environ;

namespace skyfabric::sweep {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

bool launched_under_mpi() {
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
        if (std::getenv(v)) return true;
    }
    return false;
}

namespace {

bool stopping() { return common::stop_signal() != 0; }

std::optional<nlohmann::json> read_json(const fs::path& path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    auto j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded()) return std::nullopt;
    return j;
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

std::string plot_script() {
    if (const char* env = std::getenv("SKYFABRIC_PLOT_SWEEP")) return env;
    // This file is src/sweep/sweep_runner.cpp in the source tree.
    const fs::path here(__FILE__);
    const fs::path script = here.parent_path().parent_path().parent_path() / "viz" / "plot_sweep.py";
    return fs::exists(script) ? script.string() : std::string();
}


// What every rank knows about the sweep (all compute the same plan).
struct Plan {
    std::string scenario_file;
    std::string scenario_yaml;  // with the base overrides, before any point's
    std::vector<std::string> base_overrides;
    SweepSpec spec;
    std::vector<Point> points;
    std::vector<std::string> fingerprints;  // per point: its scenario after every override (resume compares)
    fs::path dir;
    fs::path exe;
    int jobs = 1;
    int threads = 0;  // passed to every point's `run`, with --yes
    bool yes = false;
};

fs::path point_dir(const Plan& plan, const Point& p) { return plan.dir / "points" / p.name; }

// The points' environment: ours plus SKYFABRIC_PARENT_PID, which makes `skyfabric run` ask the kernel to
// stop it when this process dies (cli.cpp: PR_SET_PDEATHSIG), so a killed sweep leaves no point running.
std::vector<char*> child_environment() {
    static std::vector<std::string> text = [] {
        std::vector<std::string> t;
        for (char** e = environ; *e; ++e) {
            if (std::strncmp(*e, "SKYFABRIC_PARENT_PID=", 21) != 0) t.push_back(*e);
        }
        t.push_back("SKYFABRIC_PARENT_PID=" + std::to_string(static_cast<long>(getpid())));
        return t;
    }();
    std::vector<char*> out;
    for (auto& s : text) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

// A pool of child processes, each `skyfabric run` of one point.
class Pool {
public:
    Pool(const Plan& plan, int jobs) : plan_(plan), jobs_(jobs) {}

    bool has_room() const { return static_cast<int>(running_.size()) < jobs_; }
    bool idle() const { return running_.empty(); }
    std::size_t running() const { return running_.size(); }

    // Starts point `index`; a point that cannot start (bad pseudo-key value, spawn
    // failure) finishes at once and its row is returned by the next poll().
    void start(std::size_t index) {
        const Point& p = plan_.points.at(index);
        const fs::path dir = point_dir(plan_, p);
        std::error_code ec;
        fs::create_directories(dir, ec);
        fs::remove(dir / "summary.json", ec);
        fs::remove(dir / "row.json", ec);
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
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);

        const std::string log = (dir / "log.txt").string();
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
        ::unlink(log.c_str());  // a planted symlink is removed, never followed (O_EXCL | O_NOFOLLOW below)
        posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
        posix_spawn_file_actions_adddup2(&actions, 1, 2);
        pid_t pid = -1;
        const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), child_environment().data());
        posix_spawn_file_actions_destroy(&actions);
        if (rc != 0) {
            finished_.push_back(make_row(p, "failed", std::string("cannot start ") + argv[0] + ": " + std::strerror(rc),
                                         0.0, nlohmann::json()));
            return;
        }
        running_.push_back({pid, index, Clock::now()});
    }

    // Rows of points that have finished since the last call.
    std::vector<Row> poll() {
        for (auto it = running_.begin(); it != running_.end();) {
            int status = 0;
            const pid_t r = waitpid(it->pid, &status, WNOHANG);
            if (r == 0 || (r < 0 && errno == EINTR)) {
                ++it;
                continue;
            }
            const double wall = std::chrono::duration<double>(Clock::now() - it->start).count();
            finished_.push_back(finish(plan_.points.at(it->index), status, r < 0, wall));
            it = running_.erase(it);
        }
        return std::exchange(finished_, {});
    }

    // Passes a signal on to every running point (they stop and mark themselves incomplete).
    void forward(int sig) {
        for (const auto& r : running_) kill(r.pid, sig);
    }

private:
    struct Running {
        pid_t pid;
        std::size_t index;
        Clock::time_point start;
    };

    Row make_row(const Point& p, std::string status, std::string error, double wall, nlohmann::json summary) {
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

    Row finish(const Point& p, int status, bool lost, double wall) {
        const fs::path dir = point_dir(plan_, p);
        const auto summary = read_json(dir / "summary.json");
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
        if (code == 0 && complete) return make_row(p, "ok", "", wall, s);
        if (code == 130) return make_row(p, "incomplete", log_error.empty() ? "interrupted" : log_error, wall, s);
        std::string error = log_error.empty() ? "exit status " + std::to_string(code) : log_error;
        return make_row(p, "failed", error, wall, s);
    }

    const Plan& plan_;
    int jobs_;
    std::vector<Running> running_;
    std::vector<Row> finished_;
};

// Progress on a terminal (unless quiet), and a line per failed point always: quiet drops progress, not errors.
class Reporter {
public:
    Reporter(std::size_t total, bool quiet) : total_(total), tty_(!quiet && isatty(STDERR_FILENO)) {}
    void add(const Row& r, std::size_t running) {
        ++done_;
        if (r.status != "ok") ++failed_;
        if (r.status == "failed") {
            clear();
            std::fprintf(stderr, "sweep: point %s failed: %s\n", r.name.c_str(), r.error.c_str());
        }
        draw(running);
    }
    void preset(std::size_t n) { done_ += n; }
    void draw(std::size_t running) {
        if (!tty_) return;
        const double t = std::chrono::duration<double>(Clock::now() - start_).count();
        std::fprintf(stderr, "\rsweep: %zu/%zu points done, %zu failed, %zu running, %.0f s   ", done_, total_, failed_,
                     running, t);
        std::fflush(stderr);
        drawn_ = true;
    }
    void clear() {
        if (drawn_) std::fprintf(stderr, "\r%80s\r", "");
        drawn_ = false;
    }
    void end() {
        if (drawn_) std::fprintf(stderr, "\n");
        drawn_ = false;
    }

private:
    std::size_t total_, done_ = 0, failed_ = 0;
    bool tty_, drawn_ = false;
    Clock::time_point start_ = Clock::now();
};

Plan make_plan(const SweepOptions& o) {
    Plan plan;
    plan.scenario_file = o.scenario_file;
    plan.base_overrides = o.overrides;
    plan.threads = o.threads;
    plan.yes = o.yes;
    std::vector<scenario::Override> base_overrides;
    for (const auto& a : o.overrides) base_overrides.push_back(scenario::parse_override(a));
    const auto base = scenario::load_scenario_file(o.scenario_file, base_overrides);
    plan.scenario_yaml = base.yaml_text;

    std::vector<Axis> cli_axes;
    for (const auto& v : o.vary) cli_axes.push_back(parse_vary_argument(v));
    plan.spec = merge(read_sweep_block(scenario::read_scenario_file(o.scenario_file), o.scenario_file), cli_axes, o.zip);
    plan.points = expand(plan.spec, base_formation(base));
    // Every point is loaded now, so a value a point cannot take is refused before anything runs (exit 2),
    // and each point's full scenario text fingerprints it for --resume.
    std::string refused;
    std::size_t refused_count = 0;
    for (const auto& p : plan.points) {
        std::string point_text;
        if (p.error.empty()) {
            auto overrides = base_overrides;
            overrides.insert(overrides.end(), p.overrides.begin(), p.overrides.end());
            try {
                point_text = scenario::load_scenario_file(o.scenario_file, overrides, {.refuse_large_runs = !o.yes}).yaml_text;
            } catch (const scenario::ScenarioError& e) {
                if (++refused_count <= 5) refused += "\n  point " + p.name + ": " + e.what();
            }
        }
        plan.fingerprints.push_back(output::sha256_hex(point_text));  // = the point's summary.json scenario_sha256
    }
    if (refused_count > 0) {
        throw scenario::ScenarioError(std::to_string(refused_count) + " of " + std::to_string(plan.points.size()) +
                                      " sweep points are not valid scenarios" + refused +
                                      (refused_count > 5 ? "\n  ..." : ""));
    }
    plan.dir = o.output_dir.empty() ? fs::path("out") / (base.name + "-sweep") : fs::path(o.output_dir);

    std::error_code ec;
    plan.exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw std::runtime_error("cannot find the skyfabric program (/proc/self/exe): " + ec.message());
    return plan;
}

// Refuses a folder holding a complete sweep unless --resume or --force (like `run`).
void refuse_to_overwrite(const Plan& plan, const SweepOptions& o) {
    if (o.resume || o.force) return;
    const auto manifest = read_json(plan.dir / "sweep.json");
    if (manifest && manifest->value("complete", false)) {
        throw scenario::ScenarioError(plan.dir.string() +
                                      " already holds a complete sweep; choose another -o folder, pass --resume to "
                                      "re-run only points without a complete result, or --force to run it all again");
    }
}

nlohmann::json manifest(const Plan& plan, const SweepOptions& o, bool complete, std::size_t ranks, int jobs) {
    nlohmann::json axes = nlohmann::json::array();
    for (const auto& a : plan.spec.axes) axes.push_back({{"key", a.key}, {"values", a.values}});
    nlohmann::json points = nlohmann::json::array();
    for (const auto& p : plan.points) points.push_back(p.name);
    return {{"scenario", plan.scenario_file}, {"set", plan.base_overrides}, {"axes", axes},
            {"zip", plan.spec.zip},          {"points", points},          {"complete", complete},
            {"ranks", ranks},                {"jobs_per_rank", jobs}};
}

// The files a complete point's summary.json lists are there, and its result.h5 opens and says complete
// (a point killed while writing, or overwritten by a stray process, is run again).
bool published_files_intact(const fs::path& dir, const nlohmann::json& summary) {
    const auto files = summary.find("files");
    if (files == summary.end() || !files->is_array()) return false;  // written before files were listed
    for (const auto& f : *files) {
        if (!f.is_string()) return false;
        const fs::path path = dir / f.get<std::string>();
        std::error_code ec;
        if (!fs::is_regular_file(fs::symlink_status(path, ec))) return false;
        if (f.get<std::string>() == "result.h5" && !output::hdf5_run_file_is_complete(path)) return false;
    }
    return true;
}

// Rows of points already complete in their folders (for --resume).
std::vector<Row> completed_rows(const Plan& plan) {
    std::vector<Row> rows;
    for (const auto& p : plan.points) {
        const fs::path dir = point_dir(plan, p);
        const auto summary = read_json(dir / "summary.json");
        if (!summary || !summary->value("complete", false) || !published_files_intact(dir, *summary)) continue;
        // Run with other settings (the scenario file or an override changed since): run it again.
        const auto point = read_json(dir / "point.json");
        if (!point || point->value("scenario_fingerprint", std::string()) != plan.fingerprints.at(p.index)) continue;
        Row r;
        r.index = p.index;
        r.name = p.name;
        r.status = "ok";
        r.summary = *summary;
        const auto row = read_json(dir / "row.json");
        r.wall_s = row ? row->value("wall_s", 0.0) : summary->value("wall_s", 0.0);
        rows.push_back(std::move(r));
    }
    return rows;
}

// Rank 0's (or the only process's) book-keeping: rows so far, table rewrites.
class Gatherer {
public:
    Gatherer(const Plan& plan, bool quiet, std::vector<Row> preset)
        : plan_(plan), reporter_(plan.points.size(), quiet), rows_(std::move(preset)) {
        reporter_.preset(rows_.size());
    }
    void add(Row r, std::size_t running) {
        reporter_.add(r, running);
        rows_.push_back(std::move(r));
        write(false);
    }
    void write(bool complete) {
        TableInput in{plan_.spec.axes, &plan_.points, rows_, complete, plan_.scenario_yaml};
        write_table(plan_.dir, in);
    }
    Reporter& reporter() { return reporter_; }
    const std::vector<Row>& rows() const { return rows_; }

private:
    const Plan& plan_;
    Reporter reporter_;
    std::vector<Row> rows_;
};

void sleep_a_little() { std::this_thread::sleep_for(std::chrono::milliseconds(10)); }

// The local loop: hand points to the pool until done or stopped.
void run_local(const Plan& plan, const std::vector<std::size_t>& todo, Gatherer& gather, int jobs) {
    Pool pool(plan, jobs);
    std::size_t next = 0;
    bool forwarded = false;
    while (true) {
        while (!stopping() && pool.has_room() && next < todo.size()) pool.start(todo[next++]);
        if (stopping() && !forwarded) {
            pool.forward(common::stop_signal());
            forwarded = true;
        }
        auto rows = pool.poll();
        for (auto& r : rows) gather.add(std::move(r), pool.running());
        if (pool.idle() && (stopping() || next >= todo.size())) break;
        if (rows.empty()) {
            gather.reporter().draw(pool.running());
            sleep_a_little();
        }
    }
}

constexpr int tag_request = 1, tag_assign = 2, tag_result = 3, tag_done = 4;

// Rank 0: serves requests for points, gathers rows, runs points of its own too.
void run_mpi_root(const Plan& plan, const std::vector<std::size_t>& todo, Gatherer& gather, int jobs, Messenger& mpi) {
    Pool pool(plan, jobs);
    std::size_t next = 0;
    int workers_done = 0;
    bool forwarded = false;
    while (true) {
        bool busy = false;
        while (auto message = mpi.try_receive()) {
            busy = true;
            if (message->tag == tag_request) {
                long long assign = -1;
                if (!stopping() && next < todo.size()) assign = static_cast<long long>(todo[next++]);
                mpi.send(message->source, tag_assign, std::to_string(assign));
            } else if (message->tag == tag_result) {
                gather.add(Row::from_json(nlohmann::json::parse(message->bytes)), pool.running());
            } else if (message->tag == tag_done) {
                ++workers_done;
            }
        }
        while (!stopping() && pool.has_room() && next < todo.size()) pool.start(todo[next++]);
        if (stopping() && !forwarded) {
            pool.forward(common::stop_signal());
            forwarded = true;
        }
        auto rows = pool.poll();
        for (auto& r : rows) gather.add(std::move(r), pool.running());
        if (pool.idle() && (stopping() || next >= todo.size()) && workers_done == mpi.size() - 1) break;
        if (rows.empty() && !busy) {
            gather.reporter().draw(pool.running());
            sleep_a_little();
        }
    }
}

// Other ranks: ask rank 0 for a point whenever a worker slot is free, send back rows.
void run_mpi_worker(const Plan& plan, int jobs, Messenger& mpi) {
    Pool pool(plan, jobs);
    bool no_more = false, forwarded = false;
    while (true) {
        while (!no_more && !stopping() && pool.has_room()) {
            mpi.send(0, tag_request, {});
            const long long assign = std::stoll(mpi.receive(0, tag_assign));
            if (assign < 0) {
                no_more = true;
            } else {
                pool.start(static_cast<std::size_t>(assign));
            }
        }
        if (stopping() && !forwarded) {
            pool.forward(common::stop_signal());
            forwarded = true;
        }
        auto rows = pool.poll();
        for (const auto& r : rows) mpi.send(0, tag_result, r.to_json().dump());
        if (pool.idle() && (no_more || stopping())) break;
        if (rows.empty()) sleep_a_little();
    }
    mpi.send(0, tag_done, {});
}

void draw_plot(const Plan& plan, const Gatherer& gather, bool quiet) {
    const std::string script = plot_script();
    const char* python = "/usr/bin/python3";
    const fs::path log = plan.dir / "plots.log";
    auto warn = [&](const std::string& why) {
        if (!quiet) std::fprintf(stderr, "sweep: warning: no plot: %s\n", why.c_str());
    };
    if (script.empty()) return warn("viz/plot_sweep.py not found (set SKYFABRIC_PLOT_SWEEP)");
    if (access(python, X_OK) != 0) return warn(std::string(python) + " not found");
    std::vector<std::string> args = {python, script, plan.dir.string(), "--out", (plan.dir / "plots").string()};
    bool has_satellites_metric = false;
    for (const auto& r : gather.rows()) has_satellites_metric |= r.summary.contains("satellites");
    for (const auto& a : plan.spec.axes) {
        args.push_back("--param");
        args.push_back(a.key == satellites_key && has_satellites_metric ? std::string("satellites") : axis_column(a));
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    ::unlink(log.c_str());
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    // Debian's interpreter with its own packages: no PYTHONPATH/PYTHONHOME from a venv.
    std::vector<std::string> env_text;
    for (char** e = environ; *e; ++e) {
        if (std::strncmp(*e, "PYTHONPATH=", 11) != 0 && std::strncmp(*e, "PYTHONHOME=", 11) != 0) env_text.push_back(*e);
    }
    env_text.push_back("MPLBACKEND=Agg");
    std::vector<char*> envp;
    for (auto& e : env_text) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, python, &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return warn(std::string("cannot start ") + python + ": " + std::strerror(rc));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        warn("viz/plot_sweep.py failed (see " + log.string() + ")");
    }
}

// The folders under points/ that the plan does not name (an earlier sweep's); symlinks are
// removed, never followed.
void remove_points_not_in(const Plan& plan) {
    std::set<std::string> names;
    for (const auto& p : plan.points) names.insert(p.name);
    std::error_code ec;
    for (fs::directory_iterator it(plan.dir / "points", ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (!names.count(name) && name.front() != '.') fs::remove_all(it->path(), ec);
    }
}

int finish_root(const Plan& plan, const SweepOptions& o, Gatherer& gather, std::size_t ranks, int jobs) {
    // Complete: every point has a final result (ok or failed); an interrupted point is not one.
    bool all_ran = gather.rows().size() == plan.points.size() && !stopping();
    for (const auto& r : gather.rows()) all_ran = all_ran && r.status != "incomplete";
    gather.reporter().end();
    if (all_ran) remove_points_not_in(plan);
    gather.write(all_ran);
    output::write_json_file(plan.dir / "sweep.json", manifest(plan, o, all_ran, ranks, jobs));
    std::size_t ok = 0, failed = 0, incomplete = 0;
    for (const auto& r : gather.rows()) {
        if (r.status == "ok") ++ok;
        else if (r.status == "failed") ++failed;
        else ++incomplete;
    }
    if (o.plot && !stopping() && !gather.rows().empty()) draw_plot(plan, gather, o.quiet);
    if (!o.quiet) {
        std::printf("sweep: %zu points: %zu ok, %zu failed, %zu incomplete, %zu not run\n", plan.points.size(), ok,
                    failed, incomplete, plan.points.size() - gather.rows().size());
        std::printf("  table   %s  %s\n", (plan.dir / "sweep.csv").c_str(), (plan.dir / "sweep.h5").c_str());
        std::printf("  points  %s/\n", (plan.dir / "points").c_str());
    }
    if (stopping()) {
        std::fprintf(stderr, "sweep: interrupted; the table holds the %zu points finished (re-run with --resume)\n",
                     gather.rows().size());
        return 130;
    }
    return (failed || incomplete) ? 1 : 0;
}

// Points to run: all, or with --resume those without a complete summary.json. Also
// clears a previous sweep's points when not resuming.
std::vector<std::size_t> prepare_directory(const Plan& plan, const SweepOptions& o, std::vector<Row>& preset) {
    std::error_code ec;
    fs::create_directories(plan.dir, ec);
    if (ec) throw output::OutputError("cannot create output folder " + plan.dir.string() + ": " + ec.message());
    // Earlier points stay until this plan replaces them (a point's folder is replaced when its
    // run starts; folders of points the plan no longer has go once the sweep is complete), so a
    // sweep killed after --force or a rerun loses nothing it had not yet redone.
    if (!o.resume) {
        fs::remove_all(plan.dir / "plots", ec);
    } else {
        preset = completed_rows(plan);
    }
    fs::create_directories(plan.dir / "points", ec);
    std::vector<bool> done(plan.points.size(), false);
    for (const auto& r : preset) done[r.index] = true;
    std::vector<std::size_t> todo;
    for (std::size_t i = 0; i < plan.points.size(); ++i) {
        if (!done[i]) todo.push_back(i);
    }
    return todo;
}

int default_jobs() {
    const unsigned n = std::thread::hardware_concurrency();
    return n ? static_cast<int>(n) : 1;
}

}  // namespace

int run_sweep(const SweepOptions& o) {
    if (o.jobs < 0) throw scenario::ScenarioError("--jobs must be at least 1");
    Plan plan = make_plan(o);  // bad input throws here, on every rank alike, before MPI starts
    refuse_to_overwrite(plan, o);
    common::install_stop_handlers(common::InterruptedCalls::fail);

#if SKYFABRIC_WITH_MPI
    if (launched_under_mpi()) {
        const auto mpi = start_mpi();
        const int jobs = o.jobs > 0 ? o.jobs : 1;
        plan.jobs = jobs;
        int result = 0;
        if (mpi->rank() == 0) {
            std::vector<Row> preset;
            std::vector<std::size_t> todo;
            std::string setup_error;
            std::optional<output::FolderLock> lock;
            try {
                lock.emplace(plan.dir);
                todo = prepare_directory(plan, o, preset);
                output::write_json_file(plan.dir / "sweep.json", manifest(plan, o, false, mpi->size(), jobs));
            } catch (const std::exception& e) {
                setup_error = e.what();
            }
            if (!setup_error.empty()) {
                std::fprintf(stderr, "skyfabric: sweep failed: %s\n", setup_error.c_str());
                mpi->abort(1);
            }
            mpi->barrier();
            Gatherer gather(plan, o.quiet, std::move(preset));
            gather.write(false);
            run_mpi_root(plan, todo, gather, jobs, *mpi);
            result = finish_root(plan, o, gather, static_cast<std::size_t>(mpi->size()), jobs);
        } else {
            mpi->barrier();
            run_mpi_worker(plan, jobs, *mpi);
            result = stopping() ? 130 : 0;
        }
        return result;  // the messenger finalizes MPI as it goes
    }
#endif

    const int jobs = o.jobs > 0 ? o.jobs : default_jobs();
    plan.jobs = jobs;
    const output::FolderLock lock(plan.dir);  // another sweep (or run) in this folder is refused (exit 2)
    refuse_to_overwrite(plan, o);             // again, now that the folder is ours
    std::vector<Row> preset;
    const auto todo = prepare_directory(plan, o, preset);
    output::write_json_file(plan.dir / "sweep.json", manifest(plan, o, false, 1, jobs));
    Gatherer gather(plan, o.quiet, std::move(preset));
    gather.write(false);
    run_local(plan, todo, gather, jobs);
    return finish_root(plan, o, gather, 1, jobs);
}

}  // namespace skyfabric::sweep
