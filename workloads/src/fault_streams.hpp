#pragma once
// Internal: everything the fault streams of a batch of trials share, built once on the host
// and handed to either backend. Trial t's stream for satellite s thins windows
// [window_offsets[s], window_offsets[s+1]) of s's dose-rate column with its own counters.

#include <cstdint>
#include <vector>

#include <skyfabric/workloads/faults.hpp>

namespace skyfabric::workloads::detail {

struct FaultStreams {
    std::int32_t satellite_count = 0;
    std::int64_t sample_count = 0;
    double start_s = 0.0, step_s = 0.0, end_s = 0.0;
    std::vector<double> dose_rate_by_satellite;  // satellite-major: column s at s · sample_count
    std::vector<std::int64_t> window_offsets;    // satellite_count + 1
    std::vector<core::ThinningWindow> windows;
    core::FaultMarks marks;
    std::uint64_t key = 0;  // Philox key: derive_seed(seed, core::faults_seed_tag)
};

// Checks the series and the model (std::invalid_argument) and builds the shared inputs.
FaultStreams prepare_fault_streams(const DoseRateSeries& series, const FaultModel& model, double duration_s,
                                   std::uint64_t seed);

}  // namespace skyfabric::workloads::detail
