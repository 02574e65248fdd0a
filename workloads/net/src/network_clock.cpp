#include <skyfabric/workloads/network_clock.hpp>

#include <skyfabric/workloads/repeated_sum.hpp>

#include <algorithm>
#include <limits>
#include <numeric>

namespace skyfabric::workloads {

namespace {

std::int64_t link_key(std::int32_t a, std::int32_t b) {
    return (static_cast<std::int64_t>(a) << 32) | static_cast<std::uint32_t>(b);
}

}  // namespace

NetworkClock::NetworkClock(TopologySource source)
    : NetworkClock(source ? frame_source(std::move(source)) : FrameSource{}) {}

NetworkClock::NetworkClock(FrameSource source) : source_(std::move(source)) {
    if (!source_ || !source_(current_)) throw std::invalid_argument("NetworkClock: empty topology series");
    epoch_link_bytes_.assign(current_.topology->links.size(), 0.0);
    accounting_start_s_ = current_.topology->time_s;
    load_next();
}

void NetworkClock::load_next() {
    has_next_ = source_(next_);
    next_change_s_ = has_next_ ? next_.topology->time_s : std::numeric_limits<double>::infinity();
}

void NetworkClock::advance_to(double time_s) {
    while (has_next_ && next_.topology->time_s <= time_s) {
        fold_epoch(next_.topology->time_s);
        std::swap(current_, next_);
        ++epoch_;
        epoch_link_bytes_.assign(current_.topology->links.size(), 0.0);
        load_next();
    }
}

void NetworkClock::add_edge_bytes_repeated(std::span<const std::pair<std::int32_t, double>> edge_bytes,
                                           std::int64_t times) {
    accumulate_repeated(edge_bytes, times, 1, epoch_link_bytes_, repeat_scratch_);
}

void NetworkClock::append_epoch_series(double end_s) const {
    if (!epoch_series_) return;
    const double begin = std::max(current_.topology->time_s, accounting_start_s_);
    const double span = end_s - begin;
    if (span <= 0.0) return;
    for (std::size_t i = 0; i < current_.topology->links.size(); ++i) {
        const auto& l = current_.topology->links[i];
        if (epoch_link_bytes_[i] <= 0.0) continue;
        const double capacity_bytes = 2.0 * bytes_per_s(l.capacity_bps) * span;
        epoch_series_->push_back({begin, end_s, l.source, l.target, l.capacity_bps,
                                  capacity_bytes > 0.0 ? epoch_link_bytes_[i] / capacity_bytes : 0.0});
    }
}

void NetworkClock::merge_open_epoch(double end_s, std::vector<LinkUtilisation>& out) const {
    const double begin = std::max(current_.topology->time_s, accounting_start_s_);
    const double span = end_s - begin;
    const auto& links = current_.topology->links;
    const auto key = [&](std::size_t i) { return link_key(links[i].source, links[i].target); };
    // The epoch's links in (source, target) order; a link listed twice adds in list order.
    auto& order = order_scratch_;
    order.resize(links.size());
    std::iota(order.begin(), order.end(), 0u);
    if (!std::is_sorted(order.begin(), order.end(), [&](auto a, auto b) { return key(a) < key(b); }))
        std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return key(a) < key(b); });
    out.clear();
    out.reserve(totals_.size() + links.size());
    auto old = totals_.begin();
    for (std::size_t j = 0; j < order.size();) {
        const std::int64_t k = key(order[j]);
        for (; old != totals_.end() && link_key(old->source, old->target) < k; ++old) out.push_back(*old);
        LinkUtilisation t;
        if (old != totals_.end() && link_key(old->source, old->target) == k) t = *old++;
        for (; j < order.size() && key(order[j]) == k; ++j) {
            const auto& l = links[order[j]];
            t.source = l.source;
            t.target = l.target;
            t.bytes += epoch_link_bytes_[order[j]];
            if (span > 0.0 && l.capacity_bps > 0.0) t.capacity_bytes += 2.0 * bytes_per_s(l.capacity_bps) * span;
        }
        out.push_back(t);
    }
    out.insert(out.end(), old, totals_.end());
}

void NetworkClock::merge_open_bytes(std::vector<LinkUtilisation>& out) const {
    const auto& links = current_.topology->links;
    const auto key = [&](std::size_t i) { return link_key(links[i].source, links[i].target); };
    auto& order = order_scratch_;  // the epoch's links that carried bytes, in (source, target) order
    order.clear();
    for (std::size_t i = 0; i < links.size(); ++i)
        if (epoch_link_bytes_[i] != 0.0) order.push_back(static_cast<std::uint32_t>(i));
    if (!std::is_sorted(order.begin(), order.end(), [&](auto a, auto b) { return key(a) < key(b); }))
        std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return key(a) < key(b); });
    out.clear();
    out.reserve(totals_.size() + order.size());
    auto old = totals_.begin();
    for (std::size_t j = 0; j < order.size();) {  // as merge_open_epoch, bytes only
        const std::int64_t k = key(order[j]);
        for (; old != totals_.end() && link_key(old->source, old->target) < k; ++old) out.push_back(*old);
        LinkUtilisation t;
        if (old != totals_.end() && link_key(old->source, old->target) == k) t = *old++;
        for (; j < order.size() && key(order[j]) == k; ++j) {
            t.source = links[order[j]].source;
            t.target = links[order[j]].target;
            t.bytes += epoch_link_bytes_[order[j]];
        }
        out.push_back(t);
    }
    out.insert(out.end(), old, totals_.end());
}

void NetworkClock::fold_epoch(double end_s) {
    append_epoch_series(end_s);
    if (bytes_only_) merge_open_bytes(merge_scratch_);
    else merge_open_epoch(end_s, merge_scratch_);
    std::swap(totals_, merge_scratch_);
}

std::vector<LinkUtilisation> NetworkClock::carried_links() const {
    std::vector<LinkUtilisation> out;
    merge_open_bytes(out);
    return out;
}

void NetworkClock::record_open_epoch(double end_s) const { append_epoch_series(end_s); }

std::vector<LinkUtilisation> NetworkClock::link_utilisation(double end_s) const {
    std::vector<LinkUtilisation> out;
    merge_open_epoch(end_s, out);  // the open epoch folded into a copy: the clock is unchanged
    for (auto& t : out) t.utilisation = t.capacity_bytes > 0.0 ? t.bytes / t.capacity_bytes : 0.0;
    return out;
}

}  // namespace skyfabric::workloads
