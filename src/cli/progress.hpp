#pragma once
// A run's progress on stderr: a bar on a terminal, shown only once a run has lasted a second; or, for a
// log or a batch job's captured stderr (`run --progress`), a line per tenth of the samples and per phase.
#include "simulation/simulation.hpp"

#include <chrono>

namespace skyfabric::cli {

class ProgressBar final : public simulation::Recorder {
public:
    enum class Style { off, bar, lines };
    explicit ProgressBar(Style style) : style_(style) {}
    void begin(const simulation::RunSetup& setup) override;
    void record(const simulation::Sample& sample) override;
    void end(const simulation::RunSummary& summary) override;
    void phase(const std::string& what) override;

private:
    Style style_;
    bool shown_ = false;
    int tenths_shown_ = 0;  // lines: the tenths of the samples already reported
    std::size_t total_ = 0;
    std::chrono::steady_clock::time_point start_, last_draw_;
};

// True when stderr is an interactive terminal.
bool stderr_is_terminal();

}  // namespace skyfabric::cli
