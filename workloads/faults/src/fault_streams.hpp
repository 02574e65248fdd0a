#pragma once
// Internal: the fault files' shared helpers, and everything the fault streams of a batch of trials share, built once on the host
// and handed to either backend. Trial t's stream for satellite s thins windows
// [window_offsets[s], window_offsets[s+1]) of s's dose-rate column with its own counters.

#include <cstdint>
#include <vector>

#include <skyfabric/workloads/faults.hpp>

namespace skyfabric::workloads::detail {

constexpr std::size_t kind_index(FaultKind k) { return static_cast<std::size_t>(k); }
// Throws std::invalid_argument unless the series has satellites, samples, a step and its values.
void check_series(const DoseRateSeries& s);
// Per-rad event multipliers n_k / D_k × rate_scale (1/rad) for the dose-driven kinds; 0 for link outages.
std::array<double, fault_kind_count> per_rad(const FaultModel& m);
// The link-outage rate per satellite, rate_scale applied.
inline double link_outage_rate_per_s(const FaultModel& m) { return m.link_outage_rate_per_s * m.rate_scale; }
// The gateway-terminal outage rate per gateway satellite, rate_scale applied.
inline double gateway_outage_rate_per_s(const FaultModel& m) { return m.gateway_outage_rate_per_s * m.rate_scale; }

struct FaultStreams {
    std::int32_t satellite_count = 0;
    std::int64_t sample_count = 0;
    double start_s = 0.0, step_s = 0.0, end_s = 0.0;
    std::vector<double> dose_rate_by_satellite;  // satellite-major: column s at s · sample_count
    std::vector<std::int64_t> window_offsets;    // satellite_count + 1
    std::vector<core::ThinningWindow> windows;
    core::FaultMarks marks;
    std::vector<std::int32_t> gateway_satellites;  // each with a gateway-terminal stream (host only)
    double gateway_outage_rate_per_s = 0.0;
    std::uint64_t key = 0;  // Philox key: derive_seed(seed, core::faults_seed_tag)
    // Operational faults (host only, a few events per trial): each satellite's constant rate
    // (rate_scale and its weight applied), the causes' cumulative shares, and the table itself.
    std::vector<double> operational_rate_per_s;
    std::vector<double> operational_cumulative;
    OperationalFaults operational;
};

// The operational stream's id kind (fault_stream_id(trial, satellite, 6)): after the dose-driven
// stream (0), link outages (4) and gateway outages (5), so those draw what they drew before.
inline constexpr std::uint32_t operational_stream = 6;

// Checks the series and the model (std::invalid_argument) and builds the shared inputs.
FaultStreams prepare_fault_streams(const DoseRateSeries& series, const FaultModel& model, double duration_s,
                                   std::uint64_t seed);

// Trials first_trial … first_trial+trials-1 of the prepared streams, each sorted, on the backend.
std::vector<std::vector<FaultEvent>> sample_batch(const FaultStreams& f, std::uint64_t first_trial, std::int32_t trials,
                                                  Backend backend);

}  // namespace skyfabric::workloads::detail
