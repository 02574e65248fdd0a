#include <skyfabric/workloads/two_level_routing.hpp>

#include <algorithm>
#include <limits>
#include <queue>
#include <tuple>
#include <unordered_map>

namespace skyfabric::workloads {

namespace {
constexpr double inf = std::numeric_limits<double>::infinity();

// A label: latency, then hops (as the flat search's); the frontier orders by (label, node).
using Item = std::tuple<double, std::int32_t, std::int32_t>;
using Frontier = std::priority_queue<Item, std::vector<Item>, std::greater<>>;

// A min-heap of Items on a per-thread vector, so that a search allocates nothing (a constellation
// runs millions of them).
class ReusedFrontier {
public:
    explicit ReusedFrontier(std::vector<Item>& items) : items_(items) { items_.clear(); }
    bool empty() const { return items_.empty(); }
    const Item& top() const { return items_.front(); }
    void pop() {
        std::pop_heap(items_.begin(), items_.end(), std::greater<>{});
        items_.pop_back();
    }
    void emplace(double key, std::int32_t hops, std::int32_t id) {
        items_.emplace_back(key, hops, id);
        std::push_heap(items_.begin(), items_.end(), std::greater<>{});
    }

private:
    std::vector<Item>& items_;
};
thread_local std::vector<Item> frontier_items;

bool better(double latency, std::int32_t hops, double best_latency, std::int32_t best_hops) {
    return latency < best_latency || (latency == best_latency && hops < best_hops);
}

// Shortest latency from `from` to every node of its cluster over that cluster's links only: each
// node's edge in (by local index) into via, latencies and hops into the two spans.
void tree_inside(const Network& n, const ClusterOverlay& o, std::int32_t from, std::span<std::int32_t> via,
                 std::span<double> latency, std::span<std::int32_t> hops) {
    const std::int32_t c = o.cluster_of[static_cast<std::size_t>(from)];
    std::fill(via.begin(), via.end(), -1);
    std::fill(latency.begin(), latency.end(), inf);
    std::fill(hops.begin(), hops.end(), 0);
    std::vector<char> done(via.size(), 0);
    const auto at = [&](std::int32_t v) { return static_cast<std::size_t>(o.local_index[static_cast<std::size_t>(v)]); };
    Frontier frontier;
    latency[at(from)] = 0.0;
    frontier.emplace(0.0, 0, from);
    while (!frontier.empty()) {
        const auto [d, h, v] = frontier.top();
        frontier.pop();
        if (done[at(v)]) continue;
        done[at(v)] = 1;
        for (std::int32_t k = n.adjacency_offsets[v]; k < n.adjacency_offsets[v + 1]; ++k) {
            const std::int32_t e = n.adjacency_edges[k];
            const std::int32_t w = n.edge_to[e];
            if (o.cluster_of[static_cast<std::size_t>(w)] != c || done[at(w)]) continue;
            const double nd = d + n.latency_s[e];
            if (better(nd, h + 1, latency[at(w)], hops[at(w)])) {
                latency[at(w)] = nd;
                hops[at(w)] = h + 1;
                via[at(w)] = e;
                frontier.emplace(nd, h + 1, w);
            }
        }
    }
}

// Latency distances to border row `to` from every border row over the whole network: Dijkstra
// backwards on the overlay (the links between clusters, each taken against its direction, and the
// virtual edges inside them), which has the whole network's distances between border nodes.
void distances_towards(const Network& n, const ClusterOverlay& o, std::int32_t to, std::span<double> distance) {
    std::fill(distance.begin(), distance.end(), inf);
    using Row = std::pair<double, std::int32_t>;
    std::priority_queue<Row, std::vector<Row>, std::greater<>> frontier;
    distance[static_cast<std::size_t>(to)] = 0.0;
    frontier.emplace(0.0, to);
    while (!frontier.empty()) {
        const auto [d, r] = frontier.top();
        frontier.pop();
        if (d > distance[static_cast<std::size_t>(r)]) continue;
        const std::int32_t v = o.border_node[static_cast<std::size_t>(r)];
        const std::int32_t c = o.cluster_of[static_cast<std::size_t>(v)];
        const auto reach = [&](std::int32_t from, double nd) {
            if (nd < distance[static_cast<std::size_t>(from)]) {
                distance[static_cast<std::size_t>(from)] = nd;
                frontier.emplace(nd, from);
            }
        };
        // Links into v from other clusters: each link's two directed edges are 2i and 2i + 1.
        for (std::int32_t k = n.adjacency_offsets[v]; k < n.adjacency_offsets[v + 1]; ++k) {
            const std::int32_t in = n.adjacency_edges[k] ^ 1;
            const std::int32_t w = n.edge_from[in];
            if (o.cluster_of[static_cast<std::size_t>(w)] != c && n.capacity_Bps[in] > 0.0)
                reach(o.row_of[static_cast<std::size_t>(w)], d + n.latency_s[in]);
        }
        for (auto from = o.border_offsets[static_cast<std::size_t>(c)]; from < o.border_offsets[static_cast<std::size_t>(c) + 1]; ++from)
            if (from != r) reach(from, d + o.virtual_latency_s[o.virtual_index(c, from, r)]);
    }
}

// One way into a search's target cluster: the distances from every border row to where it starts,
// and the latency left from there to the target.
struct BoundTerm {
    const double* to_start;
    double rest_s;
};

// Per thread: the reduced search's labels over the whole network's nodes, reset by `touched`;
// the bounds of border rows, by stamp.
struct Scratch {
    std::vector<double> latency, bound;
    std::vector<std::int32_t> hops, via_edge, via_node;
    std::vector<char> done;
    std::vector<std::int32_t> touched;
    std::vector<double> row_bound;
    std::vector<BoundTerm> bound_terms;
    std::vector<std::uint32_t> row_stamp;
    std::uint32_t stamp = 0;
    // The border-level search's labels per row (and one past them for t), valid where row_label_stamp
    // is this search's stamp.
    std::vector<double> row_latency;
    std::vector<std::int32_t> row_hops, row_via_edge, row_via_row;
    std::vector<char> row_done;
    std::vector<std::uint32_t> row_label_stamp;
    void prepare_rows(std::size_t rows) {
        if (row_label_stamp.size() < rows + 1) {
            row_latency.assign(rows + 1, inf);
            row_hops.assign(rows + 1, 0);
            row_via_edge.assign(rows + 1, -1);
            row_via_row.assign(rows + 1, -1);
            row_done.assign(rows + 1, 0);
            row_label_stamp.assign(rows + 1, 0);
        }
    }
    void prepare(std::size_t nodes, std::size_t rows) {
        if (latency.size() != nodes) {
            latency.assign(nodes, inf);
            bound.assign(nodes, -1.0);
            hops.assign(nodes, 0);
            via_edge.assign(nodes, -1);
            via_node.assign(nodes, -1);
            done.assign(nodes, 0);
            touched.clear();
        }
        if (row_stamp.size() < rows) {
            row_stamp.assign(rows, 0);
            row_bound.assign(rows, inf);
        }
        if (++stamp == 0) {  // wrapped: every stamp stale again
            std::fill(row_stamp.begin(), row_stamp.end(), 0);
            std::fill(row_label_stamp.begin(), row_label_stamp.end(), 0);
            stamp = 1;
        }
    }
    void reset() {
        for (const auto v : touched) {
            const auto i = static_cast<std::size_t>(v);
            latency[i] = inf;
            bound[i] = -1.0;
            hops[i] = 0;
            via_edge[i] = via_node[i] = -1;
            done[i] = 0;
        }
        touched.clear();
    }
};
thread_local Scratch scratch;

// Per thread: the links and virtual edges the earlier of one pair's paths took, reset by the lists.
struct Bans {
    std::vector<char> edge, virtual_edge;
    std::vector<std::size_t> edges_set, virtuals_set;
    void prepare(std::size_t edges, std::size_t virtuals) {
        if (edge.size() != edges) edge.assign(edges, 0);
        if (virtual_edge.size() != virtuals) virtual_edge.assign(virtuals, 0);
    }
    void ban_edge(std::int32_t e) {
        if (!edge[static_cast<std::size_t>(e)]) edges_set.push_back(static_cast<std::size_t>(e));
        edge[static_cast<std::size_t>(e)] = 1;
    }
    void ban_virtual(std::size_t vx) {
        if (!virtual_edge[vx]) virtuals_set.push_back(vx);
        virtual_edge[vx] = 1;
    }
    void reset() {
        for (const auto e : edges_set) edge[e] = 0;
        for (const auto vx : virtuals_set) virtual_edge[vx] = 0;
        edges_set.clear();
        virtuals_set.clear();
    }
};
thread_local Bans scratch_bans;

// Lower bounds on the latency from a node to t, consistent (never falling by more than a link's
// latency along it), from the border distances (ClusterOverlay::border_distance_s); 0 without them.
class Bounds {
public:
    Bounds(const Network& n, const ClusterOverlay& o, Scratch& sc, std::int32_t t, const std::vector<char>& banned)
        : o_(o), sc_(sc), use_(!o.border_distance_s.empty()),
          target_cluster_(o.cluster_of[static_cast<std::size_t>(t)]), target_local_(o.local_index[static_cast<std::size_t>(t)]),
          by_entries_(!o.entry_offsets.empty()), terms_(sc.bound_terms) {
        // The bound's terms for this search: per way into t's cluster still open, the column of
        // distances to where it starts and what is left from there (see of_row).
        terms_.clear();
        if (!use_) return;
        const auto c = static_cast<std::size_t>(target_cluster_);
        if (by_entries_) {
            for (auto i = o.entry_offsets[c]; i < o.entry_offsets[c + 1]; ++i) {
                const std::int32_t e = o.entries[static_cast<std::size_t>(i)];
                if (banned[static_cast<std::size_t>(e)]) continue;
                terms_.push_back({border_distances_to(n, o, o.row_of[static_cast<std::size_t>(n.edge_from[e])]),
                                  n.latency_s[e] + to_target(o.row_of[static_cast<std::size_t>(n.edge_to[e])])});
            }
        } else {
            for (auto b = o.border_offsets[c]; b < o.border_offsets[c + 1]; ++b) terms_.push_back({border_distances_to(n, o, b), to_target(b)});
        }
    }
    double operator()(std::int32_t v) const {
        if (!use_) return 0.0;
        const auto vi = static_cast<std::size_t>(v);
        if (const std::int32_t r = o_.row_of[vi]; r >= 0) return of_row(r);
        const std::int32_t c = o_.cluster_of[vi];
        const auto local = static_cast<std::size_t>(o_.local_index[vi]);
        if (c == target_cluster_) {  // landmarks: t's cluster's borders
            double h = 0.0;
            for (auto r = o_.border_offsets[static_cast<std::size_t>(c)]; r < o_.border_offsets[static_cast<std::size_t>(c) + 1]; ++r) {
                const double d = of_row(r) - o_.tree_latency_s[o_.tree_base[static_cast<std::size_t>(r)] + local];
                if (d > h) h = d;  // NaN (inf − inf) and −inf fall through
            }
            return h;
        }
        double h = inf;  // out through one of its cluster's borders
        for (auto r = o_.border_offsets[static_cast<std::size_t>(c)]; r < o_.border_offsets[static_cast<std::size_t>(c) + 1]; ++r)
            h = std::min(h, o_.tree_latency_s[o_.tree_base[static_cast<std::size_t>(r)] + local] + of_row(r));
        return h;
    }

    // From border row r: min over t's cluster's borders b of D(r, b) + d(b, t) inside t's cluster;
    // with its entries kept, min over those not banned, u → w, of D(r, u) + l + d(w, t), and d(r, t)
    // inside it for a border of t's cluster itself. Both are the distance with nothing banned; the
    // second stays consistent with links into t's cluster banned (D obeys the triangle inequality).
    double of_row(std::int32_t r) const {
        const auto ri = static_cast<std::size_t>(r);
        if (sc_.row_stamp[ri] == sc_.stamp) return sc_.row_bound[ri];
        double h = inf;
        if (by_entries_ && o_.cluster_of[static_cast<std::size_t>(o_.border_node[ri])] == target_cluster_) h = to_target(r);
        for (const BoundTerm& term : terms_) h = std::min(h, term.to_start[ri] + term.rest_s);
        sc_.row_stamp[ri] = sc_.stamp;
        sc_.row_bound[ri] = h;
        return h;
    }

private:
    double to_target(std::int32_t row) const {
        return o_.tree_latency_s[o_.tree_base[static_cast<std::size_t>(row)] + static_cast<std::size_t>(target_local_)];
    }
    const ClusterOverlay& o_;
    Scratch& sc_;
    bool use_;
    std::int32_t target_cluster_, target_local_;
    bool by_entries_;
    std::vector<BoundTerm>& terms_;
};

// One search on the reduced graph, banned links and virtual edges left out; the path's edges
// (virtual ones expanded) into `edges`, false when t cannot be reached.
bool search_reduced(const Network& n, const ClusterOverlay& o, std::int32_t s, std::int32_t t, const std::vector<char>& banned,
                    const std::vector<char>& banned_virtual, std::vector<std::int32_t>& edges) {
    Scratch& sc = scratch;
    sc.prepare(static_cast<std::size_t>(n.node_count), o.border_node.size());
    const Bounds bounds(n, o, sc, t, banned);
    const std::int32_t cs = o.cluster_of[static_cast<std::size_t>(s)];
    const std::int32_t ct = o.cluster_of[static_cast<std::size_t>(t)];
    ReusedFrontier frontier(frontier_items);  // by label + bound, then hops, then node
    const auto label = [&](std::int32_t w, double latency, std::int32_t hops, std::int32_t edge, std::int32_t from) {
        const auto wi = static_cast<std::size_t>(w);
        if (sc.done[wi] || !better(latency, hops, sc.latency[wi], sc.hops[wi])) return;
        if (sc.bound[wi] < 0.0) {
            sc.touched.push_back(w);
            sc.bound[wi] = bounds(w);
        }
        if (sc.bound[wi] == inf) return;  // t cannot be reached from w
        sc.latency[wi] = latency;
        sc.hops[wi] = hops;
        sc.via_edge[wi] = edge;
        sc.via_node[wi] = from;
        frontier.emplace(latency + sc.bound[wi], hops, w);
    };
    sc.touched.push_back(s);
    sc.bound[static_cast<std::size_t>(s)] = bounds(s);
    sc.latency[static_cast<std::size_t>(s)] = 0.0;
    frontier.emplace(0.0, 0, s);
    bool reached = false;
    while (!frontier.empty()) {
        const std::int32_t v = std::get<2>(frontier.top());
        frontier.pop();
        const auto vi = static_cast<std::size_t>(v);
        if (sc.done[vi]) continue;
        sc.done[vi] = 1;
        if (v == t) {
            reached = true;
            break;
        }
        const double d = sc.latency[vi];
        const std::int32_t h = sc.hops[vi];
        const std::int32_t c = o.cluster_of[vi];
        const bool whole = c == cs || c == ct;  // an end cluster: every link; else a border node
        for (std::int32_t k = n.adjacency_offsets[v]; k < n.adjacency_offsets[v + 1]; ++k) {
            const std::int32_t e = n.adjacency_edges[k];
            if (banned[static_cast<std::size_t>(e)]) continue;
            const std::int32_t w = n.edge_to[e];
            if (!whole && o.cluster_of[static_cast<std::size_t>(w)] == c) continue;  // inside: by the virtual edges
            label(w, d + n.latency_s[e], h + 1, e, v);
        }
        if (whole) continue;
        const std::int32_t row = o.row_of[vi];
        for (std::int32_t to = o.border_offsets[static_cast<std::size_t>(c)]; to < o.border_offsets[static_cast<std::size_t>(c) + 1]; ++to) {
            if (to == row) continue;
            const std::size_t vx = o.virtual_index(c, row, to);
            if (banned_virtual[vx] || o.virtual_latency_s[vx] == inf) continue;
            label(o.border_node[static_cast<std::size_t>(to)], d + o.virtual_latency_s[vx], h + o.virtual_hops[vx], -1, v);
        }
    }
    edges.clear();
    if (reached) {
        // Back from t; a virtual edge u → w back along u's tree inside their cluster.
        for (std::int32_t w = t; w != s;) {
            const auto wi = static_cast<std::size_t>(w);
            const std::int32_t u = sc.via_node[wi];
            if (sc.via_edge[wi] >= 0) {
                edges.push_back(sc.via_edge[wi]);
            } else {
                const std::size_t base = o.tree_base[static_cast<std::size_t>(o.row_of[static_cast<std::size_t>(u)])];
                for (std::int32_t x = w; x != u;) {
                    const std::int32_t e = o.tree_via[base + static_cast<std::size_t>(o.local_index[static_cast<std::size_t>(x)])];
                    edges.push_back(e);
                    x = n.edge_from[e];
                }
            }
            w = u;
        }
        std::reverse(edges.begin(), edges.end());
    }
    sc.reset();
    return reached;
}

// The virtual edges a path takes: each stretch inside a cluster other than s's and t's, by its
// first and last node (border rows).
void ban_path(const Network& n, const ClusterOverlay& o, std::int32_t cs, std::int32_t ct, const std::vector<std::int32_t>& edges,
              Bans& bans) {
    std::int32_t entered = -1;  // the border node a stretch inside a third cluster began at
    for (const auto e : edges) {
        bans.ban_edge(e);
        const std::int32_t from = n.edge_from[e], to = n.edge_to[e];
        const std::int32_t cf = o.cluster_of[static_cast<std::size_t>(from)], cto = o.cluster_of[static_cast<std::size_t>(to)];
        if (cf == cto) continue;
        if (entered >= 0 && from != entered)
            bans.ban_virtual(o.virtual_index(cf, o.row_of[static_cast<std::size_t>(entered)], o.row_of[static_cast<std::size_t>(from)]));
        entered = (cto == cs || cto == ct) ? -1 : to;
    }
}

// One search between clusters, s's cluster A ≠ t's cluster B, over border rows only: a path leaves A
// for the first time at one of A's borders, reached inside A (its shortest way there: the border's tree),
// and enters B for the last time at one of B's borders, from which it reaches t inside B; in between
// it runs border to border over links between clusters and virtual edges, whose distances are the
// whole network's. So the search starts at A's borders labelled with their tree latencies to s, ends
// where a border of B plus its tree latency to t is settled, and its distances are the flat search's.
// Banned: links between clusters and virtual edges (the earlier paths'); the stretches inside A and B
// are the trees' and may be shared. The path's edges into `edges`; its links between clusters and
// virtual edges banned for the next; false when t cannot be reached.
bool search_borders(const Network& n, const ClusterOverlay& o, std::int32_t s, std::int32_t t, Bans& bans,
                    std::vector<std::int32_t>& edges) {
    Scratch& sc = scratch;
    const std::size_t rows = o.border_node.size();
    sc.prepare(static_cast<std::size_t>(n.node_count), rows);
    sc.prepare_rows(rows);
    const Bounds bounds(n, o, sc, t, bans.edge);
    const auto ca = static_cast<std::size_t>(o.cluster_of[static_cast<std::size_t>(s)]);
    const auto cb = static_cast<std::size_t>(o.cluster_of[static_cast<std::size_t>(t)]);
    const auto local_s = static_cast<std::size_t>(o.local_index[static_cast<std::size_t>(s)]);
    const auto local_t = static_cast<std::size_t>(o.local_index[static_cast<std::size_t>(t)]);
    const auto target_row = static_cast<std::int32_t>(rows);  // t itself, past the border rows
    ReusedFrontier frontier(frontier_items);  // by label + bound, then hops, then node
    // via_edge: ≥ 0 a link between clusters, −1 a virtual edge from via_row, −2 from s inside A, −3 to t inside B.
    const auto label = [&](std::int32_t r, double latency, std::int32_t hops, std::int32_t edge, std::int32_t from_row) {
        const auto ri = static_cast<std::size_t>(r);
        if (sc.row_label_stamp[ri] != sc.stamp) {
            sc.row_label_stamp[ri] = sc.stamp;
            sc.row_latency[ri] = inf;
            sc.row_hops[ri] = 0;
            sc.row_done[ri] = 0;
        }
        if (sc.row_done[ri] || !better(latency, hops, sc.row_latency[ri], sc.row_hops[ri])) return;
        const double h = r == target_row ? 0.0 : bounds.of_row(r);
        if (h == inf) return;  // t cannot be reached from r
        sc.row_latency[ri] = latency;
        sc.row_hops[ri] = hops;
        sc.row_via_edge[ri] = edge;
        sc.row_via_row[ri] = from_row;
        frontier.emplace(latency + h, hops, r);  // ties: by row (t's is past the others)
    };
    for (auto r = o.border_offsets[ca]; r < o.border_offsets[ca + 1]; ++r) {
        const std::size_t at = o.tree_base[static_cast<std::size_t>(r)] + local_s;
        if (o.tree_latency_s[at] < inf) label(r, o.tree_latency_s[at], o.tree_hops[at], -2, -1);
    }
    bool reached = false;
    while (!frontier.empty()) {
        const std::int32_t r = std::get<2>(frontier.top());
        frontier.pop();
        const auto ri = static_cast<std::size_t>(r);
        if (sc.row_done[ri]) continue;
        sc.row_done[ri] = 1;
        if (r == target_row) {
            reached = true;
            break;
        }
        const std::int32_t v = o.border_node[ri];
        const double d = sc.row_latency[ri];
        const std::int32_t h = sc.row_hops[ri];
        const auto c = static_cast<std::size_t>(o.cluster_of[static_cast<std::size_t>(v)]);
        if (c == cb) {
            const std::size_t at = o.tree_base[ri] + local_t;
            if (o.tree_latency_s[at] < inf) label(target_row, d + o.tree_latency_s[at], h + o.tree_hops[at], -3, r);
        }
        for (std::int32_t q = n.adjacency_offsets[v]; q < n.adjacency_offsets[v + 1]; ++q) {
            const std::int32_t e = n.adjacency_edges[q];
            const std::int32_t w = n.edge_to[e];
            if (static_cast<std::size_t>(o.cluster_of[static_cast<std::size_t>(w)]) == c || bans.edge[static_cast<std::size_t>(e)]) continue;
            label(o.row_of[static_cast<std::size_t>(w)], d + n.latency_s[e], h + 1, e, r);
        }
        for (std::int32_t to = o.border_offsets[c]; to < o.border_offsets[c + 1]; ++to) {
            if (to == r) continue;
            const std::size_t vx = o.virtual_index(static_cast<std::int32_t>(c), r, to);
            if (bans.virtual_edge[vx] || o.virtual_latency_s[vx] == inf) continue;
            label(to, d + o.virtual_latency_s[vx], h + o.virtual_hops[vx], -1, r);
        }
    }
    edges.clear();
    if (!reached) return false;
    // Back from t, the edges pushed last first; reversed at the end.
    const auto tree_back = [&](std::int32_t row, std::int32_t to) {  // row's border → to, inside its cluster
        const std::size_t base = o.tree_base[static_cast<std::size_t>(row)];
        for (std::int32_t x = to; x != o.border_node[static_cast<std::size_t>(row)];) {
            const std::int32_t e = o.tree_via[base + static_cast<std::size_t>(o.local_index[static_cast<std::size_t>(x)])];
            edges.push_back(e);
            x = n.edge_from[e];
        }
    };
    for (std::int32_t r = target_row;;) {
        const auto ri = static_cast<std::size_t>(r);
        const std::int32_t via = sc.row_via_edge[ri], from = sc.row_via_row[ri];
        if (via == -3) {
            tree_back(from, t);
        } else if (via == -2) {
            // s → r's border inside A: r's tree path to s, each link taken the other way (links
            // are two directed edges 2i and 2i + 1 of one link, alike in latency and capacity).
            const std::size_t first = edges.size();
            tree_back(r, s);
            std::reverse(edges.begin() + static_cast<std::ptrdiff_t>(first), edges.end());
            for (std::size_t i = first; i < edges.size(); ++i) edges[i] ^= 1;
            break;
        } else if (via >= 0) {
            edges.push_back(via);
            bans.ban_edge(via);
        } else {
            tree_back(from, o.border_node[ri]);
            bans.ban_virtual(o.virtual_index(o.cluster_of[static_cast<std::size_t>(o.border_node[ri])], from, r));
        }
        r = from;
    }
    std::reverse(edges.begin(), edges.end());
    return true;
}

}  // namespace

std::optional<ClusterOverlay> build_cluster_overlay(const Network& n, std::span<const std::int32_t> cluster_of) {
    ClusterOverlay o;
    o.node_count = n.node_count;
    o.edge_count = n.edge_to.size();
    const auto nn = static_cast<std::size_t>(n.node_count);
    o.cluster_of.resize(nn);
    o.local_index.resize(nn);
    std::unordered_map<std::int64_t, std::int32_t> dense;
    for (std::size_t v = 0; v < nn; ++v) {
        const std::int64_t label = v < cluster_of.size() && cluster_of[v] >= 0 ? cluster_of[v] : -1 - static_cast<std::int64_t>(v);
        const auto [it, added] = dense.try_emplace(label, static_cast<std::int32_t>(o.cluster_size.size()));
        if (added) o.cluster_size.push_back(0);
        o.cluster_of[v] = it->second;
        o.local_index[v] = o.cluster_size[static_cast<std::size_t>(it->second)]++;
    }
    const auto clusters = o.cluster_size.size();
    if (clusters < 2) return std::nullopt;
    std::vector<std::vector<std::int32_t>> border(clusters);
    for (std::int32_t v = 0; v < n.node_count; ++v)
        for (std::int32_t k = n.adjacency_offsets[v]; k < n.adjacency_offsets[v + 1]; ++k)
            if (o.cluster_of[static_cast<std::size_t>(n.edge_to[n.adjacency_edges[k]])] != o.cluster_of[static_cast<std::size_t>(v)]) {
                border[static_cast<std::size_t>(o.cluster_of[static_cast<std::size_t>(v)])].push_back(v);
                break;
            }
    std::size_t trees = 0, virtuals = 0;
    o.border_offsets.push_back(0);
    for (std::size_t c = 0; c < clusters; ++c) {
        const std::size_t rows = border[c].size();
        o.virtual_base.push_back(virtuals);
        virtuals += rows * rows;
        trees += rows * static_cast<std::size_t>(o.cluster_size[c]);
        o.border_offsets.push_back(o.border_offsets.back() + static_cast<std::int32_t>(rows));
        o.border_node.insert(o.border_node.end(), border[c].begin(), border[c].end());
    }
    if (trees > max_overlay_entries || virtuals > max_overlay_entries) return std::nullopt;
    o.row_of.assign(nn, -1);
    for (std::size_t r = 0; r < o.border_node.size(); ++r) o.row_of[static_cast<std::size_t>(o.border_node[r])] = static_cast<std::int32_t>(r);
    o.virtual_latency_s.assign(virtuals, inf);
    o.virtual_hops.assign(virtuals, 0);
    o.tree_via.assign(trees, -1);
    o.tree_latency_s.assign(trees, inf);
    o.tree_hops.assign(trees, 0);
    std::size_t base = 0;
    for (std::size_t c = 0; c < clusters; ++c) {
        const auto size = static_cast<std::size_t>(o.cluster_size[c]);
        for (auto r = o.border_offsets[c]; r < o.border_offsets[c + 1]; ++r) {
            o.tree_base.push_back(base);
            tree_inside(n, o, o.border_node[static_cast<std::size_t>(r)], std::span(o.tree_via).subspan(base, size),
                        std::span(o.tree_latency_s).subspan(base, size), std::span(o.tree_hops).subspan(base, size));
            const std::span<const double> latency(o.tree_latency_s.data() + base, size);
            const std::span<const std::int32_t> hops(o.tree_hops.data() + base, size);
            base += size;
            for (auto to = o.border_offsets[c]; to < o.border_offsets[c + 1]; ++to) {
                const auto at = static_cast<std::size_t>(o.local_index[static_cast<std::size_t>(o.border_node[static_cast<std::size_t>(to)])]);
                const std::size_t vx = o.virtual_index(static_cast<std::int32_t>(c), r, to);
                o.virtual_latency_s[vx] = latency[at];
                o.virtual_hops[vx] = hops[at];
            }
        }
    }
    const std::size_t rows = o.border_node.size();
    // The links into each cluster, if no cluster has more than max_bound_entries of them.
    std::vector<std::vector<std::int32_t>> into(clusters);
    for (const std::int32_t e : n.adjacency_edges)
        if (o.cluster_of[static_cast<std::size_t>(n.edge_from[e])] != o.cluster_of[static_cast<std::size_t>(n.edge_to[e])])
            into[static_cast<std::size_t>(o.cluster_of[static_cast<std::size_t>(n.edge_to[e])])].push_back(e);
    if (std::all_of(into.begin(), into.end(), [](const auto& edges) { return edges.size() <= static_cast<std::size_t>(max_bound_entries); })) {
        o.entry_offsets.push_back(0);
        for (const auto& edges : into) {
            o.entries.insert(o.entries.end(), edges.begin(), edges.end());
            o.entry_offsets.push_back(static_cast<std::int32_t>(o.entries.size()));
        }
    }
    if (rows * rows <= max_overlay_bound_entries) {  // columns found as searches need them
        o.border_distance_s.resize(rows * rows);
        o.border_distance_once = std::make_unique<std::once_flag[]>(rows);
    }
    return o;
}

const double* border_distances_to(const Network& n, const ClusterOverlay& o, std::int32_t row) {
    if (o.border_distance_s.empty()) return nullptr;
    const std::size_t rows = o.border_node.size();
    double* column = o.border_distance_s.data() + static_cast<std::size_t>(row) * rows;
    std::call_once(o.border_distance_once[static_cast<std::size_t>(row)], [&] { distances_towards(n, o, row, std::span(column, rows)); });
    return column;  // (a search asks once per way into its target's cluster)
}

std::vector<Path> route_two_level(const Network& n, const ClusterOverlay& o, std::int32_t s, std::int32_t t, std::int32_t k) {
    std::vector<Path> paths;
    if (s == t) {
        paths.emplace_back();
        return paths;
    }
    Bans& bans = scratch_bans;
    bans.prepare(n.edge_to.size(), o.virtual_latency_s.size());
    const std::int32_t cs = o.cluster_of[static_cast<std::size_t>(s)], ct = o.cluster_of[static_cast<std::size_t>(t)];
    for (std::int32_t i = 0; i < std::max(1, k); ++i) {
        Path p;
        if (cs != ct) {
            if (!search_borders(n, o, s, t, bans, p.edges)) break;
        } else {
            if (!search_reduced(n, o, s, t, bans.edge, bans.virtual_edge, p.edges)) break;
            ban_path(n, o, cs, ct, p.edges, bans);
        }
        p.bottleneck_Bps = inf;
        for (const auto e : p.edges) {  // summed in path order, as the flat search's paths
            p.latency_s += n.latency_s[e];
            p.bottleneck_Bps = std::min(p.bottleneck_Bps, n.capacity_Bps[e]);
        }
        paths.push_back(std::move(p));
    }
    bans.reset();
    return paths;
}

}  // namespace skyfabric::workloads
