#pragma once
// Flows of one max-min solve over a compact index of the network edges they use: each filling round
// of maxmin_core walks every link it is given, and a solve's flows use a few of a fabric's thousands.
// A link's index does not enter the arithmetic, so the rates are those of a solve over every edge.
// Shared by the collective engine and the flow network (flow_network.hpp). Internal.

#include <skyfabric/workloads/flow_solver.hpp>
#include <skyfabric/workloads/maxmin_core.hpp>
#include <skyfabric/workloads/network.hpp>

#include <cstdint>
#include <span>
#include <vector>

namespace skyfabric::workloads::detail {

// Adds a flow over network edges to problem, whose links are the edges it has met so far:
// edge_local maps a network edge to its link (−1: none yet) and global_edge the way back.
inline void add_compact_flow(FlowProblem& problem, std::vector<std::int32_t>& global_edge,
                             std::span<const std::int32_t> edges, const Network& net,
                             std::vector<std::int32_t>& edge_local, double bytes, double latency_s) {
    for (auto e : edges) {
        if (edge_local[e] < 0) {
            edge_local[e] = static_cast<std::int32_t>(problem.capacity_Bps.size());
            problem.capacity_Bps.push_back(net.capacity_Bps[e]);
            global_edge.push_back(e);
        }
        problem.flow_links.push_back(edge_local[e]);
    }
    problem.flow_offsets.push_back(static_cast<std::int32_t>(problem.flow_links.size()));
    problem.flow_bytes.push_back(bytes);
    problem.flow_latency_s.push_back(latency_s);
}

// Clears edge_local's entries for global_edge's edges (all −1 again, ready for the next problem).
inline void release_compact(std::span<const std::int32_t> global_edge, std::vector<std::int32_t>& edge_local) {
    for (auto e : global_edge) edge_local[e] = -1;
}

// One problem and its rates, solved where each solve depends on the last (flows that end or are
// rerouted between solves): the engine's phases across a topology change, the flow network.
struct LocalProblem {
    FlowProblem problem;
    std::vector<std::int32_t> global_edge;  // local link → network edge
    std::vector<double> rate, link_remaining;
    std::vector<std::int32_t> share_count;
    std::vector<unsigned char> saturated, frozen;

    void clear() {
        problem.clear();
        global_edge.clear();
    }
    void add_flow(std::span<const std::int32_t> edges, const Network& net,
                  std::vector<std::int32_t>& edge_local, double b, double lat) {
        add_compact_flow(problem, global_edge, edges, net, edge_local, b, lat);
    }
    void release(std::vector<std::int32_t>& edge_local) const { release_compact(global_edge, edge_local); }
    // Max-min rates of the flows flow_active marks, into rate; flow_weight (empty: 1 each) as
    // maxmin_rates' weight.
    void solve(const std::vector<unsigned char>& flow_active, const std::vector<std::int32_t>& flow_weight = {}) {
        const auto f = problem.flow_bytes.size();
        const auto l = problem.capacity_Bps.size();
        rate.resize(f);
        frozen.resize(f);
        link_remaining.resize(l);
        share_count.resize(l);
        saturated.resize(l);
        core::maxmin_rates(static_cast<int>(l), problem.capacity_Bps.data(), static_cast<int>(flow_active.size()),
                           problem.flow_offsets.data(), problem.flow_links.data(), flow_active.data(), rate.data(),
                           link_remaining.data(), share_count.data(), saturated.data(), frozen.data(),
                           flow_weight.empty() ? nullptr : flow_weight.data());
    }
};

}  // namespace skyfabric::workloads::detail
