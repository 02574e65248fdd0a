// What a constellation's fault trials refuse, each constraint once (cluster_faults.hpp check; the
// training's own are in training/src/cluster_settings.cpp): the library's entry points throw these
// problems, the scenario loader reports them at the scenario keys they were read from.
#include <skyfabric/workloads/cluster_faults.hpp>

#include <algorithm>
#include <string>

namespace skyfabric::workloads {

physics::SettingsProblems check(const ClusterFaultSetup& setup, std::span<const ClusterAlgorithm> algorithms) {
    physics::SettingsProblems problems;
    const RecoveryConfig& r = setup.recovery;
    if (r.spare_satellites != 0) {
        // Each cluster: its ranks, then its spare_satellites spares, the clusters one after another.
        const auto& ranks = setup.training.cluster_nodes;
        const auto& all = setup.training.cluster_satellites;
        bool laid_out = all.size() == ranks.size();
        // Group size 0: one group of every satellite, which is one cluster's layout (a single formation's).
        const std::size_t group = r.spare_group_size > 0 ? static_cast<std::size_t>(r.spare_group_size)
                                  : all.size() == 1     ? all.front().size()
                                                        : 0;
        std::int32_t next = 0;
        for (std::size_t c = 0; laid_out && c < all.size(); ++c) {
            laid_out = all[c].size() == group &&
                       ranks[c].size() + static_cast<std::size_t>(r.spare_satellites) == all[c].size() &&
                       std::equal(ranks[c].begin(), ranks[c].end(), all[c].begin());
            for (std::size_t i = 0; laid_out && i < all[c].size(); ++i) laid_out = all[c][i] == next++;
        }
        if (!laid_out)
            problems.push_back({"recovery.spare_satellites", "hot spares in a constellation are each cluster's last spare_satellites "
                                                             "satellites (spare_group_size its size), serving its own ranks"});
    }
    if (r.on_rank_loss != RankLossPolicy::shrink) return problems;
    if (std::find(algorithms.begin(), algorithms.end(), ClusterAlgorithm::hierarchical) != algorithms.end())
        problems.push_back({"recovery.on_rank_loss", "shrink with the hierarchical algorithm across clusters would leave "
                                                     "clusters of unequal size, which its all-reduce cannot split: use wait, "
                                                     "or drop hierarchical from constellation.algorithms"});
    const MixtureOfExperts& moe = setup.training.job.moe;
    if (moe.layers > 0 && moe.expert_parallel > 1 && setup.training.cluster_nodes.size() > 1)
        problems.push_back({"recovery.on_rank_loss", "shrink with a mixture of experts across a constellation is not "
                                                     "modelled (its groups would have to re-form in every cluster): use wait"});
    return problems;
}

}  // namespace skyfabric::workloads
