#pragma once
// Internal helpers shared by the CUDA sources: error checks and an owning device buffer.

#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace skyfabric::workloads::detail {

inline void check_cuda(cudaError_t status, const char* what) {
    if (status != cudaSuccess)
        throw std::runtime_error(std::string("CUDA ") + what + ": " + cudaGetErrorString(status));
}

// Device buffer freed on scope exit.
template <typename T>
struct DeviceArray {
    T* data = nullptr;
    explicit DeviceArray(std::size_t n) {
        if (n > 0) check_cuda(cudaMalloc(&data, n * sizeof(T)), "cudaMalloc");
    }
    DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) {
        if (!host.empty())
            check_cuda(cudaMemcpy(data, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "copy in");
    }
    ~DeviceArray() { if (data) cudaFree(data); }
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;
    void to_host(std::vector<T>& host) const {
        if (!host.empty())
            check_cuda(cudaMemcpy(host.data(), data, host.size() * sizeof(T), cudaMemcpyDeviceToHost), "copy out");
    }
};

}  // namespace skyfabric::workloads::detail
