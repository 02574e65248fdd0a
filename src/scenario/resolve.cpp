// A scenario resolved: the values one section's defaults take from another's, derived once into a new
// scenario. What was read stays as read; the checks between sections (check_scenario.cpp) only report.
#include "scenario/scenario.hpp"

#include "scenario/section_readers.hpp"

#include <skyfabric/physics/random.hpp>
#include <skyfabric/physics/time.hpp>

#include <algorithm>
#include <numeric>

namespace skyfabric::scenario {

namespace detail {

workloads::ClusterTrainingSetup cluster_training(const Scenario& sc) {
    workloads::ClusterTrainingSetup setup;
    setup.cluster_nodes = cluster_ranks(sc);
    setup.cluster_satellites = cluster_satellites(sc);
    std::int32_t ranks = 0;
    for (const auto& nodes : setup.cluster_nodes) ranks += static_cast<std::int32_t>(nodes.size());
    const bool alone = sc.workload.enabled && !workloads_share_fabric(sc);
    if (alone) {
        setup.job = sc.workload.job;
        setup.experts_across_clusters = sc.workload.experts_across_clusters;
    }
    if (!alone || setup.job.data_parallel == 0) setup.job.data_parallel = ranks;
    return setup;
}

}  // namespace detail

using namespace detail;

Scenario resolve(const Scenario& read) {
    Scenario sc = read;
    // duration_orbits: orbits of the nodal period under the dynamics' J2.
    if (sc.duration_orbits) sc.duration_s = orbit_period_s(sc) * *sc.duration_orbits;
    // The scenario's seed and the orbit's epoch, where a section's model draws or dates anything.
    sc.dynamics.drag.seed = sc.seed;
    sc.radiation.environment.epoch_julian_date_days = physics::julian_date(sc.orbit.epoch);
    if (sc.ground.enabled) {
        sc.ground.segment.epoch_julian_date_days = physics::julian_date(sc.orbit.epoch);
        sc.ground.segment.seed = sc.seed;
    }
    if (sc.workload.enabled || !sc.inference.enabled) {  // a training section was read (a serving one alone has none)
        auto& options = sc.workload.options;
        options.seed = sc.seed;
        if (options.stragglers.probability > 0.0) options.stragglers.seed = physics::rng::derive_seed(sc.seed, 0x5354524147ull);  // "STRAG"
    }
    if (sc.inference.enabled)  // arrivals.seed, else the scenario's (within arrivals.seed's range)
        sc.inference.serving.requests.seed = sc.inference.arrivals_seed.value_or(sc.seed & 0x7fffffffffffffffull);
    // routing_model auto: flat while its guided searches serve (every cluster's gateway links within the
    // guide's limit, workloads::max_entries: up to 17 clusters of 4 gateways), where they are the faster;
    // two-level beyond, where a flat search settles most of the constellation (docs/routing.md).
    if (auto& model = sc.constellation.routing_model; !model) {
        const auto gateway_links_into_a_cluster = static_cast<std::int64_t>(sc.constellation.gateways.gateways_per_cluster) *
                                                  (static_cast<std::int64_t>(sc.constellation.clusters.size()) - 1);
        model = gateway_links_into_a_cluster > workloads::max_entries ? workloads::RoutingModel::two_level : workloads::RoutingModel::flat;
    }
    const std::vector<std::size_t> sizes = sc.fabric ? std::vector<std::size_t>{} : cluster_sizes(sc);
    const std::size_t satellites = sc.fabric ? node_count(sc) : std::accumulate(sizes.begin(), sizes.end(), std::size_t{0});
    auto& recovery = sc.radiation.recovery;
    // A constellation keeps radiation.spare_satellites hot spares in each cluster (its last ones).
    if (sc.constellation.enabled && sc.radiation.enabled && recovery.spare_satellites > 0 && !sizes.empty())
        recovery.spare_group_size = static_cast<std::int32_t>(sizes.front());
    auto& job = sc.workload.job;
    // A training job beside a serving one: data-parallel over its clusters' satellites that serve nothing.
    if (workloads_share_fabric(sc)) job.data_parallel = static_cast<std::int32_t>(shared_training_nodes(sc).size());
    if (sc.workload.enabled) {
        // Hot spares hold no rank: a formation's job defaults to the satellites before its spares (its
        // last ones, as in each cluster of a constellation), and its ranks are placed there, the nodes
        // the fault trials' damaged fabric trains on; else its faults would not act on the fabric.
        const std::int32_t spares = sc.radiation.enabled && !sc.fabric && !sc.constellation.enabled ? recovery.spare_satellites : 0;
        const std::int32_t formation_ranks = static_cast<std::int32_t>(satellites) - spares;
        if (job.data_parallel == 0) job.data_parallel = sc.constellation.enabled ? cluster_training(sc).job.data_parallel : formation_ranks;
        auto& options = sc.workload.options;
        if (spares > 0 && formation_ranks > 0 && job.data_parallel == formation_ranks && options.rank_groups.empty()) {
            options.rank_nodes.resize(static_cast<std::size_t>(formation_ranks));
            std::iota(options.rank_nodes.begin(), options.rank_nodes.end(), 0);
        }
    }
    // A serving role takes the chips of where its instances stand (a cluster's or a ground data centre's).
    if (sc.inference.enabled) {
        sc.ground.placement.prefill_datacentre = datacentre_index(sc.ground, sc.inference.prefill_site);
        sc.ground.placement.decode_datacentre = datacentre_index(sc.ground, sc.inference.decode_site);
        const auto nodes = inference_nodes(sc);
        const ServingRoleRanges r = serving_role_ranges(sc);
        auto& e = sc.inference.serving.engines;
        const auto take = [&](std::optional<workloads::Accelerator>& own, std::size_t from, std::size_t to) {
            if (auto site = site_accelerator(sc, nodes, from, to).chips) own = std::move(site);
        };
        if (nodes.size() == r.decode_end) {  // else the instances do not fit (refused by the checks)
            if (r.dedicated > 0) {
                // The dedicated group (cluster 0 in a constellation) takes its own site's chips, the other prefill instances theirs.
                const bool role_own = read.inference.serving.engines.prefill.accelerator.has_value();
                take(e.dedicated_prefill_accelerator, 0, r.dedicated);
                if (r.dedicated < r.prefill_end) take(e.prefill.accelerator, r.dedicated, r.prefill_end);
                // A dedicated group whose site gives no chips keeps the workload's, not those the others' site gave them.
                if (!e.dedicated_prefill_accelerator && !role_own && e.prefill.accelerator)
                    e.dedicated_prefill_accelerator = sc.inference.accelerator;
            } else {
                take(e.prefill.accelerator, 0, r.prefill_end);
            }
            take(e.decode.accelerator, r.prefill_end, r.decode_end);
        }
    }
    if (sc.radiation.enabled) {
        // The rank-loss policy: given, or spare when there are spares, else wait.
        recovery.on_rank_loss = sc.workload.on_rank_loss.value_or(recovery.spare_satellites > 0 ? workloads::RankLossPolicy::spare
                                                                                                 : workloads::RankLossPolicy::wait);
        // radiation.chips_per_satellite 0: the workload's chips per satellite, else 1.
        auto& chips = sc.radiation.faults.chips_per_satellite;
        if (chips == 0) chips = sc.workload.enabled    ? job.tensor_parallel
                              : sc.inference.enabled ? sc.inference.serving.engines.chips_per_satellite
                                                     : 1;
    }
    // faults.rate_scale on the causes' rates as written (the read causes kept apart: resolving again scales them once).
    sc.faults.operational.causes = sc.faults.causes;
    for (auto& cause : sc.faults.operational.causes) cause.rate_per_gpu_s *= sc.faults.rate_scale;
    // faults.gpus_per_rank 0: the workload's chips per rank (parallelism.tensor).
    auto& gpus = sc.faults.operational.gpus_per_rank;
    if (gpus == 0) gpus = std::max(1, job.tensor_parallel);
    if (sc.faults.enabled) {
        // Beside radiation the operational faults join its draws; on a synthetic fabric they are the run's.
        if (sc.radiation.enabled) sc.radiation.faults.operational = sc.faults.operational;
        else sc.faults.recovery.on_rank_loss = sc.workload.on_rank_loss.value_or(workloads::RankLossPolicy::wait);
    }
    // The power section's loads: the workload's chips on each satellite.
    sc.power.parameters.loads.accelerators =
        sc.inference.enabled ? sc.inference.serving.engines.chips_per_satellite : sc.workload.job.tensor_parallel;
    return sc;
}

}  // namespace skyfabric::scenario
