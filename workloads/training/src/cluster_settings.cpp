// What training across clusters refuses, each constraint once (cluster_training.hpp check; its fault
// trials' are in faults/src/cluster_fault_settings.cpp): the library's entry points throw these
// problems, the scenario loader reports them at the scenario keys they were read from.
#include <skyfabric/workloads/cluster_training.hpp>

#include <algorithm>
#include <string>

namespace skyfabric::workloads {

namespace {

bool lists(std::span<const ClusterAlgorithm> algorithms, ClusterAlgorithm a) {
    return std::find(algorithms.begin(), algorithms.end(), a) != algorithms.end();
}

}  // namespace

physics::SettingsProblems check(const ClusterTrainingSetup& setup, std::span<const ClusterAlgorithm> algorithms) {
    physics::SettingsProblems problems;
    const auto& clusters = setup.cluster_nodes;
    if (clusters.empty()) problems.push_back({"cluster_nodes", "no clusters"});
    if (std::any_of(clusters.begin(), clusters.end(), [](const auto& c) { return c.empty(); }))
        problems.push_back({"cluster_nodes", "a cluster has no satellites"});
    if (clusters.size() == 1) {  // a single formation: ring is its job as configured (every_step_model)
        const auto other = std::find_if(algorithms.begin(), algorithms.end(), [](auto a) { return a != ClusterAlgorithm::ring; });
        if (other != algorithms.end())
            problems.push_back({"cluster_nodes", "a constellation needs at least 2 clusters for " + std::string(to_string(*other)) +
                                                     " (one cluster trains its job's own collective: ring alone)"});
        return problems;
    }
    if (!problems.empty()) return problems;  // the rest divides by the clusters and their sizes
    if (lists(algorithms, ClusterAlgorithm::diloco) || lists(algorithms, ClusterAlgorithm::noloco)) {
        if (setup.job.local_steps < 1) problems.push_back({"job.local_steps", "must be at least 1"});
        if (setup.job.sync == SyncMode::local_steps)
            problems.push_back({"job.sync", "local_steps makes every rank a local-SGD replica, and diloco and noloco make "
                                            "each cluster one (their inner steps all-reduce inside it): use every_step with "
                                            "them, or drop them from constellation.algorithms to run ring or hierarchical "
                                            "with rank replicas"});
    }
    std::size_t smallest = clusters.front().size(), all = 0;
    for (const auto& c : clusters) {
        smallest = std::min(smallest, c.size());
        all += c.size();
    }
    // hierarchical slices the gradient by rank within a cluster; a diloco or noloco replica is a cluster.
    const bool equal = std::all_of(clusters.begin(), clusters.end(), [&](const auto& c) { return c.size() == smallest; });
    for (const auto a : algorithms)
        if (a != ClusterAlgorithm::ring && !equal)
            problems.push_back({"algorithms", std::string(to_string(a)) + " needs clusters of equal size (give every cluster the same radius_m)"});
    // chip_count(job) weighs the MFU of every algorithm.
    if (static_cast<std::size_t>(std::max(0, setup.job.data_parallel)) != all)
        problems.push_back({"job.data_parallel", "a constellation trains on every satellite but its hot spares: give all " +
                                                     std::to_string(all) + " (0 in a scenario)"});
    const MixtureOfExperts& moe = setup.job.moe;
    if (moe.layers > 0 && moe.expert_parallel > 1) {
        const std::size_t e = static_cast<std::size_t>(moe.expert_parallel), m = clusters.size();
        if (!setup.experts_across_clusters) {
            // Groups of consecutive ranks of a cluster's ring: one that straddles two clusters is not inside one.
            for (const auto& c : clusters)
                if (c.size() % e != 0) {
                    problems.push_back({"job.moe.expert_parallel", "expert groups of " + std::to_string(e) +
                                                                       " ranks inside a cluster must divide every cluster's size (" +
                                                                       std::to_string(c.size()) + "); or give expert_placement: across_clusters"});
                    break;
                }
        } else {
            // Group g takes the same share of ranks of every cluster (every_step_model).
            if (!equal) problems.push_back({"experts_across_clusters", "across_clusters needs clusters of equal size"});
            if (e % m != 0 || smallest % (e / m) != 0)
                problems.push_back({"job.moe.expert_parallel", "across_clusters takes expert / clusters ranks from each of the " +
                                                                   std::to_string(m) + " clusters: give a multiple of " + std::to_string(m) +
                                                                   " whose share divides the cluster size " + std::to_string(smallest)});
        }
    }
    if (setup.experts_across_clusters && moe.layers > 0)
        for (const auto a : algorithms)
            if (a == ClusterAlgorithm::diloco || a == ClusterAlgorithm::noloco)
                problems.push_back({"experts_across_clusters", "across_clusters cannot run with " + std::string(to_string(a)) +
                                                                   " (its replica is one cluster): drop it from constellation.algorithms "
                                                                   "or use within_cluster"});
    return problems;
}

}  // namespace skyfabric::workloads
