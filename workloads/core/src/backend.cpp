#include <skyfabric/workloads/backend.hpp>

#include <stdexcept>

#include "cuda_backend.hpp"

namespace skyfabric::workloads {

Backend parse_backend(const std::string& name) {
    if (const auto b = backend_names.value(name)) return *b;
    throw std::invalid_argument("unknown backend '" + name + "' (expected " + backend_names.joined(", ", " or ") + ")");
}

int cuda_device_count() { return detail::cuda_device_count(); }

std::string cuda_unavailable_reason() { return detail::cuda_unavailable_reason(); }

Backend resolve_backend(Backend requested) {
    if (requested == Backend::cpu) return Backend::cpu;
    const bool usable = cuda_device_count() > 0;
    if (requested == Backend::cuda && !usable)
        throw std::runtime_error("CUDA backend requested but unavailable: " + cuda_unavailable_reason());
    return usable ? Backend::cuda : Backend::cpu;
}

}  // namespace skyfabric::workloads
