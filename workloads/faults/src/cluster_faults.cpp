// Radiation faults across a constellation: each cluster algorithm over the same trials' draws.
#include <skyfabric/workloads/cluster_faults.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <thread>

#include "fault_streams.hpp"

namespace skyfabric::workloads {

namespace {

// One cluster's satellites seen as 0 … k-1 by a replica's play; links stay in global numbering.
class ClusterView final : public FabricModel {
public:
    ClusterView(FabricModel& whole, const std::vector<std::int32_t>& nodes) : whole_(whole), nodes_(nodes) {}
    double extra_step_s(double t, const FabricDamage& damage) override { return whole_.extra_step_s(t, global(damage)); }
    bool outage_link(std::int32_t satellite, double t, double mark, bool gateway,
                     std::pair<std::int32_t, std::int32_t>& link) const override {
        return whole_.outage_link(nodes_[static_cast<std::size_t>(satellite)], t, mark, gateway, link);
    }
    double next_change_s(double t) const override { return whole_.next_change_s(t); }
    LinkTraffic link_traffic(double t, const FabricDamage& damage, std::pair<std::int32_t, std::int32_t> link) override {
        return whole_.link_traffic(t, global(damage), link);
    }

private:
    FabricDamage global(const FabricDamage& damage) const {
        FabricDamage out = damage;  // nodes are ascending, so the lists stay sorted
        for (auto& s : out.satellites_down) s = nodes_[static_cast<std::size_t>(s)];
        for (auto& s : out.ranks) s = nodes_[static_cast<std::size_t>(s)];
        return out;
    }
    FabricModel& whole_;
    const std::vector<std::int32_t>& nodes_;
};

// A replica's fault-free outer syncs, round by round (full rounds of H inner steps).
struct ReplicaSyncs {
    std::vector<double> sync_s;
    double at(std::size_t r) const { return sync_s[std::min(r, sync_s.size() - 1)]; }
};

// Time lost by cause from the replicas' own plays (mean over replicas), scaled to `lost_s`.
void attribute(MonteCarloResult::Trial& tr, const std::vector<MonteCarloResult::Trial>& own, double lost_s) {
    MonteCarloResult::Trial mean;
    for (const auto& o : own) {
        mean.lost_faults_s += o.lost_faults_s / static_cast<double>(own.size());
        mean.lost_restarts_s += o.lost_restarts_s / static_cast<double>(own.size());
        mean.lost_checkpoints_s += o.lost_checkpoints_s / static_cast<double>(own.size());
        mean.lost_fabric_s += o.lost_fabric_s / static_cast<double>(own.size());
        mean.lost_shrink_s += o.lost_shrink_s / static_cast<double>(own.size());
    }
    const double sum = mean.lost_faults_s + mean.lost_restarts_s + mean.lost_checkpoints_s + mean.lost_fabric_s + mean.lost_shrink_s;
    const double scale = sum > 0.0 ? std::max(0.0, lost_s) / sum : 0.0;
    tr.lost_faults_s = mean.lost_faults_s * scale;
    tr.lost_restarts_s = mean.lost_restarts_s * scale;
    tr.lost_checkpoints_s = mean.lost_checkpoints_s * scale;
    tr.lost_fabric_s = mean.lost_fabric_s * scale;
    tr.lost_shrink_s = mean.lost_shrink_s * scale;
    if (sum <= 0.0) tr.lost_faults_s = std::max(0.0, lost_s);
}

// diloco and noloco: replica plays composed by the outer syncs (cluster_faults.hpp).
class ReplicaComposition {
public:
    ReplicaComposition(const ClusterFaultSetup& s, const ClusterTrainingResult& fault_free, const RecoveryConfig& recovery)
        : s_(s), recovery_(recovery) {
        const auto& clusters = satellites_of(s.training);
        const std::size_t m = clusters.size();
        for (std::size_t c = 0; c < m; ++c)
            for (auto node : clusters[c]) {
                if (static_cast<std::size_t>(node) >= cluster_of_.size()) cluster_of_.resize(static_cast<std::size_t>(node) + 1, -1);
                cluster_of_[static_cast<std::size_t>(node)] = static_cast<std::int32_t>(c);
            }
        local_of_.assign(cluster_of_.size(), -1);
        syncs_.resize(m);
        for (std::size_t c = 0; c < m; ++c) {
            for (std::size_t i = 0; i < clusters[c].size(); ++i) local_of_[static_cast<std::size_t>(clusters[c][i])] = static_cast<std::int32_t>(i);
            // The replicas' fabrics live together: they share one fabric's cache budget.
            fabrics_.push_back(std::make_unique<DamagedFabric>(*s.timeline, replica_step_model(s.training, c, s.training_context), s.training.cluster_nodes[c],
                                                               cluster_of_, DamagedFabric::default_cache_budget_bytes / m));
            views_.push_back(std::make_unique<ClusterView>(*fabrics_.back(), clusters[c]));
            // Each replica's inner step per fault-free round; its StepDurations for the play.
            StepDurations steps;
            for (const ReplicaRound& rr : fault_free.rounds) {
                if (rr.replica != static_cast<std::int32_t>(c) || rr.inner_steps < 1) continue;
                const double step = (rr.ready_s - rr.start_s) / static_cast<double>(rr.inner_steps);
                steps.start_s.push_back(rr.start_s);
                steps.duration_s.push_back(step);
                if (rr.inner_steps == s.training.job.local_steps) syncs_[c].sync_s.push_back(rr.end_s - rr.sync_start_s);
            }
            if (steps.duration_s.empty()) throw std::invalid_argument("cluster faults: a replica did no fault-free step");
            std::vector<double> sorted = steps.duration_s;
            std::sort(sorted.begin(), sorted.end());
            steps.nominal_s = sorted[sorted.size() / 2];
            if (syncs_[c].sync_s.empty()) syncs_[c].sync_s.push_back(0.0);  // not one full round: no sync
            steps_.push_back(std::move(steps));
        }
    }

    // Every replica's own play of one trial's events: its kept steps' end times, the fault-free
    // time of its first n kept steps (free[c][n], the step series at each one's start), its losses.
    struct Plays {
        std::vector<std::vector<double>> kept, free;
        std::vector<MonteCarloResult::Trial> own;
        MonteCarloResult::Trial counts;  // lost links, ranks, ... summed over replicas
        // Gateway links that failed, in time order, as the pair of clusters each joined (a < b).
        struct GatewayFailure {
            double failed_s = 0.0;
            std::int32_t a = 0, b = 0;
        };
        std::vector<GatewayFailure> gateway_failures;
    };
    Plays play(std::span<const FaultEvent> events) {
        const auto& clusters = satellites_of(s_.training);
        const std::size_t m = clusters.size();
        const double T = s_.duration_s;
        Plays p;
        p.kept.resize(m);
        p.free.resize(m);
        p.own.resize(m);
        auto& tr = p.counts;
        for (std::size_t c = 0; c < m; ++c) {
            std::vector<FaultEvent> mine;
            for (FaultEvent e : events) {
                if (cluster_of_[static_cast<std::size_t>(e.satellite)] != static_cast<std::int32_t>(c)) continue;
                e.satellite = local_of_[static_cast<std::size_t>(e.satellite)];
                mine.push_back(e);
            }
            const GoodputResult r = simulate_training_with_faults(mine, static_cast<std::int32_t>(clusters[c].size()), T,
                                                                  steps_[c], recovery_, /*record_timeline=*/true, views_[c].get(), s_.stop);
            p.free[c].push_back(0.0);
            for (const JobInterval& i : r.timeline) {
                if (i.phase != JobPhase::step && i.phase != JobPhase::step_corrupted) continue;
                p.kept[c].push_back(i.end_s);
                p.free[c].push_back(p.free[c].back() + step_duration_at_s(steps_[c], i.start_s));
            }
            p.own[c] = trial_summary(r);
            for (const LinkOutage& o : r.link_outages) {
                const std::int32_t a = cluster_of_[static_cast<std::size_t>(o.source)], b = cluster_of_[static_cast<std::size_t>(o.target)];
                if (a != b) p.gateway_failures.push_back({o.start_s, std::min(a, b), std::max(a, b)});
            }
            tr.ranks_lost += r.ranks_lost;
            tr.spare_swaps += r.replacements;
            tr.links_lost += r.links_lost;
            tr.gateway_links_lost += r.gateway_links_lost;
            tr.damaged_steps += r.damaged_steps;
            tr.rollbacks += r.rollbacks;
            tr.step_time_median_s = std::max(tr.step_time_median_s, r.step_time_median_s);
            tr.step_time_p99_s = std::max(tr.step_time_p99_s, r.step_time_p99_s);
        }
        std::stable_sort(p.gateway_failures.begin(), p.gateway_failures.end(),
                         [](const auto& x, const auto& y) { return x.failed_s < y.failed_s; });
        return p;
    }

    // One algorithm's outcome of the replicas' plays (cluster_faults.hpp).
    MonteCarloResult::Trial compose(ClusterAlgorithm algorithm, const Plays& p) const {
        const std::size_t m = p.kept.size();
        const auto H = static_cast<std::size_t>(s_.training.job.local_steps);
        const double T = s_.duration_s;
        const auto& kept = p.kept;
        const auto& free = p.free;
        MonteCarloResult::Trial tr = p.counts;
        // w(c, r): replica c's own time for round r's H kept steps; absent past its play's end.
        const auto done_at = [&](std::size_t c, std::size_t n) {  // time its n-th kept step ended (0: none)
            return n == 0 ? 0.0 : kept[c][n - 1];
        };
        const auto has_round = [&](std::size_t c, std::size_t r) { return kept[c].size() >= (r + 1) * H; };
        const auto work = [&](std::size_t c, std::size_t r) { return done_at(c, (r + 1) * H) - done_at(c, r * H); };
        // The fault-free time of round r's H steps (what the round is credited).
        const auto work0 = [&](std::size_t c, std::size_t r) { return free[c][(r + 1) * H] - free[c][r * H]; };
        // The fault-free time of replica c's kept steps in its round r within `left_s` of its start.
        const auto partial = [&](std::size_t c, std::size_t r, double left_s) {
            if (kept[c].size() < r * H) return 0.0;
            const auto first = r * H;
            const auto last = static_cast<std::size_t>(std::upper_bound(kept[c].begin(), kept[c].end(), done_at(c, first) + left_s) -
                                                       kept[c].begin());
            return last > first ? free[c][last] - free[c][first] : 0.0;
        };
        // Waiting beyond what the fault-free schedule waits (a sunlit replica waiting for a throttled one
        // is in both: credited, not lost).
        const auto extra_wait = [](double waited_s, double free_wait_s) { return std::max(0.0, waited_s - free_wait_s); };
        // Failover: a sync from `start` makes no progress while a gateway link between its replicas (a
        // and b; b = m: every replica, whose average crosses every gateway link) has failed undetected.
        const double failover_s = recovery_.gateway_failover_s;
        const auto sync_stall = [&](double start, double sync, std::size_t a, std::size_t b) {
            double end = start + sync, frozen = start, stall = 0.0;
            if (!(failover_s > 0.0)) return stall;
            for (const auto& f : p.gateway_failures) {
                if (f.failed_s >= end) break;
                if (b != m && !(static_cast<std::size_t>(f.a) == std::min(a, b) && static_cast<std::size_t>(f.b) == std::max(a, b))) continue;
                const double detected = f.failed_s + failover_s, from = std::max(f.failed_s, frozen);
                if (detected <= from) continue;
                stall += detected - from;
                end += detected - from;
                frozen = detected;
            }
            return stall;
        };
        std::vector<double> useful(m, 0.0), waiting(m, 0.0), stalled(m, 0.0);
        std::vector<double> sync_durations;  // each barrier's (diloco) or pair's (noloco) sync
        if (algorithm == ClusterAlgorithm::diloco) {
            double E = 0.0;
            std::size_t r = 0;
            for (;; ++r) {
                bool all = true;
                double slowest = 0.0, sync = 0.0, free_work = 0.0;
                for (std::size_t c = 0; c < m; ++c) {
                    if (!has_round(c, r)) {
                        all = false;
                        break;
                    }
                    slowest = std::max(slowest, work(c, r));
                    free_work = std::max(free_work, work0(c, r));
                    sync = std::max(sync, syncs_[c].at(r));
                }
                const double stall = all ? sync_stall(E + slowest, sync, 0, m) : 0.0;
                if (!all || E + slowest + sync + stall > T) break;
                for (std::size_t c = 0; c < m; ++c) {
                    waiting[c] += extra_wait(slowest - work(c, r), free_work - work0(c, r));
                    useful[c] += free_work + sync;
                    stalled[c] += stall;
                }
                E += slowest + sync + stall;
                sync_durations.push_back(sync + stall);
            }
            for (std::size_t c = 0; c < m; ++c) useful[c] += partial(c, r, T - E);
        } else {
            std::vector<double> clock(m, 0.0);
            std::vector<bool> running(m, true);
            for (std::size_t r = 0; std::find(running.begin(), running.end(), true) != running.end(); ++r) {
                std::vector<double> ready(m, 0.0);
                for (std::size_t c = 0; c < m; ++c) {
                    if (!running[c]) continue;
                    if (!has_round(c, r) || clock[c] + work(c, r) > T) {
                        useful[c] += partial(c, r, T - clock[c]);
                        running[c] = false;
                        continue;
                    }
                    ready[c] = clock[c] + work(c, r);
                }
                const auto peer = noloco_pairing(static_cast<std::int32_t>(m), static_cast<std::int64_t>(r), s_.training.seed);
                // A partner late by more than a fault-free round's work is recovering: not waited for.
                // The one left waiting pairs with others left so; the late one skips the average.
                std::vector<std::int32_t> partner(m, -1), alone;
                for (std::size_t a = 0; a < m; ++a) {
                    if (!running[a]) continue;
                    const std::int32_t b = peer[a];
                    if (b < 0 || !running[static_cast<std::size_t>(b)]) {
                        alone.push_back(static_cast<std::int32_t>(a));
                        continue;
                    }
                    const auto bi = static_cast<std::size_t>(b);
                    const double limit = std::min(work0(a, r), work0(bi, r));
                    if (std::abs(ready[a] - ready[bi]) <= limit) partner[a] = b;
                    else if (ready[a] < ready[bi]) alone.push_back(static_cast<std::int32_t>(a));
                }
                for (std::size_t i = 0; i + 1 < alone.size(); i += 2) {
                    partner[static_cast<std::size_t>(alone[i])] = alone[i + 1];
                    partner[static_cast<std::size_t>(alone[i + 1])] = alone[i];
                }
                for (std::size_t a = 0; a < m; ++a) {
                    if (!running[a]) continue;
                    const std::int32_t b = partner[a];
                    if (b < 0) {  // no average this round
                        useful[a] += work0(a, r);
                        clock[a] = ready[a];
                        continue;
                    }
                    if (static_cast<std::size_t>(b) < a) continue;  // each pair once
                    const auto bi = static_cast<std::size_t>(b);
                    const double start = std::max(ready[a], ready[bi]);
                    const double sync = std::max(syncs_[a].at(r), syncs_[bi].at(r));
                    const double stall = sync_stall(start, sync, a, bi);
                    if (start + sync + stall > T) {  // the sync does not finish: the round's steps still count
                        for (auto c : {a, bi}) {
                            useful[c] += work0(c, r);
                            running[c] = false;
                        }
                        continue;
                    }
                    const double free_work = std::max(work0(a, r), work0(bi, r));
                    for (auto c : {a, bi}) {
                        waiting[c] += extra_wait(start - ready[c], free_work - work0(c, r));
                        useful[c] += free_work + sync;
                        stalled[c] += stall;
                        clock[c] = start + sync + stall;
                    }
                    sync_durations.push_back(sync + stall);
                }
            }
        }
        double useful_mean = 0.0, waiting_mean = 0.0, stalled_mean = 0.0;
        for (std::size_t c = 0; c < m; ++c) {
            useful_mean += useful[c] / static_cast<double>(m);
            waiting_mean += waiting[c] / static_cast<double>(m);
            stalled_mean += stalled[c] / static_cast<double>(m);
        }
        tr.goodput = useful_mean / T;
        tr.lost_waiting_s = waiting_mean;
        attribute(tr, p.own, T - useful_mean - waiting_mean - stalled_mean);
        tr.lost_fabric_s += stalled_mean;
        tr.failover_stall_s = stalled_mean;
        std::sort(sync_durations.begin(), sync_durations.end());
        tr.outer_sync_p99_s = sync_durations.empty() ? 0.0 : nearest_rank_percentile(sync_durations, 0.99);
        return tr;
    }

    std::int64_t evaluations() const {
        std::int64_t n = 0;
        for (const auto& f : fabrics_) n += f->evaluations();
        return n;
    }

private:
    const ClusterFaultSetup& s_;
    RecoveryConfig recovery_;
    std::vector<std::int32_t> cluster_of_, local_of_;
    std::vector<std::unique_ptr<DamagedFabric>> fabrics_;
    std::vector<std::unique_ptr<ClusterView>> views_;
    std::vector<StepDurations> steps_;
    std::vector<ReplicaSyncs> syncs_;
};

}  // namespace

bool trials_have_steps(ClusterAlgorithm algorithm, const ClusterTrainingResult& fault_free, const StepDurations& steps,
                       std::int32_t replicas) {
    if (algorithm == ClusterAlgorithm::ring || algorithm == ClusterAlgorithm::hierarchical) return !steps.start_s.empty();
    std::vector<char> stepped(static_cast<std::size_t>(std::max(0, replicas)), 0);
    for (const ReplicaRound& rr : fault_free.rounds)
        if (rr.inner_steps >= 1 && rr.replica >= 0 && rr.replica < replicas) stepped[static_cast<std::size_t>(rr.replica)] = 1;
    return std::all_of(stepped.begin(), stepped.end(), [](char s) { return s != 0; });
}

StepDurations fault_free_steps(const TrainingResult& training) {
    StepDurations steps;
    for (const auto& step : training.steps) {
        steps.start_s.push_back(step.start_s);
        steps.duration_s.push_back(step.end_s - step.start_s);
    }
    steps.nominal_s = training.summary.step_time_median_s;
    return steps;
}

std::vector<ClusterGoodput> monte_carlo_cluster_goodput(std::span<const ClusterAlgorithm> algorithms, const ClusterFaultSetup& s,
                                                        std::span<const ClusterTrainingResult> fault_free,
                                                        std::span<const StepDurations> steps) {
    if (!s.series || !s.timeline) throw std::invalid_argument("cluster faults: no dose series or topology timeline");
    physics::throw_problems("cluster faults", check(s, algorithms));
    physics::throw_problems("cluster training", check(s.training, algorithms));
    const bool given = !s.events.empty();
    const std::int32_t trials = given ? static_cast<std::int32_t>(s.events.size()) : s.trials;
    if (trials < 1) throw std::invalid_argument("cluster faults: trials must be >= 1");
    if (fault_free.size() != algorithms.size() || steps.size() != algorithms.size())
        throw std::invalid_argument("cluster faults: one fault-free run and step series per algorithm");
    const auto& clusters = satellites_of(s.training);
    std::vector<std::int32_t> all, ranks, cluster_of;  // every satellite (the plays number them all), the ranks
    for (std::size_t c = 0; c < clusters.size(); ++c) {
        for (auto node : clusters[c]) {
            all.push_back(node);
            if (static_cast<std::size_t>(node) >= cluster_of.size()) cluster_of.resize(static_cast<std::size_t>(node) + 1, -1);
            cluster_of[static_cast<std::size_t>(node)] = static_cast<std::int32_t>(c);
        }
        ranks.insert(ranks.end(), s.training.cluster_nodes[c].begin(), s.training.cluster_nodes[c].end());
    }
    std::sort(all.begin(), all.end());
    std::sort(ranks.begin(), ranks.end());
    // One checkpoint interval for every algorithm: the whole constellation's (Daly's when auto), over
    // the satellites that train.
    RecoveryConfig recovery = s.recovery;
    if (!(recovery.checkpoint_interval_s > 0.0) && !(recovery.mtbf_s > 0.0))
        recovery.mtbf_s = ranks_interruption_mtbf_s(*s.series, s.model, recovery, s.duration_s);
    recovery.checkpoint_interval_s = resolve_checkpoint_interval_s(recovery);
    std::int32_t threads = s.threads;
    if (threads == 0) threads = static_cast<std::int32_t>(std::max(1u, std::thread::hardware_concurrency()));

    std::vector<ClusterGoodput> out(algorithms.size());
    for (std::size_t i = 0; i < algorithms.size(); ++i) out[i].algorithm = algorithms[i];
    // Ctrl-C (stop): what was played is returned, each algorithm marked interrupted (below).
    try {
        std::vector<std::size_t> replicated;  // diloco and noloco: composed from one set of replica plays
        for (std::size_t i = 0; i < algorithms.size(); ++i) {
            if (algorithms[i] == ClusterAlgorithm::diloco || algorithms[i] == ClusterAlgorithm::noloco) {
                replicated.push_back(i);
                continue;
            }
            const StepModel model = every_step_model(algorithms[i], s.training, s.training_context);
            // One cluster's job may train on fewer ranks than it has satellites (check lets it): then the
            // faults stop ranks, and the fabric they would damage is not the one the job's steps ran on.
            out[i].on_fabric = model.job.data_parallel == static_cast<std::int32_t>(ranks.size());
            std::optional<DamagedFabric> damaged;
            RecoveryConfig own = recovery;
            if (out[i].on_fabric) {
                damaged.emplace(*s.timeline, model, ranks, cluster_of);
                // A shrunk mixture of experts keeps whole expert groups (the solver needs them; check
                // leaves shrink with one only to a single cluster).
                if (model.job.moe.layers > 0) own.rank_multiple = std::max(1, model.job.moe.expert_parallel);
            }
            DamagedFabric* fabric = damaged ? &*damaged : nullptr;
            const auto satellites = static_cast<std::int32_t>(all.size());
            if (s.nominal_events)
                out[i].nominal = simulate_training_with_faults(*s.nominal_events, satellites, s.duration_s, steps[i], own,
                                                               /*record_timeline=*/true, fabric);  // whole, even after a stop
            if (given) {
                MonteCarloResult& mc = out[i].monte_carlo;
                mc.trials = trials;
                mc.checkpoint_interval_s = own.checkpoint_interval_s;
                for (const auto& events : s.events)
                    mc.per_trial.push_back(
                        trial_summary(simulate_training_with_faults(events, satellites, s.duration_s, steps[i], own, false, fabric, s.stop)));
                for (const auto& tr : mc.per_trial) mc.goodput_per_trial.push_back(tr.goodput);
                mc.goodput = trial_statistics(mc.goodput_per_trial);
            } else if (trials > 1 || !s.nominal_events) {
                out[i].monte_carlo = monte_carlo_goodput(*s.series, s.model, own, steps[i], s.duration_s, s.seed, s.trials,
                                                         s.backend, fabric, threads, s.stop, s.share);
            }
            out[i].fault_free_goodput = simulate_training_with_faults({}, satellites, s.duration_s, steps[i], own, false, fabric, s.stop).goodput;
            if (damaged) out[i].fabric_evaluations = damaged->evaluations();
        }
        if (replicated.empty()) return out;
        std::vector<std::unique_ptr<ReplicaComposition>> compositions;
        for (const std::size_t i : replicated) {
            compositions.push_back(std::make_unique<ReplicaComposition>(s, fault_free[i], recovery));
            MonteCarloResult& mc = out[i].monte_carlo;
            mc.trials = trials;
            mc.checkpoint_interval_s = recovery.checkpoint_interval_s;
            mc.backend = resolve_backend(s.backend);
            mc.threads = std::min(threads, trials);
            mc.per_trial.resize(static_cast<std::size_t>(trials));
        }
        // One set of replica plays per trial serves every replicated algorithm: the replicas' inner
        // steps as the first one's fault-free run timed them (the others' differ only by when their
        // syncs end, milliseconds), each composed with its own rounds.
        const auto play_and_compose = [&](std::span<const FaultEvent> events, std::size_t trial) {
            const ReplicaComposition::Plays plays = compositions[0]->play(events);
            for (std::size_t j = 0; j < replicated.size(); ++j)
                out[replicated[j]].monte_carlo.per_trial[trial] = compositions[j]->compose(algorithms[replicated[j]], plays);
        };
        if (given) {
            for (std::size_t t = 0; t < s.events.size(); ++t) play_and_compose(s.events[t], t);
        }
        bool stopped = false;
        try {
            if (!given)
                for_each_drawn_trial(*s.series, s.model, s.duration_s, s.seed, trials, resolve_backend(s.backend),
                                     std::min(threads, trials), [&](std::int32_t trial, std::span<const FaultEvent> events) {
                                         play_and_compose(events, static_cast<std::size_t>(trial));
                                     },
                                     s.stop, s.share);
        } catch (const TrialsInterrupted&) {
            stopped = true;
        }
        for (std::size_t j = 0; !given && s.share && s.share->gather && j < replicated.size(); ++j) {
            auto& per_trial = out[replicated[j]].monte_carlo.per_trial;  // the other parts' trials
            std::vector<TrialRow> rows(per_trial.size());
            for (std::size_t t = 0; t < rows.size(); ++t) rows[t].trial = per_trial[t];
            stopped = s.share->gather(rows, stopped);
            for (std::size_t t = 0; t < rows.size(); ++t) per_trial[t] = rows[t].trial;
        }
        if (stopped) throw TrialsInterrupted();
        for (std::size_t j = 0; j < replicated.size(); ++j) {
            ClusterGoodput& g = out[replicated[j]];
            for (const auto& tr : g.monte_carlo.per_trial) g.monte_carlo.goodput_per_trial.push_back(tr.goodput);
            g.monte_carlo.goodput = trial_statistics(g.monte_carlo.goodput_per_trial);
            g.fault_free_goodput = compositions[j]->compose(g.algorithm, compositions[0]->play({})).goodput;
            g.fabric_evaluations = compositions[j]->evaluations();
        }
    } catch (const Interrupted&) {  // TrialsInterrupted, or a fabric's solve stopped (FlowContext::stop)
        for (auto& g : out) g.interrupted = true;
    }
    return out;
}

}  // namespace skyfabric::workloads
