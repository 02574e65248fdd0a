// CPU-only builds: the CUDA entry points exist but refuse, so callers link either way.
#if !SKYFABRIC_HAVE_CUDA

#include <stdexcept>

#include "cuda_backend.hpp"

namespace skyfabric::workloads::detail {

namespace {
[[noreturn]] void refuse() { throw std::runtime_error("skyfabric was built without the CUDA backend"); }
}  // namespace

int cuda_device_count() { return 0; }
std::string cuda_unavailable_reason() {
    return "skyfabric was built without the CUDA backend (no CUDA toolkit or SKYFABRIC_CUDA=OFF)";
}
std::vector<std::vector<double>> cuda_solve_rates_batch(std::span<const FlowProblem>) { refuse(); }
void cuda_drain_batch(std::span<const FlowProblem>, std::vector<DrainResult>&) { refuse(); }
std::vector<std::vector<FaultEvent>> cuda_sample_fault_events_batch(const FaultStreams&, std::uint64_t,
                                                                    std::int32_t) {
    refuse();
}

}  // namespace skyfabric::workloads::detail

#endif
