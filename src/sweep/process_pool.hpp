#pragma once
// The sweep's points as child processes: each a `skyfabric run ... --set ...` of the program
// itself, its output in log.txt, its outcome read back into a Row; and the one loop that keeps a
// pool busy, which a local sweep and every MPI rank run.
#include "sweep/sweep_setup.hpp"
#include "sweep/sweep_table.hpp"

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace skyfabric::sweep {

// True once SIGINT or SIGTERM has arrived (common/stop_signal.hpp): no point starts after it.
bool stopping();

// This process's environment without the variables named.
std::vector<std::string> environment_without(std::initializer_list<std::string_view> names);

// Starts args[0] with stdin from /dev/null and stdout and stderr into `log`, made afresh.
// Returns posix_spawn's error number (0: started, its id in `pid`).
int spawn_logged(const std::vector<std::string>& args, const std::vector<std::string>& environment,
                 const std::filesystem::path& log, pid_t& pid);

// At most `jobs` points running at once.
class Pool {
public:
    Pool(const Plan& plan, int jobs) : plan_(plan), jobs_(jobs) {}

    bool has_room() const { return static_cast<int>(running_.size()) < jobs_; }
    bool idle() const { return running_.empty(); }
    std::size_t running() const { return running_.size(); }

    // Starts point `index`; a point that cannot start (bad pseudo-key value, spawn
    // failure) finishes at once and its row is returned by the next poll().
    void start(std::size_t index);
    // Rows of points that have finished since the last call.
    std::vector<Row> poll();
    // Passes a signal on to every running point (they stop and mark themselves incomplete).
    void forward(int sig);

private:
    // A file's identity (device, inode, modification time): the summary.json an earlier run left in a
    // point's folder stays there while the point runs again (a kill then leaves the point old or new),
    // and is told from the new run's own by this.
    struct FileStamp {
        dev_t dev = 0;
        ino_t ino = 0;
        std::int64_t mtime_ns = 0;
        bool operator==(const FileStamp&) const = default;
    };
    static std::optional<FileStamp> stamp_of(const std::filesystem::path& path);

    struct Running {
        pid_t pid;
        std::size_t index;
        std::chrono::steady_clock::time_point start;
        std::optional<FileStamp> earlier_summary;
    };

    Row make_row(const Point& p, std::string status, std::string error, double wall, nlohmann::json summary);
    Row finish(const Point& p, int status, bool lost, double wall, const std::optional<FileStamp>& earlier_summary);

    const Plan& plan_;
    int jobs_;
    std::vector<Running> running_;
    std::vector<Row> finished_;
};

// Where a pool's points come from.
class PointSource {
public:
    virtual ~PointSource() = default;
    virtual bool exhausted() const = 0;
    // The next point, or none when it turns out there are no more.
    virtual std::optional<std::size_t> next() = 0;
};

// The points still to run, in order: a local sweep's, and rank 0's for its pool and the other ranks.
class TodoList : public PointSource {
public:
    explicit TodoList(std::vector<std::size_t> todo) : todo_(std::move(todo)) {}
    bool exhausted() const override { return next_ >= todo_.size(); }
    std::optional<std::size_t> next() override {
        if (exhausted()) return std::nullopt;
        return todo_[next_++];
    }

private:
    std::vector<std::size_t> todo_;
    std::size_t next_ = 0;
};

// What a process does around its pool; only `deliver` is required.
struct PoolLoop {
    std::function<void(Row)> deliver = nullptr;       // each finished point's row
    std::function<bool()> serve = nullptr;            // first in each round; true when it had work (no sleep then)
    std::function<bool()> others_finished = nullptr;  // the loop also waits for this
    std::function<void()> idle = nullptr;             // before each short sleep
};

// Keeps `pool` full from `source` until the source is exhausted or a stop signal came (passed on
// once to the running points), then until the pool is empty.
void run_points(Pool& pool, PointSource& source, const PoolLoop& loop);

}  // namespace skyfabric::sweep
