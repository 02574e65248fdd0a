#include <skyfabric/workloads/damaged_fabric.hpp>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace skyfabric::workloads {

namespace {

template <class T>
void append_bytes(std::string& key, const std::vector<T>& v) {
    const std::uint64_t n = v.size();
    key.append(reinterpret_cast<const char*>(&n), sizeof n);
    if (!v.empty()) key.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

}  // namespace

DamagedFabric::DamagedFabric(const TopologyTimeline& timeline, StepModel model, std::int32_t initial_ranks,
                             std::size_t cache_budget_bytes)
    : DamagedFabric(timeline, std::move(model), [&] {
          std::vector<std::int32_t> ranks(static_cast<std::size_t>(std::max(0, initial_ranks)));
          std::iota(ranks.begin(), ranks.end(), 0);
          return ranks;
      }(), {}, cache_budget_bytes) {}

DamagedFabric::DamagedFabric(const TopologyTimeline& timeline, StepModel model, std::vector<std::int32_t> rank_nodes,
                             std::vector<std::int32_t> cluster_of, std::size_t cache_budget_bytes)
    : timeline_(timeline), model_(std::move(model)), initial_ranks_(static_cast<std::int32_t>(rank_nodes.size())),
      cluster_of_(std::move(cluster_of)), cache_budget_bytes_(cache_budget_bytes) {
    if (timeline_.keyframe_count() == 0) throw std::invalid_argument("damaged fabric: empty topology timeline");
    const std::int32_t nodes = timeline_.keyframe(0).node_count;
    if (initial_ranks_ < 1 || !std::is_sorted(rank_nodes.begin(), rank_nodes.end()) || rank_nodes.front() < 0 ||
        rank_nodes.back() >= nodes)
        throw std::invalid_argument("damaged fabric: the ranks must be 1..node_count sorted nodes");
    if (model_.job.data_parallel != initial_ranks_)
        throw std::invalid_argument("damaged fabric: the job's data_parallel must equal the initial ranks");
    undamaged_.ranks = std::move(rank_nodes);
    for (std::size_t g = 0; g < model_.options.rank_groups.size(); ++g) {
        const auto c = static_cast<std::size_t>(cluster_of_.at(static_cast<std::size_t>(model_.options.rank_groups[g].at(0))));
        if (c >= group_of_cluster_.size()) group_of_cluster_.resize(c + 1, -1);
        if (group_of_cluster_[c] < 0) group_of_cluster_[c] = static_cast<std::int32_t>(g);
    }
    const std::size_t kinds = 2;
    undamaged_step_s_ = std::make_unique<std::atomic<double>[]>(kinds * timeline_.keyframe_count());
    for (std::size_t k = 0; k < kinds * timeline_.keyframe_count(); ++k)
        undamaged_step_s_[k].store(std::numeric_limits<double>::quiet_NaN(), std::memory_order_relaxed);
    // One step, on a one-topology series, at full compute (a power limit acts on the fault-free
    // steps, to which the damage's extra time is added).
    model_.options.max_steps = 1;
    model_.options.stragglers = {};  // a damaged step's extra time is the fabric's alone
    model_.options.end_s = -1.0;
    model_.context.record_collectives = false;
    model_.context.compute_done_s = nullptr;
    if (model_.job.sync == SyncMode::local_steps) {
        sync_every_ = std::max(1, model_.job.local_steps);
        traffic_between_syncs_ = sync_every_ > 1 && model_.job.moe.layers > 0;
        between_syncs_model_ = model_;
        between_syncs_model_.job.local_steps = 2;  // its step 0 does not sync
        model_.job.local_steps = 1;                // every step an outer sync
    }
}

DamagedFabric::Solved DamagedFabric::solve(std::size_t k, const FabricDamage& damage, const Solved* undamaged,
                                           StepKind kind) const {
    const StepModel& model = kind == StepKind::sync ? model_ : between_syncs_model_;
    Solved out;
    if (damage.ranks.empty()) return out;
    const auto frame = keyframe(k);
    links::Topology topology = frame->topology;  // a copy, damaged below through the node index
    for (const std::int32_t satellite : damage.satellites_down)
        for (const std::int32_t i : frame->links_of(satellite)) topology.links[static_cast<std::size_t>(i)].capacity_bps = 0.0;
    for (const auto& [source, target] : damage.links_down)
        for (const std::int32_t i : frame->links_of(source)) {
            links::Link& l = topology.links[static_cast<std::size_t>(i)];
            if (l.source == source && l.target == target) l.capacity_bps = 0.0;  // kept but not routed over
        }
    TrainingJob job = model.job;
    const auto ranks = static_cast<std::int32_t>(damage.ranks.size());
    if (ranks != initial_ranks_) {
        job.tokens_per_step *= static_cast<double>(ranks) / static_cast<double>(initial_ranks_);
        job.data_parallel = ranks;
    }
    TrainingOptions options = model.options;
    if (options.rank_groups.empty()) {
        options.rank_nodes = damage.ranks;
    } else {
        // Each surviving rank stays in its group (its cluster's ring), and a hot spare that took a rank's
        // place joins its own cluster's group (spares serve their cluster; a group left empty is dropped).
        std::size_t kept = 0;
        for (auto& group : options.rank_groups) {
            std::erase_if(group, [&](std::int32_t node) { return !std::binary_search(damage.ranks.begin(), damage.ranks.end(), node); });
            kept += group.size();
        }
        if (kept < damage.ranks.size()) {  // spares swapped in
            for (const std::int32_t node : damage.ranks) {
                const auto c = static_cast<std::size_t>(cluster_of_.at(static_cast<std::size_t>(node)));
                auto& group = options.rank_groups.at(static_cast<std::size_t>(group_of_cluster_.at(c)));
                const auto at = std::lower_bound(group.begin(), group.end(), node);
                if (at == group.end() || *at != node) group.insert(at, node);
            }
        }
        std::erase_if(options.rank_groups, [](const std::vector<std::int32_t>& g) { return g.empty(); });
    }
    options.start_s = topology.time_s;
    // The undamaged keyframe's routes and ring tours are kept and seed its damaged copies, which
    // search again only the pairs whose paths broke (RouteCache::seed) and tour again only where a
    // tour's hops from the first one broken (ring_placement_after_damage): the same routes and rings
    // as searching anew.
    TrainingContext context = model.context;
    context.keep_routes = !undamaged;
    if (undamaged) {
        context.flow.routes_before_damage = undamaged->routes;
        // The undamaged network, for the pairs the seed lacks: multipath with a route store only.
        if (context.flow.route_store && options.flow.paths_per_transfer > 1)
            context.flow.network_before_damage = std::make_shared<const Network>(build_network(frame->topology));
        context.tours_before_damage = undamaged->tours;
    }
    const links::Topology series[] = {std::move(topology)};
    const TrainingResult r = simulate_training(job, model.accelerator, series, options, context);
    // A user's stop inside the step (FlowContext::stop): no answer to keep; the trial unwinds.
    if (r.summary.stopped) throw Interrupted();
    // Every used link (for relevant_solved), and the bytes of those between clusters only (for
    // link_traffic, asked of failed gateway links): a trial's solves are many, so they stay small.
    std::vector<std::pair<std::pair<std::int32_t, std::int32_t>, double>> used;
    for (const LinkUtilisation& l : r.links)
        if (l.bytes > 0.0) used.push_back({{l.source, l.target}, l.bytes});
    std::sort(used.begin(), used.end());
    out.used_links.reserve(used.size());
    for (const auto& [link, bytes] : used) {
        out.used_links.push_back(link);
        if (between_clusters(link)) out.gateway_link_bytes.push_back({link, bytes});
    }
    if (!r.summary.truncated && !r.steps.empty()) out.step_s = r.steps.front().end_s - r.steps.front().start_s;
    out.routes = r.routes;
    out.tours = r.tours;
    return out;
}

std::string DamagedFabric::solve_key(std::size_t k, const FabricDamage& damage, StepKind kind) const {
    std::string key;
    key.append(reinterpret_cast<const char*>(&k), sizeof k);
    append_bytes(key, damage.links_down);
    append_bytes(key, damage.satellites_down);
    // Most damage keeps every rank: one byte then, rather than hashing and comparing them all.
    const bool initial_ranks = damage.ranks == undamaged_.ranks;
    key.push_back(initial_ranks ? '\0' : '\1');
    if (!initial_ranks) append_bytes(key, damage.ranks);
    // A step between local-SGD syncs: one byte more. No sync key has a byte past its flag ('\0')
    // or its rank list ('\1'), so the two never collide, and sync keys are as they were.
    if (kind == StepKind::between_syncs) key.push_back('\2');
    return key;
}

std::size_t DamagedFabric::kept_bytes(const std::string& key, const Solved& s) {
    constexpr std::size_t node_overhead = 64;  // next pointer, hash, bucket slot, allocator headers
    return node_overhead + sizeof(std::pair<const std::string, Solved>) + key.capacity() +
           s.used_links.capacity() * sizeof(s.used_links[0]) +
           s.gateway_link_bytes.capacity() * sizeof(s.gateway_link_bytes[0]);
}

const DamagedFabric::Solved& DamagedFabric::solved(std::size_t k, const FabricDamage& damage, Solved& fresh,
                                                   StepKind kind) {
    std::string key = solve_key(k, damage, kind);
    {
        const std::shared_lock lock(mutex_);
        if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
    }
    // Solved outside the lock (two threads may solve the same key: same inputs, same answer);
    // unordered_map keeps references to its elements valid across inserts.
    // A damaged solve starts from the undamaged keyframe's routes (extra_step_s needs that solve
    // anyway), always kept: fresh is left alone by it.
    const bool undamaged = damage.links_down.empty() && damage.satellites_down.empty() && damage.ranks == undamaged_.ranks;
    Solved s = solve(k, damage, undamaged ? nullptr : &solved(k, undamaged_, fresh, kind), kind);
    const std::size_t bytes = kept_bytes(key, s);
    {
        const std::unique_lock lock(mutex_);
        if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
        if (undamaged || cache_bytes_ + bytes <= cache_budget_bytes_) {
            cache_bytes_ += bytes;
            return cache_.emplace(std::move(key), std::move(s)).first->second;
        }
        ++uncached_solves_;
    }
    fresh = std::move(s);
    return fresh;
}

const DamagedFabric::Solved& DamagedFabric::relevant_solved(std::size_t k, const FabricDamage& damage, Solved& fresh,
                                                            StepKind kind) {
    if (damage.links_down.empty()) return solved(k, damage, fresh, kind);
    // A down link that carries none of the step's traffic when only the others are down changes
    // neither the ring nor a route nor a rate: left out, so trials share more solves. Grown to a
    // fixed point: the traffic rerouted around one outage may cross another.
    FabricDamage relevant = damage;
    relevant.links_down.clear();
    std::vector<std::pair<std::int32_t, std::int32_t>> more;
    for (;;) {
        // now may be fresh: read before the next solved() refills it.
        const Solved& now = solved(k, relevant, fresh, kind);
        more.clear();
        std::set_intersection(damage.links_down.begin(), damage.links_down.end(), now.used_links.begin(),
                              now.used_links.end(), std::back_inserter(more));
        const std::size_t before = relevant.links_down.size();
        std::vector<std::pair<std::int32_t, std::int32_t>> merged;
        std::set_union(relevant.links_down.begin(), relevant.links_down.end(), more.begin(), more.end(),
                       std::back_inserter(merged));
        relevant.links_down = std::move(merged);
        if (relevant.links_down.size() == before) return now;
    }
}

double DamagedFabric::step_s(std::size_t k, const FabricDamage& damage) {
    Solved fresh;  // empty: allocates nothing on a cache hit
    return relevant_solved(k, damage, fresh, StepKind::sync).step_s;
}

bool DamagedFabric::between_clusters(std::pair<std::int32_t, std::int32_t> link) const {
    return !cluster_of_.empty() &&
           cluster_of_[static_cast<std::size_t>(link.first)] != cluster_of_[static_cast<std::size_t>(link.second)];
}

FabricModel::LinkTraffic DamagedFabric::link_traffic(double t, const FabricDamage& damage,
                                                     std::pair<std::int32_t, std::int32_t> link) {
    if (!between_clusters(link)) throw std::invalid_argument("damaged fabric: link_traffic is kept for links between clusters only");
    const std::size_t k = timeline_.keyframe_index_at(t);
    const auto bytes = [&](StepKind kind) {
        Solved fresh;
        const Solved& s = relevant_solved(k, damage, fresh, kind);
        const auto it = std::lower_bound(s.gateway_link_bytes.begin(), s.gateway_link_bytes.end(), link,
                                         [](const auto& kept, const auto& l) { return kept.first < l; });
        return it != s.gateway_link_bytes.end() && it->first == link ? it->second : 0.0;
    };
    const double sync = bytes(StepKind::sync);
    if (sync_every_ == 1) return {sync, 1.0};
    // Local SGD: when the steps between syncs cross the link too (experts), every step does, with
    // the round's mean bytes; else the outer sync alone does, once in H.
    const double between = traffic_between_syncs_ ? bytes(StepKind::between_syncs) : 0.0;
    if (between > 0.0) return {between + (sync - between) / sync_every_, 1.0};
    return {sync, 1.0 / sync_every_};
}

double DamagedFabric::extra_s(std::size_t k, const FabricDamage& damage, StepKind kind) {
    Solved fresh;  // empty: allocates nothing on a cache hit
    const double damaged = relevant_solved(k, damage, fresh, kind).step_s;
    if (!std::isfinite(damaged)) return damaged;
    std::atomic<double>& kept = undamaged_step_s_[static_cast<std::size_t>(kind) * timeline_.keyframe_count() + k];
    double undamaged = kept.load(std::memory_order_relaxed);
    if (std::isnan(undamaged)) {  // two threads may both solve it: the same answer
        Solved none;
        undamaged = solved(k, undamaged_, none, kind).step_s;
        kept.store(undamaged, std::memory_order_relaxed);
    }
    return damaged - undamaged;
}

double DamagedFabric::extra_step_s(double t, const FabricDamage& damage) {
    const std::size_t k = timeline_.keyframe_index_at(t);
    const double sync = extra_s(k, damage, StepKind::sync);
    if (sync_every_ == 1) return sync;
    // Local SGD: the round's mean (a sync that cannot complete stalls the round: +inf stays +inf).
    const double between = traffic_between_syncs_ ? extra_s(k, damage, StepKind::between_syncs) : 0.0;
    if (!std::isfinite(sync)) return sync;  // ±inf as every-step sync gives it
    if (!std::isfinite(between)) return between;
    return between + (sync - between) / sync_every_;
}

bool DamagedFabric::outage_link(std::int32_t satellite, double t, double mark, bool gateway,
                                std::pair<std::int32_t, std::int32_t>& link) const {
    const auto shared = keyframe(timeline_.keyframe_index_at(t));
    const Keyframe& frame = *shared;
    // The satellite's working links that its terminal of this kind carries, in link order: a gateway
    // terminal the links between clusters, the ISL terminals the others. The mark picks one.
    const auto carried = [&](std::int32_t i) {
        const links::Link& l = frame.topology.links[static_cast<std::size_t>(i)];
        return l.capacity_bps > 0.0 && between_clusters({l.source, l.target}) == gateway;
    };
    const auto own_links = frame.links_of(satellite);
    const auto first = own_links.begin();
    const auto own = static_cast<std::size_t>(std::count_if(own_links.begin(), own_links.end(), carried));
    if (own == 0) return false;
    std::size_t pick = std::min(own - 1, static_cast<std::size_t>(mark * static_cast<double>(own)));
    for (auto it = first;; ++it) {
        if (!carried(*it)) continue;
        if (pick-- == 0) {
            const links::Link& l = frame.topology.links[static_cast<std::size_t>(*it)];
            link = {l.source, l.target};
            return true;
        }
    }
}

std::shared_ptr<const DamagedFabric::Keyframe> DamagedFabric::keyframe(std::size_t k) const {
    std::shared_ptr<const Keyframe> earlier;  // the nearest kept before k: trials walk forward
    std::size_t earlier_k = 0;
    {
        const std::lock_guard lock(keyframes_mutex_);
        auto it = keyframes_.lower_bound(k);
        if (it != keyframes_.end() && it->first == k) return it->second;
        if (it != keyframes_.begin()) {
            --it;
            earlier_k = it->first;
            earlier = it->second;
        }
    }
    auto frame = std::make_shared<Keyframe>();
    frame->topology = earlier ? timeline_.keyframe_from(k, earlier->topology, earlier_k) : timeline_.keyframe(k);
    // Each node's links by a counting sort over the link list, so each node's stay in link order.
    const auto& all = frame->topology.links;
    auto& offsets = frame->node_link_offsets;
    offsets.assign(static_cast<std::size_t>(std::max(frame->topology.node_count, 0)) + 1, 0);
    const auto ends = [&](const links::Link& l, auto&& each) {
        each(l.source);
        if (l.target != l.source) each(l.target);
    };
    for (const links::Link& l : all) ends(l, [&](std::int32_t v) { ++offsets[static_cast<std::size_t>(v) + 1]; });
    std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
    frame->node_links.resize(static_cast<std::size_t>(offsets.back()));
    std::vector<std::int32_t> filled(offsets.begin(), offsets.end() - 1);
    for (std::size_t i = 0; i < all.size(); ++i)
        ends(all[i], [&](std::int32_t v) { frame->node_links[static_cast<std::size_t>(filled[static_cast<std::size_t>(v)]++)] = static_cast<std::int32_t>(i); });
    std::shared_ptr<const Keyframe> built = std::move(frame);
    constexpr std::size_t budget_bytes = 64u << 20;
    const auto bytes_of = [](const Keyframe& f) {
        return f.topology.links.size() * sizeof(links::Link) + (f.node_links.size() + f.node_link_offsets.size()) * sizeof(std::int32_t);
    };
    const std::lock_guard lock(keyframes_mutex_);
    if (keyframes_.emplace(k, built).second) {
        keyframe_order_.push_back(k);
        keyframe_bytes_ += bytes_of(*built);
        while (keyframe_bytes_ > budget_bytes && keyframe_order_.size() > 1) {
            const auto old = keyframes_.find(keyframe_order_.front());
            keyframe_bytes_ -= bytes_of(*old->second);
            keyframes_.erase(old);
            keyframe_order_.pop_front();
        }
    }
    return built;
}

double DamagedFabric::next_change_s(double t) const { return timeline_.keyframe_end_s(timeline_.keyframe_index_at(t)); }

std::int64_t DamagedFabric::evaluations() const {
    const std::shared_lock lock(mutex_);
    return static_cast<std::int64_t>(cache_.size()) + uncached_solves_;
}

std::size_t DamagedFabric::cached_solves() const {
    const std::shared_lock lock(mutex_);
    return cache_.size();
}

std::size_t DamagedFabric::cache_bytes() const {
    const std::shared_lock lock(mutex_);
    return cache_bytes_;
}

}  // namespace skyfabric::workloads
