#pragma once
// Max-min fair rates of flows on a network, solved over the links the flows use only: each filling
// round of maxmin_core walks every link it is given, and a few flows (a handful of KV caches) use a
// handful of a fabric's thousands of links. The rates are those of a solve over every link (a link's
// index does not enter the arithmetic). Internal; scratch kept between solves.

#include <skyfabric/workloads/maxmin_core.hpp>
#include <skyfabric/workloads/network.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace skyfabric::workloads::detail {

class LocalMaxMin {
public:
    // edges_of(f): flow f's directed edges on `network` (an empty path gets rate 0). Returns the rates, bytes/s.
    template <class EdgesOf>
    const std::vector<double>& solve(const Network& network, int flows, EdgesOf&& edges_of) {
        if (local_of_edge_.size() != network.capacity_Bps.size()) local_of_edge_.assign(network.capacity_Bps.size(), -1);
        capacity_.clear();
        used_edges_.clear();
        offsets_.assign(1, 0);
        flow_links_.clear();
        for (int f = 0; f < flows; ++f) {
            for (const std::int32_t e : edges_of(f)) {
                int& local = local_of_edge_[static_cast<std::size_t>(e)];
                if (local < 0) {
                    local = static_cast<int>(capacity_.size());
                    capacity_.push_back(network.capacity_Bps[static_cast<std::size_t>(e)]);
                    used_edges_.push_back(e);
                }
                flow_links_.push_back(local);
            }
            offsets_.push_back(static_cast<int>(flow_links_.size()));
        }
        for (const std::int32_t e : used_edges_) local_of_edge_[static_cast<std::size_t>(e)] = -1;
        const auto links = capacity_.size();
        active_.assign(static_cast<std::size_t>(flows), 1);
        rate_.assign(static_cast<std::size_t>(flows), 0.0);
        frozen_.assign(static_cast<std::size_t>(flows), 0);
        link_remaining_.assign(links, 0.0);
        link_count_.assign(links, 0);
        link_saturated_.assign(links, 0);
        core::maxmin_rates(static_cast<int>(links), capacity_.data(), flows, offsets_.data(), flow_links_.data(), active_.data(),
                           rate_.data(), link_remaining_.data(), link_count_.data(), link_saturated_.data(), frozen_.data());
        return rate_;
    }

private:
    std::vector<int> local_of_edge_;  // −1 between solves
    std::vector<std::int32_t> used_edges_;
    std::vector<int> offsets_, flow_links_, link_count_;
    std::vector<unsigned char> active_, frozen_, link_saturated_;
    std::vector<double> capacity_, rate_, link_remaining_;
};

}  // namespace skyfabric::workloads::detail
