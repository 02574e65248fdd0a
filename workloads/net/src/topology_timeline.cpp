// A run's topologies as keyframes stored by their changes, and sources that replay them.
#include <skyfabric/workloads/topology_timeline.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
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

}  // namespace

TopologySource topology_source(std::span<const links::Topology> series) {
    return [series, i = std::size_t{0}](links::Topology& out) mutable {
        if (i >= series.size()) return false;
        out = series[i++];
        return true;
    };
}

TopologyTimeline::TopologyTimeline(std::int32_t snapshot_every) : snapshot_every_(snapshot_every) {
    if (snapshot_every < 1) throw std::invalid_argument("topology timeline: snapshot_every must be >= 1");
}

TopologyTimeline::StoredLink TopologyTimeline::stored(const links::Link& l) {
    return {l.source, l.target, l.capacity_bps, static_cast<float>(l.latency_s)};
}

links::Link TopologyTimeline::rebuilt(const StoredLink& s) {
    links::Link l;
    l.source = s.source;
    l.target = s.target;
    l.capacity_bps = s.capacity_bps;
    l.latency_s = s.latency_s;
    l.distance_m = l.latency_s * 299792458.0;
    return l;
}

void TopologyTimeline::append(const links::Topology& topology) {
    if (!frames_.empty() && topology.time_s < frames_.back().time_s)
        throw std::invalid_argument("topology timeline: times must not decrease");
    ++appended_;
    if (!frames_.empty() && same_links(last_, topology)) return;
    {
        const std::lock_guard lock(recent_->mutex);  // a kept keyframe stays right, but not its memory
        recent_->kept.clear();
    }
    Frame f;
    std::vector<double> latency_now;  // the latency the rebuilt keyframe will hold, per link
    f.time_s = topology.time_s;
    f.begin = links_.size();
    f.removed_begin = f.removed_end = removed_.size();
    if (!frames_.empty() && topology.node_count == node_count_ &&
        frames_.size() % static_cast<std::size_t>(snapshot_every_) != 0) {
        // The change since the last keyframe: both lists sorted by (source, target).
        latency_now.clear();
        const auto key = [](const links::Link& l) { return std::pair{l.source, l.target}; };
        std::size_t i = 0, j = 0;
        const auto& a = last_.links;
        const auto& b = topology.links;
        while (i < a.size() || j < b.size()) {
            if (j == b.size() || (i < a.size() && key(a[i]) < key(b[j]))) {
                removed_.push_back(key(a[i++]));
            } else if (i == a.size() || key(b[j]) < key(a[i])) {
                latency_now.push_back(b[j].latency_s);
                links_.push_back(stored(b[j++]));
            } else {
                // A capacity change, or a light time 10 % off what is stored (distances in a
                // formation swing by tens of per cent over an orbit), is recorded.
                if (a[i].capacity_bps != b[j].capacity_bps ||
                    std::abs(b[j].latency_s - stored_latency_s_[i]) > 0.1 * stored_latency_s_[i]) {
                    links_.push_back(stored(b[j]));
                    latency_now.push_back(b[j].latency_s);
                } else {
                    latency_now.push_back(stored_latency_s_[i]);
                }
                ++i;
                ++j;
            }
        }
        f.removed_end = removed_.size();
        // A change as large as a copy is stored as one.
        f.snapshot = links_.size() - f.begin + (f.removed_end - f.removed_begin) >= b.size();
        if (f.snapshot) {
            links_.resize(f.begin);
            removed_.resize(f.removed_begin);
            f.removed_end = f.removed_begin;
        }
    } else {
        f.snapshot = true;
    }
    if (f.snapshot) {
        for (const links::Link& l : topology.links) links_.push_back(stored(l));
        latency_now.clear();
        for (const links::Link& l : topology.links) latency_now.push_back(l.latency_s);
    }
    stored_latency_s_.swap(latency_now);
    f.end = links_.size();
    frames_.push_back(f);
    node_count_ = topology.node_count;
    last_ = topology;
}

std::size_t TopologyTimeline::keyframe_index_at(double t) const {
    if (frames_.empty()) throw std::logic_error("topology timeline is empty");
    const auto it = std::upper_bound(frames_.begin(), frames_.end(), t,
                                     [](double x, const Frame& f) { return x < f.time_s; });
    return it == frames_.begin() ? 0 : static_cast<std::size_t>(it - frames_.begin()) - 1;
}

TopologySource TopologyTimeline::source_from(double from_s) const {
    std::size_t k = keyframe_index_at(from_s);
    return [this, k](links::Topology& next) mutable {
        if (k >= frames_.size()) return false;
        next = keyframe(k++);
        return true;
    };
}

links::Topology TopologyTimeline::keyframe(std::size_t k) const { return *kept_keyframe(k); }

std::shared_ptr<const links::Topology> TopologyTimeline::kept_keyframe(std::size_t k) const {
    if (k >= frames_.size()) throw std::out_of_range("topology timeline: no keyframe " + std::to_string(k));
    std::size_t s = k;
    while (!frames_[s].snapshot) --s;
    // The nearest kept keyframe in [s, k]: only the changes after it are left to apply.
    std::shared_ptr<const links::Topology> base;
    std::size_t base_k = 0;
    {
        const std::lock_guard lock(recent_->mutex);
        auto& recent = recent_->kept;
        for (std::size_t i = 0; i < recent.size(); ++i) {
            const Kept& kept = recent[i];
            if (kept.k == k) {
                std::rotate(recent.begin(), recent.begin() + static_cast<std::ptrdiff_t>(i), recent.begin() + static_cast<std::ptrdiff_t>(i) + 1);
                return recent.front().topology;
            }
            if (kept.k >= s && kept.k < k && (!base || kept.k > base_k)) {
                base = kept.topology;
                base_k = kept.k;
            }
        }
    }
    links::Topology t;
    if (base) {
        t = *base;
        apply_changes(t, base_k + 1, k);
    } else {
        t.node_count = node_count_;
        for (std::size_t i = frames_[s].begin; i < frames_[s].end; ++i) t.links.push_back(rebuilt(links_[i]));
        apply_changes(t, s + 1, k);
    }
    auto made = std::make_shared<const links::Topology>(std::move(t));
    const std::lock_guard lock(recent_->mutex);
    recent_->kept.insert(recent_->kept.begin(), Kept{k, made, nullptr});
    if (recent_->kept.size() > recent_keep) recent_->kept.pop_back();
    return made;
}

SharedFrame TopologyTimeline::shared_keyframe(std::size_t k) const {
    SharedFrame f;
    f.topology = kept_keyframe(k);
    {
        const std::lock_guard lock(recent_->mutex);
        for (const Kept& kept : recent_->kept)
            if (kept.k == k && kept.topology == f.topology && kept.network) {
                f.network = kept.network;
                return f;
            }
    }
    f.network = std::make_shared<const Network>(build_network(*f.topology));  // outside the lock
    const std::lock_guard lock(recent_->mutex);
    for (Kept& kept : recent_->kept)
        if (kept.k == k && kept.topology == f.topology) {
            if (kept.network) f.network = kept.network;  // another thread built it first: one copy
            else kept.network = f.network;
        }
    return f;
}

FrameSource TopologyTimeline::frames_from(double from_s) const {
    std::size_t k = keyframe_index_at(from_s);
    return [this, k](SharedFrame& next) mutable {
        if (k >= frames_.size()) return false;
        next = shared_keyframe(k++);
        return true;
    };
}

FrameSource frame_source(TopologySource source) {
    return [source = std::move(source)](SharedFrame& next) mutable {
        links::Topology t;
        if (!source(t)) return false;
        next.network = std::make_shared<const Network>(build_network(t));
        next.topology = std::make_shared<const links::Topology>(std::move(t));
        return true;
    };
}

links::Topology TopologyTimeline::keyframe_from(std::size_t k, const links::Topology& earlier, std::size_t j) const {
    if (k >= frames_.size()) throw std::out_of_range("topology timeline: no keyframe " + std::to_string(k));
    if (j >= k) return keyframe(k);
    for (std::size_t d = j + 1; d <= k; ++d)
        if (frames_[d].snapshot) return keyframe(k);  // a full copy after j: start from it
    links::Topology t = earlier;
    apply_changes(t, j + 1, k);
    return t;
}

void TopologyTimeline::apply_changes(links::Topology& t, std::size_t first, std::size_t k) const {
    t.time_s = frames_[k].time_s;
    const auto key = [](const auto& l) { return std::pair{l.source, l.target}; };
    std::vector<links::Link> next;
    for (std::size_t d = first; d <= k; ++d) {
        const Frame& f = frames_[d];
        // Merge: drop the removed, replace or insert the changed (all sorted by (source, target)).
        next.clear();
        std::size_t r = f.removed_begin, c = f.begin;
        for (const links::Link& l : t.links) {
            while (c < f.end && key(links_[c]) < key(l)) next.push_back(rebuilt(links_[c++]));
            if (r < f.removed_end && removed_[r] == key(l)) {
                ++r;
                continue;
            }
            if (c < f.end && key(links_[c]) == key(l)) {
                next.push_back(rebuilt(links_[c++]));
                continue;
            }
            next.push_back(l);
        }
        while (c < f.end) next.push_back(rebuilt(links_[c++]));
        t.links.swap(next);
    }
}

double TopologyTimeline::keyframe_end_s(std::size_t k) const {
    return k + 1 < frames_.size() ? frames_[k + 1].time_s : std::numeric_limits<double>::infinity();
}

std::size_t TopologyTimeline::memory_bytes() const {
    std::size_t kept = 0;
    {
        const std::lock_guard lock(recent_->mutex);
        for (const Kept& k : recent_->kept) {
            kept += k.topology->links.capacity() * sizeof(links::Link);
            if (k.network) kept += k.network->edge_to.size() * (2 * sizeof(double) + 3 * sizeof(std::int32_t));
        }
    }
    return frames_.capacity() * sizeof(Frame) + links_.capacity() * sizeof(StoredLink) +
           removed_.capacity() * sizeof(removed_[0]) + last_.links.capacity() * sizeof(links::Link) + kept;
}

}  // namespace skyfabric::workloads
