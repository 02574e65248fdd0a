#pragma once
// Which processor runs the batched work of the workloads library (workload.backend): drawing the
// Monte Carlo trials' fault events (sample_fault_events_batch, monte_carlo_goodput; the trials
// themselves are played on CPU threads), and the collective engine's batches of phases
// (FlowSolver, flow_solver.hpp: large batches only). Both backends run the same host/device
// functions with the same rounding (no FMA contraction on either side), so they agree.

#include <skyfabric/physics/enum_names.hpp>

#include <cstdint>
#include <string>

namespace skyfabric::workloads {

enum class Backend : std::uint8_t { automatic = 0, cpu = 1, cuda = 2 };
inline constexpr auto backend_names = physics::enum_names<Backend>({
    {Backend::automatic, "auto"}, {Backend::cpu, "cpu"}, {Backend::cuda, "cuda"}});
inline std::string to_string(Backend backend) { return backend_names.name(backend); }
Backend parse_backend(const std::string& name);  // throws std::invalid_argument for a name not in the table

// Number of usable CUDA devices (0 without the backend or without a device).
int cuda_device_count();
// Why the CUDA backend cannot run here ("" when it can).
std::string cuda_unavailable_reason();

// automatic → cuda when a device is present, else cpu; cpu → cpu. Requesting cuda where it
// cannot run throws std::runtime_error with cuda_unavailable_reason().
Backend resolve_backend(Backend requested);

}  // namespace skyfabric::workloads
