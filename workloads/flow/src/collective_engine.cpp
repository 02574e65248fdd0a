#include <skyfabric/workloads/collective_engine.hpp>

#include <skyfabric/workloads/idle_helpers.hpp>

#include <algorithm>
#include <numeric>
#include <cmath>
#include <limits>
#include <queue>
#include <stdexcept>

#include <skyfabric/workloads/maxmin_core.hpp>
#include <skyfabric/workloads/repeated_sum.hpp>

#include "local_problem.hpp"

namespace skyfabric::workloads {

namespace {
constexpr double inf = std::numeric_limits<double>::infinity();

thread_local detail::LocalProblem scratch_problem;

// A batch of phases built for one drain_batch call, reused by every collective on this thread.
struct PhaseBatch {
    std::vector<FlowProblem> problems;
    std::vector<std::vector<std::int32_t>> global_edges;
    std::vector<std::int32_t> patterns;
    std::vector<DrainResult> results;
    std::size_t used = 0;
    std::size_t add(std::int32_t pattern) {
        if (used == problems.size()) {
            problems.emplace_back();
            global_edges.emplace_back();
            patterns.emplace_back();
        }
        patterns[used] = pattern;
        return used++;
    }
    std::span<const FlowProblem> built() const { return {problems.data(), used}; }
};
thread_local PhaseBatch scratch_batch;

// The rates of one route set's flows from event to event (a flow ending), for run_dynamic.
// Removing flows whose least rate is r* leaves every flow below r* at its rate: max-min's
// progressive filling reaches r* the same way without them, their links' shares staying above r*
// until then (the flows' own rates are their least share). So an event re-solves only the flows at
// r* or above, on what the others leave of their links; where that is most of them, or where a
// re-solved flow would get no rate, it solves them all. A flow's bytes are settled (moved onto its
// links) when its rate changes or it ends, not at every event: an event costs what it re-solves,
// where re-solving every flow made a phase of many flows ending one by one quadratic.
class EventDrain {
public:
    // After a (re)build: every flow solved, nothing sent yet.
    void start(detail::LocalProblem& lp) {
        const auto n = lp.problem.flow_bytes.size();
        rate_.assign(n, 0.0);
        left_.assign(lp.problem.flow_bytes.begin(), lp.problem.flow_bytes.end());
        since_.assign(n, 0.0);
        stamp_.assign(n, 0);
        on_.assign(n, 1);
        active_ = n;
        elapsed_ = 0.0;
        finishes_ = {};
        changeable_.clear();
        for (std::size_t j = 0; j < n; ++j) changeable_.push_back(static_cast<std::int32_t>(j));
        solve_all(lp, [](std::int32_t, double) {});
    }
    // Time until the next flow ends (inf: none moves).
    double next_end_in() {
        drop_stale();
        return finishes_.empty() ? std::numeric_limits<double>::infinity() : std::max(0.0, finishes_.top().at - elapsed_);
    }
    // Advances by step to the next end and ends the flow that drains then and every flow whose own
    // time to drain is within drain_tie_rel of the step (flows that finish together finish in one
    // event): ended(j, bytes moved since its last settling).
    template <class Ended>
    void end_flows(const detail::LocalProblem& lp, double step, Ended ended) {
        least_ended_ = std::numeric_limits<double>::infinity();
        for (bool leader = true;; leader = false) {
            drop_stale();
            if (finishes_.empty()) break;
            const Finish c = finishes_.top();
            if (!leader && c.at - elapsed_ > step + step * core::drain_tie_rel) break;
            finishes_.pop();
            const auto j = static_cast<std::size_t>(c.flow);
            ended(c.flow, left_[j]);
            on_[j] = 0;
            --active_;
            least_ended_ = std::min(least_ended_, rate_[j]);
            for (std::int32_t q = lp.problem.flow_offsets[j]; q < lp.problem.flow_offsets[j + 1]; ++q)
                used_[static_cast<std::size_t>(lp.problem.flow_links[q])] -= rate_[j];
        }
        elapsed_ += step;
    }
    void advance(double step) { elapsed_ += step; }
    // After end_flows: re-solves the flows the ends may speed up; settled(j, bytes moved) for each
    // whose rate changes. False when nothing was re-solved.
    template <class Settled>
    bool resolve(detail::LocalProblem& lp, Settled settled) {
        if (active_ == 0 || !(least_ended_ < std::numeric_limits<double>::infinity())) return false;
        changeable_.clear();
        for (std::size_t j = 0; j < on_.size(); ++j)
            if (on_[j] && rate_[j] >= least_ended_) changeable_.push_back(static_cast<std::int32_t>(j));
        if (changeable_.empty()) return false;
        if (2 * changeable_.size() > active_ || !solve_some(lp, settled)) {
            changeable_.clear();
            for (std::size_t j = 0; j < on_.size(); ++j)
                if (on_[j]) changeable_.push_back(static_cast<std::int32_t>(j));
            solve_all(lp, settled);
        }
        return true;
    }
    // Every flow still on brought to now: settled(j, bytes moved, bytes left).
    template <class Settled>
    void settle_all(Settled settled) {
        for (std::size_t j = 0; j < on_.size(); ++j) {
            if (!on_[j]) continue;
            const double moved = std::min(left_[j], rate_[j] * (elapsed_ - since_[j]));
            settled(static_cast<std::int32_t>(j), moved, left_[j] - moved);
        }
    }

private:
    struct Finish {
        double at;  // elapsed time it drains by
        std::int32_t flow;
        std::uint32_t stamp;
        bool operator>(const Finish& o) const { return at > o.at || (at == o.at && flow > o.flow); }
    };
    void drop_stale() {
        while (!finishes_.empty()) {
            const Finish& c = finishes_.top();
            const auto j = static_cast<std::size_t>(c.flow);
            if (on_[j] && c.stamp == stamp_[j]) return;
            finishes_.pop();
        }
    }
    // Gives flow j its new rate, settling what it sent at the old one.
    template <class Settled>
    void set_rate(std::size_t j, double r, Settled& settled) {
        if (r == rate_[j]) return;  // its finish stands
        const double moved = std::min(left_[j], rate_[j] * (elapsed_ - since_[j]));
        if (moved > 0.0) settled(static_cast<std::int32_t>(j), moved);
        left_[j] -= moved;
        since_[j] = elapsed_;
        rate_[j] = r;
        ++stamp_[j];
        if (r > 0.0) finishes_.push({elapsed_ + left_[j] / r, static_cast<std::int32_t>(j), stamp_[j]});
    }
    // Every flow on, from the whole capacities (the link totals recounted).
    template <class Settled>
    void solve_all(detail::LocalProblem& lp, Settled settled) {
        lp.solve(on_);
        for (std::size_t j = 0; j < on_.size(); ++j)
            if (on_[j]) set_rate(j, lp.rate[j], settled);
        used_.assign(lp.problem.capacity_Bps.size(), 0.0);
        for (std::size_t j = 0; j < on_.size(); ++j)
            if (on_[j])
                for (std::int32_t q = lp.problem.flow_offsets[j]; q < lp.problem.flow_offsets[j + 1]; ++q)
                    used_[static_cast<std::size_t>(lp.problem.flow_links[q])] += rate_[j];
    }
    // The changeable flows on what the others leave of their links; false (nothing changed) where
    // one would get no rate, which rounding of the leftovers could cause.
    template <class Settled>
    bool solve_some(const detail::LocalProblem& lp, Settled settled) {
        sub_.clear();
        if (sub_link_.size() < lp.problem.capacity_Bps.size()) sub_link_.resize(lp.problem.capacity_Bps.size(), -1);
        sub_touched_.clear();
        for (const auto j : changeable_)
            for (std::int32_t q = lp.problem.flow_offsets[j]; q < lp.problem.flow_offsets[j + 1]; ++q) {
                const auto l = static_cast<std::size_t>(lp.problem.flow_links[q]);
                if (sub_link_[l] < 0) {
                    sub_link_[l] = static_cast<std::int32_t>(sub_.capacity_Bps.size());
                    sub_.capacity_Bps.push_back(lp.problem.capacity_Bps[l] - used_[l]);
                    sub_touched_.push_back(static_cast<std::int32_t>(l));
                }
                sub_.capacity_Bps[static_cast<std::size_t>(sub_link_[l])] += rate_[static_cast<std::size_t>(j)];
                sub_.flow_links.push_back(sub_link_[l]);
            }
        std::int32_t offset = 0;
        sub_.flow_offsets.push_back(0);
        for (const auto j : changeable_) {
            offset += lp.problem.flow_offsets[j + 1] - lp.problem.flow_offsets[j];
            sub_.flow_offsets.push_back(offset);
        }
        for (const auto l : sub_touched_) sub_link_[static_cast<std::size_t>(l)] = -1;
        const auto n = changeable_.size(), links = sub_.capacity_Bps.size();
        sub_on_.assign(n, 1);
        sub_rate_.resize(n);
        sub_frozen_.resize(n);
        sub_remaining_.resize(links);
        sub_count_.resize(links);
        sub_saturated_.resize(links);
        core::maxmin_rates(static_cast<int>(links), sub_.capacity_Bps.data(), static_cast<int>(n), sub_.flow_offsets.data(),
                           sub_.flow_links.data(), sub_on_.data(), sub_rate_.data(), sub_remaining_.data(), sub_count_.data(),
                           sub_saturated_.data(), sub_frozen_.data());
        for (std::size_t i = 0; i < n; ++i)
            if (!(sub_rate_[i] > 0.0)) return false;
        for (std::size_t i = 0; i < n; ++i) {
            const auto j = static_cast<std::size_t>(changeable_[i]);
            const double old = rate_[j];
            set_rate(j, sub_rate_[i], settled);
            for (std::int32_t q = lp.problem.flow_offsets[j]; q < lp.problem.flow_offsets[j + 1]; ++q)
                used_[static_cast<std::size_t>(lp.problem.flow_links[q])] += rate_[j] - old;
        }
        return true;
    }

    std::vector<double> rate_, left_, since_;  // per flow: its rate, bytes left at `since` (elapsed)
    std::vector<std::uint32_t> stamp_;         // per flow: its current finish entry
    std::vector<unsigned char> on_;
    std::size_t active_ = 0;
    double elapsed_ = 0.0;                      // since start()
    double least_ended_ = 0.0;
    std::vector<double> used_;                  // per link: the flows' rates on it
    std::priority_queue<Finish, std::vector<Finish>, std::greater<>> finishes_;
    std::vector<std::int32_t> changeable_;
    FlowProblem sub_;
    std::vector<std::int32_t> sub_link_, sub_touched_;  // per local link: its sub link (−1); the links set
    std::vector<unsigned char> sub_on_, sub_saturated_, sub_frozen_;
    std::vector<double> sub_rate_, sub_remaining_;
    std::vector<int> sub_count_;
};
thread_local EventDrain scratch_drain;

// Flows one batch may hold: an all-to-all's p − 1 phases hold p² flows in all, so its phases
// are batched a window at a time. On the CPU a batch is drained one problem after another, so a
// window need only bound memory (about 15 MB of problems); a GPU wants hundreds of problems per
// launch (device_batch_min_problems), so under a CUDA request a window holds up to 2^22 flows
// (about 250 MB: 1,024 phases of a 4,096-rank all-to-all).
std::size_t batch_flow_budget(Backend backend) {
    return backend == Backend::cpu ? std::size_t{1} << 18 : std::size_t{1} << 22;
}

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

CollectiveEngine::CollectiveEngine(NetworkClock& clock, FlowOptions options, FlowContext context)
    : clock_(clock), options_(options), context_(std::move(context)), solver_(batch_flow_solver(options.backend)) {
    check_epoch();
}

void CollectiveEngine::check_epoch() {
    if (clock_.epoch() == cached_epoch_) return;
    const bool first = cached_epoch_ < 0;
    cached_epoch_ = clock_.epoch();
    collective_cache_.clear();
    phase_cache_.clear();
    phase_cache_entries_ = 0;
    if (context_.route_store && !context_.routes_before_damage)
        routes_.share(context_.route_store->table_for(clock_.network(), options_.routing,
                                                      std::max(1, options_.paths_per_transfer), clock_.shared_network()));
    else if (context_.route_store)
        routes_.share(context_.route_store->private_table());  // a damaged copy's own, by the store's model
    else
        routes_.clear();
    if (first) routes_.seed(context_.routes_before_damage, context_.network_before_damage);  // the first topology's only
    else routes_.seed(nullptr);
    edge_local_.assign(clock_.network().capacity_Bps.size(), -1);
}

bool CollectiveEngine::build_phase(const Schedule& schedule, const Phase& phase, const Placement& placement,
                                   FlowProblem& problem, std::vector<std::int32_t>& global_edge) {
    const Network& net = clock_.network();
    problem.clear();
    global_edge.clear();
    const std::int32_t k = std::max(1, options_.paths_per_transfer);
    if (context_.helpers && k > 1 && context_.helpers->any_idle()) {
        std::vector<std::pair<std::int32_t, std::int32_t>> pairs;
        pairs.reserve(static_cast<std::size_t>(phase.transfer_count));
        for (std::int32_t i = 0; i < phase.transfer_count; ++i) {
            const Transfer tr = schedule.transfer(phase, i);
            pairs.emplace_back(placement[tr.source_rank], placement[tr.target_rank]);
        }
        routes_.prefetch(net, pairs, options_.routing, k, *context_.helpers, context_.stop);
    }
    bool routed = true;
    for (std::int32_t i = 0; i < phase.transfer_count && routed; ++i) {
        throw_if_stopped(context_.stop);  // each pair may search its routes
        const Transfer tr = schedule.transfer(phase, i);
        const std::int32_t a = placement[tr.source_rank];
        const std::int32_t b = placement[tr.target_rank];
        if (a == b) continue;  // co-located ranks: no network transfer
        const auto& paths = routes_.get(net, a, b, options_.routing, k);
        routed = !paths.empty();
        for (std::size_t q = 0; q < paths.size(); ++q)
            detail::add_compact_flow(problem, global_edge, paths[q].edges, net, edge_local_,
                                     path_share(tr.bytes, paths, q, options_.split),
                                     paths[q].latency_s + options_.per_message_overhead_s);
    }
    detail::release_compact(global_edge, edge_local_);
    if (!routed) problem.clear();  // nothing to drain: the phase stalls
    return routed;
}

void CollectiveEngine::take_solution(bool routed, const FlowProblem& problem,
                                     const std::vector<std::int32_t>& global_edge, double drain_s, Cached& out) {
    out.edge_bytes.clear();
    out.duration_s = routed ? drain_s : inf;
    if (!routed) return;
    for (std::int32_t f = 0; f < problem.flow_count(); ++f)
        for (std::int32_t q = problem.flow_offsets[f]; q < problem.flow_offsets[f + 1]; ++q)
            out.edge_bytes.emplace_back(global_edge[problem.flow_links[q]], problem.flow_bytes[f]);
}

const CollectiveEngine::Cached& CollectiveEngine::keep_phase(std::int64_t phase_key, Cached& fresh) {
    // Past the budget a phase is solved again when asked again (the same numbers): an
    // all-to-all's p − 1 phases each differ, and kept they held p² edge totals.
    if (phase_cache_entries_ + fresh.edge_bytes.size() > phase_cache_budget) return fresh;
    phase_cache_entries_ += fresh.edge_bytes.size();
    return phase_cache_.emplace(phase_key, std::move(fresh)).first->second;
}

namespace {
std::int64_t phase_key(std::int64_t key, const Phase& phase) { return key * 1000003 + phase.pattern; }
}  // namespace

const CollectiveEngine::Cached& CollectiveEngine::phase_result(const Schedule& schedule, const Phase& phase,
                                                                const Placement& placement, std::int64_t key,
                                                                Cached& fresh) {
    if (key >= 0)
        if (auto it = phase_cache_.find(phase_key(key, phase)); it != phase_cache_.end()) return it->second;
    PhaseBatch& batch = scratch_batch;
    batch.used = 0;
    const std::size_t i = batch.add(phase.pattern);
    const bool routed = build_phase(schedule, phase, placement, batch.problems[i], batch.global_edges[i]);
    if (routed) {
        solver_.drain_batch(batch.built(), batch.results, context_.stop, context_.helpers.get());
        ++rate_solves_;
    }
    take_solution(routed, batch.problems[i], batch.global_edges[i], routed ? batch.results[i].makespan_s : inf, fresh);
    return key >= 0 ? keep_phase(phase_key(key, phase), fresh) : fresh;
}

double CollectiveEngine::run_static(const Schedule& schedule, const Placement& placement,
                                    std::int64_t key, Cached& out) {
    std::vector<double> acc;
    std::vector<char> is_touched;
    std::vector<std::int32_t> touched;  // each edge once
    auto add = [&](const Cached& c, std::int32_t times) {
        if (acc.empty()) {
            acc.assign(clock_.network().capacity_Bps.size(), 0.0);
            is_touched.assign(acc.size(), 0);
        }
        for (const auto& [e, b] : c.edge_bytes)
            if (!is_touched[e]) {
                is_touched[e] = 1;
                touched.push_back(e);
            }
        if (times == 1) {
            for (const auto& [e, b] : c.edge_bytes) acc[e] += b;
            return;
        }
        accumulate_repeated(c.edge_bytes, times, 0, acc, repeat_scratch_);
    };
    // The phases a window at a time: those this epoch has solved under the key looked up, the
    // others built and drained in one batch (phases of one pattern share their problem: the
    // same inputs give the same numbers), then summed in order.
    const std::vector<Phase>& phases = schedule.phases;
    PhaseBatch& batch = scratch_batch;
    struct Slot {
        const Cached* cached = nullptr;  // solved before this window
        std::size_t problem = 0;         // else its problem in the batch
    };
    std::vector<Slot> slots;
    std::vector<unsigned char> routed;
    std::vector<Cached> solutions;  // per problem, those not kept in the cache
    std::vector<const Cached*> solution_of;
    std::vector<std::int32_t> uses_left;  // per problem, the window's phases still to sum it
    const std::size_t window_flows = batch_flow_budget(options_.backend);
    double total = 0.0;
    for (std::size_t next = 0; next < phases.size() && std::isfinite(total);) {
        batch.used = 0;
        slots.clear();
        routed.clear();
        std::size_t flows = 0;
        bool stalled = false;
        std::size_t end = next;
        for (; end < phases.size() && !stalled && (batch.used == 0 || flows < window_flows); ++end) {
            const Phase& phase = phases[end];
            Slot slot;
            if (key >= 0)
                if (auto it = phase_cache_.find(phase_key(key, phase)); it != phase_cache_.end()) slot.cached = &it->second;
            if (!slot.cached) {
                const auto same = std::find(batch.patterns.begin(), batch.patterns.begin() + static_cast<std::ptrdiff_t>(batch.used),
                                            phase.pattern);
                slot.problem = static_cast<std::size_t>(same - batch.patterns.begin());
                if (slot.problem == batch.used) {
                    batch.add(phase.pattern);
                    routed.push_back(build_phase(schedule, phase, placement, batch.problems[slot.problem],
                                                 batch.global_edges[slot.problem]));
                    flows += static_cast<std::size_t>(batch.problems[slot.problem].flow_count());
                    stalled = !routed.back();  // the sum ends at a phase that cannot complete
                }
            }
            slots.push_back(slot);
        }
        if (batch.used > 0) {
            solver_.drain_batch(batch.built(), batch.results, context_.stop, context_.helpers.get());
            rate_solves_ += std::count(routed.begin(), routed.end(), 1);
        }
        solutions.assign(batch.used, Cached{});
        solution_of.assign(batch.used, nullptr);
        uses_left.assign(batch.used, 0);
        for (const Slot& slot : slots)
            if (!slot.cached) ++uses_left[slot.problem];
        for (std::size_t i = next; i < end; ++i) {
            const Phase& phase = phases[i];
            const Slot& slot = slots[i - next];
            const Cached* c = slot.cached;
            if (!c) {
                const std::size_t p = slot.problem;
                if (!solution_of[p]) {
                    Cached& fresh = solutions[p];
                    take_solution(routed[p] != 0, batch.problems[p], batch.global_edges[p], batch.results[p].makespan_s, fresh);
                    solution_of[p] = key >= 0 ? &keep_phase(phase_key(key, phase), fresh) : &fresh;
                }
                c = solution_of[p];
            }
            // Barrier after barrier: the phases' durations add one by one (the sum the
            // explicit schedule gives, to the bit).
            for (std::int32_t r = 0; r < phase.repeat; ++r) total += c->duration_s;
            if (!std::isfinite(total)) break;
            add(*c, phase.repeat);
            // A solution the cache did not keep goes once its last phase is summed: an
            // all-to-all's window would otherwise hold every phase's edge bytes at once.
            if (!slot.cached && --uses_left[slot.problem] == 0 && c == &solutions[slot.problem])
                std::vector<std::pair<std::int32_t, double>>().swap(solutions[slot.problem].edge_bytes);
        }
        next = end;
    }
    out.duration_s = total;
    out.edge_bytes.clear();
    // In edge order: read off the marks where they are dense (a collective over most links), else sorted.
    out.edge_bytes.reserve(touched.size());
    if (touched.size() * 8 >= is_touched.size()) {
        for (std::size_t e = 0; e < is_touched.size(); ++e)
            if (is_touched[e]) out.edge_bytes.emplace_back(static_cast<std::int32_t>(e), acc[e]);
    } else {
        std::sort(touched.begin(), touched.end());
        for (auto e : touched) out.edge_bytes.emplace_back(e, acc[e]);
    }
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
    std::vector<std::int32_t> flow_of;  // local flow → flows index
    std::vector<std::int32_t> edges;    // the flows' paths, one after another
    auto reroute = [&] {
        const Network& net = clock_.network();
        edges.clear();
        const std::vector<Path>* last = nullptr;  // a transfer's sub-flows follow each other: one lookup
        std::int32_t last_a = -1, last_b = -1;
        for (auto& f : flows) {
            if (f.remaining <= 0.0) continue;
            throw_if_stopped(context_.stop);  // each flow may search its routes
            if (!last || f.a != last_a || f.b != last_b) {
                last = &routes_.get(net, f.a, f.b, options_.routing, k);  // valid until the next get
                last_a = f.a;
                last_b = f.b;
            }
            const auto& paths = *last;
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
        // The problem is built once per route set: between topology changes a flow that ends only
        // leaves the solve, which gives the rates of a problem rebuilt without it (a link's index
        // does not enter the arithmetic). Only the flows an end can speed up are re-solved
        // (EventDrain), and bytes are settled when a flow's rate changes, not at every event.
        detail::LocalProblem& lp = scratch_problem;
        EventDrain& drain = scratch_drain;
        bool built = false, any_stalled = false;
        std::size_t unfinished = 0;
        for (;;) {
            const Network& net = clock_.network();
            if (!built) {
                lp.clear();
                flow_of.clear();
                any_stalled = false;
                unfinished = 0;
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
                drain.start(lp);
                rate_solves_ += !flow_of.empty();
                built = true;
            }
            if (unfinished == 0) {
                lp.release(edge_local_);
                break;
            }
            throw_if_stopped(context_.stop);  // an event of a phase drained across topology changes
            const double dt = drain.next_end_in();
            const double horizon = clock_.next_change_s();
            const bool drains_first = std::isfinite(dt) && t + dt <= horizon;
            const double step = drains_first ? dt : horizon - t;
            if (!drains_first && !std::isfinite(horizon)) {  // nothing moves and nothing will change
                lp.release(edge_local_);
                result.completed = false;
                return inf;
            }
            const auto to_edges = [&](std::int32_t j, double moved) {
                for (std::int32_t q = lp.problem.flow_offsets[j]; q < lp.problem.flow_offsets[j + 1]; ++q)
                    clock_.add_edge_bytes(lp.global_edge[lp.problem.flow_links[q]], moved);
            };
            if (drains_first) {
                drain.end_flows(lp, step, [&](std::int32_t j, double moved) {
                    to_edges(j, moved);
                    auto& f = flows[flow_of[j]];
                    f.remaining = 0.0;
                    --unfinished;
                    phase_end = std::max(phase_end, t + step + f.latency);
                });
                if (drain.resolve(lp, to_edges)) ++rate_solves_;
            } else {
                drain.advance(step);
                drain.settle_all([&](std::int32_t j, double moved, double left) {
                    to_edges(j, moved);
                    flows[flow_of[j]].remaining = left;
                });
            }
            if (any_stalled) result.stalled_s += step;
            t += step;
            if (!drains_first) {
                lp.release(edge_local_);
                enter_time(t);
                reroute();
                built = false;
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
