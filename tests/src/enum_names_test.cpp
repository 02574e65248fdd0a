// Every enum name table (physics::EnumNames), walked: name → value → name, and the HDF5 `*_names`
// string listing every value once, in order. The strings result.h5 carries are pinned as
// docs/output-format.md documents them.
#include "scenario/scenario.hpp"

#include <skyfabric/links/aggregation.hpp>
#include <skyfabric/links/satellite_status.hpp>
#include <skyfabric/links/topology.hpp>
#include <skyfabric/links/topology_policy.hpp>
#include <skyfabric/physics/power.hpp>
#include <skyfabric/physics/propagation.hpp>
#include <skyfabric/workloads/backend.hpp>
#include <skyfabric/workloads/cluster_training.hpp>
#include <skyfabric/workloads/collectives.hpp>
#include <skyfabric/workloads/faults.hpp>
#include <skyfabric/workloads/serving.hpp>
#include <skyfabric/workloads/synthetic_fabric.hpp>
#include <skyfabric/workloads/training.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

namespace {

namespace sf = skyfabric;
namespace sw = skyfabric::workloads;

template <class Enum, std::size_t N>
void walk(const char* table, const sf::physics::EnumNames<Enum, N>& names) {
    SCOPED_TRACE(table);
    std::string numbered;
    for (std::size_t v = 0; v < N; ++v) {
        const auto value = static_cast<Enum>(v);
        const std::string name = names.name(value);
        EXPECT_NE(name, "unknown") << "value " << v;
        EXPECT_EQ(names.value(name), value) << name;
        numbered += (v ? "," : "") + std::to_string(v) + "=" + name;
    }
    EXPECT_EQ(names.numbered(), numbered);
    EXPECT_EQ(names.names().size(), N);
    for (const auto& name : names.names()) EXPECT_EQ(names.name(*names.value(name)), name);
}

TEST(EnumNames, EveryTableRoundTrips) {
    walk("relative_motion_model_names", sf::physics::relative_motion_model_names);
    walk("power_policy_names", sf::physics::power_policy_names);
    walk("topology_policy_names", sf::links::topology_policy_names);
    walk("aggregation_topology_names", sf::links::aggregation_topology_names);
    walk("link_class_names", sf::links::link_class_names);
    walk("link_event_kind_names", sf::links::link_event_kind_names);
    walk("satellite_status_names", sf::links::satellite_status_names);
    walk("cluster_algorithm_names", sw::cluster_algorithm_names);
    walk("collective_op_names", sw::collective_op_names);
    walk("algorithm_names", sw::algorithm_names);
    walk("step_status_names", sw::step_status_names);
    walk("fault_kind_names", sw::fault_kind_names);
    walk("fault_effect_names", sw::fault_effect_names);
    walk("job_phase_names", sw::job_phase_names);
    walk("rank_loss_policy_names", sw::rank_loss_policy_names);
    walk("attention_kind_names", sw::attention_kind_names);
    walk("serving_routing_names", sw::serving_routing_names);
    walk("request_status_names", sw::request_status_names);
    walk("fabric_kind_names", sw::fabric_kind_names);
    walk("backend_names", sw::backend_names);
    walk("relative_orbits_names", sf::scenario::relative_orbits_names);
}

TEST(EnumNames, ResultFileAttributesAsDocumented) {
    EXPECT_EQ(sw::cluster_algorithm_names.numbered(), "0=ring,1=hierarchical,2=diloco,3=noloco");
    EXPECT_EQ(sw::step_status_names.numbered(), "0=ok,1=rerouted,2=stalled,3=incomplete");
    EXPECT_EQ(sw::collective_op_names.numbered(), "0=all_reduce,1=reduce_scatter,2=all_gather,3=all_to_all,4=point_to_point");
    EXPECT_EQ(sw::algorithm_names.numbered(),
              "0=ring,1=double_binary_tree,2=halving_doubling,3=hierarchical_ring,4=pairwise,5=direct");
    EXPECT_EQ(sw::request_status_names.numbered(), "0=completed,1=unfinished,2=unservable,3=lost");
    EXPECT_EQ(sf::links::link_event_kind_names.numbered(), "0=up,1=down_range,2=down_reassigned,3=reacquired,4=down_fault");
    EXPECT_EQ(sf::links::link_class_names.numbered(), "0=intra_cluster,1=gateway");
    EXPECT_EQ(sw::fault_kind_names.numbered(), "0=sdc,1=hbm_uecc,2=chip_crash,3=host_crash,4=link_outage");
    EXPECT_EQ(sw::fault_effect_names.numbered(),
              "0=none,1=step_recomputed,2=silent_corruption,3=rollback,4=reboot,5=link_down,6=after_end");
    EXPECT_EQ(sw::job_phase_names.numbered(),
              "0=step,1=step_corrupted,2=step_recomputed,3=step_rolled_back,4=step_interrupted,5=checkpoint,"
              "6=checkpoint_interrupted,7=recovery,8=unfinished,9=stalled");
}

// The scenario's choices keep the order their messages always listed.
TEST(EnumNames, ChoicesInTheLoadersOrder) {
    EXPECT_EQ(sf::links::topology_policy_names.joined(), "nearest_k, lattice, max_capacity");
    EXPECT_EQ(sw::algorithm_names.names(sw::all_reduce_algorithms),
              (std::vector<std::string>{"ring", "double_binary_tree", "halving_doubling", "hierarchical_ring"}));
    EXPECT_EQ(sf::scenario::relative_orbits_names.joined(), "auto, j2_mean_elements, hcw, schweighart_sedwick");
    EXPECT_EQ(sw::fabric_kind_names.joined(), "ring, switch, torus2d, fully_connected, file");
    EXPECT_EQ(sw::backend_names.joined(", ", " or "), "auto, cpu or cuda");
}

}  // namespace
