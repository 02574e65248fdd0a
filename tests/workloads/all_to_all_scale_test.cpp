// All-to-all at a size where the engine stops keeping things per pair: paths read off each
// source's shortest-path tree instead of stored, and phases past the phase cache's budget
// solved again when asked again. The α–β formula of a switch must still hold, across a
// topology instant mid-collective (the dynamic path), with the cache key (phases taken whole
// where they fit) and without it (each phase drained event by event).

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include <skyfabric/workloads/collectives.hpp>
#include <skyfabric/workloads/collective_engine.hpp>
#include <skyfabric/workloads/flow_solver.hpp>
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

namespace {

// Schedule s's phases over switch:p, each drained alone and added in order: rank i's transfer to
// j goes up i's link and down j's (links i and p + j), 2α of latency, as on the fabric.
double phases_drained_alone(const sw::Schedule& s, int p, double B, double alpha) {
    const auto solver = sw::make_flow_solver(sw::Backend::cpu);
    double total = 0.0;
    for (const sw::Phase& phase : s.phases) {
        sw::FlowProblem q;
        q.capacity_Bps.assign(2 * static_cast<std::size_t>(p), B);
        for (std::int32_t j = 0; j < phase.transfer_count; ++j) {
            const sw::Transfer tr = s.transfer(phase, j);
            const std::int32_t path[2] = {tr.source_rank, p + tr.target_rank};
            q.add_flow(path, tr.bytes, 2.0 * alpha);
        }
        const double d = solver->drain(q).makespan_s;
        for (std::int32_t r = 0; r < phase.repeat; ++r) total += d;
    }
    return total;
}

}  // namespace

// The engine hands a collective's phases to the flow solver in batches of at most 2^18 flows
// (collective_engine.cpp), phases of one pattern sharing a problem. Its duration is still the sum
// of each phase drained alone, in order, to the bit: across the batches of a pairwise
// all-to-all (599 phases of 600 flows), a direct one (one phase larger than a batch) and a ring
// all-reduce (repeated patterns), with the phase cache (key 0) and without it.
TEST(AllToAllAtScale, BatchedPhasesSumAsEachPhaseDrainedAlone) {
    const int p = 600;
    const double B = 400e9 / 8.0, alpha = 500e-9, n = 6e8;
    const auto f = sw::make_fabric(sw::parse_fabric_spec("switch:p=600,bw_gbps=400,latency_ns=500"));
    const sw::Placement placement(f.placement.begin(), f.placement.begin() + p);
    const std::vector<sw::Schedule> schedules{
        sw::build_schedule(sw::CollectiveOp::all_to_all, sw::Algorithm::pairwise, p, n),
        sw::build_schedule(sw::CollectiveOp::all_to_all, sw::Algorithm::direct, p, n),
        sw::build_schedule(sw::CollectiveOp::all_reduce, sw::Algorithm::ring, p, n)};
    const std::vector<skyfabric::links::Topology> series{f.topology};
    for (const auto& s : schedules) {
        SCOPED_TRACE(sw::to_string(s.op) + " " + sw::to_string(s.algorithm));
        const double expected = phases_drained_alone(s, p, B, alpha);
        for (std::int64_t key : {std::int64_t{0}, std::int64_t{-1}}) {
            sw::NetworkClock clock(sw::topology_source(series));
            sw::CollectiveEngine engine(clock, {});
            const auto r = engine.run(s, placement, 0.0, key);
            ASSERT_TRUE(r.completed);
            EXPECT_EQ(r.duration_s(), expected) << "key " << key;
        }
    }
}

// On a GPU the batches of 256 phases or more drain there (batch_flow_solver): the durations of
// the CPU to 1e-9 (no FMA contraction on either side).
TEST(AllToAllAtScale, CudaBatchesGiveTheCpuDurations) {
    if (sw::cuda_device_count() == 0) GTEST_SKIP() << "CUDA comparison skipped: " << sw::cuda_unavailable_reason();
    const int p = 600;
    const auto f = sw::make_fabric(sw::parse_fabric_spec("switch:p=600,bw_gbps=400,latency_ns=500"));
    const sw::Placement placement(f.placement.begin(), f.placement.begin() + p);
    const auto s = sw::build_schedule(sw::CollectiveOp::all_to_all, sw::Algorithm::pairwise, p, 6e8);
    const std::vector<skyfabric::links::Topology> series{f.topology};
    double duration[2];
    for (int i = 0; i < 2; ++i) {
        sw::FlowOptions options;
        options.backend = i == 0 ? sw::Backend::cpu : sw::Backend::cuda;
        sw::NetworkClock clock(sw::topology_source(series));
        sw::CollectiveEngine engine(clock, options);
        duration[i] = engine.run(s, placement, 0.0, 0).duration_s();
    }
    EXPECT_NEAR(duration[1], duration[0], 1e-9 * duration[0]);
}
