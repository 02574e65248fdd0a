#pragma once
// A progress bar on a terminal (stderr), shown only once a run has lasted a second.
#include "simulation/simulation.hpp"

#include <chrono>

namespace skyfabric::cli {

class ProgressBar final : public simulation::Recorder {
public:
    explicit ProgressBar(bool enabled) : enabled_(enabled) {}
    void begin(const simulation::RunSetup& setup) override;
    void record(const simulation::Sample& sample) override;
    void end(const simulation::RunSummary& summary) override;
    void phase(const std::string& what) override;

private:
    bool enabled_;
    bool shown_ = false;
    std::size_t total_ = 0;
    std::chrono::steady_clock::time_point start_, last_draw_;
};

// True when stderr is an interactive terminal.
bool stderr_is_terminal();

}  // namespace skyfabric::cli
