#include <skyfabric/workloads/route_store.hpp>

#include <array>
#include <cstring>
#include <stdexcept>

namespace skyfabric::workloads {

namespace {

// splitmix64's finaliser: every input bit reaches every output bit.
std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

struct TwoLanes {
    std::uint64_t a = 0x243f6a8885a308d3ull, b = 0x13198a2e03707344ull;
    std::uint64_t n = 0;
    void word(std::uint64_t w) {
        ++n;
        a = mix(a ^ w) + n;
        b = mix(b + (w ^ 0xa4093822299f31d0ull)) ^ (n * 0x9e3779b97f4a7c15ull);
    }
    // A long array in four interleaved streams, each with its own two lanes, folded in at the end:
    // the streams' chains of multiplies run side by side (one chain over a 64-cluster network's
    // edges was a fifth of the run).
    template <class T>
    void words(const std::vector<T>& v) {
        word(v.size());
        std::array<TwoLanes, 4> streams;
        for (std::size_t s = 0; s < streams.size(); ++s) streams[s].word(0x5bd1e995ull + s);
        std::size_t i = 0;
        for (; i + 4 <= v.size(); i += 4)
            for (std::size_t s = 0; s < 4; ++s) streams[s].word(bits(v[i + s]));
        for (; i < v.size(); ++i) streams[0].word(bits(v[i]));
        for (const TwoLanes& s : streams) {
            word(s.a);
            word(s.b);
        }
    }
    template <class T>
    static std::uint64_t bits(const T& x) {
        std::uint64_t w = 0;
        static_assert(sizeof(T) <= sizeof w);
        std::memcpy(&w, &x, sizeof x);
        return w;
    }
};

}  // namespace

RouteStore::Fingerprint RouteStore::fingerprint(const Network& network, RoutingPolicy policy, std::int32_t paths) {
    TwoLanes h;
    h.word(static_cast<std::uint64_t>(policy));
    h.word(static_cast<std::uint64_t>(static_cast<std::uint32_t>(paths)));
    h.word(static_cast<std::uint64_t>(static_cast<std::uint32_t>(network.node_count)));
    h.words(network.edge_from);
    h.words(network.edge_to);
    h.words(network.capacity_Bps);
    h.words(network.latency_s);
    return {h.a, h.b};
}

std::optional<RouteStore::Fingerprint> RouteStore::known_fingerprint(const Network& network, RoutingPolicy policy,
                                                                     std::int32_t paths, const std::shared_ptr<const Network>& shared) {
    if (shared)  // the very object, alive (its address not reused): equal content, not compared
        for (auto it = known_.begin(); it != known_.end(); ++it)
            if (it->policy == policy && it->paths == paths && it->object.lock() == shared) {
                known_.splice(known_.begin(), known_, it);
                return known_.front().fingerprint;
            }
    for (auto it = known_.begin(); it != known_.end(); ++it) {
        const Known& k = *it;
        if (k.policy == policy && k.paths == paths && k.network.node_count == network.node_count &&
            k.network.edge_to.size() == network.edge_to.size() && k.network.latency_s == network.latency_s &&
            k.network.capacity_Bps == network.capacity_Bps && k.network.edge_from == network.edge_from &&
            k.network.edge_to == network.edge_to) {
            if (shared) it->object = shared;  // the next ask with this object skips the comparison
            known_.splice(known_.begin(), known_, it);
            return known_.front().fingerprint;
        }
    }
    return std::nullopt;
}

void RouteStore::remember(const Network& network, RoutingPolicy policy, std::int32_t paths, Fingerprint f,
                          const std::shared_ptr<const Network>& shared) {
    Known k;
    k.object = shared;
    k.network.node_count = network.node_count;
    k.network.capacity_Bps = network.capacity_Bps;
    k.network.latency_s = network.latency_s;
    k.network.edge_from = network.edge_from;
    k.network.edge_to = network.edge_to;
    k.policy = policy;
    k.paths = paths;
    k.fingerprint = f;
    known_.push_front(std::move(k));
    if (known_.size() > known_keep) known_.pop_back();
}

std::shared_ptr<RouteTable> RouteStore::table_for(const Network& network, RoutingPolicy policy, std::int32_t paths,
                                                  const std::shared_ptr<const Network>& shared) {
    if (shared && shared.get() != &network) throw std::invalid_argument("RouteStore::table_for: shared is another network");
    std::unique_lock lock(mutex_);
    std::optional<Fingerprint> known = known_fingerprint(network, policy, paths, shared);
    if (!known) {
        lock.unlock();  // hashed outside the lock, as before
        known = fingerprint(network, policy, paths);
        lock.lock();
        remember(network, policy, paths, *known, shared);
    }
    const Fingerprint key = *known;
    std::shared_ptr<RouteTable> table;
    if (const auto it = entries_.find(key); it != entries_.end()) {
        recent_.splice(recent_.begin(), recent_, it->second.recent);
        table = it->second.table;
    } else {
        recent_.push_front(key);
        table = std::make_shared<RouteTable>(/*shared_while_growing=*/true, regions_, model_);
        entries_.emplace(key, Entry{table, recent_.begin()});
    }
    drop_past_budget();
    return table;
}

void RouteStore::drop_past_budget() {
    // Tables fill after they are handed out, so their bytes are summed at each ask (an engine asks
    // once per topology). The one just asked for is kept whatever it holds.
    std::size_t total = 0;
    for (const auto& [key, entry] : entries_) total += entry.table->bytes();
    while (total > budget_bytes_ && recent_.size() > 1) {
        const auto it = entries_.find(recent_.back());
        total -= it->second.table->bytes();
        entries_.erase(it);
        recent_.pop_back();
    }
}

std::size_t RouteStore::tables() const {
    const std::lock_guard lock(mutex_);
    return entries_.size();
}

std::size_t RouteStore::bytes() const {
    const std::lock_guard lock(mutex_);
    std::size_t total = 0;
    for (const auto& [key, entry] : entries_) total += entry.table->bytes();
    return total;
}

}  // namespace skyfabric::workloads
