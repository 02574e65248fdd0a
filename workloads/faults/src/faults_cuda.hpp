#pragma once
// Internal: fault sampling's CUDA entry point (faults_cuda.cu). Without the CUDA build it lives in
// faults_nocuda.cpp and throws.

#include <cstdint>
#include <vector>

#include <skyfabric/workloads/faults.hpp>

#include "fault_streams.hpp"

namespace skyfabric::workloads::detail {

// Trials first_trial … first_trial+trials-1 of core::sample_satellite_faults over every
// satellite. Each trial's events unsorted (satellite by satellite, each stream in time order).
std::vector<std::vector<FaultEvent>> cuda_sample_fault_events_batch(const FaultStreams& streams,
                                                                    std::uint64_t first_trial, std::int32_t trials);

}  // namespace skyfabric::workloads::detail
