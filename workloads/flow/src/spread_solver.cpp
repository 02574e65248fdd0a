// One max-min problem on several CPU threads: maxmin_spread.hpp's steps, each cut into fixed
// chunks of flows or links that IdleHelpers hands to whichever thread is free. A chunk's results
// do not depend on which thread ran it, nor does the order of a link's subtractions (its flows in
// rising index), so the rates are maxmin_rates' bits at any thread count.

#include <skyfabric/workloads/spread_solver.hpp>

#include <algorithm>
#include <numeric>

#include <skyfabric/workloads/idle_helpers.hpp>
#include <skyfabric/workloads/maxmin_core.hpp>
#include <skyfabric/workloads/maxmin_spread.hpp>

namespace skyfabric::workloads {

namespace {

// Elements per item handed out: large enough that taking an item costs little beside its work,
// small enough that a 5,184-flow phase still gives each of 16 threads a few.
constexpr std::int32_t chunk = 256;

std::size_t chunks(std::int32_t n) { return static_cast<std::size_t>((n + chunk - 1) / chunk); }

// body(begin, end) over [0, n) a chunk at a time, on the helpers idle now and this thread.
template <class Body>
void for_chunks(IdleHelpers& helpers, std::int32_t n, const Body& body) {
    const std::function<void(std::size_t)> item = [&](std::size_t c) {
        const auto begin = static_cast<std::int32_t>(c) * chunk;
        body(begin, std::min(n, begin + chunk));
    };
    helpers.run(chunks(n), item);
}

// Step 4 over links [b, e), `lanes` links at a time, one entry of each in turn: a link's
// subtractions are a chain (each waits for the last), so walking one link after another waits on
// every one; several links' chains side by side overlap. Each link's own order is kept
// (core::spread_link_take's, to the bit).
void take_interleaved(std::int32_t b, std::int32_t e, const int* lo, int* lf, int* live, const double* rate,
                      const unsigned char* frozen, const std::int32_t* weight, double* remaining, int* count) {
    constexpr std::int32_t lanes = 8;
    for (std::int32_t first = b; first < e; first += lanes) {
        const std::int32_t n = std::min(lanes, e - first);
        double rem[lanes];
        int cnt[lanes], next[lanes], end[lanes], kept[lanes];
        int longest = 0;
        for (std::int32_t i = 0; i < n; ++i) {
            const std::int32_t l = first + i;
            rem[i] = remaining[l];
            cnt[i] = count[l];
            next[i] = kept[i] = lo[l];
            end[i] = lo[l] + live[l];
            longest = std::max(longest, live[l]);
        }
        for (int step = 0; step < longest; ++step)
            for (std::int32_t i = 0; i < n; ++i) {
                if (next[i] == end[i]) continue;
                const int f = lf[next[i]++];
                lf[kept[i]] = f;
                kept[i] += core::spread_take_entry(f, rate, frozen, weight, rem[i], cnt[i]) ? 1 : 0;
            }
        for (std::int32_t i = 0; i < n; ++i) {
            const std::int32_t l = first + i;
            remaining[l] = rem[i];
            count[l] = cnt[i];
            live[l] = kept[i] - lo[l];
        }
    }
}

}  // namespace

void SpreadMaxMin::rates(const FlowProblem& p, const unsigned char* active, double* rate, IdleHelpers& helpers,
                         const std::int32_t* weight) {
    build_index(p, helpers);
    solve(p, active, rate, helpers, weight);
}

// LinkFlows::build as a counting sort over fixed slices of the flows: each slice counts its
// crossings per link, a link's slices then take consecutive places, and each slice writes its
// flows into its places in rising order. The index is LinkFlows::build's whatever the slicing.
void SpreadMaxMin::build_index(const FlowProblem& p, IdleHelpers& helpers) {
    const std::int32_t nl = p.link_count(), nf = p.flow_count();
    const int* fo = p.flow_offsets.data();
    const int* fl = p.flow_links.data();
    // Up to 64 slices of 1,024 flows or more, and no more slices than a link has crossings on
    // average (the per-slice places then hold no more than the index itself).
    const std::int64_t per_link = static_cast<std::int64_t>(p.flow_links.size()) / std::max(1, nl);
    const auto slices = static_cast<std::int32_t>(std::clamp<std::int64_t>(std::min<std::int64_t>(nf / 1024, per_link), 1, 64));
    const std::int32_t per_slice = (nf + slices - 1) / slices;
    const auto at = [nl](std::int32_t slice, std::int32_t l) {
        return static_cast<std::size_t>(slice) * static_cast<std::size_t>(nl) + static_cast<std::size_t>(l);
    };
    slice_place_.assign(static_cast<std::size_t>(slices) * static_cast<std::size_t>(nl), 0);
    int* place = slice_place_.data();
    const std::function<void(std::size_t)> count = [&](std::size_t c) {
        const auto slice = static_cast<std::int32_t>(c);
        const std::int32_t begin = std::min(nf, slice * per_slice), end = std::min(nf, begin + per_slice);
        for (std::int32_t k = fo[begin]; k < fo[end]; ++k) ++place[at(slice, fl[k])];
    };
    helpers.run(static_cast<std::size_t>(slices), count);
    auto& offsets = link_flows_.offsets;
    offsets.resize(static_cast<std::size_t>(nl) + 1);
    for_chunks(helpers, nl, [&](std::int32_t b, std::int32_t e) {
        for (std::int32_t l = b; l < e; ++l) {
            int sum = 0;
            for (std::int32_t c = 0; c < slices; ++c) {
                const int n = place[at(c, l)];
                place[at(c, l)] = sum;
                sum += n;
            }
            offsets[static_cast<std::size_t>(l) + 1] = sum;
        }
    });
    offsets[0] = 0;
    for (std::int32_t l = 0; l < nl; ++l) offsets[static_cast<std::size_t>(l) + 1] += offsets[static_cast<std::size_t>(l)];
    link_flows_.flows.resize(p.flow_links.size());
    int* flows = link_flows_.flows.data();
    const int* lo = offsets.data();
    const std::function<void(std::size_t)> fill = [&](std::size_t c) {
        const auto slice = static_cast<std::int32_t>(c);
        const std::int32_t begin = std::min(nf, slice * per_slice), end = std::min(nf, begin + per_slice);
        for (std::int32_t f = begin; f < end; ++f)
            for (std::int32_t k = fo[f]; k < fo[f + 1]; ++k) {
                const std::int32_t l = fl[k];
                flows[lo[l] + place[at(slice, l)]++] = f;
            }
    };
    helpers.run(static_cast<std::size_t>(slices), fill);
}

void SpreadMaxMin::solve(const FlowProblem& p, const unsigned char* active, double* rate, IdleHelpers& helpers,
                         const std::int32_t* weight) {
    const std::int32_t nl = p.link_count(), nf = p.flow_count();
    const int* fo = p.flow_offsets.data();
    const int* fl = p.flow_links.data();
    const int* lo = link_flows_.offsets.data();
    const int* index = link_flows_.flows.data();
    live_flows_.resize(link_flows_.flows.size());
    live_.resize(static_cast<std::size_t>(nl));
    int* lf = live_flows_.data();
    int* live = live_.data();
    link_remaining_.resize(static_cast<std::size_t>(nl));
    share_count_.resize(static_cast<std::size_t>(nl));
    saturated_.resize(static_cast<std::size_t>(nl));
    frozen_.resize(static_cast<std::size_t>(nf));
    counts_.assign(chunks(nf), 0);
    double* remaining = link_remaining_.data();
    int* count = share_count_.data();
    unsigned char* saturated = saturated_.data();
    unsigned char* frozen = frozen_.data();
    const double* capacity = p.capacity_Bps.data();

    for_chunks(helpers, nl, [&](std::int32_t b, std::int32_t e) {
        // Each solve starts from the whole index (step 4 keeps the lists to the unfrozen flows).
        std::copy(index + lo[b], index + lo[e], lf + lo[b]);
        for (std::int32_t l = b; l < e; ++l) {
            core::spread_start_link(l, capacity, lo, lf, active, fo, weight, remaining, count);
            live[l] = lo[l + 1] - lo[l];
        }
    });
    for_chunks(helpers, nf, [&](std::int32_t b, std::int32_t e) {
        int n = 0;
        for (std::int32_t f = b; f < e; ++f) n += core::spread_start_flow(f, active, fo, rate, frozen);
        counts_[static_cast<std::size_t>(b / chunk)] = n;
    });
    std::int64_t unfrozen = std::accumulate(counts_.begin(), counts_.end(), std::int64_t{0});
    while (unfrozen > 0) {
        for_chunks(helpers, nf, [&](std::int32_t b, std::int32_t e) {
            for (std::int32_t f = b; f < e; ++f) core::spread_flow_share(f, fo, fl, remaining, count, rate, frozen);
        });
        for_chunks(helpers, nl, [&](std::int32_t b, std::int32_t e) {
            for (std::int32_t l = b; l < e; ++l)
                saturated[l] = core::spread_link_saturated(l, lo, lf, live, remaining, count, rate, frozen);
        });
        for_chunks(helpers, nf, [&](std::int32_t b, std::int32_t e) {
            int n = 0;
            for (std::int32_t f = b; f < e; ++f) n += core::spread_flow_freezes(f, fo, fl, saturated, frozen);
            counts_[static_cast<std::size_t>(b / chunk)] = n;
        });
        unfrozen -= std::accumulate(counts_.begin(), counts_.end(), std::int64_t{0});
        for_chunks(helpers, nl, [&](std::int32_t b, std::int32_t e) {
            take_interleaved(b, e, lo, lf, live, rate, frozen, weight, remaining, count);
        });
    }
    for (std::int32_t f = 0; f < nf; ++f) core::spread_finish_flow(f, active, fo, rate);
}

double SpreadMaxMin::drain(const FlowProblem& p, double* finish_s, IdleHelpers& helpers,
                           const std::atomic<bool>* stop) {
    const auto f = static_cast<std::size_t>(p.flow_count());
    rate_.resize(f);
    left_.resize(f);
    active_.resize(f);
    order_.resize(f);
    build_index(p, helpers);
    const auto rates = [&](const unsigned char* on, double* out) { solve(p, on, out, helpers, nullptr); };
    return core::drain_flows_by(rates, p.flow_count(), p.flow_offsets.data(), p.flow_bytes.data(),
                                p.flow_latency_s.data(), finish_s, rate_.data(), left_.data(), active_.data(),
                                order_.data(), [stop] { return stop_requested(stop); });
}

}  // namespace skyfabric::workloads
