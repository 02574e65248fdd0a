#pragma once
// Flow-level discrete-event simulation of collectives over a topology that changes at
// given instants. Capacities are piecewise constant between topology instants; rates
// are max-min fair (progressive filling) and re-solved when a flow ends or the topology
// changes. A transfer's time is its drain time plus its path latency (per-hop link
// latency summed, plus an optional per-message software overhead) — so on a uniform
// ring each phase costs α + bytes/B and the α–β formulas hold.
// Here: the routing options and CollectiveEngine; the network over time is network_clock.hpp,
// tables over sizes collective_table.hpp, the repeated sums repeated_sum.hpp.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include <skyfabric/links/topology.hpp>
#include <skyfabric/workloads/backend.hpp>
#include <skyfabric/workloads/collectives.hpp>
#include <skyfabric/workloads/flow_solver.hpp>
#include <skyfabric/workloads/network.hpp>
#include <skyfabric/workloads/network_clock.hpp>
#include <skyfabric/workloads/placement.hpp>
#include <skyfabric/workloads/route_store.hpp>
#include <skyfabric/workloads/topology_timeline.hpp>

namespace skyfabric::workloads {

// How a transfer's bytes are divided over its paths when paths_per_transfer > 1.
enum class MultipathSplit : std::uint8_t {
    equal = 0,     // ECMP: the same bytes on every path
    capacity = 1,  // UCMP: bytes ∝ each path's bottleneck_Bps (eBGP link-bandwidth weighted multipath),
                   // so on otherwise idle paths they all drain together, in bytes / Σ bottleneck
};

// The flow model's settings (what a scenario sets, or resolving it derives): comparable, no run state.
struct FlowOptions {
    RoutingPolicy routing = RoutingPolicy::shortest_latency;
    std::int32_t paths_per_transfer = 1;  // > 1 splits each transfer over edge-disjoint paths
    MultipathSplit split = MultipathSplit::equal;
    double per_message_overhead_s = 0.0;  // software α added to each transfer
    // Where the engine's batches of phases are drained (batch_flow_solver), and how large they
    // grow (larger for a GPU): a run passes workload.backend resolved. On the CPU the numbers do
    // not depend on the batching (to the bit); CUDA's agree with them to 1e-9 (tested on a GPU).
    Backend backend = Backend::cpu;
    bool operator==(const FlowOptions&) const = default;
};

// What a run hands an engine beside its FlowOptions: shared route state, idle threads and a stop.
// None of it changes the numbers; shared pointers, so copies are cheap.
struct FlowContext {
    // A damaged copy of one fabric: the routes found on it undamaged (RouteCache::seed).
    std::shared_ptr<const RouteCache> routes_before_damage;
    std::shared_ptr<const Network> network_before_damage;  // the fabric they were found on (RouteCache::seed)
    // Engines that run on the same networks (a constellation's algorithms, rounds and trials'
    // undamaged steps) share their routes here; not used with routes_before_damage (a damaged
    // network is a trial's own).
    std::shared_ptr<RouteStore> route_store;
    // Threads with nothing else to do (simulate_cluster_trainings', `skyfabric collective --threads`'s):
    // a phase's pairs missing from the route store's table are searched on them too
    // (RouteCache::prefetch), and a phase of spread_min_flows or more flows is solved on them too
    // (SpreadMaxMin). The same routes and the same bits.
    std::shared_ptr<IdleHelpers> helpers;
    // A user's stop (Ctrl-C): polled at every transfer routed, every event of a phase drained and
    // every route searched (the solver's and the route store's loops included); once set the engine
    // throws Interrupted (backend.hpp) and the collective in progress is dropped. Null: never stops.
    const std::atomic<bool>* stop = nullptr;
};


struct CollectiveResult {
    CollectiveOp op = CollectiveOp::all_reduce;
    Algorithm algorithm = Algorithm::ring;
    std::int32_t ranks = 0;
    double bytes = 0.0;
    double start_s = 0.0;
    double end_s = 0.0;            // +inf if it never completes
    double alg_bw_Bps = 0.0;       // bytes / duration
    double bus_bw_Bps = 0.0;       // alg_bw × bus_bandwidth_factor
    double stalled_s = 0.0;        // time some transfer had no path
    double lost_s = 0.0;           // duration − duration had the start topology held
    std::int32_t topology_changes = 0;  // topology instants crossed while running
    bool completed = true;
    double duration_s() const { return end_s - start_s; }
};

// Runs schedules on the clock's topology. Keeps per-epoch caches: phases with the same
// pattern, and whole collectives with the same cache key, are solved once per topology
// epoch and replayed (exactly: the same inputs give the same numbers). A collective's phases
// on a fixed network are independent drains, handed to the FlowSolver in one batch; a phase
// that a topology change interrupts is re-solved event by event here.
class CollectiveEngine {
public:
    CollectiveEngine(NetworkClock& clock, FlowOptions options, FlowContext context = {});
    // cache_key identifies (schedule, placement) for reuse within an epoch; −1: no reuse.
    CollectiveResult run(const Schedule& schedule, const Placement& placement, double start_s,
                         std::int64_t cache_key = -1);
    std::int64_t flow_events() const { return flow_events_; }  // modelled flow starts + ends
    std::int64_t rate_solves() const { return rate_solves_; }   // progressive-filling solves
    std::shared_ptr<const RouteCache> routes() const { return std::make_shared<const RouteCache>(routes_); }

private:
    struct Cached {
        double duration_s = 0.0;
        std::vector<std::pair<std::int32_t, double>> edge_bytes;
    };
    double run_static(const Schedule& schedule, const Placement& placement, std::int64_t key,
                      Cached& out);
    // The phase's flows over compact links (global_edge: each link's network edge); false, and
    // no flows, when a transfer has no path (the phase cannot complete).
    bool build_phase(const Schedule& schedule, const Phase& phase, const Placement& placement,
                     FlowProblem& problem, std::vector<std::int32_t>& global_edge);
    // A built phase's solution: its drain time and the bytes it puts on each edge.
    void take_solution(bool routed, const FlowProblem& problem, const std::vector<std::int32_t>& global_edge,
                       double drain_s, Cached& out);
    // Keeps a solved phase under its key while the cache budget allows (else leaves it in fresh).
    const Cached& keep_phase(std::int64_t phase_key, Cached& fresh);
    // The phase's solution: cached under key (key >= 0, within the budget) or solved into fresh.
    const Cached& phase_result(const Schedule& schedule, const Phase& phase, const Placement& placement,
                               std::int64_t key, Cached& fresh);
    double run_dynamic(const Schedule& schedule, const Placement& placement, double start_s,
                       std::int64_t key, CollectiveResult& result);
    void check_epoch();

    NetworkClock& clock_;
    FlowOptions options_;
    FlowContext context_;
    const FlowSolver& solver_;
    RouteCache routes_;
    std::int64_t cached_epoch_ = -1;
    std::unordered_map<std::int64_t, Cached> collective_cache_;
    std::unordered_map<std::int64_t, Cached> phase_cache_;
    // Edge totals the phase cache may hold per epoch (16 B each: 64 MB).
    static constexpr std::size_t phase_cache_budget = std::size_t{1} << 22;
    std::size_t phase_cache_entries_ = 0;
    std::int64_t flow_events_ = 0;
    std::int64_t rate_solves_ = 0;
    // scratch reused across solves
    std::vector<std::int32_t> edge_local_;
    std::vector<std::int32_t> repeat_scratch_;
};

}  // namespace skyfabric::workloads
