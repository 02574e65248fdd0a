// CPU-only builds: the CUDA device query exists but finds nothing, so callers link either way.
#if !SKYFABRIC_HAVE_CUDA

#include "cuda_backend.hpp"

namespace skyfabric::workloads::detail {

int cuda_device_count() { return 0; }
std::string cuda_unavailable_reason() {
    return "skyfabric was built without the CUDA backend (no CUDA toolkit or SKYFABRIC_CUDA=OFF)";
}

}  // namespace skyfabric::workloads::detail

#endif
