#include <skyfabric/workloads/collectives.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace skyfabric::workloads {

CollectiveOp parse_collective_op(const std::string& name) {
    if (const auto op = collective_op_names.value(name)) return *op;
    throw std::invalid_argument("unknown collective '" + name + "' (expected " + collective_op_names.joined() + ")");
}

Algorithm parse_algorithm(const std::string& name) {
    if (const auto a = algorithm_names.value(name)) return *a;
    throw std::invalid_argument("unknown algorithm '" + name + "' (expected " + algorithm_names.joined() + ")");
}

Algorithm default_algorithm(CollectiveOp op) {
    switch (op) {
        case CollectiveOp::all_to_all: return Algorithm::pairwise;
        case CollectiveOp::point_to_point: return Algorithm::direct;
        default: return Algorithm::ring;
    }
}

double bus_bandwidth_factor(CollectiveOp op, std::int32_t p) {
    if (p <= 1) return op == CollectiveOp::point_to_point ? 1.0 : 0.0;
    const double f = static_cast<double>(p - 1) / p;
    switch (op) {
        case CollectiveOp::all_reduce: return 2.0 * f;
        case CollectiveOp::point_to_point: return 1.0;
        default: return f;
    }
}

namespace {

struct Builder {
    Schedule& s;
    bool compact = true;  // ring steps as one repeated entry
    void begin(std::int32_t pattern) {
        s.phases.push_back(Phase{static_cast<std::int32_t>(s.transfers.size()), 0, pattern, 1});
    }
    void add(std::int32_t a, std::int32_t b, double bytes) {
        s.transfers.push_back(Transfer{a, b, bytes});
        ++s.phases.back().transfer_count;
    }
    // Every rank's transfers to the `per_source` ranks after it from `shift` on, `bytes` each:
    // listed in the explicit form, a rotation (Phase) in the compact one.
    void rotation(std::int32_t pattern, std::int32_t per_source, std::int32_t shift, double bytes) {
        if (!compact) {
            begin(pattern);
            for (std::int32_t i = 0; i < s.ranks; ++i)
                for (std::int32_t k = 0; k < per_source; ++k) add(i, (i + shift + k) % s.ranks, bytes);
            return;
        }
        Phase ph{static_cast<std::int32_t>(s.transfers.size()), s.ranks * per_source, pattern, 1};
        ph.rotation_per_source = per_source;
        ph.rotation_shift = shift;
        ph.rotation_bytes = bytes;
        s.phases.push_back(ph);
    }
    // A phase entry repeating an earlier entry's transfers (no new transfers).
    void repeat_of(const Phase& earlier, std::int32_t times) {
        Phase ph = earlier;
        ph.repeat = times;
        s.phases.push_back(ph);
    }
};

// `steps` ring steps of `chunk` bytes: rank i → i+1 within each ring listed, each ring
// rank i = first + i·stride, i < size (contiguous groups: stride 1; columns: stride k).
struct Rings {
    std::int32_t count = 1;        // number of rings
    std::int32_t size = 0;         // ranks per ring
    std::int32_t ring_offset = 0;  // first rank of ring r is r·ring_offset
    std::int32_t stride = 1;       // rank distance between neighbours in a ring
    std::int32_t rank(std::int32_t r, std::int32_t i) const { return r * ring_offset + i * stride; }
};

// Returns the index of the phase entry holding the transfers (for reuse by repeat_of).
std::size_t ring_steps(Builder& b, const Rings& rings, std::int32_t steps, double chunk,
                       std::int32_t pattern) {
    const std::size_t first = b.s.phases.size();
    const std::int32_t entries = b.compact ? 1 : steps;
    for (std::int32_t k = 0; k < entries; ++k) {
        b.begin(pattern);
        for (std::int32_t r = 0; r < rings.count; ++r)
            for (std::int32_t i = 0; i < rings.size; ++i)
                b.add(rings.rank(r, i), rings.rank(r, (i + 1) % rings.size), chunk);
    }
    if (b.compact) b.s.phases.back().repeat = steps;
    return first;
}

// Recursive halving then doubling, nearest partner first (Rabenseifner's order): the
// halving exchanges n/2 at distance 1, n/4 at distance 2, …, n/q at distance q/2, so the
// most data goes the shortest way when consecutive ranks are neighbours (a ring, a torus
// row, a ring embedding); where every pair costs the same (a switch, full connectivity)
// the order changes nothing.
void halving_doubling(Builder& b, std::int32_t p, double n) {
    std::int32_t q = 1;
    while (q * 2 <= p) q *= 2;
    const std::int32_t extra = p - q;
    std::int32_t pattern = 0;
    // Fold the ranks beyond 2^k into their partners first, and send results back last.
    if (extra > 0) {
        b.begin(pattern++);
        for (std::int32_t i = 0; i < extra; ++i) b.add(q + i, i, n);
    }
    std::int32_t log_q = 0;
    while ((1 << log_q) < q) ++log_q;
    // Step k exchanges n/2^(k+1) at distance 2^k: halving k = 0 … log q − 1, then
    // doubling mirrors it (same partners and sizes, reverse order).
    auto exchange = [&](std::int32_t k) {
        b.begin(pattern + k);
        for (std::int32_t i = 0; i < q; ++i) b.add(i, i ^ (1 << k), n / std::pow(2.0, k + 1));
    };
    for (std::int32_t k = 0; k < log_q; ++k) exchange(k);
    for (std::int32_t k = log_q - 1; k >= 0; --k) exchange(k);
    if (extra > 0) {
        b.begin(pattern + log_q);
        for (std::int32_t i = 0; i < extra; ++i) b.add(i, q + i, n);
    }
}

// Two complementary heap-shaped binary trees (tree B is tree A on reversed ranks, so
// A's leaves are mostly B's inner nodes); each carries n/2 in `chunks` pipelined chunks,
// reduce towards the root, then broadcast back.
void double_binary_tree(Builder& b, std::int32_t p, double n, std::int32_t chunks) {
    std::vector<std::int32_t> level(static_cast<std::size_t>(p), 0);
    std::int32_t depth = 0;
    for (std::int32_t i = 1; i < p; ++i) {
        level[i] = level[(i - 1) / 2] + 1;
        depth = std::max(depth, level[i]);
    }
    const double chunk = n / 2.0 / chunks;
    auto rank_of = [p](int tree, std::int32_t heap_index) {
        return tree == 0 ? heap_index : p - 1 - heap_index;
    };
    const std::int32_t steps = chunks + depth - 1;
    // Reduce: node at level l sends chunk j to its parent at step j + (depth − l).
    for (std::int32_t s = 0; s < steps; ++s) {
        b.begin(s);
        for (int tree = 0; tree < 2; ++tree)
            for (std::int32_t i = 1; i < p; ++i) {
                const std::int32_t j = s - (depth - level[i]);
                if (j >= 0 && j < chunks) b.add(rank_of(tree, i), rank_of(tree, (i - 1) / 2), chunk);
            }
    }
    // Broadcast: node at level l sends chunk j to its children at step j + l.
    for (std::int32_t s = 0; s < steps; ++s) {
        b.begin(steps + s);
        for (int tree = 0; tree < 2; ++tree)
            for (std::int32_t i = 1; i < p; ++i) {
                const std::int32_t j = s - (level[i] - 1);
                if (j >= 0 && j < chunks) b.add(rank_of(tree, (i - 1) / 2), rank_of(tree, i), chunk);
            }
    }
}

// The rank at position g = row·d0 + column of a d0-wide grid whose ranks run as a
// boustrophedon (even rows left to right, odd rows right to left), as ScheduleOptions::dims
// says. The map is its own inverse.
std::int32_t snake_rank(std::int32_t g, std::int32_t d0) {
    const std::int32_t row = g / d0, column = g % d0;
    return row * d0 + (row % 2 == 0 ? column : d0 - 1 - column);
}

// Rewrites a schedule listed over grid positions (row-major) into ranks.
void grid_to_ranks(Schedule& s, std::int32_t d0) {
    for (Transfer& t : s.transfers) {
        t.source_rank = snake_rank(t.source_rank, d0);
        t.target_rank = snake_rank(t.target_rank, d0);
    }
}

void check_dims(const std::vector<std::int32_t>& dims, std::int32_t p) {
    if (dims.empty()) return;
    std::int64_t product = 1;
    for (auto d : dims) product *= std::max<std::int64_t>(d, 0);
    if (dims.size() != 2 || dims[0] < 1 || dims[1] < 1 || product != p) {
        std::string got;
        for (auto d : dims) got += (got.empty() ? "" : "x") + std::to_string(d);
        throw std::invalid_argument("schedule dims: expected two dimensions of at least 1 whose product is the " +
                                    std::to_string(p) + " ranks, got " + got);
    }
}

std::int32_t default_group_size(std::int32_t p) {
    std::int32_t k = 1;
    for (std::int32_t d = 1; d * d <= p; ++d)
        if (p % d == 0) k = d;
    return k;
}

}  // namespace

namespace {

Schedule build(CollectiveOp op, Algorithm algorithm, std::int32_t p, double n,
               const ScheduleOptions& options, bool compact) {
    if (p < 1) throw std::invalid_argument("a collective needs at least one rank");
    if (!(n >= 0.0)) throw std::invalid_argument("collective bytes must be >= 0");
    Schedule s;
    s.op = op;
    s.algorithm = algorithm;
    s.ranks = p;
    s.bytes = n;
    Builder b{s, compact};
    auto unsupported = [&] {
        return std::invalid_argument("algorithm " + to_string(algorithm) + " does not implement " +
                                     to_string(op));
    };
    const Rings whole{1, p, 0, 1};
    check_dims(options.dims, p);
    const bool grid = options.dims.size() == 2;

    switch (op) {
        case CollectiveOp::point_to_point:
            if (algorithm != Algorithm::direct) throw unsupported();
            if (p < 2) throw std::invalid_argument("point_to_point needs two ranks");
            b.begin(0);
            b.add(0, 1, n);
            return s;
        case CollectiveOp::all_to_all:
            if (algorithm == Algorithm::pairwise) {
                // Step k: rank i sends its chunk for rank i+k; p−1 steps of n/p.
                for (std::int32_t k = 1; k < p; ++k) b.rotation(k, 1, k, n / p);
                return s;
            }
            if (algorithm != Algorithm::direct) throw unsupported();
            // One phase: every rank sends n/p to every other rank at once, and the engine
            // shares the links max-min among the p(p−1) transfers. One phase is its own
            // explicit form.
            if (p > 1) b.rotation(0, p - 1, 1, n / p);
            return s;
        case CollectiveOp::reduce_scatter:
        case CollectiveOp::all_gather:
            if (algorithm != Algorithm::ring) throw unsupported();
            if (p > 1) ring_steps(b, whole, p - 1, n / p, 0);
            return s;
        case CollectiveOp::all_reduce:
            if (p == 1) return s;
            switch (algorithm) {
                case Algorithm::ring:
                    // Reduce-scatter then all-gather: 2(p−1) steps of n/p.
                    ring_steps(b, whole, 2 * (p - 1), n / p, 0);
                    return s;
                case Algorithm::halving_doubling: {
                    // On a grid whose width is a power of two, the low bits of a grid position
                    // are its column: the exchanges run along rows first, then along columns.
                    const std::int32_t d0 = grid ? options.dims[0] : 0;
                    const bool along_grid = d0 > 1 && (d0 & (d0 - 1)) == 0;
                    halving_doubling(b, p, n);
                    if (along_grid) grid_to_ranks(s, d0);
                    return s;
                }
                case Algorithm::double_binary_tree: {
                    std::int32_t chunks = options.tree_chunks;
                    if (chunks <= 0)  // ~1 MiB chunks, 1…64
                        chunks = static_cast<std::int32_t>(
                            std::clamp(std::ceil(n / 2.0 / (1 << 20)), 1.0, 64.0));
                    double_binary_tree(b, p, n, chunks);
                    return s;
                }
                case Algorithm::hierarchical_ring: {
                    // Groups: k consecutive ranks when k is given, else the grid's rows (its
                    // columns are then the rings across), else the largest divisor ≤ √p.
                    const bool along_grid = options.hierarchical_group_size <= 0 && grid;
                    const std::int32_t k = options.hierarchical_group_size > 0 ? options.hierarchical_group_size
                                           : along_grid                        ? options.dims[0]
                                                                               : default_group_size(p);
                    if (p % k != 0)
                        throw std::invalid_argument("hierarchical_ring: group size must divide ranks");
                    const std::int32_t m = p / k;
                    // Rank r = g·k + l: group g (ranks g·k … g·k+k−1), column l (l, l+k, …).
                    const Rings groups{m, k, k, 1};
                    const Rings columns{k, m, 1, k};
                    std::size_t rs = 0;
                    if (k > 1) rs = ring_steps(b, groups, k - 1, n / k, 0);              // RS in group
                    if (m > 1) ring_steps(b, columns, 2 * (m - 1), n / k / m, 1);        // AR across
                    if (k > 1) {                                                         // AG in group
                        if (compact) b.repeat_of(s.phases[rs], k - 1);
                        else ring_steps(b, groups, k - 1, n / k, 0);
                    }
                    if (along_grid) grid_to_ranks(s, k);
                    return s;
                }
                default: throw unsupported();
            }
    }
    throw unsupported();
}

}  // namespace

std::int64_t Schedule::phase_count() const {
    std::int64_t n = 0;
    for (const Phase& ph : phases) n += ph.repeat;
    return n;
}

std::int64_t Schedule::transfer_count() const {
    std::int64_t n = 0;
    for (const Phase& ph : phases) n += static_cast<std::int64_t>(ph.transfer_count) * ph.repeat;
    return n;
}

Schedule build_schedule(CollectiveOp op, Algorithm algorithm, std::int32_t p, double n,
                        const ScheduleOptions& options) {
    return build(op, algorithm, p, n, options, true);
}

Schedule build_explicit_schedule(CollectiveOp op, Algorithm algorithm, std::int32_t p, double n,
                                 const ScheduleOptions& options) {
    return build(op, algorithm, p, n, options, false);
}

Schedule in_groups(const Schedule& per_group, std::int32_t groups) {
    Schedule s = per_group;
    const std::int32_t k = per_group.ranks;
    s.ranks = k * groups;
    s.transfers.clear();
    s.phases.clear();
    for (const Phase& ph : per_group.phases) {
        Phase grouped = ph;
        grouped.first_transfer = static_cast<std::int32_t>(s.transfers.size());
        grouped.rotation_per_source = 0;  // listed (an expert group's all-to-all is small)
        for (std::int32_t g = 0; g < groups; ++g)
            for (std::int32_t i = 0; i < ph.transfer_count; ++i) {
                Transfer t = per_group.transfer(ph, i);
                t.source_rank += g * k;
                t.target_rank += g * k;
                s.transfers.push_back(t);
            }
        grouped.transfer_count = static_cast<std::int32_t>(s.transfers.size()) - grouped.first_transfer;
        s.phases.push_back(grouped);
    }
    return s;
}

Schedule build_replica_average_schedule(std::int32_t replicas, std::int32_t ranks_per_replica, double bytes) {
    if (replicas < 1 || ranks_per_replica < 1)
        throw std::invalid_argument("replica average: needs at least one replica of at least one rank");
    const std::int32_t m = replicas, k = ranks_per_replica;
    Schedule s;
    s.op = CollectiveOp::all_reduce;
    s.algorithm = Algorithm::hierarchical_ring;
    s.ranks = m * k;
    s.bytes = bytes;
    Builder b{s, true};
    // Rank r = g·k + l. No reduce-scatter: every rank of a replica already holds the whole sum.
    if (m > 1) ring_steps(b, Rings{k, m, 1, k}, 2 * (m - 1), bytes / k / m, 0);  // slice l across replicas
    if (k > 1) ring_steps(b, Rings{m, k, k, 1}, k - 1, bytes / k, 1);            // all-gather in each
    return s;
}

Schedule expand_schedule(const Schedule& schedule) {
    Schedule out;
    out.op = schedule.op;
    out.algorithm = schedule.algorithm;
    out.ranks = schedule.ranks;
    out.bytes = schedule.bytes;
    out.transfers.reserve(static_cast<std::size_t>(schedule.transfer_count()));
    out.phases.reserve(static_cast<std::size_t>(schedule.phase_count()));
    for (const Phase& ph : schedule.phases)
        for (std::int32_t r = 0; r < ph.repeat; ++r) {
            out.phases.push_back(Phase{static_cast<std::int32_t>(out.transfers.size()), ph.transfer_count,
                                       ph.pattern, 1});
            for (std::int32_t j = 0; j < ph.transfer_count; ++j) out.transfers.push_back(schedule.transfer(ph, j));
        }
    return out;
}

}  // namespace skyfabric::workloads
