// CPU-only builds: the flow solver's CUDA entry points exist but refuse, so callers link either way.
#if !SKYFABRIC_HAVE_CUDA

#include <stdexcept>

#include "flow_solver_cuda.hpp"

namespace skyfabric::workloads::detail {

namespace {
[[noreturn]] void refuse() { throw std::runtime_error("skyfabric was built without the CUDA backend"); }
}  // namespace

std::vector<std::vector<double>> cuda_solve_rates_batch(std::span<const FlowProblem>) { refuse(); }
void cuda_drain_batch(std::span<const FlowProblem>, std::vector<DrainResult>&) { refuse(); }
void cuda_spread_drain(const FlowProblem&, DrainResult&) { refuse(); }
std::vector<double> cuda_spread_rates(const FlowProblem&) { refuse(); }

}  // namespace skyfabric::workloads::detail

#endif
