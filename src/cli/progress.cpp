#include "cli/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace skyfabric::cli {

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

void ProgressBar::begin(const simulation::RunSetup& setup) {
    total_ = setup.sample_count;
    start_ = last_draw_ = std::chrono::steady_clock::now();
}

void ProgressBar::record(const simulation::Sample& sample) {
    if (style_ == Style::off || total_ == 0) return;
    if (style_ == Style::lines) {
        const int tenths = static_cast<int>(10 * (sample.index + 1) / total_);
        if (tenths <= tenths_shown_) return;
        tenths_shown_ = tenths;
        std::fprintf(stderr, "skyfabric: %d%% of the samples (t = %.0f s)\n", 10 * tenths, sample.snapshot->time_s);
        std::fflush(stderr);
        return;
    }
    const auto now = std::chrono::steady_clock::now();
    const double elapsed_s = std::chrono::duration<double>(now - start_).count();
    if (elapsed_s < 1.0 || now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    shown_ = true;
    const double fraction = static_cast<double>(sample.index + 1) / static_cast<double>(total_);
    const int width = 40;
    const int filled = static_cast<int>(fraction * width);
    const double eta_s = fraction > 0 ? elapsed_s * (1.0 - fraction) / fraction : 0.0;
    std::fprintf(stderr, "\r[%.*s%*s] %5.1f%%  t = %.0f s  eta %.0f s ", filled, "########################################",
                 width - filled, "", 100.0 * fraction, sample.snapshot->time_s, eta_s);
    std::fflush(stderr);
}

void ProgressBar::phase(const std::string& what) {
    if (style_ == Style::off) return;
    if (style_ == Style::lines) {
        std::fprintf(stderr, "skyfabric: samples done; %s\n", what.c_str());
        std::fflush(stderr);
        return;
    }
    shown_ = true;
    std::fprintf(stderr, "\r%-90s", ("samples done; " + what).c_str());
    std::fflush(stderr);
}

void ProgressBar::end(const simulation::RunSummary&) {
    if (shown_) std::fprintf(stderr, "\r%*s\r", 90, "");
}

}  // namespace skyfabric::cli
