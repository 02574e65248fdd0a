#pragma once
// Rank 0's (or the only process's) book-keeping: the rows so far, the progress line, and the
// table rewritten after every row.
#include "sweep/process_pool.hpp"
#include "sweep/sweep_setup.hpp"
#include "sweep/sweep_table.hpp"

#include <chrono>
#include <cstddef>
#include <vector>

namespace skyfabric::sweep {

// Progress on a terminal (unless quiet), and a line per failed point always: quiet drops progress, not errors.
class Reporter {
public:
    Reporter(std::size_t total, bool quiet);
    void add(const Row& r, std::size_t running);
    void preset(std::size_t n) { done_ += n; }
    void draw(std::size_t running);
    void clear();
    void end();

private:
    std::size_t total_, done_ = 0, failed_ = 0;
    bool tty_, drawn_ = false;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

class Gatherer {
public:
    // `preset`: the rows of points a resumed sweep keeps. `earlier`: rows of an earlier sweep's points
    // that this one runs again, written in the table until each point's new row replaces its own.
    Gatherer(const Plan& plan, bool quiet, std::vector<Row> preset, std::vector<Row> earlier = {});
    void add(Row r, std::size_t running);
    void write(bool complete);
    Reporter& reporter() { return reporter_; }
    const std::vector<Row>& rows() const { return rows_; }
    // What a pool's loop does with its rows here: gather them and keep the progress line drawn.
    PoolLoop loop_for(const Pool& pool);

private:
    const Plan& plan_;
    Reporter reporter_;
    std::vector<Row> rows_;
    std::vector<Row> earlier_;
};

}  // namespace skyfabric::sweep
