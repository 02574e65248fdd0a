#pragma once
// Flow-level discrete-event simulation of collectives over a topology that changes at
// given instants. Capacities are piecewise constant between topology instants; rates
// are max-min fair (progressive filling) and re-solved when a flow ends or the topology
// changes. A transfer's time is its drain time plus its path latency (per-hop link
// latency summed, plus an optional per-message software overhead) — so on a uniform
// ring each phase costs α + bytes/B and the α–β formulas hold.

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include <skyfabric/links/topology.hpp>
#include <skyfabric/workloads/collectives.hpp>
#include <skyfabric/workloads/network.hpp>
#include <skyfabric/workloads/placement.hpp>
#include <skyfabric/workloads/topology_timeline.hpp>

namespace skyfabric::workloads {

// How a transfer's bytes are divided over its paths when paths_per_transfer > 1.
enum class MultipathSplit : std::uint8_t {
    equal = 0,     // ECMP: the same bytes on every path
    capacity = 1,  // UCMP: bytes ∝ each path's bottleneck_Bps (eBGP link-bandwidth weighted multipath),
                   // so on otherwise idle paths they all drain together, in bytes / Σ bottleneck
};

struct FlowOptions {
    RoutingPolicy routing = RoutingPolicy::shortest_latency;
    std::int32_t paths_per_transfer = 1;  // > 1 splits each transfer over edge-disjoint paths
    MultipathSplit split = MultipathSplit::equal;
    double per_message_overhead_s = 0.0;  // software α added to each transfer
    // A damaged copy of one fabric: the routes found on it undamaged (RouteCache::seed).
    std::shared_ptr<const RouteCache> routes_before_damage;
};


// Link usage over a run, per undirected link (both directions added).
struct LinkUtilisation {
    std::int32_t source = 0;
    std::int32_t target = 0;
    double bytes = 0.0;           // carried, both directions
    double capacity_bytes = 0.0;  // ∫ capacity dt over the accounted time, both directions
    double utilisation = 0.0;     // bytes / capacity_bytes (0 when never up)
};

// One link over one topology epoch, for time series (the trace's link counters): only links
// that carried bytes in the epoch are listed.
struct LinkEpoch {
    double start_s = 0.0;
    double end_s = 0.0;
    std::int32_t source = 0;
    std::int32_t target = 0;
    double capacity_bps = 0.0;  // per direction
    double utilisation = 0.0;   // bytes / (capacity × span), both directions
};

// The topology valid now and when it next changes; the last topology holds forever.
// Also accounts bytes per link.
class NetworkClock {
public:
    explicit NetworkClock(TopologySource source);  // pulls the first topology at once
    const links::Topology& topology() const { return current_; }
    const Network& network() const { return network_; }
    double epoch_start_s() const { return current_.time_s; }
    double next_change_s() const { return next_change_s_; }
    std::int64_t epoch() const { return epoch_; }
    // Moves to the topology valid at time_s (never backwards).
    void advance_to(double time_s);
    void add_edge_bytes(std::int32_t edge, double bytes) { epoch_link_bytes_[edge / 2] += bytes; }
    // add_edge_bytes for every (edge, bytes) listed, the whole list `times` times over:
    // the same sums, to the bit, in O(list · log times) rather than O(list · times).
    void add_edge_bytes_repeated(std::span<const std::pair<std::int32_t, double>> edge_bytes,
                                 std::int64_t times);
    // Capacity and bytes are accounted from start_accounting(t) on.
    void start_accounting(double time_s) { accounting_start_s_ = time_s; }
    std::vector<LinkUtilisation> link_utilisation(double end_s) const;
    // Append every closed epoch's busy links to *series (null: off). Call before advancing.
    void record_epochs(std::vector<LinkEpoch>* series) { epoch_series_ = series; }
    // Appends the open epoch, up to end_s, to the series (the clock itself is unchanged).
    void record_open_epoch(double end_s) const;

private:
    void fold_epoch(double end_s);
    void append_epoch_series(double end_s) const;
    // totals_ with the open epoch, up to end_s, added (into `out`, which must not be totals_).
    void merge_open_epoch(double end_s, std::vector<LinkUtilisation>& out) const;
    void load_next();
    TopologySource source_;
    links::Topology current_;
    links::Topology next_;
    bool has_next_ = false;
    double next_change_s_ = 0.0;
    std::int64_t epoch_ = 0;
    Network network_;
    std::vector<double> epoch_link_bytes_;
    std::vector<std::int32_t> repeat_scratch_;
    double accounting_start_s_ = 0.0;
    // Sorted by (source, target): a solve of one topology folds once, and a flat merge there
    // costs no allocation per link (a hash map here was a third of a damaged step's mallocs).
    std::vector<LinkUtilisation> totals_;
    std::vector<LinkUtilisation> merge_scratch_;
    mutable std::vector<std::uint32_t> order_scratch_;  // scratch of merge_open_epoch
    std::vector<LinkEpoch>* epoch_series_ = nullptr;
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
// epoch and replayed (exactly: the same inputs give the same numbers).
class CollectiveEngine {
public:
    CollectiveEngine(NetworkClock& clock, FlowOptions options);
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
    double run_phase_static(const Schedule& schedule, const Phase& phase,
                            const Placement& placement, Cached& out);
    double run_dynamic(const Schedule& schedule, const Placement& placement, double start_s,
                       std::int64_t key, CollectiveResult& result);
    void check_epoch();

    NetworkClock& clock_;
    FlowOptions options_;
    RouteCache routes_;
    std::int64_t cached_epoch_ = -1;
    std::unordered_map<std::int64_t, Cached> collective_cache_;
    std::unordered_map<std::int64_t, Cached> phase_cache_;
    std::int64_t flow_events_ = 0;
    std::int64_t rate_solves_ = 0;
    // scratch reused across solves
    std::vector<std::int32_t> edge_local_;
    std::vector<std::int32_t> repeat_scratch_;
};

// acc + b + b + … (`times` additions, each rounded), in O(log times) steps: within a
// binade the rounded increment is constant (after one step there, which settles a
// round-half-even tie), so each binade is crossed in one multiplication.
double add_repeatedly(double acc, double b, std::int64_t times);

// acc[e >> shift] += b for every (e, b) listed, the whole list `times` times over, with
// the rounding of doing it addition by addition. `count` is scratch (zeros, as long as
// acc; left zeroed).
void accumulate_repeated(std::span<const std::pair<std::int32_t, double>> entries, std::int64_t times,
                         int shift, std::span<double> acc, std::vector<std::int32_t>& count);

// One row of an nccl-tests style table.
struct CollectiveTableRow {
    double bytes = 0.0;
    double time_s = 0.0;
    double alg_bw_Bps = 0.0;
    double bus_bw_Bps = 0.0;
    // Bandwidth bound: bus_bandwidth_factor × n / B with B the per-rank single-link
    // bandwidth (min over ranks of that rank's fastest link), latency left out.
    double lower_bound_s = 0.0;
    double bound_bus_bw_Bps = 0.0;  // B
};

struct CollectiveTableOptions {
    FlowOptions flow;
    ScheduleOptions schedule;
    std::int32_t ranks = 0;             // 0 = every node
    bool topology_aware_placement = true;  // else identity placement
};

std::vector<CollectiveTableRow> collective_table(const links::Topology& topology,
                                                 CollectiveOp op, Algorithm algorithm,
                                                 std::span<const double> sizes_bytes,
                                                 const CollectiveTableOptions& options = {});
// Per-rank single-link bandwidth B (bytes/s): min over ranks of the rank's fastest usable
// link. The bandwidth term bus_factor·n/B bounds what a one-link-per-rank algorithm can do.
double single_link_bandwidth_Bps(const Network& network, const Placement& placement,
                                 std::int32_t ranks);

// min, 2·min, 4·min, … up to max (inclusive when hit exactly).
std::vector<double> size_sweep(double min_bytes, double max_bytes, double factor = 2.0);

// One collective on a fixed topology: convenience for tests and the CLI.
CollectiveResult run_collective(const links::Topology& topology, CollectiveOp op,
                                Algorithm algorithm, double bytes, const Placement& placement,
                                const FlowOptions& flow = {},
                                const ScheduleOptions& schedule = {});

}  // namespace skyfabric::workloads
