#pragma once
// The fabric as one Monte Carlo trial's faults have damaged it. A run keeps its fault-free
// topology timeline as keyframes (a new one only when the link set or a capacity changes), and
// a trial asks what a training step costs on a keyframe with links down, satellites rebooting
// and ranks moved or dropped. The answer comes from the same flow engine and step model as the
// fault-free run (simulate_training, one step on the damaged copy), cached per (keyframe,
// damage) and shared by every trial (10,000 trials of a suncatcher-81 day solve 4.3× the damaged
// steps of 1,000, not 10×) up to a memory budget, past which a damaged step is solved again when
// asked again (the same numbers).
// Local SGD (job.sync local_steps, H inner steps per outer sync): every H-th step is an outer sync,
// the others compute (and, with a mixture of experts, run their all-to-alls) without it. A damaged
// step's extra time is spread evenly over a round: the unsynchronised step's extra every step and
// the outer sync's beyond it once in H, e_between + (e_sync − e_between) / H, where e_between is 0
// for a dense model (its unsynchronised steps carry no traffic). The play draws damage per step,
// not per round, so this is the mean a step pays over the round it falls in.
// Pure: no I/O.

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <limits>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <skyfabric/links/topology.hpp>
#include <skyfabric/workloads/topology_timeline.hpp>
#include <skyfabric/workloads/faults.hpp>
#include <skyfabric/workloads/job.hpp>
#include <skyfabric/workloads/training.hpp>

namespace skyfabric::workloads {

class DamagedFabric final : public FabricModel {
public:
    // 10,000 trials of a one-day run kept ~1.1 GB of solves, 100,000 would exhaust memory: past
    // this estimate (cache_bytes) new damaged solves are not kept. Per fabric.
    static constexpr std::size_t default_cache_budget_bytes = std::size_t{512} << 20;

    // initial_ranks: satellites 0 … initial_ranks-1 hold the ranks of the undamaged fabric.
    DamagedFabric(const TopologyTimeline& timeline, StepModel model, std::int32_t initial_ranks,
                  std::size_t cache_budget_bytes = default_cache_budget_bytes);
    // A constellation's: the undamaged ranks on rank_nodes (sorted); cluster_of (node → cluster)
    // tells gateway links (between clusters) from the clusters' own for terminal outages. With
    // model.options.rank_groups (a ring per cluster) a damaged step keeps each surviving rank in
    // its group.
    DamagedFabric(const TopologyTimeline& timeline, StepModel model, std::vector<std::int32_t> rank_nodes,
                  std::vector<std::int32_t> cluster_of, std::size_t cache_budget_bytes = default_cache_budget_bytes);
    double extra_step_s(double t, const FabricDamage& damage) override;
    bool outage_link(std::int32_t satellite, double t, double mark, bool gateway,
                     std::pair<std::int32_t, std::int32_t>& link) const override;
    double next_change_s(double t) const override;
    LinkTraffic link_traffic(double t, const FabricDamage& damage, std::pair<std::int32_t, std::int32_t> link) override;

    // One step's duration on keyframe k with the damage (+inf: it cannot complete); under local SGD
    // an outer-sync step. With fewer ranks the data-parallel batch shrinks with them (tokens per
    // rank unchanged). Links down that carry none of the step's traffic without them are left out
    // (same ring, routes and rates).
    double step_s(std::size_t keyframe, const FabricDamage& damage);
    // Distinct (keyframe, damage) steps solved (= cached_solves()) until the budget first leaves
    // a solve out; from then on each solve not kept counts too, once per time it was asked.
    std::int64_t evaluations() const;
    // The solves kept, and an estimate of their bytes: each one's key, map node (64 bytes of
    // overhead besides the entry) and vectors. The undamaged keyframes' solves are kept whatever
    // the budget (damaged ones seed from them); their routes and tours are not counted.
    std::size_t cached_solves() const;
    std::size_t cache_bytes() const;

private:
    // Which step a solve is of: every step's (under local SGD the outer sync's), or a local-SGD
    // step between syncs (solved only with a mixture of experts: dense ones carry no traffic).
    enum class StepKind : char { sync = 0, between_syncs = 1 };
    struct Solved {
        double step_s = std::numeric_limits<double>::infinity();
        std::vector<std::pair<std::int32_t, std::int32_t>> used_links;  // carried bytes, sorted
        // The used links between clusters, sorted, with the bytes each carried in the step.
        std::vector<std::pair<std::pair<std::int32_t, std::int32_t>, double>> gateway_link_bytes;
        // The undamaged solve's routes and ring tours: its damaged copies' seed.
        std::shared_ptr<const RouteCache> routes;
        std::shared_ptr<const std::vector<RingTour>> tours;
    };
    Solved solve(std::size_t keyframe, const FabricDamage& damage, const Solved* undamaged, StepKind kind) const;
    static std::size_t kept_bytes(const std::string& key, const Solved& s);
    // The cached solve, or a new one: kept if it fits the budget, else moved into fresh and
    // returned from there (valid while fresh lives and is not passed again). Entries are never
    // erased: callers on other threads hold references to them.
    const Solved& solved(std::size_t keyframe, const FabricDamage& damage, Solved& fresh, StepKind kind);
    // The solve of the damage's links that matter to the step (step_s); fresh as for solved.
    const Solved& relevant_solved(std::size_t keyframe, const FabricDamage& damage, Solved& fresh, StepKind kind);
    // The damaged step's extra time over the undamaged one's, of one kind.
    double extra_s(std::size_t keyframe, const FabricDamage& damage, StepKind kind);
    // A rebuilt keyframe with each node's links (indices into topology.links, in its order), so
    // a terminal outage looks at its satellite's links only.
    struct Keyframe {
        links::Topology topology;
        std::vector<std::int32_t> node_link_offsets;  // node v's links: node_links[offsets[v] .. offsets[v+1])
        std::vector<std::int32_t> node_links;
        // Node v's links (none for a node outside the keyframe).
        std::span<const std::int32_t> links_of(std::int32_t v) const {
            const auto i = static_cast<std::size_t>(v);
            if (v < 0 || i + 1 >= node_link_offsets.size()) return {};
            return {node_links.data() + node_link_offsets[i], node_links.data() + node_link_offsets[i + 1]};
        }
    };
    // Keyframe k, rebuilt once and kept while the rebuilt keyframes fit in 64 MB (oldest dropped).
    std::shared_ptr<const Keyframe> keyframe(std::size_t k) const;
    bool between_clusters(std::pair<std::int32_t, std::int32_t> link) const;  // a gateway link
    // The key of a (keyframe, damage) solve; the undamaged ranks are written as one flag.
    std::string solve_key(std::size_t k, const FabricDamage& damage, StepKind kind) const;
    const TopologyTimeline& timeline_;
    StepModel model_;                // one step, an outer sync under local SGD
    StepModel between_syncs_model_;  // one local-SGD step that does not sync
    std::int32_t sync_every_ = 1;    // H under local SGD, else 1
    bool traffic_between_syncs_ = false;  // local SGD with a mixture of experts
    std::int32_t initial_ranks_ = 0;
    std::vector<std::int32_t> cluster_of_;  // empty: one cluster
    std::vector<std::int32_t> group_of_cluster_;  // a cluster's rank group (model options' rank_groups): its spares join it
    FabricDamage undamaged_;
    mutable std::shared_mutex mutex_;
    std::unordered_map<std::string, Solved> cache_;
    std::size_t cache_budget_bytes_ = default_cache_budget_bytes;
    std::size_t cache_bytes_ = 0;          // kept_bytes of cache_'s entries
    std::int64_t uncached_solves_ = 0;     // solves past the budget, not kept
    // Each keyframe's undamaged step of each kind (NaN until solved): every damaged answer is taken
    // from it. Kind-major: [kind * keyframes + k].
    std::unique_ptr<std::atomic<double>[]> undamaged_step_s_;
    mutable std::mutex keyframes_mutex_;
    mutable std::map<std::size_t, std::shared_ptr<const Keyframe>> keyframes_;
    mutable std::deque<std::size_t> keyframe_order_;
    mutable std::size_t keyframe_bytes_ = 0;
};

}  // namespace skyfabric::workloads
