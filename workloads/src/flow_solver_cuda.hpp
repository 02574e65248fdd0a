#pragma once
// Internal: entry points of the CUDA backend (flow_solver_cuda.cu). Without the CUDA
// build these throw, and cuda_device_count() is never asked.

#include <span>
#include <string>
#include <vector>

#include <skyfabric/workloads/flow_solver.hpp>

namespace skyfabric::workloads::detail {

int cuda_device_count();
std::string cuda_unavailable_reason();
std::vector<std::vector<double>> cuda_solve_rates_batch(std::span<const FlowProblem> problems);
std::vector<DrainResult> cuda_drain_batch(std::span<const FlowProblem> problems);

}  // namespace skyfabric::workloads::detail
