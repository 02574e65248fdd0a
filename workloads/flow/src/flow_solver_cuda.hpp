#pragma once
// Internal: the flow solver's CUDA entry points (flow_solver_cuda.cu). Without the CUDA build they
// live in flow_solver_nocuda.cpp and throw.

#include <span>
#include <vector>

#include <skyfabric/workloads/flow_solver.hpp>

namespace skyfabric::workloads::detail {

std::vector<std::vector<double>> cuda_solve_rates_batch(std::span<const FlowProblem> problems);
void cuda_drain_batch(std::span<const FlowProblem> problems, std::vector<DrainResult>& out);
// One problem spread over the device (maxmin_spread.hpp's steps as kernels), drained as drain_flows.
void cuda_spread_drain(const FlowProblem& problem, DrainResult& out);
std::vector<double> cuda_spread_rates(const FlowProblem& problem);

}  // namespace skyfabric::workloads::detail
