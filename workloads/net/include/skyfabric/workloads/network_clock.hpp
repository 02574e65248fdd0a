#pragma once
// The network as it is at each instant of a run: the topology valid now, when it next changes,
// and the bytes each link carried (utilisation, and per-epoch series for traces). What the
// collective engine and the flow network (flow_network.hpp) run on. Pure: no I/O.

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include <skyfabric/links/topology.hpp>
#include <skyfabric/workloads/network.hpp>
#include <skyfabric/workloads/topology_timeline.hpp>

namespace skyfabric::workloads {

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
    explicit NetworkClock(FrameSource source);     // pulls the first topology at once
    explicit NetworkClock(TopologySource source);  // each topology's network built here
    const links::Topology& topology() const { return *current_.topology; }
    const Network& network() const { return *current_.network; }
    const std::shared_ptr<const Network>& shared_network() const { return current_.network; }
    double epoch_start_s() const { return current_.topology->time_s; }
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
    // Only bytes from here on: the links that carried some, in link_utilisation's order and with
    // its byte sums to the bit (a link that carried none adds nothing to any sum), no capacity or
    // utilisation. Folding an epoch then costs the links that carried bytes, not every link of the
    // fabric (a constellation's outer syncs, each on a clock of its own).
    void account_bytes_only() { bytes_only_ = true; }
    std::vector<LinkUtilisation> carried_links() const;
    // Append every closed epoch's busy links to *series (null: off). Call before advancing.
    void record_epochs(std::vector<LinkEpoch>* series) { epoch_series_ = series; }
    // Appends the open epoch, up to end_s, to the series (the clock itself is unchanged).
    void record_open_epoch(double end_s) const;

private:
    void fold_epoch(double end_s);
    void append_epoch_series(double end_s) const;
    // totals_ with the open epoch, up to end_s, added (into `out`, which must not be totals_).
    void merge_open_epoch(double end_s, std::vector<LinkUtilisation>& out) const;
    void merge_open_bytes(std::vector<LinkUtilisation>& out) const;  // bytes_only_'s
    bool bytes_only_ = false;
    void load_next();
    FrameSource source_;
    SharedFrame current_;
    SharedFrame next_;
    bool has_next_ = false;
    double next_change_s_ = 0.0;
    std::int64_t epoch_ = 0;
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

}  // namespace skyfabric::workloads
