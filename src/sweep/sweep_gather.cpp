#include "sweep/sweep_gather.hpp"

#include <cstdio>
#include <utility>
#include <unistd.h>

namespace skyfabric::sweep {

using Clock = std::chrono::steady_clock;

Reporter::Reporter(std::size_t total, bool quiet) : total_(total), tty_(!quiet && isatty(STDERR_FILENO)) {}

void Reporter::add(const Row& r, std::size_t running) {
    ++done_;
    if (r.status != "ok") ++failed_;
    if (r.status == "failed") {
        clear();
        std::fprintf(stderr, "sweep: point %s failed: %s\n", r.name.c_str(), r.error.c_str());
    }
    draw(running);
}

void Reporter::draw(std::size_t running) {
    if (!tty_) return;
    const double t = std::chrono::duration<double>(Clock::now() - start_).count();
    std::fprintf(stderr, "\rsweep: %zu/%zu points done, %zu failed, %zu running, %.0f s   ", done_, total_, failed_,
                 running, t);
    std::fflush(stderr);
    drawn_ = true;
}

void Reporter::clear() {
    if (drawn_) std::fprintf(stderr, "\r%80s\r", "");
    drawn_ = false;
}

void Reporter::end() {
    if (drawn_) std::fprintf(stderr, "\n");
    drawn_ = false;
}

Gatherer::Gatherer(const Plan& plan, bool quiet, std::vector<Row> preset, std::vector<Row> earlier)
    : plan_(plan), reporter_(plan.points.size(), quiet), rows_(std::move(preset)), earlier_(std::move(earlier)) {
    reporter_.preset(rows_.size());
}

void Gatherer::add(Row r, std::size_t running) {
    reporter_.add(r, running);
    std::erase_if(earlier_, [&r](const Row& e) { return e.index == r.index; });
    rows_.push_back(std::move(r));
    write(false);
}

void Gatherer::write(bool complete) {
    TableInput in{plan_.spec.axes, &plan_.points, rows_, complete, plan_.scenario_yaml};
    in.rows.insert(in.rows.end(), earlier_.begin(), earlier_.end());
    write_table(plan_.dir, in);
}

PoolLoop Gatherer::loop_for(const Pool& pool) {
    return {.deliver = [this, &pool](Row r) { add(std::move(r), pool.running()); },
            .idle = [this, &pool] { reporter_.draw(pool.running()); }};
}

}  // namespace skyfabric::sweep
