#pragma once
// Collectives decomposed into phases of concurrent rank-to-rank transfers. A phase
// starts when the previous one has finished everywhere (a step barrier), which is what
// the α–β formulas assume: each step costs α + (bytes of the step)/B.
//
// Size convention (nccl-tests): `bytes` is n, the per-rank buffer —
//   all_reduce      n in and out on every rank
//   reduce_scatter  n input per rank (n/p output)
//   all_gather      n output per rank (n/p input)
//   all_to_all      n send buffer per rank, n/p to each rank (one chunk stays local), so
//                   (p−1)/p·n leaves the rank: t = (p−1)α + ((p−1)/p)·n/B. docs/references.md
//                   writes (p−1)α + n/B with n = bytes leaving the rank.
//   point_to_point  n from rank 0 to rank 1

#include <skyfabric/physics/enum_names.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace skyfabric::workloads {

enum class CollectiveOp : std::uint8_t {
    all_reduce = 0,
    reduce_scatter = 1,
    all_gather = 2,
    all_to_all = 3,
    point_to_point = 4,
};

enum class Algorithm : std::uint8_t {
    ring = 0,                // all_reduce, reduce_scatter, all_gather
    double_binary_tree = 1,  // all_reduce (two complementary pipelined trees)
    halving_doubling = 2,    // all_reduce (recursive halving-doubling; non-2^k via fold-in)
    hierarchical_ring = 3,   // all_reduce: ring inside groups of k, ring across groups
    pairwise = 4,            // all_to_all: p−1 steps, step k sends i → i+k
    direct = 5,              // point_to_point; all_to_all: every pair at once, one phase
};

inline constexpr auto collective_op_names = physics::enum_names<CollectiveOp>({
    {CollectiveOp::all_reduce, "all_reduce"},
    {CollectiveOp::reduce_scatter, "reduce_scatter"},
    {CollectiveOp::all_gather, "all_gather"},
    {CollectiveOp::all_to_all, "all_to_all"},
    {CollectiveOp::point_to_point, "point_to_point"},
});
inline constexpr auto algorithm_names = physics::enum_names<Algorithm>({
    {Algorithm::ring, "ring"},
    {Algorithm::double_binary_tree, "double_binary_tree"},
    {Algorithm::halving_doubling, "halving_doubling"},
    {Algorithm::hierarchical_ring, "hierarchical_ring"},
    {Algorithm::pairwise, "pairwise"},
    {Algorithm::direct, "direct"},
});
// The algorithms that perform an all_reduce (workload.all_reduce).
inline constexpr std::array all_reduce_algorithms{Algorithm::ring, Algorithm::double_binary_tree,
                                                  Algorithm::halving_doubling, Algorithm::hierarchical_ring};

inline std::string to_string(CollectiveOp op) { return collective_op_names.name(op); }
inline std::string to_string(Algorithm algorithm) { return algorithm_names.name(algorithm); }
// Parse "all_reduce", "ring", ...; throws std::invalid_argument naming the bad value.
CollectiveOp parse_collective_op(const std::string& name);
Algorithm parse_algorithm(const std::string& name);
// The algorithm used when none is named (ring, or pairwise/direct).
Algorithm default_algorithm(CollectiveOp op);

struct Transfer {
    std::int32_t source_rank = 0;
    std::int32_t target_rank = 0;
    double bytes = 0.0;
    bool operator==(const Transfer&) const = default;
};

// A phase entry stands for `repeat` consecutive phases (each behind a step barrier)
// with the same transfers, transfers[first_transfer, first_transfer + transfer_count).
// Several entries may point at the same transfer range. A ring's 2(p−1) steps are one
// entry with repeat = 2(p−1) over p transfers, so a schedule holds O(p) transfers where
// the explicit form holds 2(p−1)·p.
struct Phase {
    std::int32_t first_transfer = 0;
    std::int32_t transfer_count = 0;
    // Phases with equal pattern ids have identical transfers (same pairs, same bytes),
    // so a phase's duration on an unchanged network can be reused.
    std::int32_t pattern = 0;
    std::int32_t repeat = 1;  // >= 1
    // A rotation lists no transfers: its transfer j goes from rank s = j / rotation_per_source to
    // rank (s + rotation_shift + j % rotation_per_source) mod ranks, rotation_bytes each. An
    // all-to-all's phases are rotations (pairwise step k: 1 per source, shift k; direct: p − 1 per
    // source, shift 1), so its compact schedule is O(p) where listing them took p(p − 1)
    // transfers (268 MB at p = 4,096). 0: the transfers are listed.
    std::int32_t rotation_per_source = 0;
    std::int32_t rotation_shift = 0;
    double rotation_bytes = 0.0;
    bool operator==(const Phase&) const = default;
};

struct Schedule {
    CollectiveOp op = CollectiveOp::all_reduce;
    Algorithm algorithm = Algorithm::ring;
    std::int32_t ranks = 0;
    double bytes = 0.0;
    std::vector<Transfer> transfers;
    std::vector<Phase> phases;

    // Phases as run: the sum of repeats.
    std::int64_t phase_count() const;
    // Transfers as run: the sum of transfer_count × repeat (what the explicit form lists).
    std::int64_t transfer_count() const;
    // The phase's transfer j (listed or a rotation's), 0 <= j < phase.transfer_count.
    Transfer transfer(const Phase& phase, std::int32_t j) const {
        if (phase.rotation_per_source == 0) return transfers[static_cast<std::size_t>(phase.first_transfer + j)];
        const std::int32_t source = j / phase.rotation_per_source;
        return Transfer{source, (source + phase.rotation_shift + j % phase.rotation_per_source) % ranks,
                        phase.rotation_bytes};
    }
    bool operator==(const Schedule&) const = default;
};

struct ScheduleOptions {
    // k: groups of k consecutive ranks. 0: the rows of `dims` when given, else the largest
    // divisor of p ≤ √p.
    std::int32_t hierarchical_group_size = 0;
    std::int32_t tree_chunks = 0;              // pipeline chunks per tree; 0 = auto
    // The fabric's 2-D torus grid {d0, d1} (d0·d1 = p; empty: none known), as the ranks lie
    // on it: a boustrophedon, so consecutive ranks stay neighbours — row r holds ranks
    // r·d0 … r·d0 + d0 − 1, left to right on even rows and right to left on odd ones, and
    // every row and every column is a ring of neighbours. Fabric::dims gives it for
    // torus2d. Used by hierarchical_ring (rings along the rows, then along the columns) and
    // halving_doubling (when d0 is a power of two: exchanges along rows, then columns);
    // the other algorithms need only that consecutive ranks are neighbours.
    std::vector<std::int32_t> dims;
    bool operator==(const ScheduleOptions&) const = default;
};

// Throws std::invalid_argument for an algorithm the op does not support, p < 1, or dims
// that are not two dimensions ≥ 1 whose product is p.
// Compact: ring steps (ring all-reduce, reduce-scatter, all-gather, and the rings of the
// hierarchical ring) are one repeated phase entry each, O(p) transfers in all.
Schedule build_schedule(CollectiveOp op, Algorithm algorithm, std::int32_t ranks, double bytes,
                        const ScheduleOptions& options = {});

// The same collective with every phase listed (repeat = 1 everywhere, one transfer range
// per phase): 2(p−1)·p transfers for a ring all-reduce. Built by its own loops, not by
// expanding the compact form, so tests can check one against the other; the engine gives
// both the same times.
Schedule build_explicit_schedule(CollectiveOp op, Algorithm algorithm, std::int32_t ranks,
                                 double bytes, const ScheduleOptions& options = {});

// Any schedule with its repeats unrolled into explicit phases.
Schedule expand_schedule(const Schedule& schedule);
// `per_group` run in each of `groups` groups of consecutive ranks at once, phase by phase: group
// g's ranks are g·k … g·k + k − 1 (k = per_group.ranks). E.g. the MoE all-to-alls of expert groups.
Schedule in_groups(const Schedule& per_group, std::int32_t groups);

// The outer sync of model replicas (DiLoCo, NoLoCo): `replicas` groups of `ranks_per_replica`
// consecutive ranks (replica g: ranks g·k … g·k + k − 1), every rank of a replica holding the same
// `bytes` (its outer gradient, after the replica's own all-reduce). Rank l of every replica
// all-reduces slice l (bytes/k) with rank l of the others — a ring of m across, 2(m−1) steps of
// bytes/(k·m) — and each replica then all-gathers the averaged slices (a ring of k, k−1 steps of
// bytes/k): t = 2(m−1)(α_x + n/(k·m·B_x)) + (k−1)(α_in + n/(k·B_in)). The hierarchical all-reduce
// without its first reduce-scatter, which replicas that already agree inside do not need.
Schedule build_replica_average_schedule(std::int32_t replicas, std::int32_t ranks_per_replica, double bytes);

// nccl-tests bus-bandwidth factor: busBw = algBw × factor.
// all_reduce 2(p−1)/p; reduce_scatter, all_gather, all_to_all (p−1)/p; point_to_point 1.
double bus_bandwidth_factor(CollectiveOp op, std::int32_t ranks);

}  // namespace skyfabric::workloads
