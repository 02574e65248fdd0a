#include <skyfabric/workloads/damaged_fabric.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace skyfabric::workloads {

namespace {

bool same_links(const links::Topology& a, const links::Topology& b) {
    if (a.node_count != b.node_count || a.links.size() != b.links.size()) return false;
    for (std::size_t i = 0; i < a.links.size(); ++i) {
        const links::Link& x = a.links[i];
        const links::Link& y = b.links[i];
        if (x.source != y.source || x.target != y.target || x.capacity_bps != y.capacity_bps) return false;
    }
    return true;
}

template <class T>
void append_bytes(std::string& key, const std::vector<T>& v) {
    const std::uint64_t n = v.size();
    key.append(reinterpret_cast<const char*>(&n), sizeof n);
    if (!v.empty()) key.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

}  // namespace

void TopologyTimeline::append(const links::Topology& topology) {
    if (!keyframes_.empty() && topology.time_s < keyframes_.back().time_s)
        throw std::invalid_argument("topology timeline: times must not decrease");
    ++appended_;
    if (keyframes_.empty() || !same_links(keyframes_.back(), topology)) keyframes_.push_back(topology);
}

std::size_t TopologyTimeline::keyframe_index_at(double t) const {
    if (keyframes_.empty()) throw std::logic_error("topology timeline is empty");
    const auto it = std::upper_bound(keyframes_.begin(), keyframes_.end(), t,
                                     [](double x, const links::Topology& k) { return x < k.time_s; });
    return it == keyframes_.begin() ? 0 : static_cast<std::size_t>(it - keyframes_.begin()) - 1;
}

double TopologyTimeline::keyframe_end_s(std::size_t k) const {
    return k + 1 < keyframes_.size() ? keyframes_[k + 1].time_s : std::numeric_limits<double>::infinity();
}

std::size_t TopologyTimeline::memory_bytes() const {
    std::size_t bytes = keyframes_.capacity() * sizeof(links::Topology);
    for (const auto& k : keyframes_) bytes += k.links.capacity() * sizeof(links::Link);
    return bytes;
}

DamagedFabric::DamagedFabric(const TopologyTimeline& timeline, StepModel model, std::int32_t initial_ranks)
    : timeline_(timeline), model_(std::move(model)), initial_ranks_(initial_ranks) {
    if (timeline_.keyframe_count() == 0) throw std::invalid_argument("damaged fabric: empty topology timeline");
    if (initial_ranks < 1 || initial_ranks > timeline_.keyframe(0).node_count)
        throw std::invalid_argument("damaged fabric: initial ranks must be in 1..node_count");
    if (model_.job.data_parallel != initial_ranks)
        throw std::invalid_argument("damaged fabric: the job's data_parallel must equal the initial ranks");
    undamaged_.ranks.resize(static_cast<std::size_t>(initial_ranks));
    std::iota(undamaged_.ranks.begin(), undamaged_.ranks.end(), 0);
    // One step, on a one-topology series, at full compute (a power limit acts on the fault-free
    // steps, to which the damage's extra time is added).
    model_.options.max_steps = 1;
    model_.options.end_s = -1.0;
    model_.options.record_collectives = false;
    model_.options.compute_done_s = nullptr;
}

DamagedFabric::Solved DamagedFabric::solve(std::size_t k, const FabricDamage& damage) const {
    Solved out;
    if (damage.ranks.empty()) return out;
    links::Topology topology = timeline_.keyframe(k);
    for (links::Link& l : topology.links) {
        const bool node_down = std::binary_search(damage.satellites_down.begin(), damage.satellites_down.end(), l.source) ||
                               std::binary_search(damage.satellites_down.begin(), damage.satellites_down.end(), l.target);
        if (node_down || std::binary_search(damage.links_down.begin(), damage.links_down.end(),
                                            std::pair<std::int32_t, std::int32_t>{l.source, l.target}))
            l.capacity_bps = 0.0;  // kept but not routed over
    }
    TrainingJob job = model_.job;
    const auto ranks = static_cast<std::int32_t>(damage.ranks.size());
    if (ranks != initial_ranks_) {
        job.tokens_per_step *= static_cast<double>(ranks) / static_cast<double>(initial_ranks_);
        job.data_parallel = ranks;
    }
    TrainingOptions options = model_.options;
    options.rank_nodes = damage.ranks;
    options.start_s = topology.time_s;
    const links::Topology series[] = {std::move(topology)};
    const TrainingResult r = simulate_training(job, model_.accelerator, series, options);
    for (const LinkUtilisation& l : r.links)
        if (l.bytes > 0.0) out.used_links.emplace_back(l.source, l.target);
    std::sort(out.used_links.begin(), out.used_links.end());
    if (!r.summary.truncated && !r.steps.empty()) out.step_s = r.steps.front().end_s - r.steps.front().start_s;
    return out;
}

const DamagedFabric::Solved& DamagedFabric::solved(std::size_t k, const FabricDamage& damage) {
    std::string key;
    key.append(reinterpret_cast<const char*>(&k), sizeof k);
    append_bytes(key, damage.links_down);
    append_bytes(key, damage.satellites_down);
    append_bytes(key, damage.ranks);
    {
        const std::shared_lock lock(mutex_);
        if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
    }
    // Solved outside the lock (two threads may solve the same key: same inputs, same answer);
    // unordered_map keeps references to its elements valid across inserts.
    Solved s = solve(k, damage);
    const std::unique_lock lock(mutex_);
    return cache_.emplace(std::move(key), std::move(s)).first->second;
}

double DamagedFabric::step_s(std::size_t k, const FabricDamage& damage) {
    if (damage.links_down.empty()) return solved(k, damage).step_s;
    // A down link that carries none of the step's traffic when only the others are down changes
    // neither the ring nor a route nor a rate: left out, so trials share more solves. Grown to a
    // fixed point: the traffic rerouted around one outage may cross another.
    FabricDamage relevant = damage;
    relevant.links_down.clear();
    std::vector<std::pair<std::int32_t, std::int32_t>> more;
    for (;;) {
        const Solved& now = solved(k, relevant);
        more.clear();
        std::set_intersection(damage.links_down.begin(), damage.links_down.end(), now.used_links.begin(),
                              now.used_links.end(), std::back_inserter(more));
        const std::size_t before = relevant.links_down.size();
        std::vector<std::pair<std::int32_t, std::int32_t>> merged;
        std::set_union(relevant.links_down.begin(), relevant.links_down.end(), more.begin(), more.end(),
                       std::back_inserter(merged));
        relevant.links_down = std::move(merged);
        if (relevant.links_down.size() == before) return now.step_s;
    }
}

double DamagedFabric::extra_step_s(double t, const FabricDamage& damage) {
    const std::size_t k = timeline_.keyframe_index_at(t);
    const double damaged = step_s(k, damage);
    if (!std::isfinite(damaged)) return damaged;
    return damaged - solved(k, undamaged_).step_s;
}

bool DamagedFabric::outage_link(std::int32_t satellite, double t, double mark,
                                std::pair<std::int32_t, std::int32_t>& link) const {
    const links::Topology& topology = timeline_.keyframe(timeline_.keyframe_index_at(t));
    std::vector<const links::Link*> own;
    for (const links::Link& l : topology.links)
        if ((l.source == satellite || l.target == satellite) && l.capacity_bps > 0.0) own.push_back(&l);
    if (own.empty()) return false;
    const auto pick = std::min(own.size() - 1, static_cast<std::size_t>(mark * static_cast<double>(own.size())));
    link = {own[pick]->source, own[pick]->target};
    return true;
}

double DamagedFabric::next_change_s(double t) const { return timeline_.keyframe_end_s(timeline_.keyframe_index_at(t)); }

std::int64_t DamagedFabric::evaluations() const {
    const std::shared_lock lock(mutex_);
    return static_cast<std::int64_t>(cache_.size());
}

}  // namespace skyfabric::workloads
