// All-to-all at a size where the engine stops keeping things per pair: paths read off each
// source's shortest-path tree instead of stored, and phases past the phase cache's budget
// solved again when asked again. The α–β formula of a switch must still hold, across a
// topology instant mid-collective (the dynamic path), with the cache key (phases taken whole
// where they fit) and without it (each phase drained event by event).

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include <skyfabric/workloads/collectives.hpp>
#include <skyfabric/workloads/flow_simulation.hpp>
#include <skyfabric/workloads/synthetic_fabric.hpp>

namespace sw = skyfabric::workloads;

TEST(AllToAllAtScale, PairwiseOnASwitchPastThePhaseCacheBudgetMatchesAlphaBeta) {
    // p − 1 = 1,499 phases of 2p = 3,000 edge totals each: 4.5 M, past the 2^22 budget. Each
    // phase gives every rank one send (its up link) and one receive (its down link): 2α + (n/p)/B.
    const int p = 1500;
    const double B = 400e9 / 8.0, alpha = 500e-9, n = 1.5e9;
    const auto f = sw::make_fabric(sw::parse_fabric_spec("switch:p=1500,bw_gbps=400,latency_ns=500"));
    const sw::Placement placement(f.placement.begin(), f.placement.begin() + p);
    const auto s = sw::build_schedule(sw::CollectiveOp::all_to_all, sw::Algorithm::pairwise, p, n);
    const double expected = (p - 1) * (2.0 * alpha + n / p / B);
    // The same fabric again at an instant mid-collective: a new epoch (caches dropped, routes
    // found again, the phase in flight re-solved), the same capacities.
    auto later = f.topology;
    later.time_s = 0.37 * expected;
    const std::vector<skyfabric::links::Topology> series{f.topology, later};
    for (std::int64_t key : {std::int64_t{0}, std::int64_t{-1}}) {
        SCOPED_TRACE(key);
        sw::NetworkClock clock(sw::topology_source(series));
        sw::CollectiveEngine engine(clock, {});
        const auto r = engine.run(s, placement, 0.0, key);
        ASSERT_TRUE(r.completed);
        EXPECT_EQ(r.topology_changes, 1);
        EXPECT_NEAR(r.duration_s(), expected, 1e-9 * expected);
    }
}
