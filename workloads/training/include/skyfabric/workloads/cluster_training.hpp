#pragma once
// Training across clusters: one job over several formations joined by a thin layer of long-range
// gateway links, run four ways so that they can be compared on the same constellation.
//   ring          every step, one ring all-reduce over every rank (cluster after cluster): each
//                 ring step crosses the gateway layer as often as there are clusters.
//   hierarchical  every step, reduce-scatter inside each cluster, all-reduce of the slices across
//                 clusters (rank l of every cluster), all-gather inside (Algorithm::hierarchical_ring
//                 with groups of one cluster).
//                 With job.sync local_steps, ring and hierarchical are the outer syncs of local SGD
//                 with a rank per replica: every job.local_steps-th step (job.hpp).
//   diloco        local SGD with a cluster per replica: job.local_steps (H) steps all-reducing
//                 inside the cluster only, then an outer sync of every replica's outer gradient
//                 (build_replica_average_schedule over all clusters) behind a global barrier.
//   noloco        the same inner steps; the outer sync averages each replica with one peer drawn
//                 from the seed for that round (a random pairing; an odd one out skips the round),
//                 and a pair waits only for itself: no global barrier.
// One cluster (a single formation) has no choice across clusters to make: ring alone, and it is the
// job as configured (its own all-reduce, placement, ranks and data_parallel), so that a formation
// and a constellation run through the same entry point.
// Every variant computes the same global batch per step (tokens_per_step over all ranks, a replica
// taking its ranks' share), so tokens/s compare. Convergence per token differs: convergence.hpp
// weighs it from published loss gaps.
//
// Model: a replica's inner steps and a pair's outer sync run on their own clocks over the stored
// topologies (a fresh NetworkClock per stretch), each with the network to itself: collectives of
// different replicas or pairs that overlap in time do not share links' capacity. Exact while their
// routes are disjoint (intra-cluster traffic stays inside its cluster; a pair's slices cross on the
// direct gateway links between the two); where routes detour through a third cluster (its direct
// links blocked) the contention is left out.
// Pure: no I/O.

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <skyfabric/physics/enum_names.hpp>
#include <skyfabric/physics/settings_problem.hpp>
#include <skyfabric/workloads/job.hpp>
#include <skyfabric/workloads/training.hpp>

namespace skyfabric::workloads {

enum class ClusterAlgorithm : std::uint8_t { ring = 0, hierarchical = 1, diloco = 2, noloco = 3 };
inline constexpr auto cluster_algorithm_names = physics::enum_names<ClusterAlgorithm>({
    {ClusterAlgorithm::ring, "ring"},
    {ClusterAlgorithm::hierarchical, "hierarchical"},
    {ClusterAlgorithm::diloco, "diloco"},
    {ClusterAlgorithm::noloco, "noloco"},
});
// Every algorithm, in the order they are listed and compared.
inline constexpr std::array<ClusterAlgorithm, 4> cluster_algorithms = cluster_algorithm_names.values();
inline std::optional<ClusterAlgorithm> cluster_algorithm_from_name(std::string_view name) {
    return cluster_algorithm_names.value(name);
}
inline std::string_view to_string(ClusterAlgorithm algorithm) { return cluster_algorithm_names.name(algorithm); }

struct ClusterTrainingSetup {
    // The whole constellation's job: data_parallel = every rank, tokens_per_step the global batch
    // (one cluster: the job as configured, data_parallel its own).
    TrainingJob job;
    Accelerator accelerator;
    // Flow (routing, multipath), start_s, end_s. Placement (a ring along each cluster's links,
    // re-embedded when it breaks), rank nodes and the all-reduce algorithm are set per variant.
    TrainingOptions options;
    // Nodes of each cluster that hold ranks; every cluster the same size for hierarchical, diloco and noloco.
    std::vector<std::vector<std::int32_t>> cluster_nodes;
    // Every satellite of each cluster: its ranks, then its hot spares (which relay traffic, and train
    // only where a fault trial swaps one in for a rank of its cluster); empty: cluster_nodes.
    std::vector<std::vector<std::int32_t>> cluster_satellites;
    // diloco and noloco: job.local_steps inner steps per outer sync, of outer_sync_bytes(job) (the
    // local-SGD model of job.hpp, a cluster per replica).
    std::uint64_t seed = 42;                // noloco's pairings
    // Mixture of experts (job.moe): each expert group inside one cluster (false: consecutive ranks
    // of a cluster's ring; expert_parallel must divide the cluster size), or spread over every
    // cluster (true: expert_parallel / clusters ranks of each cluster per group; ring and
    // hierarchical only, since a diloco or noloco replica is one cluster), so that the all-to-alls
    // cross the gateway links.
    bool experts_across_clusters = false;
    bool operator==(const ClusterTrainingSetup&) const = default;
};

// What a run hands the cluster training beside its setup: where the topologies come from, each
// cluster's compute under a power limit, and the training context (route store, stop, end limit).
struct ClusterTrainingContext {
    // A topology source positioned at from_s (the keyframe valid then, onwards), with each
    // topology's network (TopologyTimeline::frames_from shares them among the clocks).
    std::function<FrameSource(double from_s)> topologies;
    // Power: when cluster c's ranks finish work_s of full-speed compute started at start_s (its own
    // sun, shadow and battery; empty: full speed). Ring and hierarchical steps wait for the slowest
    // cluster; a diloco or noloco replica runs at its own cluster's pace.
    std::function<double(std::size_t cluster, double start_s, double work_s)> cluster_compute_done_s;
    // Each training's context; with cluster_compute_done_s its compute_done_s is set per algorithm from it.
    TrainingContext training;
};

// Each cluster's satellites, spares included (cluster_satellites, else cluster_nodes).
inline const std::vector<std::vector<std::int32_t>>& satellites_of(const ClusterTrainingSetup& setup) {
    return setup.cluster_satellites.empty() ? setup.cluster_nodes : setup.cluster_satellites;
}

// One replica's (cluster's) outer round: its inner steps, then the wait for its peer(s) and the sync.
struct ReplicaRound {
    std::int32_t replica = 0;
    std::int64_t round = 0;
    std::int32_t peer = -1;        // noloco: the replica it averaged with (−1: none); diloco: −1 (all)
    std::int64_t inner_steps = 0;  // steps done in the round (fewer than H when the run ended)
    double start_s = 0.0;
    double ready_s = 0.0;          // inner steps done
    double sync_start_s = 0.0;     // when the outer sync began (= max ready of the replicas it waits for)
    double end_s = 0.0;            // sync done (= ready_s when there was none; the run's end when
                                   // the sync found no path, and the round's steps were lost)
};

struct ClusterTrainingResult {
    ClusterAlgorithm algorithm = ClusterAlgorithm::ring;
    std::int64_t steps = 0;            // global-batch steps: replica-steps × replica share, summed
    double start_s = 0.0;
    double end_s = 0.0;                // the last replica's last completed work
    double step_time_mean_s = 0.0;     // wall per step, mean over replicas (the outer syncs included)
    double compute_per_step_s = 0.0;
    double all_to_all_per_step_s = 0.0;  // MoE: the expert all-to-alls per step (diloco, noloco: per inner step)
    double tokens_per_s = 0.0;
    double mfu = 0.0;
    double idle_fraction = 0.0;        // 1 − compute time / wall, mean over accelerators
    double outer_sync_mean_s = 0.0;    // diloco, noloco: mean outer-sync duration (from sync start)
    double outer_wait_mean_s = 0.0;    // diloco, noloco: mean time a replica waited for others to be ready
    // Compute time beyond full speed (a power limit), summed over steps; diloco, noloco: mean over
    // replicas of their own (what others lose waiting for them is in outer_wait_mean_s).
    double compute_throttled_s = 0.0;
    // Compute time stragglers added (TrainingOptions::stragglers), summed over steps; diloco, noloco:
    // mean over replicas of their own (each replica's steps wait only for its own ranks).
    double straggler_s = 0.0;
    std::int64_t outer_rounds = 0;
    double intra_cluster_bytes = 0.0;  // carried by links inside clusters (both directions)
    double gateway_bytes = 0.0;        // carried by links between clusters
    // diloco, noloco: bytes a replica's inner steps or a pair's sync put on links of clusters outside
    // it (detours, e.g. round a blocked line of sight), where the model leaves out their contention
    // with the others' traffic (above). 0: the figures are exact in that respect.
    double bytes_outside_own_clusters = 0.0;
    bool truncated = false;            // a collective could not finish (no path)
    std::vector<ReplicaRound> rounds;  // diloco, noloco
    TrainingResult training;           // ring, hierarchical: the full record
};

// What simulate_cluster_training refuses in a setup for these algorithms, by field name ("algorithms"
// for the list itself): at least one cluster, none empty; one cluster runs ring only (the job as configured,
// checked on its own: nothing below applies); with several, job.local_steps >= 1 and every-step
// synchronisation inside a replica (diloco, noloco: job.sync local_steps would nest rank replicas in
// each cluster replica, which is not modelled); clusters
// of equal size for every algorithm but ring; job.data_parallel every rank of the clusters; a mixture
// of experts whose groups tile each cluster (within), or take an equal share of every cluster of equal
// size (across; ring and hierarchical only, since a diloco or noloco replica is one cluster).
physics::SettingsProblems check(const ClusterTrainingSetup& setup, std::span<const ClusterAlgorithm> algorithms);

// Throws std::invalid_argument for check(setup, {algorithm})'s first problem, or no topologies.
ClusterTrainingResult simulate_cluster_training(ClusterAlgorithm algorithm, const ClusterTrainingSetup& setup,
                                                const ClusterTrainingContext& context);
// Every algorithm on the same setup, up to `threads` at once (0: every core), results in the order
// given: each is the one simulate_cluster_training gives alone (they share only read-only inputs, so
// context's functions must be callable from several threads). A thread with no algorithm left searches
// routes for those still running (FlowContext::helpers, with a route store and several paths).
// check(setup, algorithms)'s first problem is thrown before any runs; otherwise the first error, in
// that order.
std::vector<ClusterTrainingResult> simulate_cluster_trainings(std::span<const ClusterAlgorithm> algorithms,
                                                              const ClusterTrainingSetup& setup,
                                                              const ClusterTrainingContext& context, std::int32_t threads);

// One step of ring or hierarchical: every rank, a ring per cluster (rank_groups), the global batch
// (one cluster: the job as configured). Its context is context.training with the compute of every cluster.
StepModel every_step_model(ClusterAlgorithm algorithm, const ClusterTrainingSetup& setup,
                           const ClusterTrainingContext& context = {});
// One inner step of diloco's or noloco's replica (cluster) `replica`: its ranks (rank_nodes), its
// share of the global batch, a ring all-reduce inside it.
// Its context is context.training with the replica's cluster's compute.
StepModel replica_step_model(const ClusterTrainingSetup& setup, std::size_t replica, const ClusterTrainingContext& context = {});

// The seeded pairing of `replicas` for outer round `round`: peer[r] (−1: sits this round out).
// A uniformly random perfect matching (Fisher–Yates on a counter-based stream, then consecutive pairs).
std::vector<std::int32_t> noloco_pairing(std::int32_t replicas, std::int64_t round, std::uint64_t seed);

}  // namespace skyfabric::workloads
