#include <skyfabric/links/topology_policy.hpp>

#include <skyfabric/physics/neighbours.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace skyfabric::links {

namespace {

struct Candidate {
    std::int32_t i, j;
    double distance_m;
    double score;  // smaller is preferred
    bool existing;
};

std::uint64_t key(std::int32_t i, std::int32_t j) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(i)) << 32) | static_cast<std::uint32_t>(j);
}

}  // namespace

TopologyBuilder::TopologyBuilder(const TopologyParameters& parameters) : p_(parameters), model_(parameters.optics) {
    range_m_ = p_.terminals.max_range_m > 0.0 ? p_.terminals.max_range_m : model_.full_capacity_reach_m();
    const int terminals = std::max(p_.terminals.terminals_per_satellite, 0);
    k_ = p_.neighbours_k > 0 ? std::min(p_.neighbours_k, terminals) : terminals;
}

void TopologyBuilder::reset() {
    started_ = false;
    current_ = Topology{};
    state_.clear();
    lattice_pairs_.clear();
}

Topology TopologyBuilder::update(double time_s, std::span<const Eigen::Vector3d> positions_m,
                                 std::vector<LinkEvent>& events) {
    const auto n = static_cast<std::int32_t>(positions_m.size());
    if (started_ && n != current_.node_count) reset();
    const bool first = !started_;
    const int terminals = std::max(p_.terminals.terminals_per_satellite, 0);
    const double h = std::max(p_.hysteresis_fraction, 0.0);
    const double keep_range_m = range_m_ * (1.0 + h);

    auto distance = [&](std::int32_t i, std::int32_t j) {
        return (positions_m[static_cast<std::size_t>(i)] - positions_m[static_cast<std::size_t>(j)]).norm();
    };
    // Previous links per satellite (≤ terminals each), for O(1) "is this link up?" queries.
    const auto tcap = static_cast<std::size_t>(std::max(terminals, 1));
    std::vector<std::int32_t> prev_adj;
    std::vector<int> prev_deg;
    if (!first) {
        prev_adj.assign(static_cast<std::size_t>(n) * tcap, -1);
        prev_deg.assign(static_cast<std::size_t>(n), 0);
        for (const State& s : state_) {
            for (const std::int32_t v : {s.source, s.target}) {
                const std::int32_t other = v == s.source ? s.target : s.source;
                auto& d = prev_deg[static_cast<std::size_t>(v)];
                if (static_cast<std::size_t>(d) < tcap) prev_adj[static_cast<std::size_t>(v) * tcap + static_cast<std::size_t>(d++)] = other;
            }
        }
    }
    auto is_existing = [&](std::int32_t i, std::int32_t j) {
        if (first) return false;
        const auto* row = &prev_adj[static_cast<std::size_t>(i) * tcap];
        for (std::size_t m = 0; m < tcap; ++m)
            if (row[m] == j) return true;
        return false;
    };

    // ---- candidate pairs (never all pairs), each unordered pair once
    std::vector<Candidate> candidates;
    auto consider = [&](std::int32_t i, std::int32_t j) {
        if (i > j) std::swap(i, j);
        const double d = distance(i, j);
        const bool existing = is_existing(i, j);
        if (d > (existing ? keep_range_m : range_m_)) return;  // range hysteresis
        candidates.push_back({i, j, d, 0.0, existing});
    };
    if (p_.policy == TopologyPolicy::lattice && !first) {
        candidates.reserve(lattice_pairs_.size());
        for (const auto& [i, j] : lattice_pairs_) consider(i, j);
    } else if (n >= 2 && k_ > 0) {
        const int default_want = k_ + std::max(4, k_ / 2);
        const int want = std::min<int>(n - 1, p_.candidates_per_satellite > 0 ? p_.candidates_per_satellite : default_want);
        const auto nn = physics::k_nearest_neighbours(positions_m, want);
        const auto w = static_cast<std::size_t>(want);
        auto in_row = [&](std::int32_t row, std::int32_t j) {
            const auto* r = &nn.index[static_cast<std::size_t>(row) * w];
            for (std::size_t m = 0; m < w; ++m)
                if (r[m] == j) return true;
            return false;
        };
        candidates.reserve(static_cast<std::size_t>(n) * w);
        for (std::int32_t i = 0; i < n; ++i) {
            for (std::size_t m = 0; m < w; ++m) {
                const std::int32_t j = nn.index[static_cast<std::size_t>(i) * w + m];
                if (j < 0) break;
                // (i, j) from i's row; from j's row only if i's row does not also hold it
                if (i < j || !in_row(j, i)) consider(i, j);
            }
        }
        // keep-alive: links already up whose ends are no longer each other's candidates
        for (const State& s : state_)
            if (!in_row(s.source, s.target) && !in_row(s.target, s.source)) consider(s.source, s.target);
    }

    // ---- scores: smaller first. Existing links get the (1+h) preference.
    std::vector<LinkBudget> budgets;
    if (p_.policy == TopologyPolicy::max_capacity) {
        budgets.reserve(candidates.size());
        for (auto& c : candidates) {
            budgets.push_back(model_.at(c.distance_m));
            // −capacity, with a tiny distance term so equal capacities prefer the shorter link
            c.score = -budgets.back().capacity_bps * (c.existing ? 1.0 + h : 1.0) + c.distance_m * 1e-6;
        }
    } else {
        for (auto& c : candidates) c.score = c.existing ? c.distance_m / (1.0 + h) : c.distance_m;
    }
    {
        // sort candidates themselves (and their budgets) by (score, key): deterministic ties. The
        // keys are unique (each pair is a candidate once), so the order is total; sorted as
        // contiguous records rather than indices into them (a sixth of a 10k-satellite sample).
        struct Ranked {
            double score;
            std::uint64_t key;
            std::size_t index;
        };
        std::vector<Ranked> order(candidates.size());
        for (std::size_t m = 0; m < order.size(); ++m) order[m] = {candidates[m].score, key(candidates[m].i, candidates[m].j), m};
        std::sort(order.begin(), order.end(), [](const Ranked& a, const Ranked& b) {
            if (a.score < b.score) return true;
            if (b.score < a.score) return false;
            return a.key < b.key;
        });
        std::vector<Candidate> sorted(candidates.size());
        for (std::size_t m = 0; m < order.size(); ++m) sorted[m] = candidates[order[m].index];
        if (!budgets.empty()) {
            std::vector<LinkBudget> sb(budgets.size());
            for (std::size_t m = 0; m < order.size(); ++m) sb[m] = budgets[order[m].index];
            budgets.swap(sb);
        }
        candidates.swap(sorted);
    }

    // ---- greedy selection under the terminal limit
    std::vector<int> degree(static_cast<std::size_t>(n), 0);
    struct Chosen {
        std::size_t candidate;
        LinkBudget budget;
    };
    std::vector<Chosen> chosen;
    chosen.reserve(static_cast<std::size_t>(n) * static_cast<std::size_t>(k_) / 2 + 1);
    for (std::size_t m = 0; m < candidates.size(); ++m) {
        const auto& c = candidates[m];
        auto& di = degree[static_cast<std::size_t>(c.i)];
        auto& dj = degree[static_cast<std::size_t>(c.j)];
        if (di >= k_ || dj >= k_ || di >= terminals || dj >= terminals) continue;
        LinkBudget b = budgets.empty() ? model_.at(c.distance_m) : budgets[m];
        if (b.channels_closing <= 0) continue;  // does not close: no link
        ++di;
        ++dj;
        chosen.push_back({m, b});
    }
    {
        std::vector<std::pair<std::uint64_t, std::size_t>> by_key(chosen.size());
        for (std::size_t m = 0; m < chosen.size(); ++m)
            by_key[m] = {key(candidates[chosen[m].candidate].i, candidates[chosen[m].candidate].j), m};
        std::sort(by_key.begin(), by_key.end());
        std::vector<Chosen> sorted;
        sorted.reserve(chosen.size());
        for (const auto& [k, m] : by_key) sorted.push_back(chosen[m]);
        chosen.swap(sorted);
    }

    if (first && p_.policy == TopologyPolicy::lattice) {
        lattice_pairs_.clear();
        for (const auto& ch : chosen) lattice_pairs_.emplace_back(candidates[ch.candidate].i, candidates[ch.candidate].j);
    }

    // ---- new topology and events: merge the old state with the chosen links (both sorted)
    Topology topo;
    topo.time_s = time_s;
    topo.node_count = n;
    topo.links.reserve(chosen.size());
    std::vector<State> next_state;
    next_state.reserve(chosen.size());
    const double reacq = std::max(p_.terminals.reacquisition_time_s, 0.0);
    std::size_t old = 0;
    auto emit_down = [&](const State& s) {
        const double d = distance(s.source, s.target);
        const bool lost = d > keep_range_m || model_.at(d).channels_closing <= 0;
        events.push_back({time_s, s.source, s.target, lost ? LinkEventKind::down_range : LinkEventKind::down_reassigned});
    };
    for (const auto& ch : chosen) {
        const auto& c = candidates[ch.candidate];
        const std::uint64_t kc = key(c.i, c.j);
        while (old < state_.size() && key(state_[old].source, state_[old].target) < kc) emit_down(state_[old++]);
        State s{c.i, c.j, time_s, false};
        if (old < state_.size() && key(state_[old].source, state_[old].target) == kc) {
            s = state_[old++];
            if (s.acquiring && time_s - s.up_since_s >= reacq - 1e-9) {
                s.acquiring = false;
                events.push_back({time_s, c.i, c.j, LinkEventKind::reacquired});
            }
        } else {
            s.up_since_s = first && p_.initial_links_acquired ? -std::numeric_limits<double>::infinity() : time_s;
            s.acquiring = !(first && p_.initial_links_acquired) && reacq > 0.0;
            events.push_back({time_s, c.i, c.j, LinkEventKind::up});
        }
        next_state.push_back(s);
        Link l;
        l.source = c.i;
        l.target = c.j;
        l.distance_m = c.distance_m;
        l.capacity_bps = s.acquiring ? 0.0 : ch.budget.capacity_bps;
        l.latency_s = ch.budget.latency_s;
        l.received_power_dbm = ch.budget.received_power_per_channel_dbm;
        l.margin_db = ch.budget.margin_db;
        l.acquiring = s.acquiring;
        topo.links.push_back(l);
    }
    while (old < state_.size()) emit_down(state_[old++]);

    state_ = std::move(next_state);
    current_ = topo;
    started_ = true;
    return topo;
}

Topology build_topology(std::span<const Eigen::Vector3d> positions_m, const TopologyParameters& parameters,
                        double time_s) {
    TopologyBuilder builder(parameters);
    std::vector<LinkEvent> events;
    return builder.update(time_s, positions_m, events);
}

}  // namespace skyfabric::links
