#pragma once
// One flow-solver contract, two backends. The CPU and CUDA backends run the same
// arithmetic (maxmin_core.hpp), so they give the same rates and times.
// The batch calls solve many independent problems at once; the CUDA backend gives each problem
// its own GPU thread. CollectiveEngine (collective_engine.hpp) hands every phase it solves on a
// fixed network to drain_batch, a collective's phases in one batch: the fault-free run's, every
// damaged step of the coupled Monte Carlo's and `skyfabric collective`'s.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <skyfabric/workloads/backend.hpp>

namespace skyfabric::workloads {

class IdleHelpers;  // idle_helpers.hpp

// One independent problem: directed links and flows that all start at t = 0.
struct FlowProblem {
    std::vector<double> capacity_Bps;        // per directed link, bytes/s
    std::vector<std::int32_t> flow_offsets{0};  // CSR into flow_links
    std::vector<std::int32_t> flow_links;
    std::vector<double> flow_bytes;
    std::vector<double> flow_latency_s;      // added to the drain time (last bit in flight)

    std::int32_t add_flow(std::span<const std::int32_t> links, double bytes, double latency_s);
    void clear();  // no links, no flows; keeps the capacity for the next problem
    std::int32_t flow_count() const { return static_cast<std::int32_t>(flow_bytes.size()); }
    std::int32_t link_count() const { return static_cast<std::int32_t>(capacity_Bps.size()); }
};

struct DrainResult {
    std::vector<double> finish_s;  // per flow; +inf if it can never finish
    double makespan_s = 0.0;
};

class FlowSolver {
public:
    virtual ~FlowSolver() = default;
    virtual Backend backend() const = 0;
    // Max-min fair rates (bytes/s) of every flow with bytes > 0, all active at once.
    virtual std::vector<std::vector<double>> solve_rates_batch(
        std::span<const FlowProblem> problems) const = 0;
    // Drain every problem's flows to completion, re-solving at each flow's end; out[i] is
    // problems[i]'s (out is resized; its elements' storage is reused). With `stop` set (a user's
    // Ctrl-C) the CPU solver leaves its drain at the next event and throws Interrupted (a GPU
    // batch is polled before it is sent).
    // With `helpers` (threads with nothing else to do) a problem of spread_min_flows or more
    // flows is spread over those idle at the time, when spread_min_idle_helpers or more are
    // (SpreadMaxMin): the same bits, sooner.
    virtual void drain_batch(std::span<const FlowProblem> problems, std::vector<DrainResult>& out,
                             const std::atomic<bool>* stop, IdleHelpers* helpers) const = 0;
    void drain_batch(std::span<const FlowProblem> problems, std::vector<DrainResult>& out,
                     const std::atomic<bool>* stop) const {
        drain_batch(problems, out, stop, nullptr);
    }
    void drain_batch(std::span<const FlowProblem> problems, std::vector<DrainResult>& out) const {
        drain_batch(problems, out, nullptr, nullptr);
    }

    std::vector<DrainResult> drain_batch(std::span<const FlowProblem> problems) const;
    std::vector<double> solve_rates(const FlowProblem& problem) const;
    DrainResult drain(const FlowProblem& problem) const;
};

// The solver for resolve_backend(requested) (backend.hpp).
std::unique_ptr<FlowSolver> make_flow_solver(Backend requested);

// Batches of fewer problems than this stay on the CPU under a CUDA request: the GPU gives each
// problem one thread, slower than a core at a max-min solve's serial loops, and a launch costs
// its copies. On an H100 the crossover lies between 64 and 256 (docs/benchmarks.md, "On a GPU").
inline constexpr std::size_t device_batch_min_problems = 256;

// One problem of spread_min_flows or more flows is spread over the CPU threads a caller lends
// (drain_batch's helpers; SpreadMaxMin) when at least spread_min_idle_helpers of them are idle:
// spread, a solve does about 1.6× the one-thread solver's work (the link → flow index, the
// per-link walks) plus a barrier per step, so it pays from three threads on, and from a few
// thousand flows. Measured on the 2-core VM, under load (docs/benchmarks.md, "One large max-min
// problem"): two threads never paid up to 5,184 flows; the figures on 16 cores are to be
// measured (bench/gpu.sh "one").
inline constexpr std::int32_t spread_min_flows = 4096;
inline constexpr std::int32_t spread_min_idle_helpers = 2;
// Under a CUDA request, a problem of this many flows or more in a batch smaller than
// device_batch_min_problems is spread over the GPU (a thread per flow, a warp per link). A
// default to be measured on a GPU machine (bench/gpu.sh, "one"), not yet measured.
inline constexpr std::int32_t device_spread_min_flows = 16384;

// One problem drained spread over the GPU whatever its size (the kernels CudaFlowSolver uses from
// device_spread_min_flows on): for benchmarks and tests. Throws std::runtime_error without CUDA.
DrainResult device_spread_drain(const FlowProblem& problem);

// The solver CollectiveEngine hands its batches to, one per process and backend: for cpu the
// CPU solver; for automatic and cuda one that sends a batch of device_batch_min_problems or more
// to resolve_backend(requested)'s solver (resolved at the first such batch), and of a smaller
// batch the problems of device_spread_min_flows or more flows too (spread over the device) and the
// others to the CPU solver. Thread-safe.
const FlowSolver& batch_flow_solver(Backend requested);

}  // namespace skyfabric::workloads
