#include <skyfabric/workloads/cluster_training.hpp>

#include <skyfabric/physics/random.hpp>
#include <skyfabric/workloads/collective_engine.hpp>
#include <skyfabric/workloads/idle_helpers.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

namespace skyfabric::workloads {

namespace {

constexpr std::uint64_t noloco_stream_tag = 0x6e6f6c6f636fULL;  // "noloco"

struct LinkClasses {
    std::vector<std::int32_t> cluster_of;  // node → cluster (−1: none)
    double intra = 0.0, gateway = 0.0;
    double outside = 0.0;  // bytes of a replica's or a pair's own collectives on other clusters' links
    std::int32_t cluster(std::int32_t node) const {
        const auto n = static_cast<std::size_t>(node);
        return n < cluster_of.size() ? cluster_of[n] : -1;
    }
    // `own`: the clusters whose collective this is (empty: all of them).
    void add(const std::vector<LinkUtilisation>& links, const std::vector<std::int32_t>& own = {}) {
        auto mine = [&](std::int32_t c) { return own.empty() || std::find(own.begin(), own.end(), c) != own.end(); };
        for (const auto& l : links) {
            const std::int32_t a = cluster(l.source), b = cluster(l.target);
            (a == b && a >= 0 ? intra : gateway) += l.bytes;
            if (!mine(a) || !mine(b)) outside += l.bytes;
        }
    }
};

// A step's compute beyond full speed; the rounding of the power clock's sums (1e-16 relative) is none.
// Compute beyond full speed that a power limit, not a straggler, caused.
double throttled_s(const StepRecord& step, double compute_s) {
    const double nominal = compute_s + step.straggler_s;
    return step.compute_s > nominal * (1.0 + 1e-9) ? step.compute_s - nominal : 0.0;
}

// Every cluster's size, where check(setup, algorithms) has made them equal.
std::int32_t equal_cluster_size(const ClusterTrainingSetup& s) { return static_cast<std::int32_t>(s.cluster_nodes.front().size()); }

// ring and hierarchical: one synchronous job over every rank, clusters one after another.
ClusterTrainingResult every_step(ClusterAlgorithm algorithm, const ClusterTrainingSetup& s, const ClusterTrainingContext& ctx,
                                 LinkClasses& classes) {
    const StepModel m = every_step_model(algorithm, s, ctx);
    const TrainingOptions& o = m.options;
    const TrainingJob& job = m.job;
    ClusterTrainingResult r;
    r.algorithm = algorithm;
    r.training = simulate_training(job, s.accelerator, ctx.topologies(o.start_s), o, m.context);
    const TrainingSummary& t = r.training.summary;
    r.steps = t.steps;
    r.start_s = t.start_s;
    r.end_s = t.end_s;
    r.step_time_mean_s = t.step_time_mean_s;
    r.compute_per_step_s = t.compute_per_step_s;
    r.all_to_all_per_step_s = t.all_to_all_per_step_s;
    r.truncated = t.truncated;
    r.tokens_per_s = t.tokens_per_s;
    r.mfu = t.mfu;
    const double wall = r.end_s - r.start_s;
    r.idle_fraction = wall > 0.0 ? 1.0 - static_cast<double>(r.steps) * r.compute_per_step_s / wall : 0.0;
    for (const StepRecord& step : r.training.steps) r.compute_throttled_s += throttled_s(step, r.compute_per_step_s);
    r.straggler_s = r.training.summary.straggler_s;
    classes.add(r.training.links);
    return r;
}

// diloco and noloco: replicas of one cluster each, inner steps on their own, outer syncs.
ClusterTrainingResult local_steps(ClusterAlgorithm algorithm, const ClusterTrainingSetup& s, const ClusterTrainingContext& ctx,
                                  LinkClasses& classes) {
    const auto m = static_cast<std::int32_t>(s.cluster_nodes.size());
    const std::int32_t k = equal_cluster_size(s);
    const double end = s.options.end_s;
    if (!(end >= 0.0)) throw std::invalid_argument("cluster training: diloco and noloco need an end time");

    // A replica's job: its ranks' share of the global batch, all-reducing inside itself every step.
    const TrainingJob inner = replica_step_model(s, 0).job;
    const double outer_bytes = outer_sync_bytes(s.job);

    ClusterTrainingResult r;
    r.algorithm = algorithm;
    r.start_s = s.options.start_s;
    if (r.start_s < 0.0) {  // as simulate_training: the first topology's time
        SharedFrame first;
        if (!ctx.topologies(0.0)(first)) throw std::invalid_argument("cluster training: no topologies");
        r.start_s = first.topology->time_s;
    }
    r.compute_per_step_s = compute_time_per_step_s(inner, s.accelerator);
    std::vector<double> t(static_cast<std::size_t>(m), r.start_s);  // each replica's clock
    std::vector<std::int64_t> replica_steps(static_cast<std::size_t>(m), 0);   // averaged into the model
    std::vector<std::int64_t> steps_computed(static_cast<std::size_t>(m), 0);  // and those a failed sync lost
    std::vector<bool> running(static_cast<std::size_t>(m), true);
    double sync_total = 0.0, wait_total = 0.0, all_to_all_total_s = 0.0;
    std::int64_t syncs = 0, waits = 0;

    // One outer sync of `group` (replica indices) starting when all of them are ready.
    auto sync = [&](const std::vector<std::int32_t>& group, std::vector<ReplicaRound*>& rounds) -> bool {
        double start = 0.0;
        for (auto g : group) start = std::max(start, t[static_cast<std::size_t>(g)]);
        const Schedule schedule =
            build_replica_average_schedule(static_cast<std::int32_t>(group.size()), k, outer_bytes);
        NetworkClock clock(ctx.topologies(start));
        clock.account_bytes_only();  // classes.add reads bytes alone
        clock.advance_to(start);
        // Each replica's ranks in ring order along its links now, for the all-gather inside.
        Placement placement;
        for (auto g : group) {
            const Placement ring = ring_placement(clock.network(), s.cluster_nodes[static_cast<std::size_t>(g)]);
            placement.insert(placement.end(), ring.begin(), ring.end());
        }
        clock.start_accounting(start);
        CollectiveEngine engine(clock, s.options.flow, ctx.training.flow);
        CollectiveResult c;
        try {
            c = engine.run(schedule, placement, start);
        } catch (const Interrupted&) {
            return false;  // a user's stop (FlowContext::stop): the round is not averaged, as past the end
        }
        if (!c.completed) {
            // No path between the replicas (every gateway blocked or down): they wait for one to
            // the end of the run, and the round's inner steps, never averaged into the model, are
            // not counted as training done (as a ring all-reduce with no path trains 0 steps).
            r.truncated = true;
            for (std::size_t i = 0; i < group.size(); ++i) {
                const auto g = static_cast<std::size_t>(group[i]);
                replica_steps[g] -= rounds[i]->inner_steps;
                t[g] = std::max(t[g], end);
                rounds[i]->sync_start_s = start;
                rounds[i]->end_s = t[g];
            }
            return false;
        }
        if (c.end_s > end) return false;
        classes.add(clock.carried_links(), group);
        for (std::size_t i = 0; i < group.size(); ++i) {
            const auto g = static_cast<std::size_t>(group[i]);
            wait_total += start - t[g];
            ++waits;
            t[g] = c.end_s;
            rounds[i]->sync_start_s = start;
            rounds[i]->end_s = c.end_s;
        }
        sync_total += c.end_s - start;
        ++syncs;
        return true;
    };

    for (std::int64_t round = 0; std::find(running.begin(), running.end(), true) != running.end(); ++round) {
        const std::size_t first = r.rounds.size();
        for (std::int32_t g = 0; g < m; ++g) {
            const auto gi = static_cast<std::size_t>(g);
            if (!running[gi]) continue;
            StepModel model = replica_step_model(s, gi, ctx);
            TrainingOptions& o = model.options;
            o.start_s = t[gi];
            o.max_steps = s.job.local_steps;
            model.context.record_collectives = false;
            model.context.link_bytes_only = true;  // classes.add reads bytes alone
            // Each replica's rounds draw their own stragglers (the steps restart at 0 every round).
            o.stragglers.seed = physics::rng::derive_seed(o.stragglers.seed, (static_cast<std::uint64_t>(g) << 32) ^
                                                                                   static_cast<std::uint64_t>(round));
            const TrainingResult inner_run = simulate_training(inner, s.accelerator, ctx.topologies(t[gi]), o, model.context);
            classes.add(inner_run.links, {g});
            for (const StepRecord& step : inner_run.steps) {
                r.compute_throttled_s += throttled_s(step, r.compute_per_step_s) / static_cast<double>(m);
                all_to_all_total_s += step.all_to_all_s;
            }
            r.straggler_s += inner_run.summary.straggler_s / static_cast<double>(m);
            ReplicaRound rr;
            rr.replica = g;
            rr.round = round;
            rr.inner_steps = inner_run.summary.steps;
            rr.start_s = t[gi];
            rr.ready_s = rr.sync_start_s = rr.end_s = inner_run.summary.end_s;
            replica_steps[gi] += rr.inner_steps;
            steps_computed[gi] += rr.inner_steps;
            t[gi] = rr.ready_s;
            if (inner_run.summary.truncated) r.truncated = true;
            // A replica that could not finish its H steps has reached the end of the run.
            if (rr.inner_steps < s.job.local_steps) running[gi] = false;
            r.rounds.push_back(rr);
        }
        auto round_of = [&](std::int32_t g) -> ReplicaRound* {
            for (std::size_t i = first; i < r.rounds.size(); ++i)
                if (r.rounds[i].replica == g) return &r.rounds[i];
            return nullptr;
        };
        if (algorithm == ClusterAlgorithm::diloco) {
            // Behind a global barrier: all replicas, or none once one has reached the end.
            if (std::find(running.begin(), running.end(), false) != running.end()) break;
            std::vector<std::int32_t> all(static_cast<std::size_t>(m));
            std::vector<ReplicaRound*> rounds;
            for (std::int32_t g = 0; g < m; ++g) {
                all[static_cast<std::size_t>(g)] = g;
                rounds.push_back(round_of(g));
            }
            if (!sync(all, rounds)) break;
            ++r.outer_rounds;
        } else {
            const auto peer = noloco_pairing(m, round, s.seed);
            bool any = false;
            for (std::int32_t a = 0; a < m; ++a) {
                const std::int32_t b = peer[static_cast<std::size_t>(a)];
                if (b < a) continue;  // each pair once; −1 sits out
                ReplicaRound* ra = round_of(a);
                ReplicaRound* rb = round_of(b);
                if (!running[static_cast<std::size_t>(a)] || !running[static_cast<std::size_t>(b)] || !ra || !rb) continue;
                ra->peer = b;
                rb->peer = a;
                std::vector<ReplicaRound*> rounds{ra, rb};
                if (sync({a, b}, rounds)) {
                    any = true;
                } else {
                    running[static_cast<std::size_t>(a)] = running[static_cast<std::size_t>(b)] = false;
                }
            }
            if (any) ++r.outer_rounds;
        }
    }

    // Figures over replicas: steps in global batches, wall to the last replica's last work.
    double end_all = r.start_s, step_time = 0.0, busy = 0.0;
    std::int64_t replica_step_total = 0;
    for (std::int32_t g = 0; g < m; ++g) {
        const auto gi = static_cast<std::size_t>(g);
        end_all = std::max(end_all, t[gi]);
        replica_step_total += replica_steps[gi];
        if (replica_steps[gi] > 0) step_time += (t[gi] - r.start_s) / static_cast<double>(replica_steps[gi]) / m;
        // Busy: every inner step computed, the ones a failed sync threw away included.
        busy += static_cast<double>(steps_computed[gi]) * r.compute_per_step_s;
    }
    r.end_s = end_all;
    r.steps = replica_step_total / m;
    r.step_time_mean_s = step_time;
    const double wall = r.end_s - r.start_s;
    r.idle_fraction = wall > 0.0 ? 1.0 - busy / (m * wall) : 0.0;
    r.outer_sync_mean_s = syncs > 0 ? sync_total / static_cast<double>(syncs) : 0.0;
    std::int64_t computed_total = 0;
    for (const auto n : steps_computed) computed_total += n;
    r.all_to_all_per_step_s = computed_total > 0 ? all_to_all_total_s / static_cast<double>(computed_total) : 0.0;
    r.outer_wait_mean_s = waits > 0 ? wait_total / static_cast<double>(waits) : 0.0;
    if (wall > 0.0) {
        const double tokens = inner.tokens_per_step * static_cast<double>(replica_step_total);
        r.tokens_per_s = tokens / wall;
        r.mfu = flops_per_step(inner) * static_cast<double>(replica_step_total) /
                (wall * static_cast<double>(chip_count(s.job)) * s.accelerator.peak_flops);
    }
    return r;
}

}  // namespace

StepModel every_step_model(ClusterAlgorithm algorithm, const ClusterTrainingSetup& s, const ClusterTrainingContext& ctx) {
    physics::throw_problems("cluster training", check(s, {&algorithm, 1}));
    StepModel m{s.job, s.accelerator, s.options, ctx.training};
    TrainingOptions& o = m.options;
    if (s.cluster_nodes.size() == 1) {  // one formation: no choice across clusters to make
        if (ctx.cluster_compute_done_s)
            m.context.compute_done_s = [done = ctx.cluster_compute_done_s](double start_s, double work_s) { return done(0, start_s, work_s); };
        return m;
    }
    o.rank_nodes.clear();
    o.rank_groups = s.cluster_nodes;  // a ring in each cluster, clusters one after another
    o.placement = PlacementPolicy::topology_aware;
    o.all_reduce = Algorithm::ring;
    if (algorithm == ClusterAlgorithm::hierarchical) {
        o.all_reduce = Algorithm::hierarchical_ring;
        o.schedule.hierarchical_group_size = equal_cluster_size(s);
    }
    if (ctx.cluster_compute_done_s) {  // every rank steps together: the slowest cluster's compute
        m.context.compute_done_s = [done = ctx.cluster_compute_done_s, clusters = s.cluster_nodes.size()](double start_s, double work_s) {
            double end = start_s + work_s;
            for (std::size_t c = 0; c < clusters; ++c) end = std::max(end, done(c, start_s, work_s));
            return end;
        };
    }
    std::int32_t ranks = 0;
    for (const auto& c : s.cluster_nodes) ranks += static_cast<std::int32_t>(c.size());
    m.job.data_parallel = ranks;  // job.sync as given: every step, or every H with rank replicas
    if (s.experts_across_clusters && s.job.moe.layers > 0 && s.job.moe.expert_parallel > 1) {
        // Group g takes ranks g·share … g·share + share − 1 of every cluster (a cluster's ranks are a
        // block of its ring, clusters in order).
        const auto clusters = static_cast<std::int32_t>(s.cluster_nodes.size());
        const std::int32_t n = equal_cluster_size(s);
        const std::int32_t share = s.job.moe.expert_parallel / clusters;
        for (std::int32_t g = 0; g < n / share; ++g)
            for (std::int32_t c = 0; c < clusters; ++c)
                for (std::int32_t j = 0; j < share; ++j) o.expert_group_ranks.push_back(c * n + g * share + j);
    }
    return m;
}

StepModel replica_step_model(const ClusterTrainingSetup& s, std::size_t replica, const ClusterTrainingContext& ctx) {
    StepModel m{s.job, s.accelerator, s.options, ctx.training};
    const auto replicas = static_cast<double>(s.cluster_nodes.size());
    m.job.data_parallel = static_cast<std::int32_t>(s.cluster_nodes.at(replica).size());
    m.job.tokens_per_step = s.job.tokens_per_step / replicas;
    m.job.sync = SyncMode::every_step;
    TrainingOptions& o = m.options;
    o.rank_nodes = s.cluster_nodes[replica];  // a ring along this cluster's links, re-embedded as they change
    o.rank_groups.clear();
    if (ctx.cluster_compute_done_s) {  // at its own cluster's pace
        m.context.compute_done_s = [done = ctx.cluster_compute_done_s, replica](double start_s, double work_s) {
            return done(replica, start_s, work_s);
        };
    }
    o.placement = PlacementPolicy::topology_aware;
    o.all_reduce = Algorithm::ring;
    return m;
}

std::vector<std::int32_t> noloco_pairing(std::int32_t replicas, std::int64_t round, std::uint64_t seed) {
    std::vector<std::int32_t> order(static_cast<std::size_t>(std::max(0, replicas)));
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int32_t>(i);
    const std::uint64_t stream_seed = physics::rng::derive_seed(seed, noloco_stream_tag);
    for (std::size_t i = order.size(); i > 1; --i) {
        const double u = physics::rng::uniform01(stream_seed, static_cast<std::uint64_t>(round), i);
        const auto j = std::min(i - 1, static_cast<std::size_t>(u * static_cast<double>(i)));
        std::swap(order[i - 1], order[j]);
    }
    std::vector<std::int32_t> peer(order.size(), -1);
    for (std::size_t i = 0; i + 1 < order.size(); i += 2) {
        peer[static_cast<std::size_t>(order[i])] = order[i + 1];
        peer[static_cast<std::size_t>(order[i + 1])] = order[i];
    }
    return peer;
}

ClusterTrainingResult simulate_cluster_training(ClusterAlgorithm algorithm, const ClusterTrainingSetup& setup,
                                                const ClusterTrainingContext& context) {
    physics::throw_problems("cluster training", check(setup, {&algorithm, 1}));
    if (!context.topologies) throw std::invalid_argument("cluster training: no topologies");
    LinkClasses classes;  // a cluster's spares are its own: links to them are the cluster's
    const auto& satellites = satellites_of(setup);
    for (std::size_t c = 0; c < satellites.size(); ++c)
        for (auto node : satellites[c]) {
            if (node < 0) throw std::invalid_argument("cluster training: negative node id");
            if (static_cast<std::size_t>(node) >= classes.cluster_of.size())
                classes.cluster_of.resize(static_cast<std::size_t>(node) + 1, -1);
            classes.cluster_of[static_cast<std::size_t>(node)] = static_cast<std::int32_t>(c);
        }
    const bool every = algorithm == ClusterAlgorithm::ring || algorithm == ClusterAlgorithm::hierarchical;
    ClusterTrainingResult r = every
                                  ? every_step(algorithm, setup, context, classes)
                                  : local_steps(algorithm, setup, context, classes);
    r.intra_cluster_bytes = classes.intra;
    r.gateway_bytes = classes.gateway;
    r.bytes_outside_own_clusters = classes.outside;
    return r;
}

std::vector<ClusterTrainingResult> simulate_cluster_trainings(std::span<const ClusterAlgorithm> algorithms,
                                                              const ClusterTrainingSetup& setup,
                                                              const ClusterTrainingContext& context, std::int32_t threads) {
    physics::throw_problems("cluster training", check(setup, algorithms));
    const std::size_t n = algorithms.size();
    std::vector<std::optional<ClusterTrainingResult>> done(n);
    std::vector<std::exception_ptr> failed(n);
    std::atomic<std::size_t> next{0};
    // A thread out of algorithms helps the others search their routes until the last one ends
    // (hierarchical goes on alone the longest): the same results, sooner.
    ClusterTrainingContext lent = context;
    const auto helpers = std::make_shared<IdleHelpers>();
    lent.training.flow.helpers = helpers;
    std::atomic<std::size_t> unfinished{n};
    if (n == 0) helpers->close();
    const auto work = [&] {
        for (std::size_t i; (i = next.fetch_add(1)) < n;) {
            try {
                done[i] = simulate_cluster_training(algorithms[i], setup, lent);
            } catch (...) {
                failed[i] = std::current_exception();
            }
            if (unfinished.fetch_sub(1) == 1) helpers->close();
        }
        helpers->serve();
    };
    if (threads == 0) threads = static_cast<std::int32_t>(std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (std::int32_t h = 1; h < threads; ++h) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    std::vector<ClusterTrainingResult> out;
    for (std::size_t i = 0; i < n; ++i) {
        if (failed[i]) std::rethrow_exception(failed[i]);
        out.push_back(std::move(*done[i]));
    }
    return out;
}

}  // namespace skyfabric::workloads
