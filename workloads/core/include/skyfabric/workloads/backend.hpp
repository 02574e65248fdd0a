#pragma once
// Which processor runs the batched work of the workloads library (workload.backend): drawing the
// Monte Carlo trials' fault events (sample_fault_events_batch, monte_carlo_goodput; the trials
// themselves are played on CPU threads), and the collective engine's batches of phases
// (FlowSolver, flow_solver.hpp: large batches only). Both backends run the same host/device
// functions with the same rounding (no FMA contraction on either side), so they agree.

#include <skyfabric/physics/enum_names.hpp>

#include <atomic>
#include <cstdint>
#include <stdexcept>
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

// A user's stop (Ctrl-C, SIGTERM), seen inside a long computation handed a stop flag
// (FlowContext::stop, simulate_training_with_faults' stop, ...): thrown to unwind it at once. The
// library polls the flag and never touches signals; whoever set the flag ends its run as interrupted.
struct Interrupted : std::runtime_error {
    Interrupted() : std::runtime_error("interrupted") {}
    explicit Interrupted(const std::string& what) : std::runtime_error(what) {}
};
inline bool stop_requested(const std::atomic<bool>* stop) { return stop && stop->load(std::memory_order_relaxed); }
inline void throw_if_stopped(const std::atomic<bool>* stop) {
    if (stop_requested(stop)) throw Interrupted();
}

}  // namespace skyfabric::workloads
