#pragma once
// Step-level training simulator: a data-parallel job over a time series of topologies.
// Each step computes (forward, then backward); gradient buckets become ready during the
// backward pass and are all-reduced one after another (one communication stream), so
// communication overlaps compute and only what runs past the end of compute is exposed.
// In SyncMode::local_steps (DiLoCo-style) only every H-th step all-reduces, after compute.

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include <skyfabric/links/topology.hpp>
#include <skyfabric/physics/enum_names.hpp>
#include <skyfabric/workloads/collectives.hpp>
#include <skyfabric/workloads/collective_engine.hpp>
#include <skyfabric/workloads/job.hpp>

namespace skyfabric::workloads {

enum class PlacementPolicy : std::uint8_t { topology_aware = 0, random = 1, identity = 2 };
inline constexpr auto placement_policy_names = physics::enum_names<PlacementPolicy>({
    {PlacementPolicy::topology_aware, "topology_aware"}, {PlacementPolicy::random, "random"},
    {PlacementPolicy::identity, "identity"}});

// Stragglers (transient slowdowns: OS jitter, thermal limits, a slow host): in every step each rank
// independently computes `slowdown` times slower with `probability`. A synchronous step waits for
// its slowest rank, so the step is slowed when any of its ranks straggles, with probability
// 1 − (1 − probability)^ranks. Drawn per step from (seed, step): the same steps straggle however
// the run is cut.
struct StragglerModel {
    double probability = 0.0;  // per rank per step; 0: none
    double slowdown = 1.0;     // compute time factor of a straggling step (>= 1)
    std::uint64_t seed = 0;
    bool enabled() const { return probability > 0.0 && slowdown > 1.0; }
    bool operator==(const StragglerModel&) const = default;
};
// Whether step `step` of `ranks` ranks waits for a straggler.
bool step_straggles(const StragglerModel& model, std::int64_t step, std::int32_t ranks);

// The training model's settings (what a scenario sets, or resolving it derives: rank nodes, start
// and end): comparable, no run state. What a run hands it beside them is a TrainingContext.
struct TrainingOptions {
    FlowOptions flow;
    ScheduleOptions schedule;
    Algorithm all_reduce = Algorithm::ring;
    PlacementPolicy placement = PlacementPolicy::topology_aware;
    std::uint64_t seed = 42;               // random placement
    // Ranks only on these nodes, one each (empty: any node): the survivors of a fault, a spare.
    std::vector<std::int32_t> rank_nodes;
    // Or ranks in groups of these nodes, group after group (the clusters of a constellation):
    // topology-aware placement embeds a ring in each group's nodes and joins the groups in order,
    // and re-embeds a group when its own ring loses a hop. Not with rank_nodes.
    std::vector<std::vector<std::int32_t>> rank_groups;
    // Mixture of experts: the ranks of each expert group, group after group (moe.expert_parallel
    // each, every rank once); empty: consecutive ranks (0 … E−1, E … 2E−1, ...). A constellation's
    // experts spread across clusters list a share of every cluster's ranks in each group.
    std::vector<std::int32_t> expert_group_ranks;
    bool replan_on_topology_change = true;  // re-embed the ring when it breaks
    double start_s = -1.0;   // < 0: the first topology's time
    double end_s = -1.0;     // < 0: span overload: last time + last spacing; source: required
    std::int64_t max_steps = -1;  // < 0: no limit
    StragglerModel stragglers;  // none by default
    bool operator==(const TrainingOptions&) const = default;
};

// What a run hands simulate_training beside its TrainingOptions: the engine's context, callbacks
// into the run, a damaged copy's seed, what to record and test switches. Never read from a scenario.
struct TrainingContext {
    FlowContext flow;
    // Compute slowed by a power limit: when `work_s` seconds of full-speed compute started at start_s are
    // done (empty: start_s + work_s). Non-decreasing in both; +inf if it never finishes.
    std::function<double(double start_s, double work_s)> compute_done_s;
    // Polled at each step: steps must end by min(end_s, this). A run stopped early lowers it to the
    // time it simulated; the job then ends with the steps done by then (summary.stopped).
    std::function<double()> end_limit_s;
    // A damaged copy's: the ring tours its undamaged solve planned (one per rank group, or one over
    // rank_nodes), each taken up to its first hop that the damage breaks (ring_placement_after_damage).
    std::shared_ptr<const std::vector<RingTour>> tours_before_damage;
    bool record_collectives = true;   // TrainingResult::collectives
    bool record_link_epochs = false;  // TrainingResult::link_epochs (the trace's link counters)
    // TrainingResult::links with bytes only, no capacity or utilisation: each epoch then folds the
    // links that carried bytes, not every link of the network (a constellation's replica rounds,
    // each on one cluster of thousands of satellites' links). Same byte sums, to the bit.
    bool link_bytes_only = false;
    // TrainingResult::routes and ::tours (one topology: a damaged copy's seed).
    bool keep_routes = false;
    // Run explicit schedules (every ring step listed: O(p²) transfers) instead of the
    // compact ones (O(p)); the results are the same. For tests.
    bool explicit_schedules = false;
};

enum class StepStatus : std::uint8_t {
    ok = 0,
    rerouted = 1,   // a collective crossed a topology change
    stalled = 2,    // some transfer waited for a path
    incomplete = 3, // communication never finished (no path left)
};
inline constexpr auto step_status_names = physics::enum_names<StepStatus>({
    {StepStatus::ok, "ok"},
    {StepStatus::rerouted, "rerouted"},
    {StepStatus::stalled, "stalled"},
    {StepStatus::incomplete, "incomplete"},
});

struct StepRecord {
    std::int64_t step = 0;
    double start_s = 0.0;
    double end_s = 0.0;
    double compute_s = 0.0;
    double straggler_s = 0.0;              // of compute_s, added by a straggler (at full speed)
    double communication_s = 0.0;          // sum of this step's gradient collectives' durations
    double all_to_all_s = 0.0;             // MoE dispatch/combine all-to-alls (on the critical path)
    double exposed_communication_s = 0.0;  // step time − compute time − all_to_all_s
    bool synchronised = true;              // all-reduced this step
    StepStatus status = StepStatus::ok;
};

struct CollectiveRecord {
    std::int64_t step = 0;
    CollectiveOp op = CollectiveOp::all_reduce;
    Algorithm algorithm = Algorithm::ring;
    double bytes = 0.0;
    double start_s = 0.0;
    double end_s = 0.0;
    double alg_bw_Bps = 0.0;
    double bus_bw_Bps = 0.0;
    double stalled_s = 0.0;
    double lost_s = 0.0;
    bool completed = true;
};

struct TrainingSummary {
    std::int64_t steps = 0;
    double start_s = 0.0;
    double end_s = 0.0;             // end of the last complete step
    double step_time_median_s = 0.0;
    double step_time_p99_s = 0.0;
    double step_time_mean_s = 0.0;
    double compute_per_step_s = 0.0;
    double all_to_all_per_step_s = 0.0;  // MoE all-to-alls, mean over steps (0: dense)
    double exposed_all_reduce_per_step_s = 0.0;  // mean over steps
    double tokens_per_s = 0.0;
    double mfu = 0.0;               // achieved: FLOPs done / (chips · peak · wall)
    double bus_bw_mean_Bps = 0.0;   // mean over synchronising collectives
    double bus_bw_bound_Bps = 0.0;  // per-rank single-link bound at the start topology
    double time_lost_s = 0.0;       // collectives' extra time from topology changes
    double stalled_s = 0.0;         // time transfers waited for a path
    std::int64_t replans = 0;       // ring re-embeddings after topology changes
    std::int64_t topology_epochs = 0;
    std::int64_t flow_events = 0;   // modelled flow starts + ends
    std::int64_t rate_solves = 0;   // progressive-filling solves actually run
    std::int64_t straggler_steps = 0;  // steps that waited for a straggler
    double straggler_s = 0.0;          // compute time they added (at full speed)
    bool truncated = false;         // stopped by a collective that could not finish
    bool stopped = false;           // ended early by TrainingContext::end_limit_s
};

struct TrainingResult {
    std::vector<StepRecord> steps;
    std::vector<CollectiveRecord> collectives;
    std::vector<LinkUtilisation> links;
    std::vector<LinkEpoch> link_epochs;  // with record_link_epochs: busy links per topology epoch
    TrainingSummary summary;
    std::shared_ptr<const RouteCache> routes;  // with keep_routes: the last topology's routes
    std::shared_ptr<const std::vector<RingTour>> tours;  // with keep_routes: the first plan's ring tours
};

TrainingResult simulate_training(const TrainingJob& job, const Accelerator& accelerator,
                                 FrameSource source, const TrainingOptions& options,
                                 const TrainingContext& context = {});
TrainingResult simulate_training(const TrainingJob& job, const Accelerator& accelerator,
                                 TopologySource source, const TrainingOptions& options,
                                 const TrainingContext& context = {});

// Nearest-rank percentile (the value at rank ceil(q·n), at least 1) of sorted values; 0 when empty.
double nearest_rank_percentile(std::span<const double> sorted, double q);
// Its 0-based position among n > 0 sorted values.
std::size_t nearest_rank_index(std::size_t n, double q);
// The same value from unsorted values, by selection (O(n), not a sort); reorders them.
double select_nearest_rank(std::span<double> values, double q);
TrainingResult simulate_training(const TrainingJob& job, const Accelerator& accelerator,
                                 std::span<const links::Topology> series,
                                 const TrainingOptions& options, const TrainingContext& context = {});

// The step a trial's damaged fabric runs: the job as the fault-free run has it (data_parallel =
// the initial ranks), its accelerator, its options (placement, schedule, flow) and what the run hands
// it (the route store, a stop).
struct StepModel {
    TrainingJob job;
    Accelerator accelerator;
    TrainingOptions options;
    TrainingContext context;
};

// Step durations: nominal_s, or a series (duration_s[i] applies to a step that starts at wall
// time t with start_s[i] <= t < start_s[i+1]; before start_s[0] the first value) — e.g. the
// flow-level step simulator's fault-free steps. period_s > 0 wraps t modulo the period (an orbit).
struct StepDurations {
    double nominal_s = 1.0;
    std::vector<double> start_s;
    std::vector<double> duration_s;
    double period_s = 0.0;
};

}  // namespace skyfabric::workloads
