#pragma once
// One max-min problem spread over many workers (CPU threads or GPU threads): maxmin_core's
// progressive filling cut into steps whose elements are independent, so each step can run on
// any number of workers and give the same bits. Written once for host and device, as
// maxmin_core.hpp: the CPU's spread solver (spread_solver.cpp) and the CUDA kernels
// (spread_solver_cuda.cu) call these functions, which are built from the same per-element
// arithmetic maxmin_rates runs (flow_least_share, saturation_threshold, take_from_link, takes_part).
//
// A round of maxmin_rates, step by step (a barrier between steps):
//   1 per flow  its least link share (a segmented min over the flow's links: spread_flow_share);
//   2 per link  saturated when no unfrozen flow on it has a least share below its own (a
//               segmented AND over the link's flows: spread_link_saturated);
//   3 per flow  frozen when one of its links is saturated (marked newly frozen:
//               spread_flow_freezes), the count of flows still unfrozen a sum over the flows;
//   4 per link  what the newly frozen flows take, subtracted in rising flow index (the order
//               maxmin_rates takes them in: spread_link_take), so the remaining capacity is
//               maxmin_rates' to the bit whatever the workers' number or order.
// Steps 2 and 4 walk a link → flow index (LinkFlows) in rising flow index, each link's list kept
// to its unfrozen flows by step 4 (a copy of the index per solve; link_live counts each list). No
// global minimum is taken: as in maxmin_rates each round saturates every link whose share is the
// least on all its flows, which includes the global minimum's links.

#include <cstdint>
#include <vector>

#include <skyfabric/workloads/maxmin_core.hpp>

namespace skyfabric::workloads::core {

// flow_frozen's states in a spread solve: a flow frozen in this round's step 3 is newly_frozen
// until the next round's step 1, so step 4 knows which flows to subtract.
constexpr unsigned char unfrozen = 0;
constexpr unsigned char frozen_before = 1;
constexpr unsigned char newly_frozen = 2;

// --- one element of each step, on the link → flow index ----------------------------------------
// link_flow_offsets[link_count+1] is a CSR into link_flows (flow indices, rising; a flow listed
// once per time its path crosses the link, as flow_links lists it).

// Before the first round, per link: all its capacity, and the weight of the flows that take part
// (a sum of integers: any order gives the same); its live list is then the whole list (the flows
// that take no part are frozen, and leave it at the first step 4).
SKYFABRIC_HD inline double start_capacity(double capacity) { return capacity > 0.0 ? capacity : 0.0; }
SKYFABRIC_HD inline int share_weight(int f, const unsigned char* active, const int* flow_offsets, const int* weight) {
    return takes_part(f, active, flow_offsets) ? (weight ? weight[f] : 1) : 0;
}
SKYFABRIC_HD inline void spread_start_link(int l, const double* capacity, const int* link_flow_offsets,
                                           const int* link_flows, const unsigned char* active,
                                           const int* flow_offsets, const int* weight, double* link_remaining,
                                           int* link_share_count) {
    link_remaining[l] = start_capacity(capacity[l]);
    int count = 0;
    for (int k = link_flow_offsets[l]; k < link_flow_offsets[l + 1]; ++k)
        count += share_weight(link_flows[k], active, flow_offsets, weight);
    link_share_count[l] = count;
}

// Before the first round, per flow: rate 0, frozen unless it takes part. Returns 1 if it takes part.
SKYFABRIC_HD inline int spread_start_flow(int f, const unsigned char* active, const int* flow_offsets, double* rate,
                                          unsigned char* flow_frozen) {
    rate[f] = 0.0;
    const bool part = takes_part(f, active, flow_offsets);
    flow_frozen[f] = part ? unfrozen : frozen_before;
    return part ? 1 : 0;
}

// Step 1 for flow f (and a newly frozen flow becomes frozen_before).
SKYFABRIC_HD inline void spread_flow_share(int f, const int* flow_offsets, const int* flow_links,
                                           const double* link_remaining, const int* link_share_count, double* rate,
                                           unsigned char* flow_frozen) {
    if (flow_frozen[f] == newly_frozen) flow_frozen[f] = frozen_before;
    if (flow_frozen[f] != unfrozen) return;
    rate[f] = flow_least_share(f, flow_offsets, flow_links, link_remaining, link_share_count);
}

// Step 2's test of one flow f on a link of this share: true when f keeps the link from saturating
// (f is unfrozen and has a link of a smaller share).
SKYFABRIC_HD inline bool keeps_link_unsaturated(double share, int f, const double* rate, const unsigned char* flow_frozen) {
    return flow_frozen[f] == unfrozen && share > saturation_threshold(rate[f]);
}

// Step 2 for link l, over its live flows (link_live[l] of them from link_flow_offsets[l] on).
SKYFABRIC_HD inline unsigned char spread_link_saturated(int l, const int* link_flow_offsets, const int* link_flows,
                                                        const int* link_live, const double* link_remaining,
                                                        const int* link_share_count, const double* rate,
                                                        const unsigned char* flow_frozen) {
    if (link_share_count[l] <= 0) return 0;
    const double share = link_share(link_remaining, link_share_count, l);
    for (int k = link_flow_offsets[l]; k < link_flow_offsets[l] + link_live[l]; ++k)
        if (keeps_link_unsaturated(share, link_flows[k], rate, flow_frozen)) return 0;
    return 1;
}

// Step 3 for flow f: 1 if it freezes now.
SKYFABRIC_HD inline int spread_flow_freezes(int f, const int* flow_offsets, const int* flow_links,
                                            const unsigned char* link_saturated, unsigned char* flow_frozen) {
    if (flow_frozen[f] != unfrozen) return 0;
    for (int k = flow_offsets[f]; k < flow_offsets[f + 1]; ++k) {
        if (link_saturated[flow_links[k]]) {
            flow_frozen[f] = newly_frozen;
            return 1;
        }
    }
    return 0;
}

// Step 4 for one entry f of a link's live list: a newly frozen f's rate taken from the link;
// returns whether f stays on the list (unfrozen).
SKYFABRIC_HD inline bool spread_take_entry(int f, const double* rate, const unsigned char* flow_frozen, const int* weight,
                                           double& remaining, int& share_count) {
    const unsigned char state = flow_frozen[f];
    if (state == newly_frozen) take_from_link(remaining, share_count, rate[f], weight ? weight[f] : 1);
    return state == unfrozen;
}

// Step 4 for link l: the newly frozen flows' rates taken in the list's order, and the list kept to
// its unfrozen flows (in the same order), so later rounds walk only those, as maxmin_rates does.
SKYFABRIC_HD inline void spread_link_take(int l, const int* link_flow_offsets, int* link_flows, int* link_live,
                                          const double* rate, const unsigned char* flow_frozen, const int* weight,
                                          double* link_remaining, int* link_share_count) {
    const int begin = link_flow_offsets[l];
    int kept = begin;
    double remaining = link_remaining[l];
    int count = link_share_count[l];
    for (int k = begin; k < begin + link_live[l]; ++k) {
        const int f = link_flows[k];
        link_flows[kept] = f;  // counted only if it stays: no branch
        kept += spread_take_entry(f, rate, flow_frozen, weight, remaining, count) ? 1 : 0;
    }
    link_remaining[l] = remaining;
    link_share_count[l] = count;
    link_live[l] = kept - begin;
}

// After the last round, per flow: 0 for a flow that takes no part (as maxmin_rates ends).
SKYFABRIC_HD inline void spread_finish_flow(int f, const unsigned char* active, const int* flow_offsets, double* rate) {
    if (!takes_part(f, active, flow_offsets)) rate[f] = 0.0;
}

}  // namespace skyfabric::workloads::core

namespace skyfabric::workloads {

// The link → flow index of a problem's flow → link CSR: each link's flows in rising flow index.
struct LinkFlows {
    std::vector<std::int32_t> offsets;  // [link_count + 1]
    std::vector<std::int32_t> flows;

    void build(std::int32_t link_count, std::int32_t flow_count, const std::int32_t* flow_offsets,
               const std::int32_t* flow_links) {
        offsets.assign(static_cast<std::size_t>(link_count) + 1, 0);
        const std::int32_t incidences = flow_offsets[flow_count];
        for (std::int32_t k = 0; k < incidences; ++k) ++offsets[static_cast<std::size_t>(flow_links[k]) + 1];
        for (std::int32_t l = 0; l < link_count; ++l) offsets[static_cast<std::size_t>(l) + 1] += offsets[static_cast<std::size_t>(l)];
        flows.resize(static_cast<std::size_t>(incidences));
        std::vector<std::int32_t> next(offsets.begin(), offsets.end() - 1);
        for (std::int32_t f = 0; f < flow_count; ++f)
            for (std::int32_t k = flow_offsets[f]; k < flow_offsets[f + 1]; ++k)
                flows[static_cast<std::size_t>(next[static_cast<std::size_t>(flow_links[k])]++)] = f;
    }
};

}  // namespace skyfabric::workloads
