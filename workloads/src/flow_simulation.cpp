#include <skyfabric/workloads/flow_simulation.hpp>

#include <algorithm>
#include <numeric>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <skyfabric/workloads/maxmin_core.hpp>
#include <skyfabric/workloads/repeated_sum.hpp>

#include "local_problem.hpp"

namespace skyfabric::workloads {

namespace {
constexpr double inf = std::numeric_limits<double>::infinity();

thread_local detail::LocalProblem scratch_problem;

// Bytes of a transfer that go over paths[i]. Equal: bytes / paths (as before UCMP existed, to
// the bit); capacity: bytes · bottleneck_i / Σ bottleneck.
double path_share(double bytes, const std::vector<Path>& paths, std::size_t i, MultipathSplit split) {
    if (split == MultipathSplit::equal || paths.size() == 1) return bytes / static_cast<double>(paths.size());
    double total_Bps = 0.0;
    for (const Path& p : paths) total_Bps += p.bottleneck_Bps;
    return bytes * (paths[i].bottleneck_Bps / total_Bps);
}

}  // namespace

// ------------------------------------------------------------ CollectiveEngine

CollectiveEngine::CollectiveEngine(NetworkClock& clock, FlowOptions options)
    : clock_(clock), options_(options) {
    check_epoch();
}

void CollectiveEngine::check_epoch() {
    if (clock_.epoch() == cached_epoch_) return;
    const bool first = cached_epoch_ < 0;
    cached_epoch_ = clock_.epoch();
    collective_cache_.clear();
    phase_cache_.clear();
    phase_cache_entries_ = 0;
    routes_.clear();
    routes_.seed(first ? options_.routes_before_damage : nullptr);  // a seed is for the first topology only
    edge_local_.assign(clock_.network().capacity_Bps.size(), -1);
}

double CollectiveEngine::run_phase_static(const Schedule& schedule, const Phase& phase,
                                          const Placement& placement, Cached& out) {
    const Network& net = clock_.network();
    detail::LocalProblem& lp = scratch_problem;
    lp.clear();
    const std::int32_t k = std::max(1, options_.paths_per_transfer);
    double stalled = 0.0;
    for (std::int32_t i = 0; i < phase.transfer_count; ++i) {
        const Transfer tr = schedule.transfer(phase, i);
        const std::int32_t a = placement[tr.source_rank];
        const std::int32_t b = placement[tr.target_rank];
        if (a == b) continue;  // co-located ranks: no network transfer
        const auto& paths = routes_.get(net, a, b, options_.routing, k);
        if (paths.empty()) {
            stalled = inf;
            break;
        }
        for (std::size_t q = 0; q < paths.size(); ++q)
            lp.add_flow(paths[q].edges, net, edge_local_, path_share(tr.bytes, paths, q, options_.split),
                        paths[q].latency_s + options_.per_message_overhead_s);
    }
    double duration = inf;
    if (stalled == 0.0) {
        duration = lp.drain();
        ++rate_solves_;
        for (std::size_t f = 0; f + 1 < lp.offsets.size(); ++f)
            for (std::int32_t q = lp.offsets[f]; q < lp.offsets[f + 1]; ++q)
                out.edge_bytes.emplace_back(lp.global_edge[lp.links[q]], lp.bytes[f]);
    }
    lp.release(edge_local_);
    out.duration_s = duration;
    return duration;
}

const CollectiveEngine::Cached& CollectiveEngine::phase_result(const Schedule& schedule, const Phase& phase,
                                                                const Placement& placement, std::int64_t key,
                                                                Cached& fresh) {
    if (key < 0) {
        run_phase_static(schedule, phase, placement, fresh);
        return fresh;
    }
    const std::int64_t pk = key * 1000003 + phase.pattern;
    auto it = phase_cache_.find(pk);
    if (it != phase_cache_.end()) return it->second;
    run_phase_static(schedule, phase, placement, fresh);
    // Past the budget a phase is solved again when asked again (the same numbers): an
    // all-to-all's p − 1 phases each differ, and kept they held p² edge totals.
    if (phase_cache_entries_ + fresh.edge_bytes.size() > phase_cache_budget) return fresh;
    phase_cache_entries_ += fresh.edge_bytes.size();
    return phase_cache_.emplace(pk, std::move(fresh)).first->second;
}

double CollectiveEngine::run_static(const Schedule& schedule, const Placement& placement,
                                    std::int64_t key, Cached& out) {
    std::vector<double> acc;
    std::vector<std::int32_t> touched;
    auto add = [&](const Cached& c, std::int32_t times) {
        if (acc.empty()) acc.assign(clock_.network().capacity_Bps.size(), 0.0);
        if (times == 1) {
            for (const auto& [e, b] : c.edge_bytes) {
                if (acc[e] == 0.0) touched.push_back(e);
                acc[e] += b;
            }
            return;
        }
        for (const auto& [e, b] : c.edge_bytes)
            if (acc[e] == 0.0) touched.push_back(e);
        accumulate_repeated(c.edge_bytes, times, 0, acc, repeat_scratch_);
    };
    // Phases of one entry share their transfers: solved once here whatever the key (the
    // same inputs give the same numbers), and the key lets later calls reuse it.
    double total = 0.0;
    for (const Phase& phase : schedule.phases) {
        Cached fresh;
        const Cached* c = &phase_result(schedule, phase, placement, key, fresh);
        // Barrier after barrier: the phases' durations add one by one (the sum the
        // explicit schedule gives, to the bit).
        for (std::int32_t r = 0; r < phase.repeat; ++r) total += c->duration_s;
        if (!std::isfinite(total)) break;
        add(*c, phase.repeat);
    }
    out.duration_s = total;
    out.edge_bytes.clear();
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (auto e : touched) out.edge_bytes.emplace_back(e, acc[e]);
    return total;
}

double CollectiveEngine::run_dynamic(const Schedule& schedule, const Placement& placement,
                                     double start_s, std::int64_t key, CollectiveResult& result) {
    struct Flow {
        std::int32_t a = 0, b = 0, sub = 0;
        double remaining = 0.0;
        double latency = 0.0;
        bool has_path = false;
        std::int32_t first_edge = 0, edge_count = 0;  // in `edges` (a route's reference lasts one lookup)
    };
    const std::int32_t k = std::max(1, options_.paths_per_transfer);
    double t = start_s;
    std::vector<Flow> flows;
    std::vector<unsigned char> on;
    std::vector<std::int32_t> flow_of;  // local flow → flows index
    std::vector<std::int32_t> edges;    // the flows' paths, one after another
    auto reroute = [&] {
        const Network& net = clock_.network();
        edges.clear();
        for (auto& f : flows) {
            if (f.remaining <= 0.0) continue;
            const auto& paths = routes_.get(net, f.a, f.b, options_.routing, k);
            f.has_path = !paths.empty();
            if (f.has_path) {
                const Path& p = paths[static_cast<std::size_t>(f.sub) % paths.size()];
                f.first_edge = static_cast<std::int32_t>(edges.size());
                f.edge_count = static_cast<std::int32_t>(p.edges.size());
                edges.insert(edges.end(), p.edges.begin(), p.edges.end());
                f.latency = p.latency_s + options_.per_message_overhead_s;
            }
        }
    };
    auto enter_time = [&](double time_s) {
        const auto before = clock_.epoch();
        clock_.advance_to(time_s);
        result.topology_changes += static_cast<std::int32_t>(clock_.epoch() - before);
        check_epoch();
    };
    for (const Phase& phase : schedule.phases)
      for (std::int32_t rep = 0; rep < phase.repeat;) {
        enter_time(t);
        if (key >= 0) {
            // Phases that fit before the next change run as on a fixed network: reuse (or
            // make) this epoch's cached solution of their pattern, and take as many of the
            // entry's repeats as end by the change in one go.
            Cached fresh;
            const Cached& cached = phase_result(schedule, phase, placement, key, fresh);
            const double d = cached.duration_s;
            const double horizon = clock_.next_change_s();
            std::int32_t taken = 0;
            if (std::isfinite(d)) {
                // t advances phase by phase, as the explicit schedule's loop does; a phase
                // ending exactly at the change leaves the next one to the new epoch.
                while (rep + taken < phase.repeat && t + d <= horizon) {
                    t += d;
                    ++taken;
                    if (t >= horizon) break;
                }
            }
            if (taken > 0) {
                flow_events_ += 2 * static_cast<std::int64_t>(phase.transfer_count) * taken;
                clock_.add_edge_bytes_repeated(cached.edge_bytes, taken);
                rep += taken;
                continue;
            }
        }
        flow_events_ += 2 * phase.transfer_count;
        ++rep;
        flows.clear();
        for (std::int32_t i = 0; i < phase.transfer_count; ++i) {
            const Transfer tr = schedule.transfer(phase, i);
            const std::int32_t a = placement[tr.source_rank];
            const std::int32_t b = placement[tr.target_rank];
            if (a == b) continue;
            // UCMP weighs the sub-flows by the paths of the epoch the phase starts in (kept
            // across later reroutes, as a router keeps its weights until it recomputes them);
            // with no path yet, equal shares until one appears.
            const std::vector<Path>* weights = nullptr;
            if (options_.split == MultipathSplit::capacity) {
                const auto& paths = routes_.get(clock_.network(), a, b, options_.routing, k);
                if (!paths.empty()) weights = &paths;
            }
            const std::int32_t subs = weights ? static_cast<std::int32_t>(weights->size()) : k;
            for (std::int32_t s = 0; s < subs; ++s) {
                Flow f;
                f.a = a;
                f.b = b;
                f.sub = s;
                f.remaining = weights ? path_share(tr.bytes, *weights, static_cast<std::size_t>(s), options_.split)
                                      : tr.bytes / k;
                flows.push_back(f);
            }
        }
        reroute();
        double phase_end = t;
        for (;;) {
            const Network& net = clock_.network();
            detail::LocalProblem& lp = scratch_problem;
            lp.clear();
            flow_of.clear();
            bool any_stalled = false;
            std::size_t unfinished = 0;
            for (std::size_t i = 0; i < flows.size(); ++i) {
                auto& f = flows[i];
                if (f.remaining <= 0.0) continue;
                ++unfinished;
                if (!f.has_path) {
                    any_stalled = true;
                    continue;
                }
                lp.add_flow(std::span<const std::int32_t>(edges.data() + f.first_edge, static_cast<std::size_t>(f.edge_count)),
                            net, edge_local_, f.remaining, f.latency);
                flow_of.push_back(static_cast<std::int32_t>(i));
            }
            if (unfinished == 0) {
                lp.release(edge_local_);
                break;
            }
            on.assign(flow_of.size(), 1);
            lp.solve(on);
            ++rate_solves_;
            double dt = inf;
            for (std::size_t j = 0; j < flow_of.size(); ++j)
                if (lp.rate[j] > 0.0) dt = std::min(dt, flows[flow_of[j]].remaining / lp.rate[j]);
            const double horizon = clock_.next_change_s();
            const bool drains_first = std::isfinite(dt) && t + dt <= horizon;
            const double step = drains_first ? dt : horizon - t;
            if (!drains_first && !std::isfinite(horizon)) {  // nothing moves and nothing will change
                lp.release(edge_local_);
                result.completed = false;
                return inf;
            }
            for (std::size_t j = 0; j < flow_of.size(); ++j) {
                auto& f = flows[flow_of[j]];
                const double sent = lp.rate[j] * step;
                if (sent <= 0.0) continue;
                const bool done = drains_first && f.remaining <= sent + sent * core::drain_tie_rel;
                const double moved = done ? f.remaining : sent;
                for (std::int32_t q = lp.offsets[j]; q < lp.offsets[j + 1]; ++q)
                    clock_.add_edge_bytes(lp.global_edge[lp.links[q]], moved);
                if (done) {
                    f.remaining = 0.0;
                    phase_end = std::max(phase_end, t + step + f.latency);
                } else {
                    f.remaining -= sent;
                }
            }
            lp.release(edge_local_);
            if (any_stalled) result.stalled_s += step;
            t += step;
            if (!drains_first) {
                enter_time(t);
                reroute();
            }
        }
        t = std::max(t, phase_end);
      }
    return t;
}

CollectiveResult CollectiveEngine::run(const Schedule& schedule, const Placement& placement,
                                       double start_s, std::int64_t cache_key) {
    CollectiveResult r;
    r.op = schedule.op;
    r.algorithm = schedule.algorithm;
    r.ranks = schedule.ranks;
    r.bytes = schedule.bytes;
    r.start_s = start_s;
    r.end_s = start_s;
    if (static_cast<std::int32_t>(placement.size()) < schedule.ranks)
        throw std::invalid_argument("CollectiveEngine::run: placement has fewer nodes than ranks");
    clock_.advance_to(start_s);
    check_epoch();
    if (schedule.phases.empty()) return r;

    Cached local;
    Cached* c = &local;
    if (cache_key >= 0) {
        auto it = collective_cache_.find(cache_key);
        if (it == collective_cache_.end()) {
            run_static(schedule, placement, cache_key, local);
            it = collective_cache_.emplace(cache_key, std::move(local)).first;
        }
        c = &it->second;
    } else {
        run_static(schedule, placement, -1, local);
    }
    const double undisturbed = c->duration_s;
    if (std::isfinite(undisturbed) && start_s + undisturbed <= clock_.next_change_s()) {
        for (const auto& [e, b] : c->edge_bytes) clock_.add_edge_bytes(e, b);
        flow_events_ += 2 * schedule.transfer_count();
        r.end_s = start_s + undisturbed;
    } else {
        r.end_s = run_dynamic(schedule, placement, start_s, cache_key, r);
        r.lost_s = std::isfinite(undisturbed) ? std::max(0.0, r.end_s - start_s - undisturbed)
                                              : r.end_s - start_s;
    }
    r.completed = std::isfinite(r.end_s);
    const double d = r.end_s - r.start_s;
    if (r.completed && d > 0.0) {
        r.alg_bw_Bps = r.bytes / d;
        r.bus_bw_Bps = r.alg_bw_Bps * bus_bandwidth_factor(r.op, r.ranks);
    }
    return r;
}


}  // namespace skyfabric::workloads
