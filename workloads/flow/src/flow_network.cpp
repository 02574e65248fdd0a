#include <skyfabric/workloads/flow_network.hpp>

#include <skyfabric/workloads/maxmin_core.hpp>

#include "local_problem.hpp"

#include <algorithm>
#include <utility>

namespace skyfabric::workloads {

namespace {
constexpr double inf = std::numeric_limits<double>::infinity();
}

FlowNetwork::FlowNetwork(NetworkClock& clock, RoutingPolicy routing, std::span<const std::int32_t> cluster_of)
    : clock_(clock), routing_(routing), cluster_of_(cluster_of), problem_(std::make_unique<detail::LocalProblem>()) {}

FlowNetwork::~FlowNetwork() = default;

// Brings every busy group's work (and so each transfer's bytes left: finish_work − work) from
// settled_s_ to now. The rates hold between solves, so only a change or a drain needs this.
void FlowNetwork::settle(double now_s) {
    const double dt = now_s - settled_s_;
    if (dt > 0.0)
        for (const std::int32_t i : busy_) {
            auto& g = groups_[static_cast<std::size_t>(i)];
            g.work += g.rate * dt;
            if (g.edges.empty()) stalled_transfer_s_ += dt * g.members;
        }
    settled_s_ = now_s;
}

void FlowNetwork::route(Group& g) {
    const auto& net = clock_.network();
    const auto& paths = routes_.get(net, g.source, g.target, routing_, 1);
    g.edges.clear();
    g.latency_s = 0.0;
    g.border_hops = 0;
    g.routed_in = changes_;
    if (!paths.empty()) {
        g.edges = paths.front().edges;
        g.latency_s = paths.front().latency_s;
        if (!cluster_of_.empty())
            for (const std::int32_t e : g.edges) {  // a node of no cluster (−1: on the ground) has no border
                const std::int32_t a = cluster_of_[static_cast<std::size_t>(net.edge_from[e])];
                const std::int32_t b = cluster_of_[static_cast<std::size_t>(net.edge_to[e])];
                g.border_hops += a >= 0 && b >= 0 && a != b;
            }
    }
}

void FlowNetwork::start(double now_s, std::int32_t source, std::int32_t target, double bytes, std::int64_t tag,
                        bool counted) {
    settle(now_s);
    const std::int64_t key = static_cast<std::int64_t>(source) * clock_.topology().node_count + target;
    auto [it, fresh] = group_of_pair_.try_emplace(key, static_cast<std::int32_t>(groups_.size()));
    if (fresh) {
        groups_.emplace_back();
        groups_.back().source = source;
        groups_.back().target = target;
    }
    auto& g = groups_[static_cast<std::size_t>(it->second)];
    if (g.routed_in != changes_) route(g);
    std::int32_t slot;
    if (free_slots_.empty()) {
        slot = static_cast<std::int32_t>(transfers_.size());
        transfers_.emplace_back();
    } else {
        slot = free_slots_.back();
        free_slots_.pop_back();
    }
    auto& t = transfers_[static_cast<std::size_t>(slot)];
    t = Transfer{tag, bytes, g.work + bytes, next_seq_++, it->second, counted};
    g.queue.push(Queued{t.finish_work, t.seq, slot});
    if (g.members++ == 0) {
        g.busy_at = static_cast<std::int32_t>(busy_.size());
        busy_.push_back(it->second);
    }
    if (!counted) ++g.uncounted;
    ++in_flight_;
    dirty_ = true;
}

void FlowNetwork::remove(std::int32_t slot) {
    auto& t = transfers_[static_cast<std::size_t>(slot)];
    auto& g = groups_[static_cast<std::size_t>(t.group)];
    --g.members;
    if (!t.counted) --g.uncounted;
    if (g.members == 0) {  // its work starts from 0 again, and the lingering entries go
        g.work = 0.0;
        g.queue = {};
        const std::int32_t last = busy_.back();
        busy_[static_cast<std::size_t>(g.busy_at)] = last;
        groups_[static_cast<std::size_t>(last)].busy_at = g.busy_at;
        busy_.pop_back();
        g.busy_at = -1;
    }
    t.group = -1;
    free_slots_.push_back(slot);
    --in_flight_;
}

void FlowNetwork::cancel(double now_s, std::int64_t tag) {
    settle(now_s);
    for (std::size_t slot = 0; slot < transfers_.size(); ++slot)
        if (transfers_[slot].group >= 0 && transfers_[slot].tag == tag) remove(static_cast<std::int32_t>(slot));
    dirty_ = true;
}

// The group's next transfer to drain (removed ones dropped from its queue); null when it has none.
const FlowNetwork::Queued* FlowNetwork::front(Group& g) {
    while (!g.queue.empty()) {
        const auto& q = g.queue.top();
        const auto& t = transfers_[static_cast<std::size_t>(q.slot)];
        if (t.group >= 0 && t.seq == q.seq) return &q;
        g.queue.pop();
    }
    return nullptr;
}

double FlowNetwork::next_drain_s(double now_s) {
    if (dirty_) solve(now_s);
    // The first drain as a duration from settled_s_, not an absolute time: now + d − now loses d's
    // low bits when now is large, so draining transfers are picked by their own durations (drain).
    return settled_s_ + first_drain_dt_;
}

// The transfers that drain first_drain_dt_ after settled_s_ (within rounding of the step).
void FlowNetwork::drain(double now_s, std::vector<TransferDone>& done) {
    const double drain_dt = first_drain_dt_;
    drained_.clear();
    for (const std::int32_t i : busy_) {
        auto& g = groups_[static_cast<std::size_t>(i)];
        if (!(g.rate > 0.0)) continue;
        for (const Queued* q = front(g); q && left_of(*q, g) / g.rate <= drain_dt + drain_dt * core::drain_tie_rel; q = front(g)) {
            drained_.push_back(*q);
            g.queue.pop();
        }
    }
    std::sort(drained_.begin(), drained_.end(), [](const Queued& x, const Queued& y) { return x.seq < y.seq; });
    for (const auto& q : drained_) {
        const auto& t = transfers_[static_cast<std::size_t>(q.slot)];
        done.push_back(TransferDone{t.tag, t.bytes, groups_[static_cast<std::size_t>(t.group)].latency_s});
        remove(q.slot);
    }
    settle(now_s);
    dirty_ = true;
}

void FlowNetwork::change_topology(double now_s) {
    clock_.advance_to(now_s);
    ++changes_;
    routes_.clear();
    settle(now_s);
    for (const std::int32_t i : busy_) route(groups_[static_cast<std::size_t>(i)]);  // the others when next used
    dirty_ = true;
}

// Max-min fair rates of every transfer in flight on the current network (maxmin_core.hpp), over the
// links the transfers use only (local_problem.hpp): a handful of groups on thousands of links. One
// flow per group, weighted by its members.
void FlowNetwork::solve(double now_s) {
    dirty_ = false;
    border_bps_ = 0.0;
    first_drain_dt_ = inf;
    settle(now_s);
    if (in_flight_ == 0) return;
    const auto& net = clock_.network();
    if (edge_local_.size() != net.capacity_Bps.size()) edge_local_.assign(net.capacity_Bps.size(), -1);
    auto& problem = *problem_;
    problem.clear();
    weights_.clear();
    front_left_.clear();
    for (const std::int32_t i : busy_) {
        auto& g = groups_[static_cast<std::size_t>(i)];
        front_left_.push_back(left_of(*front(g), g));
        problem.add_flow(g.edges, net, edge_local_, front_left_.back(), g.latency_s);
        weights_.push_back(g.members);
    }
    problem.release(edge_local_);
    all_active_.assign(busy_.size(), 1);
    problem.solve(all_active_, weights_);
    for (std::size_t f = 0; f < busy_.size(); ++f) {
        auto& g = groups_[static_cast<std::size_t>(busy_[f])];
        g.rate = problem.rate[f];
        if (g.rate > 0.0) first_drain_dt_ = std::min(first_drain_dt_, front_left_[f] / g.rate);
        if (!cluster_of_.empty()) border_bps_ += bits_per_byte * g.rate * g.border_hops * (g.members - g.uncounted);
    }
    ++rate_solves_;
}

}  // namespace skyfabric::workloads
