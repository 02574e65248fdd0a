#include <skyfabric/workloads/network.hpp>

#include <skyfabric/workloads/two_level_routing.hpp>

#include <skyfabric/workloads/backend.hpp>
#include <skyfabric/workloads/idle_helpers.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <mutex>
#include <queue>
#include <unordered_map>

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
    // The frontier: each node at most once, ordered by its current label, then its id — the
    // order in which a heap of (label, node) entries with stale ones skipped settles nodes, so
    // the same paths, with one entry per node to move instead of one per improvement (4 children
    // per entry: half the depth of a binary heap).
    std::vector<std::int32_t> heap;
    std::vector<std::int32_t> slot;  // per node: its index in heap, −1 when not in it
    // A guided search's frontier orders by key = label + bound (the guide's, per node once touched).
    std::vector<double> key, bound;
    void prepare(std::size_t nn) {
        if (best.size() < nn) {
            best.resize(nn);
            via.resize(nn, -1);
            done.resize(nn, 0);
            slot.resize(nn, -1);
            key.resize(nn, inf);
            bound.resize(nn, 0.0);
        }
    }
    void touch(std::int32_t v) {  // before via[v] is first set
        if (via[v] < 0) touched.push_back(v);
    }
    template <bool by_key = false>
    bool before(std::int32_t u, std::int32_t v) const {
        if constexpr (by_key) {
            if (key[u] < key[v]) return true;
            if (key[v] < key[u]) return false;
            return u < v;
        }
        const Label& x = best[u];
        const Label& y = best[v];
        if (x.a < y.a) return true;  // as (a, b, node) tuples compare
        if (y.a < x.a) return false;
        if (x.b < y.b) return true;
        if (y.b < x.b) return false;
        return u < v;
    }
    void place(std::size_t i, std::int32_t v) {
        heap[i] = v;
        slot[v] = static_cast<std::int32_t>(i);
    }
    template <bool by_key = false>
    void sift_up(std::size_t i) {
        const std::int32_t v = heap[i];
        while (i > 0) {
            const std::size_t parent = (i - 1) / 4;
            if (!before<by_key>(v, heap[parent])) break;
            place(i, heap[parent]);
            i = parent;
        }
        place(i, v);
    }
    // v's label just improved: into the frontier, or up it.
    template <bool by_key = false>
    void lower(std::int32_t v) {
        if (slot[v] < 0) {
            heap.push_back(v);
            sift_up<by_key>(heap.size() - 1);
        } else {
            sift_up<by_key>(static_cast<std::size_t>(slot[v]));
        }
    }
    template <bool by_key = false>
    std::int32_t pop() {
        const std::int32_t top = heap.front();
        slot[top] = -1;
        const std::int32_t last = heap.back();
        heap.pop_back();
        const std::size_t n = heap.size();
        if (n > 0) {
            std::size_t i = 0;
            for (;;) {
                const std::size_t first = 4 * i + 1;
                if (first >= n) break;
                std::size_t least = first;
                const std::size_t end = std::min(first + 4, n);
                for (std::size_t c = first + 1; c < end; ++c)
                    if (before<by_key>(heap[c], heap[least])) least = c;
                if (!before<by_key>(heap[least], last)) break;
                place(i, heap[least]);
                i = least;
            }
            place(i, last);
        }
        return top;
    }
    void reset() {
        for (auto v : touched) {
            best[v] = Label{};
            via[v] = -1;
            done[v] = 0;
            slot[v] = -1;
            key[v] = inf;
        }
        touched.clear();
        heap.clear();
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
// Into p, reusing its storage.
void path_into(Path& p, const Network& n, const std::int32_t* via, std::int32_t s, std::int32_t t) {
    p.edges.clear();
    p.latency_s = 0.0;
    p.bottleneck_Bps = inf;
    for (std::int32_t v = t; v != s; v = n.edge_from[via[v]]) p.edges.push_back(via[v]);
    std::reverse(p.edges.begin(), p.edges.end());
    for (auto e : p.edges) {
        p.latency_s += n.latency_s[e];
        p.bottleneck_Bps = std::min(p.bottleneck_Bps, n.capacity_Bps[e]);
    }
}

Path path_from(const Network& n, const std::int32_t* via, std::int32_t s, std::int32_t t) {
    Path p;
    path_into(p, n, via, s, t);
    return p;
}

// The guide's bounds towards one target, on the network searched less its banned edges, scaled
// down by the margin (SearchGuide).
class Bounds {
public:
    static constexpr double scale = 1.0 - 0x1p-16;
    Bounds(const SearchGuide& g, const Network& n, std::int32_t t, const char* banned)
        : region_of_(g.region_of.data()), region_(g.region_of[t]) {
        const auto nn = static_cast<std::size_t>(g.node_count);
        const auto row = [&](std::int32_t r) { return g.distance.data() + static_cast<std::size_t>(r) * nn; };
        for (auto r = g.border_offsets[region_]; r < g.border_offsets[region_ + 1]; ++r, ++landmarks_) {
            landmark_[landmarks_] = row(r);
            landmark_to_target_[landmarks_] = row(r)[t];
        }
        // The links into t's region that this search may take: from u, then l + d(w, t) to go.
        for (auto i = g.entry_offsets[region_]; i < g.entry_offsets[region_ + 1]; ++i) {
            const std::int32_t e = g.entries[static_cast<std::size_t>(i)];
            if ((banned && banned[e]) || !(n.capacity_Bps[e] > 0.0)) continue;
            entry_from_[entries_] = row(g.row_of[n.edge_from[e]]);
            entry_to_go_[entries_++] = n.latency_s[e] + row(g.row_of[n.edge_to[e]])[t];
        }
    }
    double operator()(std::int32_t v) const {
        double h = 0.0;
        if (region_of_[v] != region_) {  // by one of the links into t's region
            h = inf;
            for (std::size_t i = 0; i < entries_; ++i) h = std::min(h, entry_from_[i][v] + entry_to_go_[i]);
        } else {  // landmarks: the region's border nodes
            for (std::size_t i = 0; i < landmarks_; ++i) {
                const double d = landmark_[i][v] - landmark_to_target_[i];
                if (std::isfinite(d)) h = std::max(h, std::abs(d));
            }
        }
        // No way in: t cannot be reached from v (0 is a bound anywhere, and consistent in a part
        // of the network t cannot be reached from).
        return std::isfinite(h) ? h * scale : 0.0;
    }

private:
    const std::int32_t* region_of_;
    std::int32_t region_;
    // Only the first landmarks_ and entries_ are set and read: left unfilled, not zeroed on every search.
    std::size_t landmarks_ = 0, entries_ = 0;
    std::array<const double*, max_border_nodes> landmark_;
    std::array<double, max_border_nodes> landmark_to_target_;
    std::array<const double*, max_entries> entry_from_;
    std::array<double, max_entries> entry_to_go_;
};

// The search's loop: nodes settled in label order until t (t < 0: every node). One copy per
// policy, per whether edges are banned and per whether it is guided, with the arrays read through
// plain pointers, so the loop tests none of them per edge.
//
// Guided (shortest latency towards t >= 0), it is A*: the frontier ordered by label + bound. The
// bounds are consistent with a margin that rounding cannot eat (SearchGuide), so a node's key is
// strictly above those of the nodes on its shortest paths: it settles after every node that can
// give it its label, with that exact label. Dijkstra keeps, for a node, the first of equal ways in
// (hops make every way's label strictly above its predecessor's, so all of them reach it before it
// settles): the way from the predecessor first in (label, node) order, its first such edge. A tie
// is broken that way here, so every node's via, and every path, is Dijkstra's.
template <bool widest, bool with_banned, bool guided = false>
void settle(const Network& n, SearchScratch& sc, std::int32_t t, const char* banned, const Bounds* bounds = nullptr) {
    static_assert(!(guided && widest));
    using Label = SearchScratch::Label;
    Label* const best = sc.best.data();
    std::int32_t* const via = sc.via.data();
    char* const done = sc.done.data();
    double* const key = sc.key.data();
    double* const bound = sc.bound.data();
    const std::int32_t* const offsets = n.adjacency_offsets.data();
    const std::int32_t* const adjacent = n.adjacency_edges.data();
    const std::int32_t* const edge_to = n.edge_to.data();
    const std::int32_t* const edge_from = n.edge_from.data();
    const double* const latency = n.latency_s.data();
    const double* const capacity = n.capacity_Bps.data();
    while (!sc.heap.empty()) {
        const std::int32_t v = sc.pop<guided>();
        const double a = best[v].a, b = best[v].b;
        done[v] = 1;
        if (v == t) break;
        for (std::int32_t k = offsets[v]; k < offsets[v + 1]; ++k) {
            const std::int32_t e = adjacent[k];
            if constexpr (with_banned) {
                if (banned[e]) continue;
            }
            const std::int32_t w = edge_to[e];
            if (done[w]) continue;
            Label cand;
            if constexpr (widest) {
                cand.a = std::max(a, -capacity[e]);
                cand.b = b + latency[e];
            } else {
                cand.a = a + latency[e];
                cand.b = b + 1.0;
            }
            if (cand.a < best[w].a || (cand.a == best[w].a && cand.b < best[w].b)) {
                if constexpr (guided) {
                    if (via[w] < 0) bound[w] = (*bounds)(w);
                }
                sc.touch(w);
                best[w] = cand;
                via[w] = e;
                // A dead end (w's one usable link is this one: a switch port) settles here: no
                // other edge leads into it (build_network gives both directions of a link one
                // capacity, so its usable in-edges are its out-edges reversed) and settling it
                // relaxes only v, settled already. The other nodes settle in the same order, as
                // the frontier orders by (label, node) whatever else it holds; a p-port switch's
                // search no longer queues its p ports.
                if (offsets[w + 1] - offsets[w] == 1 && adjacent[offsets[w]] == (e ^ 1)) {
                    done[w] = 1;
                    if (w == t) return;
                    continue;
                }
                if constexpr (guided) key[w] = cand.a + bound[w];
                sc.lower<guided>(w);
            } else if constexpr (guided) {
                // An equal way in from a node Dijkstra settles before the one kept so far.
                if (cand.a == best[w].a && cand.b == best[w].b && sc.before(v, edge_from[via[w]])) via[w] = e;
            }
        }
    }
}

// Dijkstra from s with the policy's labels. Stops when t is settled; t < 0: settles every node
// and copies `via` into *tree. A node's label and via are final once settled, and nodes settle
// in the same order whether or not the search goes on, so the tree holds, for every t, the path
// the search for t alone returns.
std::optional<Path> search(const Network& n, std::int32_t s, std::int32_t t, RoutingPolicy policy,
                           const std::vector<char>* banned, std::vector<std::int32_t>* tree = nullptr,
                           const SearchGuide* guide = nullptr) {
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
    sc.touched.push_back(s);
    // Widest stores −bottleneck in a so smaller is better; source has bottleneck inf.
    best[s] = policy == RoutingPolicy::widest ? Label{-inf, 0.0} : Label{0.0, 0.0};
    const bool guided = guide && policy == RoutingPolicy::shortest_latency && t >= 0 &&
                        guide->node_count == n.node_count && guide->edge_count == n.edge_to.size();
    if (guided) {
        const Bounds bounds(*guide, n, t, banned ? banned->data() : nullptr);
        sc.key[s] = 0.0;
        sc.lower<true>(s);
        if (banned) settle<false, true, true>(n, sc, t, banned->data(), &bounds);
        else settle<false, false, true>(n, sc, t, nullptr, &bounds);
    } else {
        sc.lower(s);
        if (policy == RoutingPolicy::widest) {
            if (banned) settle<true, true>(n, sc, t, banned->data());
            else settle<true, false>(n, sc, t, nullptr);
        } else {
            if (banned) settle<false, true>(n, sc, t, banned->data());
            else settle<false, false>(n, sc, t, nullptr);
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

// A (source, target) pair's key in a RouteTable.
std::int64_t pair_key(const Network& network, std::int32_t source, std::int32_t target) {
    return static_cast<std::int64_t>(source) * network.node_count + target;
}

}  // namespace

std::optional<Path> route(const Network& network, std::int32_t source, std::int32_t target,
                          RoutingPolicy policy) {
    return search(network, source, target, policy, nullptr);
}

namespace {

// route_disjoint going on from `paths`, the first ones it would find (their edges banned from the rest).
std::vector<Path> disjoint_after(const Network& network, std::int32_t source, std::int32_t target,
                                 RoutingPolicy policy, std::int32_t k, std::vector<Path> paths,
                                 const SearchGuide* guide) {
    std::vector<char> banned(network.capacity_Bps.size(), 0);
    for (const Path& p : paths)
        for (auto e : p.edges) banned[e] = 1;
    for (auto i = static_cast<std::int32_t>(paths.size()); i < std::max(1, k); ++i) {
        auto p = search(network, source, target, policy, &banned, nullptr, guide);
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

}  // namespace

std::vector<Path> route_disjoint(const Network& network, std::int32_t source, std::int32_t target,
                                 RoutingPolicy policy, std::int32_t k, const SearchGuide* guide) {
    return disjoint_after(network, source, target, policy, k, {}, guide);
}

std::optional<SearchGuide> build_search_guide(const Network& n, std::span<const std::int32_t> region_of) {
    const auto nn = static_cast<std::size_t>(n.node_count);
    SearchGuide g;
    g.node_count = n.node_count;
    g.edge_count = n.edge_to.size();
    // Dense region indices in order of first appearance; unlabelled nodes alone in theirs.
    g.region_of.assign(nn, -1);
    std::unordered_map<std::int32_t, std::int32_t> dense;
    std::int32_t regions = 0;
    for (std::size_t v = 0; v < nn; ++v) {
        const std::int32_t label = v < region_of.size() ? region_of[v] : -1;
        if (label < 0) {
            g.region_of[v] = regions++;
            continue;
        }
        const auto [it, added] = dense.try_emplace(label, regions);
        if (added) ++regions;
        g.region_of[v] = it->second;
    }
    if (regions < 2) return std::nullopt;
    // The margin: 2^−16 of the shortest usable edge must dwarf the rounding of sums up to every
    // edge's latency together (a few ulps each, 2^−52): 2^−16 l_min > 2^−40 total leaves 2^12 ulps.
    double shortest = inf, total = 0.0;
    for (const std::int32_t e : n.adjacency_edges) {
        shortest = std::min(shortest, n.latency_s[e]);
        total += n.latency_s[e];
    }
    if (!(shortest > 0.0) || !std::isfinite(total) || !(0x1p-16 * shortest > 0x1p-40 * total)) return std::nullopt;
    std::vector<std::vector<std::int32_t>> border(static_cast<std::size_t>(regions));
    for (std::int32_t v = 0; v < n.node_count; ++v)
        for (std::int32_t k = n.adjacency_offsets[v]; k < n.adjacency_offsets[v + 1]; ++k)
            if (g.region_of[n.edge_to[n.adjacency_edges[k]]] != g.region_of[v]) {
                border[g.region_of[v]].push_back(v);
                break;
            }
    g.border_offsets.push_back(0);
    for (const auto& b : border) {
        if (b.size() > static_cast<std::size_t>(max_border_nodes)) return std::nullopt;
        g.border_offsets.push_back(g.border_offsets.back() + static_cast<std::int32_t>(b.size()));
    }
    if (static_cast<std::size_t>(g.border_offsets.back()) * nn > max_guide_distances) return std::nullopt;
    g.row_of.assign(nn, -1);
    std::int32_t row = 0;
    for (const auto& b : border)
        for (const std::int32_t v : b) g.row_of[static_cast<std::size_t>(v)] = row++;
    std::vector<std::vector<std::int32_t>> into(static_cast<std::size_t>(regions));
    for (const std::int32_t e : n.adjacency_edges)
        if (g.region_of[n.edge_from[e]] != g.region_of[n.edge_to[e]]) {
            if (g.row_of[n.edge_from[e]] < 0 || g.row_of[n.edge_to[e]] < 0) return std::nullopt;  // a one-way link
            into[g.region_of[n.edge_to[e]]].push_back(e);
        }
    g.entry_offsets.push_back(0);
    for (auto& edges : into) {
        if (edges.size() > static_cast<std::size_t>(max_entries)) return std::nullopt;
        std::sort(edges.begin(), edges.end());
        g.entries.insert(g.entries.end(), edges.begin(), edges.end());
        g.entry_offsets.push_back(static_cast<std::int32_t>(g.entries.size()));
    }
    g.distance.reserve(static_cast<std::size_t>(g.border_offsets.back()) * nn);
    for (const auto& b : border)
        for (const std::int32_t v : b) {
            const auto d = latency_distances(n, v);
            g.distance.insert(g.distance.end(), d.begin(), d.end());
        }
    return g;
}

const SearchGuide* RouteTable::guide(const Network* network) const {
    if (!regions_ || model_ != RoutingModel::flat) return nullptr;
    if (network) {
        std::call_once(guide_once_, [&] {
            guide_ = build_search_guide(*network, *regions_);
            if (guide_) bytes_.fetch_add(guide_->bytes(), std::memory_order_relaxed);
            guide_tried_.store(true, std::memory_order_release);
        });
    } else if (!guide_tried_.load(std::memory_order_acquire)) {
        return nullptr;
    }
    return guide_ ? &*guide_ : nullptr;
}

const ClusterOverlay* RouteTable::overlay(const Network& network) const {
    if (!regions_ || model_ != RoutingModel::two_level) return nullptr;
    std::call_once(overlay_once_, [&] {
        if (auto o = build_cluster_overlay(network, *regions_)) {
            bytes_.fetch_add(o->bytes(), std::memory_order_relaxed);
            overlay_ = std::make_shared<const ClusterOverlay>(std::move(*o));
        }
    });
    return overlay_.get();
}

std::vector<Path> RouteTable::search(const Network& network, std::int32_t source, std::int32_t target, RoutingPolicy policy,
                                     std::int32_t paths) const {
    if (policy == RoutingPolicy::shortest_latency)
        if (const ClusterOverlay* o = overlay(network)) return route_two_level(network, *o, source, target, paths);
    return route_disjoint(network, source, target, policy, paths, guide(&network));
}

const std::vector<Path>& RouteCache::get(const Network& network, std::int32_t source,
                                         std::int32_t target, RoutingPolicy policy,
                                         std::int32_t paths) {
    const std::int64_t key = pair_key(network, source, target);
    if (const auto* kept = table_->find(key)) return *kept;
    // Serves the path to target off a source's tree, in the scratch slot (not kept per pair).
    const auto from_tree = [&](const std::vector<std::int32_t>& tree) -> const std::vector<Path>& {
        if (tree[static_cast<std::size_t>(target)] < 0) {
            scratch_.clear();
        } else {
            scratch_.resize(1);
            path_into(scratch_[0], network, tree.data(), source, target);
        }
        return scratch_;
    };
    if (seed_) {
        const auto* seeded = seed_->table_->find(key);
        if (!seeded && paths > 1 && seed_network_ && seed_->table_->locked())
            seeded = &seed_->table_->add(key, seed_->table_->search(*seed_network_, source, target, policy, paths));
        const auto intact = [&](const Path& p) {
            for (const auto e : p.edges)
                if (!(network.capacity_Bps[e] > 0.0)) return false;
            return true;
        };
        const auto survives = [&](const std::vector<Path>& kept) { return std::all_of(kept.begin(), kept.end(), intact); };
        // Served from the seed itself, not copied: damage only takes capacities to zero, so a
        // surviving path's edges keep the capacities, and the bottleneck, the seed found them with.
        if (seeded && survives(*seeded)) return *seeded;
        // Disjoint paths are found one after another, each with the earlier ones' edges banned: the
        // seed's first paths that survive are the first ones found here too (as a whole set survives,
        // on the fabric less the earlier paths' edges), and only the rest are searched again.
        // (Two-level: searched again whole below; the same paths but for ties.)
        if (seeded && paths > 1 && !seeded->empty() && intact(seeded->front()) && !table_->overlay(network)) {
            std::vector<Path> kept;
            for (const Path& p : *seeded) {
                if (!intact(p)) break;
                kept.push_back(p);
            }
            // The seed's guide serves this damaged copy of its network (SearchGuide).
            return table_->add(key, disjoint_after(network, source, target, policy, paths, std::move(kept),
                                                   seed_->table_->guide(seed_network_.get())));
        }
        // A pair the seed served off its source's tree (the same path it returned there; the
        // fabrics share latencies, so path_into sums the same latency): taken if it survives.
        const auto s = static_cast<std::size_t>(source);
        if (paths <= 1 && source != target && s < seed_->trees_.size() && !seed_->trees_[s].empty() &&
            seed_->trees_[s][static_cast<std::size_t>(target)] >= 0) {
            const auto& found = from_tree(seed_->trees_[s]);
            if (survives(found)) return found;
        }
    }
    std::vector<Path> found;
    if (policy == RoutingPolicy::shortest_latency && table_->overlay(network)) {
        found = table_->search(network, source, target, policy, paths);
    } else if (paths <= 1) {
        // A source asked for many targets (an all-to-all) gets one search to every node, its
        // shortest-path tree, instead of one search per target: through a p-port switch each
        // search touches p nodes, so per-target searches cost p³ for an all-to-all. Its paths
        // are read off the tree on each call rather than stored per pair: an all-to-all asks
        // each pair once per collective, and p² stored paths were most of its memory (3 GB at
        // p = 4,096 on a switch; docs/benchmarks.md).
        const auto n = static_cast<std::size_t>(network.node_count);
        if (lookups_.size() != n) {
            lookups_.assign(n, 0);
            trees_.assign(n, {});
        }
        const std::int32_t asked = ++lookups_[static_cast<std::size_t>(source)];
        if (source != target && asked > tree_after_lookups) {
            auto& tree = trees_[static_cast<std::size_t>(source)];
            if (tree.empty()) search(network, source, -1, policy, nullptr, &tree);
            return from_tree(tree);
        } else if (auto p = route(network, source, target, policy)) {
            found.push_back(std::move(*p));
        }
    } else {
        found = route_disjoint(network, source, target, policy, paths,
                               seed_ ? seed_->table_->guide(seed_network_.get()) : table_->guide(&network));
    }
    return table_->add(key, std::move(found));
}

void RouteCache::prefetch(const Network& network, std::span<const std::pair<std::int32_t, std::int32_t>> pairs,
                          RoutingPolicy policy, std::int32_t paths, IdleHelpers& helpers,
                          const std::atomic<bool>* stop) {
    if (paths <= 1 || seed_ || !table_->locked() || !helpers.any_idle()) return;
    std::vector<std::pair<std::int32_t, std::int32_t>> missing;
    for (const auto& [source, target] : pairs)
        if (source != target && !table_->find(pair_key(network, source, target)))
            missing.emplace_back(source, target);
    std::sort(missing.begin(), missing.end());
    missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
    const std::shared_ptr<RouteTable> table = table_;
    table->guide(&network);  // built once, before the helpers share it
    table->overlay(network);
    helpers.run(missing.size(), [&](std::size_t i) {
        if (stop_requested(stop)) return;  // the helpers skip the rest; the caller throws below
        const auto [source, target] = missing[i];
        table->add(pair_key(network, source, target), table->search(network, source, target, policy, paths));
    });
    throw_if_stopped(stop);
}

const std::vector<Path>& RouteTable::add(std::int64_t key, std::vector<Path> paths) {
    std::size_t bytes = sizeof(std::pair<const std::int64_t, std::vector<Path>>) + 32 + paths.capacity() * sizeof(Path);
    for (const Path& p : paths) bytes += p.edges.capacity() * sizeof(std::int32_t);
    std::unique_lock lock(mutex_, std::defer_lock);
    if (locked_) lock.lock();
    const auto [it, added] = paths_.try_emplace(key, std::move(paths));
    if (added) bytes_.fetch_add(bytes, std::memory_order_relaxed);
    return it->second;
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
