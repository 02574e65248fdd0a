#include <skyfabric/workloads/network.hpp>

#include <algorithm>
#include <limits>
#include <queue>
#include <tuple>

namespace skyfabric::workloads {

namespace {
constexpr double inf = std::numeric_limits<double>::infinity();
}

Network build_network(const links::Topology& topology) {
    Network n;
    n.node_count = topology.node_count;
    const std::size_t m = topology.links.size();
    n.capacity_Bps.resize(2 * m);
    n.latency_s.resize(2 * m);
    n.edge_from.resize(2 * m);
    n.edge_to.resize(2 * m);
    std::vector<std::int32_t> degree(static_cast<std::size_t>(n.node_count) + 1, 0);
    for (std::size_t i = 0; i < m; ++i) {
        const auto& l = topology.links[i];
        const double cap = l.capacity_bps > 0.0 ? bytes_per_s(l.capacity_bps) : 0.0;
        for (int d = 0; d < 2; ++d) {
            const std::size_t e = 2 * i + d;
            n.capacity_Bps[e] = cap;
            n.latency_s[e] = l.latency_s;
            n.edge_from[e] = d == 0 ? l.source : l.target;
            n.edge_to[e] = d == 0 ? l.target : l.source;
            if (cap > 0.0) ++degree[static_cast<std::size_t>(n.edge_from[e]) + 1];
        }
    }
    n.adjacency_offsets.assign(static_cast<std::size_t>(n.node_count) + 1, 0);
    for (std::int32_t v = 0; v < n.node_count; ++v)
        n.adjacency_offsets[v + 1] = n.adjacency_offsets[v] + degree[v + 1];
    n.adjacency_edges.resize(static_cast<std::size_t>(n.adjacency_offsets.back()));
    std::vector<std::int32_t> fill(n.adjacency_offsets.begin(), n.adjacency_offsets.end() - 1);
    for (std::size_t e = 0; e < 2 * m; ++e) {
        if (n.capacity_Bps[e] > 0.0) n.adjacency_edges[fill[n.edge_from[e]]++] = static_cast<std::int32_t>(e);
    }
    return n;
}

namespace {

// Dijkstra with a lexicographic key. Shortest latency: (latency, hops). Widest:
// (−bottleneck, latency). `banned` removes edges (disjoint paths).
// Per-thread labels, reset through the list of nodes a search touched, so one search
// costs what it explores, not O(node_count) (a ring of p ranks routes p short paths).
struct SearchScratch {
    struct Label {
        double a = inf, b = inf;
    };
    std::vector<Label> best;
    std::vector<std::int32_t> via;
    std::vector<char> done;
    std::vector<std::int32_t> touched;
    std::vector<std::tuple<double, double, std::int32_t>> heap;  // a priority queue's storage
    void prepare(std::size_t nn) {
        if (best.size() < nn) {
            best.resize(nn);
            via.resize(nn, -1);
            done.resize(nn, 0);
        }
    }
    void touch(std::int32_t v) {  // before via[v] is first set
        if (via[v] < 0) touched.push_back(v);
    }
    void reset() {
        for (auto v : touched) {
            best[v] = Label{};
            via[v] = -1;
            done[v] = 0;
        }
        touched.clear();
    }
};
thread_local SearchScratch search_scratch;

// Shortest latency between linked nodes, without a search: the one edge s→t is the path
// Dijkstra returns when every other path is longer, which holds when its latency is at
// most the cheapest other edge out of s plus the cheapest other edge into t (any other
// path has at least those two edges; latencies are >= 0 and floating-point sums are
// monotone, so the bound holds as computed; the direct edge also has fewer hops). On a
// ring embedded along links that is nearly every hop. Returns −1 when it cannot tell.
std::int32_t direct_edge_if_shortest(const Network& n, std::int32_t s, std::int32_t t) {
    std::int32_t direct = -1;
    double other_out = inf;
    for (std::int32_t k = n.adjacency_offsets[s]; k < n.adjacency_offsets[s + 1]; ++k) {
        const std::int32_t e = n.adjacency_edges[k];
        if (n.edge_to[e] == t) {
            if (direct >= 0) return -1;  // parallel links: leave the tie rules to the search
            direct = e;
        } else {
            other_out = std::min(other_out, n.latency_s[e]);
        }
    }
    if (direct < 0 || !(n.latency_s[direct] >= 0.0)) return -1;
    double other_in = inf;
    for (std::int32_t k = n.adjacency_offsets[t]; k < n.adjacency_offsets[t + 1]; ++k) {
        const std::int32_t back = n.adjacency_edges[k] ^ 1;  // the reverse edge: into t
        if (n.edge_to[n.adjacency_edges[k]] == s || !(n.capacity_Bps[back] > 0.0)) continue;
        other_in = std::min(other_in, n.latency_s[back]);
    }
    if (!(other_out >= 0.0) || !(other_in >= 0.0)) return -1;
    return n.latency_s[direct] <= other_out + other_in ? direct : -1;
}

// The path to t read off a search's `via` (edges into each node), latency and bottleneck summed
// in path order.
Path path_from(const Network& n, const std::int32_t* via, std::int32_t s, std::int32_t t) {
    Path p;
    p.bottleneck_Bps = inf;
    for (std::int32_t v = t; v != s; v = n.edge_from[via[v]]) p.edges.push_back(via[v]);
    std::reverse(p.edges.begin(), p.edges.end());
    for (auto e : p.edges) {
        p.latency_s += n.latency_s[e];
        p.bottleneck_Bps = std::min(p.bottleneck_Bps, n.capacity_Bps[e]);
    }
    return p;
}

// Dijkstra from s with the policy's labels. Stops when t is settled; t < 0: settles every node
// and copies `via` into *tree. A node's label and via are final once settled, and nodes settle
// in the same order whether or not the search goes on, so the tree holds, for every t, the path
// the search for t alone returns.
std::optional<Path> search(const Network& n, std::int32_t s, std::int32_t t, RoutingPolicy policy,
                           const std::vector<char>* banned, std::vector<std::int32_t>* tree = nullptr) {
    if (s == t) return Path{};
    if (policy == RoutingPolicy::shortest_latency && banned == nullptr && t >= 0) {
        const std::int32_t e = direct_edge_if_shortest(n, s, t);
        if (e >= 0) {
            Path p;
            p.edges.push_back(e);
            p.latency_s = 0.0 + n.latency_s[e];
            p.bottleneck_Bps = std::min(inf, n.capacity_Bps[e]);
            return p;
        }
    }
    const std::size_t nn = static_cast<std::size_t>(n.node_count);
    SearchScratch& sc = search_scratch;
    sc.prepare(nn);
    using Label = SearchScratch::Label;
    auto& best = sc.best;
    auto& via = sc.via;
    auto& done = sc.done;
    sc.touched.push_back(s);
    // A priority queue (same push_heap/pop_heap calls) on reused storage.
    auto& heap = sc.heap;
    heap.clear();
    const auto push = [&heap](double a, double b, std::int32_t v) {
        heap.emplace_back(a, b, v);
        std::push_heap(heap.begin(), heap.end(), std::greater<>{});
    };
    // Widest stores −bottleneck in a so smaller is better; source has bottleneck inf.
    best[s] = policy == RoutingPolicy::widest ? Label{-inf, 0.0} : Label{0.0, 0.0};
    push(best[s].a, best[s].b, s);
    while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), std::greater<>{});
        auto [a, b, v] = heap.back();
        heap.pop_back();
        if (done[v]) continue;
        done[v] = 1;
        if (v == t) break;
        for (std::int32_t k = n.adjacency_offsets[v]; k < n.adjacency_offsets[v + 1]; ++k) {
            const std::int32_t e = n.adjacency_edges[k];
            if (banned && (*banned)[e]) continue;
            const std::int32_t w = n.edge_to[e];
            if (done[w]) continue;
            Label cand;
            if (policy == RoutingPolicy::widest) {
                cand.a = std::max(a, -n.capacity_Bps[e]);
                cand.b = b + n.latency_s[e];
            } else {
                cand.a = a + n.latency_s[e];
                cand.b = b + 1.0;
            }
            if (cand.a < best[w].a || (cand.a == best[w].a && cand.b < best[w].b)) {
                sc.touch(w);
                best[w] = cand;
                via[w] = e;
                push(cand.a, cand.b, w);
            }
        }
    }
    if (t < 0) {
        tree->assign(via.begin(), via.begin() + static_cast<std::ptrdiff_t>(nn));
        sc.reset();
        return std::nullopt;
    }
    if (via[t] < 0) {
        sc.reset();
        return std::nullopt;
    }
    Path p = path_from(n, via.data(), s, t);
    sc.reset();
    return p;
}

}  // namespace

std::optional<Path> route(const Network& network, std::int32_t source, std::int32_t target,
                          RoutingPolicy policy) {
    return search(network, source, target, policy, nullptr);
}

std::vector<Path> route_disjoint(const Network& network, std::int32_t source, std::int32_t target,
                                 RoutingPolicy policy, std::int32_t k) {
    std::vector<Path> paths;
    std::vector<char> banned(network.capacity_Bps.size(), 0);
    for (std::int32_t i = 0; i < std::max(1, k); ++i) {
        auto p = search(network, source, target, policy, &banned);
        if (!p) break;
        if (p->edges.empty()) {  // source == target
            paths.push_back(*p);
            break;
        }
        for (auto e : p->edges) banned[e] = 1;
        paths.push_back(std::move(*p));
    }
    return paths;
}

const std::vector<Path>& RouteCache::get(const Network& network, std::int32_t source,
                                         std::int32_t target, RoutingPolicy policy,
                                         std::int32_t paths) {
    const std::int64_t key = static_cast<std::int64_t>(source) * network.node_count + target;
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    if (seed_) {
        const auto seeded = seed_->cache_.find(key);
        const auto survives = [&](const std::vector<Path>& paths) {
            for (const Path& p : paths)
                for (const auto e : p.edges)
                    if (!(network.capacity_Bps[e] > 0.0)) return false;
            return true;
        };
        if (seeded != seed_->cache_.end() && survives(seeded->second)) {
            std::vector<Path> found = seeded->second;
            for (Path& p : found) {
                if (p.edges.empty()) continue;
                p.bottleneck_Bps = inf;  // as path_from takes it, on this fabric's capacities
                for (const auto e : p.edges) p.bottleneck_Bps = std::min(p.bottleneck_Bps, network.capacity_Bps[e]);
            }
            return cache_.emplace(key, std::move(found)).first->second;
        }
    }
    std::vector<Path> found;
    if (paths <= 1) {
        // A source asked for many targets (an all-to-all) gets one search to every node, its
        // shortest-path tree, instead of one search per target: through a p-port switch each
        // search touches p nodes, so per-target searches cost p³ for an all-to-all.
        const auto n = static_cast<std::size_t>(network.node_count);
        if (lookups_.size() != n) {
            lookups_.assign(n, 0);
            trees_.assign(n, {});
        }
        const std::int32_t asked = ++lookups_[static_cast<std::size_t>(source)];
        if (source != target && asked > tree_after_lookups) {
            auto& tree = trees_[static_cast<std::size_t>(source)];
            if (tree.empty()) {
                // Many sources with many targets each: size the cache once, not by doublings.
                if (!any_tree_) cache_.reserve(std::min<std::size_t>(n * n, std::size_t{1} << 22));
                any_tree_ = true;
                search(network, source, -1, policy, nullptr, &tree);
            }
            if (tree[static_cast<std::size_t>(target)] >= 0)
                found.push_back(path_from(network, tree.data(), source, target));
        } else if (auto p = route(network, source, target, policy)) {
            found.push_back(std::move(*p));
        }
    } else {
        found = route_disjoint(network, source, target, policy, paths);
    }
    return cache_.emplace(key, std::move(found)).first->second;
}

std::vector<double> latency_distances(const Network& n, std::int32_t source) {
    std::vector<double> dist(static_cast<std::size_t>(n.node_count), inf);
    using Item = std::pair<double, std::int32_t>;
    std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
    dist[source] = 0.0;
    heap.emplace(0.0, source);
    while (!heap.empty()) {
        auto [d, v] = heap.top();
        heap.pop();
        if (d > dist[v]) continue;
        for (std::int32_t k = n.adjacency_offsets[v]; k < n.adjacency_offsets[v + 1]; ++k) {
            const std::int32_t e = n.adjacency_edges[k];
            const double nd = d + n.latency_s[e];
            if (nd < dist[n.edge_to[e]]) {
                dist[n.edge_to[e]] = nd;
                heap.emplace(nd, n.edge_to[e]);
            }
        }
    }
    return dist;
}

std::vector<std::int32_t> hop_distances(const Network& n, std::int32_t source) {
    std::vector<std::int32_t> hops(static_cast<std::size_t>(n.node_count), -1);
    std::vector<std::int32_t> queue{source};
    hops[source] = 0;
    for (std::size_t i = 0; i < queue.size(); ++i) {
        const std::int32_t v = queue[i];
        for (std::int32_t k = n.adjacency_offsets[v]; k < n.adjacency_offsets[v + 1]; ++k) {
            const std::int32_t w = n.edge_to[n.adjacency_edges[k]];
            if (hops[w] < 0) {
                hops[w] = hops[v] + 1;
                queue.push_back(w);
            }
        }
    }
    return hops;
}

}  // namespace skyfabric::workloads
