#pragma once
// Internal: entry points of the CUDA backend (*.cu). Without the CUDA build they live in
// cuda_backend_nocuda.cpp: no device is reported and the batch calls throw.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <skyfabric/workloads/faults.hpp>
#include <skyfabric/workloads/flow_solver.hpp>

#include "fault_streams.hpp"

namespace skyfabric::workloads::detail {

int cuda_device_count();
std::string cuda_unavailable_reason();
std::vector<std::vector<double>> cuda_solve_rates_batch(std::span<const FlowProblem> problems);
void cuda_drain_batch(std::span<const FlowProblem> problems, std::vector<DrainResult>& out);
// Trials first_trial … first_trial+trials-1 of core::sample_satellite_faults over every
// satellite. Each trial's events unsorted (satellite by satellite, each stream in time order).
std::vector<std::vector<FaultEvent>> cuda_sample_fault_events_batch(const FaultStreams& streams,
                                                                    std::uint64_t first_trial, std::int32_t trials);

}  // namespace skyfabric::workloads::detail
