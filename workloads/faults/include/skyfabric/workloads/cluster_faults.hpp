#pragma once
// Radiation faults across a constellation: every Monte Carlo trial draws one set of fault events
// over all satellites (each its own dose history: clusters far apart cross the SAA at different
// times) and the gateway terminals, and each cluster algorithm plays the same draws with its own
// recovery semantics over the fabric the trial damages (damaged_fabric.hpp):
//   ring, hierarchical  one synchronous job over every rank (the play of faults.hpp): a crash of
//                 any rank rolls every rank back; with on_rank_loss wait the ring stalls until the
//                 satellite is back, with shrink it re-forms without it (ring only); a terminal
//                 outage, ISL or gateway, reroutes the step's collectives around the link.
//   diloco        each replica (cluster) plays its own satellites' events over its own inner
//                 steps and checkpoints (the same play, on that cluster); outer round r ends when
//                 the slowest replica has kept (r+1)·H inner steps:
//                     E_{r+1} = E_r + max_c w_{c,r} + s_r
//                 with w_{c,r} replica c's own time for the round's H kept steps (faults,
//                 rework, restarts and checkpoints included) and s_r the fault-free outer sync.
//   noloco        the same replica plays on the replicas' own clocks; a pair waits only for
//                 itself — unless one of the two is late by more than a fault-free round's inner
//                 work (it is recovering): then the late one skips the round's average, and the
//                 replicas left without a partner this way pair up among themselves, in index
//                 order (an odd one out goes on alone).
// The replicas' composition is a model of its own: a replica's play does not see the time it
// would spend waiting at a barrier (its faults fall on its own clock), and the outer syncs take
// their fault-free time (a gateway outage or a satellite down during one is not replayed).
// One cluster (a single formation): ring alone, its job as configured (cluster_training.hpp), and the
// play of faults.hpp on it; where that job's ranks are not the cluster's satellites outside the spares
// the faults act on the satellites but not on the fabric (ClusterGoodput::on_fabric).
// Goodput, every algorithm: the fault-free time of the work kept (each kept step's fault-free
// duration; diloco/noloco rounds: the slowest replica's fault-free inner steps and the sync) over
// the elapsed time, so checkpoints count as lost and a fault-free trial gives 1 − checkpoint
// overhead. Replicas checkpoint on their own clocks: with replicas of unequal pace (a throttled
// cluster) their checkpoints fall in different rounds and the barrier pays each, so diloco's and
// noloco's fault-free goodput is then below ring's. Waiting counts only beyond the fault-free
// schedule's own (a sunlit replica waiting for a throttled one is credited there).
// Pure: no I/O.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <skyfabric/workloads/backend.hpp>
#include <skyfabric/workloads/cluster_training.hpp>
#include <skyfabric/workloads/damaged_fabric.hpp>
#include <skyfabric/workloads/faults.hpp>

namespace skyfabric::workloads {

// The step durations a fault play uses: each fault-free step's (start, duration), nominal the median.
StepDurations fault_free_steps(const TrainingResult& training);

struct ClusterFaultSetup {
    const DoseRateSeries* series = nullptr;  // every satellite's dose rate, satellites cluster after cluster
    FaultModel model;                        // gateway_satellites: every cluster's gateways
    // With hot spares: spare_satellites per cluster, spare_group_size the clusters' (equal) size.
    RecoveryConfig recovery;
    double duration_s = 0.0;
    std::uint64_t seed = 42;
    std::int32_t trials = 1;
    // Given instead of drawn: each trial's sorted events (trials = their count; a test's known faults).
    std::span<const std::vector<FaultEvent>> events;
    Backend backend = Backend::cpu;          // where the events are drawn
    std::int32_t threads = 1;                // 0: every core
    const TopologyTimeline* timeline = nullptr;  // the fault-free fabric
    // The fault-free run's setup: its cluster_nodes are the ranks, its cluster_satellites the ranks and
    // spares (numbered cluster after cluster).
    ClusterTrainingSetup training;
    // What its steps are handed (the route store its fault-free run filled, each cluster's compute);
    // its topologies are unused (the trials damage `timeline`'s keyframes).
    ClusterTrainingContext training_context;
    // Set (Ctrl-C): no further trial starts, and what was played returns marked interrupted
    // (ClusterGoodput::interrupted).
    const std::atomic<bool>* stop = nullptr;
    // A nominal trial's events (ring, hierarchical): played again with its timeline recorded
    // (ClusterGoodput::nominal). With trials = 1 it is the one trial: no Monte Carlo is played.
    const std::vector<FaultEvent>* nominal_events = nullptr;
    // The trials shared among cooperating processes (faults.hpp TrialShare): each plays its part of
    // every algorithm's trials and gathers the rest, so every part returns what one process would,
    // but fabric_evaluations (its own damaged steps). Given events are played whole by every part.
    const TrialShare* share = nullptr;
};

struct ClusterGoodput {
    ClusterAlgorithm algorithm = ClusterAlgorithm::ring;
    // goodput over trials and each trial's losses; diloco and noloco: lost_waiting_s is the time
    // replicas waited for others, the rest the replicas' own losses (mean over replicas) scaled to
    // what the composition lost besides waiting.
    MonteCarloResult monte_carlo;
    double fault_free_goodput = 0.0;         // the same play without events: checkpoints only
    std::int64_t fabric_evaluations = 0;     // distinct damaged steps solved (DamagedFabric::evaluations)
    // False: the job's data-parallel ranks are not the satellites outside the spares (one cluster
    // only), so the faults stop ranks but damage no fabric.
    bool on_fabric = true;
    std::optional<GoodputResult> nominal;    // the play of setup.nominal_events (ring, hierarchical)
    // The stop came before every trial was played: the Monte Carlo figures are incomplete (a nominal
    // trial played before it is whole).
    bool interrupted = false;
};

// What monte_carlo_cluster_goodput refuses in the recovery for these algorithms, by field name
// ("recovery.spare_satellites"): spares that are not each cluster's last spare_satellites (a spare
// serves its own cluster: it joins that cluster's ring, and hierarchical's clusters stay equal), and
// shrink with hierarchical (its clusters would become unequal) or, across several clusters, with a
// mixture of experts (its groups would re-form in every cluster; one cluster's shrink keeps whole
// expert groups, RecoveryConfig::rank_multiple). The training it replays is check(setup.training, algorithms)'s.
physics::SettingsProblems check(const ClusterFaultSetup& setup, std::span<const ClusterAlgorithm> algorithms);

// Whether the trials have a fault-free step to replay for the algorithm: ring and hierarchical a step of
// `steps`, diloco and noloco an inner step of each of the `replicas` in fault_free's rounds. A run
// shorter than one step has none, and monte_carlo_cluster_goodput refuses it.
bool trials_have_steps(ClusterAlgorithm algorithm, const ClusterTrainingResult& fault_free, const StepDurations& steps,
                       std::int32_t replicas);

// The trials of each algorithm, over the same draws. Per algorithm: fault_free, its fault-free run
// (diloco, noloco: its rounds give each replica's inner step and sync times); steps, ring's and
// hierarchical's fault-free steps (fault_free_steps of its training record; ignored otherwise).
std::vector<ClusterGoodput> monte_carlo_cluster_goodput(std::span<const ClusterAlgorithm> algorithms,
                                                        const ClusterFaultSetup& setup,
                                                        std::span<const ClusterTrainingResult> fault_free,
                                                        std::span<const StepDurations> steps);

}  // namespace skyfabric::workloads
