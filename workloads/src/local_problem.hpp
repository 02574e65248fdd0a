#pragma once
// Flows of one max-min solve over a compact index of the network edges they use: each filling round
// of maxmin_core walks every link it is given, and a solve's flows use a few of a fabric's thousands.
// A link's index does not enter the arithmetic, so the rates are those of a solve over every edge.
// Shared by the collective engine and the serving engine. Internal.

#include <skyfabric/workloads/maxmin_core.hpp>
#include <skyfabric/workloads/network.hpp>

#include <cstdint>
#include <span>
#include <vector>

namespace skyfabric::workloads::detail {

// Flows of one solve, over a compact index of the edges they use.
struct LocalProblem {
    std::vector<double> capacity;
    std::vector<std::int32_t> offsets{0};
    std::vector<std::int32_t> links;
    std::vector<std::int32_t> global_edge;  // local → network edge
    std::vector<double> bytes, latency, finish, rate, remaining, link_remaining;
    std::vector<std::int32_t> share_count, order;
    std::vector<unsigned char> active, saturated, frozen;

    void clear() {
        capacity.clear();
        offsets.assign(1, 0);
        links.clear();
        global_edge.clear();
        bytes.clear();
        latency.clear();
    }
    void add_flow(std::span<const std::int32_t> edges, const Network& net,
                  std::vector<std::int32_t>& edge_local, double b, double lat) {
        for (auto e : edges) {
            if (edge_local[e] < 0) {
                edge_local[e] = static_cast<std::int32_t>(capacity.size());
                capacity.push_back(net.capacity_Bps[e]);
                global_edge.push_back(e);
            }
            links.push_back(edge_local[e]);
        }
        offsets.push_back(static_cast<std::int32_t>(links.size()));
        bytes.push_back(b);
        latency.push_back(lat);
    }
    void release(std::vector<std::int32_t>& edge_local) const {
        for (auto e : global_edge) edge_local[e] = -1;
    }
    void size_scratch() {
        const auto f = bytes.size();
        const auto l = capacity.size();
        finish.resize(f);
        rate.resize(f);
        remaining.resize(f);
        order.resize(f);
        active.resize(f);
        frozen.resize(f);
        link_remaining.resize(l);
        share_count.resize(l);
        saturated.resize(l);
    }
    double drain() {
        size_scratch();
        return core::drain_flows(static_cast<int>(capacity.size()), capacity.data(),
                                 static_cast<int>(bytes.size()), offsets.data(), links.data(),
                                 bytes.data(), latency.data(), finish.data(), rate.data(),
                                 remaining.data(), active.data(), link_remaining.data(),
                                 share_count.data(), saturated.data(), frozen.data(), order.data());
    }
    void solve(const std::vector<unsigned char>& flow_active) {
        size_scratch();
        core::maxmin_rates(static_cast<int>(capacity.size()), capacity.data(),
                           static_cast<int>(flow_active.size()), offsets.data(), links.data(),
                           flow_active.data(), rate.data(), link_remaining.data(),
                           share_count.data(), saturated.data(), frozen.data());
    }
};

}  // namespace skyfabric::workloads::detail
