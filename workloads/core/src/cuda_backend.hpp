#pragma once
// Internal: whether a CUDA device is here (cuda_device.cu). Without the CUDA build these live in
// cuda_backend_nocuda.cpp: no device is reported. The batch entry points are each subject's own:
// flow/src/flow_solver_cuda.hpp, faults/src/faults_cuda.hpp.

#include <string>

namespace skyfabric::workloads::detail {

int cuda_device_count();
std::string cuda_unavailable_reason();

}  // namespace skyfabric::workloads::detail
