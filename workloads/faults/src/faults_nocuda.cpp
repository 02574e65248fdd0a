// CPU-only builds: fault sampling's CUDA entry point exists but refuses, so callers link either way.
#if !SKYFABRIC_HAVE_CUDA

#include <stdexcept>

#include "faults_cuda.hpp"

namespace skyfabric::workloads::detail {

std::vector<std::vector<FaultEvent>> cuda_sample_fault_events_batch(const FaultStreams&, std::uint64_t,
                                                                    std::int32_t) {
    throw std::runtime_error("skyfabric was built without the CUDA backend");
}

}  // namespace skyfabric::workloads::detail

#endif
