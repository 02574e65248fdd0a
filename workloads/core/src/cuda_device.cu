// Whether a CUDA device can run the backend here.

#include <cuda_runtime.h>

#include <string>

#include "cuda_backend.hpp"

namespace skyfabric::workloads::detail {

int cuda_device_count() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();  // clear the sticky "no device" error
        return 0;
    }
    return count;
}

std::string cuda_unavailable_reason() {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
        cudaGetLastError();
        return std::string("no usable CUDA device: ") + cudaGetErrorString(status);
    }
    if (count == 0) return "no CUDA device present";
    return "";
}

}  // namespace skyfabric::workloads::detail
