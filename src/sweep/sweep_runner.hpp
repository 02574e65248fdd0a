#pragma once
// Runs a sweep: every point in its own child process (`skyfabric run ... --set ...`,
// the program re-executed through /proc/self/exe), a pool of --jobs at a time, and, when
// started under mpirun in an MPI build, points handed out one at a time to the ranks
// that ask (rank 0 hands out, gathers and writes the table, and runs points too).
#include <string>
#include <vector>

namespace skyfabric::sweep {

struct SweepOptions {
    std::string scenario_file;
    std::vector<std::string> overrides;  // --set on the base scenario
    std::vector<std::string> vary;       // --vary key.path=v1,v2,...
    bool zip = false;
    int jobs = 0;                        // 0: cores (1 per rank under mpirun)
    std::string output_dir;              // default out/<name>-sweep
    bool resume = false;
    bool force = false;
    bool quiet = false;
    bool plot = true;
    int threads = 0;                     // --threads for every point (0: every core)
    bool yes = false;                    // --yes: points over the unconfirmed run size may start
};

// Returns the exit status: 0 every point ok, 1 some point failed or is incomplete,
// 130 interrupted. Throws scenario::ScenarioError for bad input (exit 2).
int run_sweep(const SweepOptions& options);

}  // namespace skyfabric::sweep
