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

// Progressive filling over directed links.
//   capacity[link_count]        bytes/s per directed link
//   flow_offsets[flow_count+1]  CSR into flow_links (link indices)
//   active[flow_count]          nonzero: flow takes part; zero: rate 0
// Out: rate[flow_count] bytes/s. A flow with no links gets rate 0 (the caller treats
// it as stalled or local). Scratch: link_remaining, link_share_count, link_saturated
// [link_count]; flow_frozen[flow_count].
SKYFABRIC_HD inline void maxmin_rates(int link_count, const double* capacity, int flow_count,
                                      const int* flow_offsets, const int* flow_links,
                                      const unsigned char* active, double* rate,
                                      double* link_remaining, int* link_share_count,
                                      unsigned char* link_saturated, unsigned char* flow_frozen) {
    for (int l = 0; l < link_count; ++l) {
        link_remaining[l] = capacity[l] > 0.0 ? capacity[l] : 0.0;
        link_share_count[l] = 0;
    }
    int unfrozen = 0;
    for (int f = 0; f < flow_count; ++f) {
        rate[f] = 0.0;
        const bool takes_part = active[f] != 0 && flow_offsets[f + 1] > flow_offsets[f];
        flow_frozen[f] = takes_part ? 0 : 1;
        if (!takes_part) continue;
        ++unfrozen;
        for (int k = flow_offsets[f]; k < flow_offsets[f + 1]; ++k) ++link_share_count[flow_links[k]];
    }
    // Each round saturates every link whose fair share is the smallest on all the flows
    // crossing it (not only the global minimum): shares never fall during filling, so
    // such a link's share is final. Same result as one-link-per-round filling, but
    // independent bottlenecks (a ring step's p links) finish in one round.
    while (unfrozen > 0) {
        // rate[f] holds the flow's smallest link share until the flow freezes.
        for (int f = 0; f < flow_count; ++f) {
            if (flow_frozen[f]) continue;
            double m = infinity_value();
            for (int k = flow_offsets[f]; k < flow_offsets[f + 1]; ++k) {
                const int l = flow_links[k];
                const double share = link_remaining[l] / link_share_count[l];
                if (share < m) m = share;
            }
            rate[f] = m;
        }
        for (int l = 0; l < link_count; ++l) link_saturated[l] = link_share_count[l] > 0;
        for (int f = 0; f < flow_count; ++f) {
            if (flow_frozen[f]) continue;
            const double threshold = rate[f] + rate[f] * share_tie_rel;
            for (int k = flow_offsets[f]; k < flow_offsets[f + 1]; ++k) {
                const int l = flow_links[k];
                if (link_remaining[l] / link_share_count[l] > threshold) link_saturated[l] = 0;
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
            for (int k = flow_offsets[f]; k < flow_offsets[f + 1]; ++k) {
                const int l = flow_links[k];
                link_remaining[l] -= rate[f];
                if (link_remaining[l] < 0.0) link_remaining[l] = 0.0;
                --link_share_count[l];
            }
        }
    }
    for (int f = 0; f < flow_count; ++f)
        if (!(active[f] != 0 && flow_offsets[f + 1] > flow_offsets[f])) rate[f] = 0.0;
}

// Runs a set of flows that all start at t = 0 on fixed capacities until every one has
// drained, re-solving rates each time a flow finishes. A flow's finish time is its
// drain time plus its latency (last bit in flight). Flows with bytes > 0 and no links,
// or stuck at rate 0, finish at +inf. Returns the makespan (max finish).
// Scratch: as maxmin_rates, plus remaining[flow_count], active[flow_count].
SKYFABRIC_HD inline double drain_flows(int link_count, const double* capacity, int flow_count,
                                       const int* flow_offsets, const int* flow_links,
                                       const double* bytes, const double* latency_s,
                                       double* finish_s, double* rate, double* remaining,
                                       unsigned char* active, double* link_remaining,
                                       int* link_share_count, unsigned char* link_saturated,
                                       unsigned char* flow_frozen) {
    const double inf = infinity_value();
    int active_count = 0;
    for (int f = 0; f < flow_count; ++f) {
        remaining[f] = bytes[f];
        const bool has_path = flow_offsets[f + 1] > flow_offsets[f];
        if (bytes[f] > 0.0 && has_path) {
            active[f] = 1;
            ++active_count;
            finish_s[f] = inf;
        } else {
            active[f] = 0;
            finish_s[f] = bytes[f] > 0.0 ? inf : latency_s[f];
        }
    }
    double t = 0.0;
    while (active_count > 0) {
        maxmin_rates(link_count, capacity, flow_count, flow_offsets, flow_links, active, rate,
                     link_remaining, link_share_count, link_saturated, flow_frozen);
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

}  // namespace skyfabric::workloads::core
