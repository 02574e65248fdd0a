#include <skyfabric/workloads/training.hpp>

#include <skyfabric/physics/random.hpp>
#include <skyfabric/workloads/placement.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace skyfabric::workloads {

namespace {

// What the first plan reuses and keeps (a damaged copy's seed, an undamaged solve's tours).
struct TourSeed {
    const std::vector<RingTour>* before = nullptr;  // the undamaged solve's tours, on this damaged copy
    std::vector<RingTour>* kept = nullptr;          // each tour toured, kept
};

// The ring tour over `nodes`, on a damaged copy from the undamaged solve's i-th tour.
Placement tour_of(const Network& net, std::span<const std::int32_t> nodes, std::size_t i, const TourSeed& seed) {
    const auto* before = seed.before;
    if (before && i < before->size()) return ring_placement_after_damage((*before)[i], net, nodes);
    auto* tours = seed.kept;
    if (!tours) return ring_placement(net, nodes);
    tours->push_back(ring_tour(net, nodes));
    return tours->back().order;
}

Placement plan(const TrainingOptions& o, const Network& net, std::int32_t ranks, const TourSeed& seed = {}) {
    if (!o.rank_groups.empty()) {
        Placement p;
        for (std::size_t i = 0; i < o.rank_groups.size(); ++i) {
            const auto& group = o.rank_groups[i];
            const Placement g = o.placement == PlacementPolicy::topology_aware ? tour_of(net, group, i, seed) : group;
            p.insert(p.end(), g.begin(), g.end());
        }
        return p;
    }
    if (!o.rank_nodes.empty()) {
        switch (o.placement) {
            case PlacementPolicy::topology_aware: return tour_of(net, o.rank_nodes, 0, seed);
            case PlacementPolicy::random: {
                Placement p = random_placement(static_cast<std::int32_t>(o.rank_nodes.size()), ranks, o.seed);
                for (auto& v : p) v = o.rank_nodes[static_cast<std::size_t>(v)];
                return p;
            }
            case PlacementPolicy::identity: return o.rank_nodes;
        }
    }
    switch (o.placement) {
        case PlacementPolicy::topology_aware: return ring_placement(net, ranks);
        case PlacementPolicy::random: return random_placement(net.node_count, ranks, o.seed);
        case PlacementPolicy::identity: return identity_placement(ranks);
    }
    return identity_placement(ranks);
}

// Every consecutive pair of ranks one hop apart — within each group's own ring when there are groups.
bool embedded(const TrainingOptions& o, const Network& net, const Placement& placement) {
    if (o.rank_groups.empty()) return ring_is_embedded(net, placement);
    std::size_t first = 0;
    for (const auto& group : o.rank_groups) {
        const Placement ring(placement.begin() + static_cast<std::ptrdiff_t>(first),
                             placement.begin() + static_cast<std::ptrdiff_t>(first + group.size()));
        if (!ring_is_embedded(net, ring)) return false;
        first += group.size();
    }
    return true;
}

}  // namespace

std::size_t nearest_rank_index(std::size_t n, double q) {
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(n)));
    return std::min(n, std::max<std::size_t>(rank, 1)) - 1;
}

double nearest_rank_percentile(std::span<const double> sorted, double q) {
    return sorted.empty() ? 0.0 : sorted[nearest_rank_index(sorted.size(), q)];
}

double select_nearest_rank(std::span<double> values, double q) {
    if (values.empty()) return 0.0;
    const auto nth = values.begin() + static_cast<std::ptrdiff_t>(nearest_rank_index(values.size(), q));
    std::nth_element(values.begin(), nth, values.end());
    return *nth;
}

bool step_straggles(const StragglerModel& model, std::int64_t step, std::int32_t ranks) {
    if (!model.enabled() || ranks < 1) return false;
    // P(some rank straggles) = 1 − (1 − p)^ranks, as one draw per step (the ranks' draws are
    // independent, and only whether any straggles matters to a synchronous step).
    const double any = -std::expm1(static_cast<double>(ranks) * std::log1p(-std::min(model.probability, 1.0)));
    const auto bits = physics::rng::random_block(model.seed, 0x5354524147ull /* "STRAG" */, static_cast<std::uint64_t>(step));
    return physics::rng::unit_from_bits53(bits.v[0], bits.v[1]) <= any;
}

TrainingResult simulate_training(const TrainingJob& job, const Accelerator& accelerator,
                                 TopologySource source, const TrainingOptions& options, const TrainingContext& context) {
    return simulate_training(job, accelerator, source ? frame_source(std::move(source)) : FrameSource{}, options, context);
}

TrainingResult simulate_training(const TrainingJob& job, const Accelerator& accelerator,
                                 FrameSource source, const TrainingOptions& options, const TrainingContext& context) {
    if (options.end_s < 0.0 && options.max_steps < 0)
        throw std::invalid_argument("simulate_training: give end_s or max_steps");
    NetworkClock clock(std::move(source));
    const double start = options.start_s >= 0.0 ? options.start_s : clock.epoch_start_s();
    const double end = options.end_s >= 0.0 ? options.end_s : std::numeric_limits<double>::infinity();
    TrainingResult out;
    if (context.record_link_epochs) clock.record_epochs(&out.link_epochs);
    if (context.link_bytes_only) clock.account_bytes_only();
    clock.advance_to(start);
    clock.start_accounting(start);
    CollectiveEngine engine(clock, options.flow, context.flow);

    const std::int32_t p = job.data_parallel;
    if (p < 1 || p > clock.topology().node_count)
        throw std::invalid_argument("simulate_training: data_parallel must be in 1..node_count");
    if (!options.rank_nodes.empty() && static_cast<std::int32_t>(options.rank_nodes.size()) != p)
        throw std::invalid_argument("simulate_training: rank_nodes must list data_parallel nodes");
    if (!options.rank_groups.empty()) {
        std::size_t grouped = 0;
        for (const auto& g : options.rank_groups) grouped += g.size();
        if (!options.rank_nodes.empty() || static_cast<std::int32_t>(grouped) != p)
            throw std::invalid_argument("simulate_training: rank_groups must list data_parallel nodes, without rank_nodes");
    }
    physics::throw_problems("simulate_training", check(job));
    const double full_compute = compute_time_per_step_s(job, accelerator);
    const std::int32_t buckets = std::max(1, job.gradient_buckets);
    const auto schedule_of = context.explicit_schedules ? build_explicit_schedule : build_schedule;
    const Schedule bucket_schedule = schedule_of(CollectiveOp::all_reduce, options.all_reduce, p,
                                                 gradient_bytes(job) / buckets, options.schedule);
    const Schedule outer_schedule = schedule_of(CollectiveOp::all_reduce, options.all_reduce, p,
                                                outer_sync_bytes(job), options.schedule);
    // Mixture of experts: 4 all-to-alls per MoE layer (dispatch and combine, forward and backward)
    // inside every expert group at once.
    const MixtureOfExperts& moe = job.moe;
    const std::int32_t expert_groups = moe.layers > 0 ? p / std::max(1, moe.expert_parallel) : 0;
    const bool moe_network = moe.layers > 0 && moe.expert_parallel > 1;
    if (!options.expert_group_ranks.empty()) {
        std::vector<std::int32_t> sorted = options.expert_group_ranks;
        std::sort(sorted.begin(), sorted.end());
        bool permutation = static_cast<std::int32_t>(sorted.size()) == p;
        for (std::int32_t i = 0; permutation && i < p; ++i) permutation = sorted[static_cast<std::size_t>(i)] == i;
        if (!permutation) throw std::invalid_argument("simulate_training: expert_group_ranks must list every rank once");
    }
    // Where the expert groups' members are: the placement read through expert_group_ranks.
    const auto expert_placement = [&](const Placement& ranks) {
        if (options.expert_group_ranks.empty()) return ranks;
        Placement grouped(ranks.size());
        for (std::size_t i = 0; i < grouped.size(); ++i) grouped[i] = ranks[static_cast<std::size_t>(options.expert_group_ranks[i])];
        return grouped;
    };
    const Schedule moe_schedule =
        moe_network ? in_groups(schedule_of(CollectiveOp::all_to_all, Algorithm::pairwise, moe.expert_parallel,
                                            moe_all_to_all_bytes(job), options.schedule),
                                expert_groups)
                    : Schedule{};

    TrainingSummary& sum = out.summary;
    sum.start_s = start;
    sum.end_s = start;
    sum.compute_per_step_s = full_compute;

    // The seed is for the first topology only (the damaged copy it was found on).
    std::vector<RingTour> first_tours;
    Placement placement = plan(options, clock.network(), p,
                               TourSeed{context.tours_before_damage.get(), context.keep_routes ? &first_tours : nullptr});
    Placement experts = expert_placement(placement);
    std::int64_t placement_version = 0;
    std::int64_t planned_epoch = clock.epoch();
    sum.bus_bw_bound_Bps = single_link_bandwidth_Bps(clock.network(), placement, p);
    const std::int64_t first_epoch = clock.epoch();

    double t = start;
    std::vector<double> step_times;
    double bus_bw_total = 0.0;
    std::int64_t bus_bw_count = 0;
    // A user's stop seen inside a step's collectives (FlowContext::stop): the job ends with the steps
    // done before it, as a stop by end_limit_s does.
    try {
    for (std::int64_t step = 0; options.max_steps < 0 || step < options.max_steps; ++step) {
        if (t + full_compute > end) break;
        const auto stopped_by_limit = [&](double step_end) {
            if (!context.end_limit_s || step_end <= context.end_limit_s()) return false;
            sum.stopped = true;
            return true;
        };
        if (stopped_by_limit(t + full_compute)) break;
        clock.advance_to(t);
        if (options.replan_on_topology_change && options.placement == PlacementPolicy::topology_aware &&
            clock.epoch() != planned_epoch) {
            planned_epoch = clock.epoch();
            // Re-embed only when the ring lost a hop: moving ranks costs nothing for pure
            // data parallelism, but churn would defeat the per-epoch caches.
            if (!embedded(options, clock.network(), placement)) {
                Placement fresh = plan(options, clock.network(), p);
                if (fresh != placement) {
                    placement = std::move(fresh);
                    experts = expert_placement(placement);
                    ++placement_version;
                    ++sum.replans;
                }
            }
        }
        // A straggling step computes `slowdown` times longer; under a power limit compute finishes later
        // than at full speed (the same arithmetic as before without either).
        const bool straggles = step_straggles(options.stragglers, step, p);
        const double compute = straggles ? full_compute * options.stragglers.slowdown : full_compute;
        const bool limited = static_cast<bool>(context.compute_done_s);
        const double compute_end = limited ? context.compute_done_s(t, compute) : t + compute;
        if (compute_end > end) break;
        StepRecord rec;
        rec.step = step;
        rec.start_s = t;
        rec.compute_s = limited ? compute_end - t : compute;
        rec.straggler_s = compute - full_compute;
        const bool every = job.sync == SyncMode::every_step;
        rec.synchronised = every || (step + 1) % job.local_steps == 0;
        double comm_end = t;
        bool failed = false;
        std::vector<CollectiveRecord> step_collectives;
        auto do_collective = [&](const Schedule& s, double ready_s, std::int64_t kind) {
            const double begin = std::max(ready_s, comm_end);
            const CollectiveResult r = engine.run(s, placement, begin, placement_version * 4 + kind);
            CollectiveRecord c{step, r.op, r.algorithm, r.bytes, r.start_s, r.end_s,
                               r.alg_bw_Bps, r.bus_bw_Bps, r.stalled_s, r.lost_s, r.completed};
            step_collectives.push_back(c);
            sum.time_lost_s += r.lost_s;
            sum.stalled_s += r.stalled_s;
            if (r.stalled_s > 0.0) rec.status = StepStatus::stalled;
            else if (r.topology_changes > 0 && rec.status == StepStatus::ok) rec.status = StepStatus::rerouted;
            if (!r.completed) {
                failed = true;
                return;
            }
            rec.communication_s += r.duration_s();
            comm_end = r.end_s;
        };
        // MoE all-to-alls, one after another inside the forward and backward passes (the compute
        // waits for them); they are not run concurrently with the gradient all-reduce.
        double moe_s = 0.0;
        for (std::int32_t i = 0; moe_network && i < 4 * moe.layers; ++i) {
            const CollectiveResult r = engine.run(moe_schedule, experts, t + moe_s, placement_version * 4 + 2);
            sum.time_lost_s += r.lost_s;
            sum.stalled_s += r.stalled_s;
            if (r.stalled_s > 0.0) rec.status = StepStatus::stalled;
            if (!r.completed) {
                failed = true;
                break;
            }
            moe_s += r.duration_s();
        }
        rec.all_to_all_s = moe_s;
        const double work_end = compute_end + moe_s;  // compute and the all-to-alls it waits for
        if (!failed && rec.synchronised) {
            if (every) {
                // Bucket b is ready once the backward pass has produced its gradients (the forward
                // pass's all-to-alls before, the backward pass's spread through it).
                const double forward = compute * (1.0 - job.backward_fraction);
                for (std::int32_t b = 0; b < buckets && !failed; ++b) {
                    const double share = static_cast<double>(b + 1) / buckets;
                    const double backward = compute * job.backward_fraction * share;
                    const double waited = moe_s / 2 + moe_s / 2 * share;
                    do_collective(bucket_schedule,
                                  (limited ? context.compute_done_s(t, forward + backward) : t + forward + backward) + waited,
                                  0);
                }
            } else {
                do_collective(outer_schedule, work_end, 1);  // outer sync after the local step
            }
        }
        if (failed) {
            rec.status = StepStatus::incomplete;
            sum.truncated = true;
            if (context.record_collectives)
                out.collectives.insert(out.collectives.end(), step_collectives.begin(), step_collectives.end());
            break;
        }
        rec.end_s = std::max(work_end, comm_end);
        if (rec.end_s > end || stopped_by_limit(rec.end_s)) break;
        rec.exposed_communication_s = rec.end_s - work_end;
        for (const auto& c : step_collectives) {
            bus_bw_total += c.bus_bw_Bps;
            ++bus_bw_count;
        }
        if (context.record_collectives)
            out.collectives.insert(out.collectives.end(), step_collectives.begin(), step_collectives.end());
        step_times.push_back(rec.end_s - rec.start_s);
        if (straggles) {
            ++sum.straggler_steps;
            sum.straggler_s += compute - full_compute;
        }
        out.steps.push_back(rec);
        t = rec.end_s;
        sum.end_s = t;
    }
    } catch (const Interrupted&) {
        sum.stopped = true;
    }

    sum.steps = static_cast<std::int64_t>(out.steps.size());
    for (const StepRecord& r : out.steps) {
        sum.all_to_all_per_step_s += r.all_to_all_s;
        sum.exposed_all_reduce_per_step_s += r.exposed_communication_s;
    }
    if (sum.steps > 0) {
        sum.all_to_all_per_step_s /= static_cast<double>(sum.steps);
        sum.exposed_all_reduce_per_step_s /= static_cast<double>(sum.steps);
    }
    std::vector<double> sorted = step_times;
    std::sort(sorted.begin(), sorted.end());
    sum.step_time_median_s = nearest_rank_percentile(sorted, 0.5);
    sum.step_time_p99_s = nearest_rank_percentile(sorted, 0.99);
    double total = 0.0;
    for (double s : step_times) total += s;
    sum.step_time_mean_s = sorted.empty() ? 0.0 : total / static_cast<double>(sorted.size());
    const double wall = sum.end_s - sum.start_s;
    if (wall > 0.0) {
        sum.tokens_per_s = job.tokens_per_step * static_cast<double>(sum.steps) / wall;
        sum.mfu = flops_per_step(job) * static_cast<double>(sum.steps) /
                  (wall * static_cast<double>(chip_count(job)) * accelerator.peak_flops);
    }
    sum.bus_bw_mean_Bps = bus_bw_count > 0 ? bus_bw_total / static_cast<double>(bus_bw_count) : 0.0;
    sum.topology_epochs = clock.epoch() - first_epoch + 1;
    sum.flow_events = engine.flow_events();
    sum.rate_solves = engine.rate_solves();
    if (context.keep_routes) {
        out.routes = engine.routes();
        out.tours = std::make_shared<const std::vector<RingTour>>(std::move(first_tours));
    }
    out.links = context.link_bytes_only ? clock.carried_links() : clock.link_utilisation(sum.end_s);
    if (context.record_link_epochs) {
        clock.record_open_epoch(sum.end_s);
        clock.record_epochs(nullptr);
    }
    return out;
}

TrainingResult simulate_training(const TrainingJob& job, const Accelerator& accelerator,
                                 std::span<const links::Topology> series,
                                 const TrainingOptions& options, const TrainingContext& context) {
    if (series.empty()) throw std::invalid_argument("simulate_training: empty topology series");
    TrainingOptions o = options;
    if (o.end_s < 0.0) {
        // The last topology holds for as long as the spacing before it.
        if (series.size() > 1) {
            const double last = series.back().time_s;
            o.end_s = last + (last - series[series.size() - 2].time_s);
        } else if (o.max_steps < 0) {
            throw std::invalid_argument("simulate_training: one topology needs end_s or max_steps");
        }
    }
    return simulate_training(job, accelerator, topology_source(series), o, context);
}

}  // namespace skyfabric::workloads
