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

}  // namespace

void SpreadMaxMin::rates(const FlowProblem& p, const unsigned char* active, double* rate, IdleHelpers& helpers,
                         const std::int32_t* weight) {
    link_flows_.build(p.link_count(), p.flow_count(), p.flow_offsets.data(), p.flow_links.data());
    solve(p, active, rate, helpers, weight);
}

void SpreadMaxMin::solve(const FlowProblem& p, const unsigned char* active, double* rate, IdleHelpers& helpers,
                         const std::int32_t* weight) {
    const std::int32_t nl = p.link_count(), nf = p.flow_count();
    const int* fo = p.flow_offsets.data();
    const int* fl = p.flow_links.data();
    const int* lo = link_flows_.offsets.data();
    live_flows_.assign(link_flows_.flows.begin(), link_flows_.flows.end());
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
            for (std::int32_t l = b; l < e; ++l) core::spread_link_take(l, lo, lf, live, rate, frozen, weight, remaining, count);
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
    link_flows_.build(p.link_count(), p.flow_count(), p.flow_offsets.data(), p.flow_links.data());
    const auto rates = [&](const unsigned char* on, double* out) { solve(p, on, out, helpers, nullptr); };
    return core::drain_flows_by(rates, p.flow_count(), p.flow_offsets.data(), p.flow_bytes.data(),
                                p.flow_latency_s.data(), finish_s, rate_.data(), left_.data(), active_.data(),
                                order_.data(), [stop] { return stop_requested(stop); });
}

}  // namespace skyfabric::workloads
