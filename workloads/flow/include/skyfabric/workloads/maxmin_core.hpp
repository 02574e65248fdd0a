#pragma once
// Max-min fair rate allocation (progressive filling) and flow draining, written once
// for host and device: the CPU backend and the CUDA kernels call these same functions,
// so both backends take the same arithmetic path and agree to rounding.
// Plain pointers and caller-owned scratch: no allocation, usable inside a kernel.

#include <limits>

#if defined(__CUDACC__)
#define SKYFABRIC_HD __host__ __device__
#else
#define SKYFABRIC_HD
#endif

namespace skyfabric::workloads::core {

// A link whose share is within this relative distance of a flow's smallest share counts
// as that flow's bottleneck too (ties saturate together).
constexpr double share_tie_rel = 1e-12;
// A flow counts as drained when its remaining bytes are within this fraction of what
// it sends in the step, so flows that finish together finish in one event.
constexpr double drain_tie_rel = 1e-12;

// Device code needs --expt-relaxed-constexpr for numeric_limits (set in CMake).
SKYFABRIC_HD inline double infinity_value() { return std::numeric_limits<double>::infinity(); }

// The per-element arithmetic of progressive filling, shared with the spread solver's steps
// (maxmin_spread.hpp).
// A link's fair share of what it has left.
SKYFABRIC_HD inline double link_share(const double* link_remaining, const int* link_share_count, int l) {
    return link_remaining[l] / link_share_count[l];
}

// The least share over flow f's links (+inf for none).
SKYFABRIC_HD inline double flow_least_share(int f, const int* flow_offsets, const int* flow_links,
                                            const double* link_remaining, const int* link_share_count) {
    double m = infinity_value();
    for (int k = flow_offsets[f]; k < flow_offsets[f + 1]; ++k) {
        const double share = link_share(link_remaining, link_share_count, flow_links[k]);
        if (share < m) m = share;
    }
    return m;
}

// A link whose share is above this is not the bottleneck of a flow with this least share, so
// the link does not saturate this round.
SKYFABRIC_HD inline double saturation_threshold(double least_share) {
    return least_share + least_share * share_tie_rel;
}

// What a frozen flow of weight w at rate r takes from a link.
SKYFABRIC_HD inline void take_from_link(double& remaining, int& share_count, double r, int w) {
    remaining -= w == 1 ? r : r * w;
    if (remaining < 0.0) remaining = 0.0;
    share_count -= w;
}

// Whether flow f takes part in the solve at all.
SKYFABRIC_HD inline bool takes_part(int f, const unsigned char* active, const int* flow_offsets) {
    return active[f] != 0 && flow_offsets[f + 1] > flow_offsets[f];
}

// Progressive filling over directed links.
//   capacity[link_count]        bytes/s per directed link
//   flow_offsets[flow_count+1]  CSR into flow_links (link indices)
//   active[flow_count]          nonzero: flow takes part; zero: rate 0
//   weight[flow_count]          optional (null: 1 each): flow f stands for weight[f] identical
//                               flows, each given rate[f] (FlowNetwork's transfers between the same two nodes)
// Out: rate[flow_count] bytes/s. A flow with no links gets rate 0 (the caller treats
// it as stalled or local). Scratch: link_remaining, link_share_count, link_saturated
// [link_count]; flow_frozen[flow_count].
SKYFABRIC_HD inline void maxmin_rates(int link_count, const double* capacity, int flow_count,
                                      const int* flow_offsets, const int* flow_links,
                                      const unsigned char* active, double* rate,
                                      double* link_remaining, int* link_share_count,
                                      unsigned char* link_saturated, unsigned char* flow_frozen,
                                      const int* weight = nullptr) {
    for (int l = 0; l < link_count; ++l) {
        link_remaining[l] = capacity[l] > 0.0 ? capacity[l] : 0.0;
        link_share_count[l] = 0;
    }
    int unfrozen = 0;
    for (int f = 0; f < flow_count; ++f) {
        rate[f] = 0.0;
        const bool part = takes_part(f, active, flow_offsets);
        flow_frozen[f] = part ? 0 : 1;
        if (!part) continue;
        ++unfrozen;
        const int w = weight ? weight[f] : 1;
        for (int k = flow_offsets[f]; k < flow_offsets[f + 1]; ++k) link_share_count[flow_links[k]] += w;
    }
    // Each round saturates every link whose fair share is the smallest on all the flows
    // crossing it (not only the global minimum): shares never fall during filling, so
    // such a link's share is final. Same result as one-link-per-round filling, but
    // independent bottlenecks (a ring step's p links) finish in one round.
    while (unfrozen > 0) {
        // rate[f] holds the flow's smallest link share until the flow freezes.
        for (int f = 0; f < flow_count; ++f) {
            if (flow_frozen[f]) continue;
            rate[f] = flow_least_share(f, flow_offsets, flow_links, link_remaining, link_share_count);
        }
        for (int l = 0; l < link_count; ++l) link_saturated[l] = link_share_count[l] > 0;
        for (int f = 0; f < flow_count; ++f) {
            if (flow_frozen[f]) continue;
            const double threshold = saturation_threshold(rate[f]);
            for (int k = flow_offsets[f]; k < flow_offsets[f + 1]; ++k) {
                const int l = flow_links[k];
                if (link_share(link_remaining, link_share_count, l) > threshold) link_saturated[l] = 0;
            }
        }
        for (int f = 0; f < flow_count; ++f) {
            if (flow_frozen[f]) continue;
            bool bottlenecked = false;
            for (int k = flow_offsets[f]; k < flow_offsets[f + 1]; ++k) {
                if (link_saturated[flow_links[k]]) { bottlenecked = true; break; }
            }
            if (!bottlenecked) continue;
            flow_frozen[f] = 1;
            --unfrozen;
            const int w = weight ? weight[f] : 1;
            for (int k = flow_offsets[f]; k < flow_offsets[f + 1]; ++k) {
                const int l = flow_links[k];
                take_from_link(link_remaining[l], link_share_count[l], rate[f], w);
            }
        }
    }
    for (int f = 0; f < flow_count; ++f)
        if (!takes_part(f, active, flow_offsets)) rate[f] = 0.0;
}

// Flows that carry the same bytes at rates that stay fixed (drain_flows says when they do)
// finish in order of falling rate. Sorts the n flow indices in order[] that way (equal rates by
// index), then drains them event by event as drain_flows' loop does: an event at the leader's
// drain time finishes every flow whose remaining bytes are within drain_tie_rel of what it sent.
// A flow's remaining bytes at time t are bytes − rate · t. O(n log n), no allocation.
SKYFABRIC_HD inline bool drains_before(const double* rate, int a, int b) {
    return rate[a] > rate[b] || (rate[a] == rate[b] && a < b);
}
SKYFABRIC_HD inline void sort_by_falling_rate(int* order, int n, const double* rate) {
    // Heap sort: in place and without recursion, so a kernel can run it too.
    auto sift_down = [&](int root, int end) {
        for (;;) {
            int child = 2 * root + 1;
            if (child >= end) return;
            if (child + 1 < end && drains_before(rate, order[child], order[child + 1])) ++child;
            if (!drains_before(rate, order[root], order[child])) return;
            const int tmp = order[root];
            order[root] = order[child];
            order[child] = tmp;
            root = child;
        }
    };
    for (int i = n / 2 - 1; i >= 0; --i) sift_down(i, n);
    for (int end = n - 1; end > 0; --end) {
        const int tmp = order[0];
        order[0] = order[end];
        order[end] = tmp;
        sift_down(0, end);
    }
}
SKYFABRIC_HD inline void drain_at_fixed_rates(const double* bytes, const double* latency_s, const double* rate,
                                              int* order, int n, double* finish_s) {
    // Most often (a ring step's flows) every flow ends in the first event: no order needed.
    int first = order[0];
    for (int i = 1; i < n; ++i)
        if (drains_before(rate, order[i], first)) first = order[i];
    const double first_dt = bytes[first] / rate[first];
    bool all_in_first = true;
    for (int i = 0; i < n && all_in_first; ++i) {
        const int f = order[i];
        const double sent = rate[f] * first_dt;
        all_in_first = bytes[f] <= sent + sent * drain_tie_rel;
    }
    if (all_in_first) {
        for (int i = 0; i < n; ++i) finish_s[order[i]] = first_dt + latency_s[order[i]];
        return;
    }
    sort_by_falling_rate(order, n, rate);
    double t = 0.0;
    for (int next = 0; next < n;) {
        const int lead = order[next];
        const double left = bytes[lead] - rate[lead] * t;
        const double dt = left > 0.0 ? left / rate[lead] : 0.0;
        const double t_end = t + dt;
        while (next < n) {
            const int f = order[next];
            const double sent = rate[f] * dt;
            if (!(bytes[f] - rate[f] * t <= sent + sent * drain_tie_rel)) break;
            finish_s[f] = t_end + latency_s[f];
            ++next;
        }
        t = t_end;
    }
}

// Runs a set of flows that all start at t = 0 on fixed capacities until every one has
// drained, re-solving rates each time a flow finishes. A flow's finish time is its
// drain time plus its latency (last bit in flight). Flows with bytes > 0 and no links,
// or stuck at rate 0, finish at +inf. Returns the makespan (max finish).
//
// When every flow carries the same bytes and the first solve gives each a rate > 0, that
// solve is the only one: such flows finish in order of falling rate, and a flow's
// bottleneck link carries only flows at its rate (which finish with it) or below (which
// are bottlenecked elsewhere and finish later), so in exact arithmetic no rate changes
// until the last flow drains. Re-solving would only move rates by rounding (an ulp or so
// of the filling order) at a full solve per event: an all-to-all's p(p − 1) flows drain
// over thousands of events (docs/benchmarks.md, "direct on the torus"). When every flow
// finishes in the first event (a ring step) the two ways give the same bits.
// Scratch: as maxmin_rates, plus remaining[flow_count], active[flow_count], order[flow_count].
// stopped(): polled before each event's solve (the host's stop flag; never on a device); once it
// says true the drain ends there, its results meaningless (the caller throws them away).
struct NeverStopped {
    SKYFABRIC_HD bool operator()() const { return false; }
};
// drain_flows_by is that loop with the solve given: rates(active, rate) fills rate[flow_count] with
// the max-min rates of the flows active marks (maxmin_rates, or the spread solver of
// maxmin_spread.hpp, which gives the same bits).
template <class Rates, class Stopped = NeverStopped>
SKYFABRIC_HD inline double drain_flows_by(Rates rates, int flow_count, const int* flow_offsets, const double* bytes,
                                          const double* latency_s, double* finish_s, double* rate, double* remaining,
                                          unsigned char* active, int* order, Stopped stopped = {}) {
    const double inf = infinity_value();
    int active_count = 0;
    bool equal_bytes = true;
    for (int f = 0; f < flow_count; ++f) {
        remaining[f] = bytes[f];
        const bool has_path = flow_offsets[f + 1] > flow_offsets[f];
        if (bytes[f] > 0.0 && has_path) {
            if (active_count > 0 && bytes[f] != bytes[order[0]]) equal_bytes = false;
            active[f] = 1;
            order[active_count++] = f;
            finish_s[f] = inf;
        } else {
            active[f] = 0;
            finish_s[f] = bytes[f] > 0.0 ? inf : latency_s[f];
        }
    }
    double t = 0.0;
    for (bool first = true; active_count > 0; first = false) {
        if (stopped()) break;
        rates(active, rate);
        if (first && equal_bytes) {
            bool every_rate_positive = true;  // a zero can come from rounding: then solve again
            for (int i = 0; i < active_count && every_rate_positive; ++i) every_rate_positive = rate[order[i]] > 0.0;
            if (every_rate_positive) {
                drain_at_fixed_rates(bytes, latency_s, rate, order, active_count, finish_s);
                break;
            }
        }
        double dt = inf;
        for (int f = 0; f < flow_count; ++f) {
            if (active[f] && rate[f] > 0.0) {
                const double d = remaining[f] / rate[f];
                if (d < dt) dt = d;
            }
        }
        if (!(dt < inf)) break;  // every remaining flow is stuck at rate 0
        t += dt;
        for (int f = 0; f < flow_count; ++f) {
            if (!active[f] || rate[f] <= 0.0) continue;
            const double sent = rate[f] * dt;
            if (remaining[f] <= sent + sent * drain_tie_rel) {
                remaining[f] = 0.0;
                active[f] = 0;
                --active_count;
                finish_s[f] = t + latency_s[f];
            } else {
                remaining[f] -= sent;
            }
        }
    }
    double makespan = 0.0;
    for (int f = 0; f < flow_count; ++f) {
        if (finish_s[f] > makespan) makespan = finish_s[f];
    }
    return makespan;
}

template <class Stopped = NeverStopped>
SKYFABRIC_HD inline double drain_flows(int link_count, const double* capacity, int flow_count,
                                       const int* flow_offsets, const int* flow_links,
                                       const double* bytes, const double* latency_s,
                                       double* finish_s, double* rate, double* remaining,
                                       unsigned char* active, double* link_remaining,
                                       int* link_share_count, unsigned char* link_saturated,
                                       unsigned char* flow_frozen, int* order, Stopped stopped = {}) {
    const auto rates = [=](const unsigned char* on, double* out) {
        maxmin_rates(link_count, capacity, flow_count, flow_offsets, flow_links, on, out, link_remaining,
                     link_share_count, link_saturated, flow_frozen);
    };
    return drain_flows_by(rates, flow_count, flow_offsets, bytes, latency_s, finish_s, rate, remaining, active, order,
                          stopped);
}

}  // namespace skyfabric::workloads::core
