#pragma once
// The flow front door: a workload starts transfers between two nodes with their bytes and is told
// when each one's last byte leaves; how they share the links is decided here, by max-min fair
// rates (maxmin_core.hpp) over the network the clock gives, re-solved whenever the transfers, their
// paths or the topology change. The role ASTRA-sim's network API plays for its workload layer
// (a send, and a call back when it is done; docs/references.md "Independent checks").
//
// Transfers between the same two nodes follow the same path, so max-min gives each the same rate:
// they are one flow of the solve weighted by how many they are (a group), and they drain in the
// order of the group's work at which each ends (work: bytes each member sent since the group was
// last empty). A backlog of thousands of transfers on one link is then one weighted flow, and a
// turn of the caller's event loop that touches no transfer costs nothing per transfer in flight:
// bytes are settled only where the set of transfers, their paths or their rates change.
//
// The collective engine (collective_engine.hpp) drains whole phases of a schedule at once on a
// fixed network, batched (FlowSolver), which the per-transfer calls here would slow; both solve
// with the same max-min core over the same compact local problems (docs/architecture.md, "Flows").

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <queue>
#include <span>
#include <unordered_map>
#include <vector>

#include <skyfabric/workloads/network.hpp>
#include <skyfabric/workloads/network_clock.hpp>

namespace skyfabric::workloads {

namespace detail {
struct LocalProblem;
}

// A transfer whose last byte left the sender at the drain's time; it lands latency_s later.
struct TransferDone {
    std::int64_t tag = 0;    // the caller's, as given to start
    double bytes = 0.0;
    double latency_s = 0.0;  // its path's (summed link latencies)
};

class FlowNetwork {
public:
    // Routes by `routing` (one path per pair) on the clock's network. cluster_of (empty: none) names
    // each node's cluster, for border_bps; it must outlive the FlowNetwork.
    FlowNetwork(NetworkClock& clock, RoutingPolicy routing, std::span<const std::int32_t> cluster_of = {});
    ~FlowNetwork();
    FlowNetwork(const FlowNetwork&) = delete;
    FlowNetwork& operator=(const FlowNetwork&) = delete;

    // Every call takes the caller's time now_s, which never goes back.
    //
    // Starts a transfer of `bytes` from source to target now. counted: whether it is counted in
    // border_bps (serving: a KV cache is, the shared training job's transfers are not).
    void start(double now_s, std::int32_t source, std::int32_t target, double bytes, std::int64_t tag,
               bool counted = true);
    // Takes every transfer of `tag` off the network (in the order they were given slots), then
    // re-solves the rates, also when there was none.
    void cancel(double now_s, std::int64_t tag);
    // f(tag) for every transfer in flight, a tag once per transfer.
    template <class F>
    void for_each_in_flight(F f) const {
        for (const auto& t : transfers_)
            if (t.group >= 0) f(t.tag);
    }
    std::int64_t in_flight() const { return in_flight_; }

    // When the next transfer's last byte leaves at the current rates, re-solved first if anything
    // changed since the last solve; +inf when none moves.
    double next_drain_s(double now_s);
    // At next_drain_s(): the transfers whose last byte leaves now (those within drain_tie_rel of
    // it), appended to done in the order they started.
    void drain(double now_s, std::vector<TransferDone>& done);
    // The clock's next topology; at that time change_topology moves the clock to it and reroutes
    // every transfer in flight.
    double next_change_s() const { return clock_.next_change_s(); }
    void change_topology(double now_s);
    // Brings the transfers' bytes to now (what drain and the others do first).
    void settle(double now_s);
    // False while a change waits for the next solve (next_drain_s).
    bool rates_current() const { return !dirty_; }

    std::int64_t rate_solves() const { return rate_solves_; }
    // Transfer-seconds with no path (per transfer in flight over a topology without one).
    double stalled_transfer_s() const { return stalled_transfer_s_; }
    // The counted transfers' bits per second on links between clusters, each such link a transfer
    // crosses counted once, at the rates of the last solve (rates hold until the next).
    double border_bps() const { return border_bps_; }

private:
    struct Transfer {
        std::int64_t tag = 0;
        double bytes = 0.0;
        double finish_work = 0.0;  // its group's work when its last byte leaves
        std::uint64_t seq = 0;     // start order: transfers that drain together are reported in it
        std::int32_t group = -1;   // -1: the slot is free
        bool counted = true;
    };
    struct Queued {
        double finish_work;
        std::uint64_t seq;
        std::int32_t slot;
        bool operator>(const Queued& o) const { return finish_work != o.finish_work ? finish_work > o.finish_work : seq > o.seq; }
    };
    struct Group {
        std::int32_t source = 0, target = 0;
        std::vector<std::int32_t> edges;  // empty: no path now
        double latency_s = 0.0;
        std::int32_t border_hops = 0;     // edges of the path between clusters
        std::int64_t routed_in = -1;      // the topology change count of edges
        double rate = 0.0;                // each member's, at the last solve
        double work = 0.0;                // bytes each member sent since the group was last empty
        std::int32_t members = 0, uncounted = 0;
        std::int32_t busy_at = -1;        // its place in busy_ while it has members
        std::priority_queue<Queued, std::vector<Queued>, std::greater<>> queue;  // removed transfers linger
    };
    void route(Group& g);
    void remove(std::int32_t slot);
    // A queued transfer's bytes left: never below 0, though a group's work, summed rate × time, can
    // pass its finish work by a rounding (a negative time to drain inverted the drain's tie rule
    // and stopped serving-beside-training-4x81 at t = 4,656 s, draining nothing for ever).
    static double left_of(const Queued& q, const Group& g) { return std::max(0.0, q.finish_work - g.work); }
    const Queued* front(Group& g);
    void solve(double now_s);

    NetworkClock& clock_;
    RoutingPolicy routing_;
    std::span<const std::int32_t> cluster_of_;
    RouteCache routes_;
    std::int64_t changes_ = 0;  // topology changes seen (the groups' routed_in)
    std::vector<Transfer> transfers_;  // by slot
    std::vector<std::int32_t> free_slots_;
    std::int64_t in_flight_ = 0;
    std::uint64_t next_seq_ = 0;
    std::vector<Group> groups_;
    std::unordered_map<std::int64_t, std::int32_t> group_of_pair_;  // source · nodes + target → group
    std::vector<std::int32_t> busy_;                                // the groups with members
    std::vector<Queued> drained_;                                   // drain scratch
    std::vector<std::int32_t> weights_;                             // solve scratch
    std::vector<double> front_left_;  // solve scratch: each busy group's next drain, bytes
    double settled_s_ = 0.0;          // the groups' work is as of this time
    double first_drain_dt_ = std::numeric_limits<double>::infinity();  // from settled_s_, at the last solve's rates
    bool dirty_ = false;
    std::int64_t rate_solves_ = 0;
    double stalled_transfer_s_ = 0.0;
    double border_bps_ = 0.0;
    std::unique_ptr<detail::LocalProblem> problem_;  // solve scratch
    std::vector<std::int32_t> edge_local_;            // network edge -> problem_'s link (−1 between solves)
    std::vector<unsigned char> all_active_;
};

}  // namespace skyfabric::workloads
