// FlowNetwork (flow_network.hpp), the flow front door: transfers' completion times against max-min
// fair shares worked out by hand (each link's capacity shared equally by the flows it bottlenecks,
// what they leave going to the others), a transfer's last byte landing its path's latency after it
// leaves.

#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include <skyfabric/workloads/flow_network.hpp>
#include <skyfabric/workloads/network_clock.hpp>
#include <skyfabric/workloads/topology_timeline.hpp>

#include "test_helpers.hpp"

namespace sw = skyfabric::workloads;
using sw::testing::make_link;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double GBps = 8e9;  // bit/s of 1e9 bytes/s

struct Landed {
    std::int64_t tag;
    double left_s;    // its last byte left the sender
    double landed_s;  // ... and arrived
};

// The caller's event loop with no events of its own: drains and topology changes until nothing moves.
std::vector<Landed> run_to_idle(sw::FlowNetwork& flows, double& now, double until = inf) {
    std::vector<Landed> out;
    std::vector<sw::TransferDone> done;
    for (;;) {
        const double t_drain = flows.next_drain_s(now);
        const double t_change = flows.next_change_s();
        const double t = std::min(t_drain, t_change);
        if (!(t < until)) break;
        now = t;
        if (t_drain <= t) {
            done.clear();
            flows.drain(now, done);
            for (const auto& d : done) out.push_back({d.tag, now, now + d.latency_s});
        } else {
            flows.change_topology(t);
        }
    }
    return out;
}

skyfabric::links::Topology topology(std::int32_t nodes, std::vector<skyfabric::links::Link> links, double time_s = 0.0) {
    skyfabric::links::Topology t;
    t.node_count = nodes;
    t.time_s = time_s;
    t.links = std::move(links);
    return t;
}

}  // namespace

TEST(FlowNetwork, TransfersBetweenTheSameNodesShareTheLinkAndDrainInOrderOfTheirBytes) {
    // One link of 1e9 B/s: 1 GB and 2 GB started together get 0.5e9 B/s each; the first leaves at
    // 2 s, the second then has the link alone for its last 1 GB: 3 s. Each lands 1 ms later.
    const std::vector series{topology(2, {make_link(0, 1, GBps, 1e-3)})};
    sw::NetworkClock clock(sw::topology_source(series));
    sw::FlowNetwork flows(clock, sw::RoutingPolicy::shortest_latency);
    double now = 0.0;
    flows.start(now, 0, 1, 2e9, 2);
    flows.start(now, 0, 1, 1e9, 1);
    EXPECT_EQ(flows.in_flight(), 2);
    EXPECT_FALSE(flows.rates_current());
    const auto landed = run_to_idle(flows, now);
    ASSERT_EQ(landed.size(), 2u);
    EXPECT_EQ(landed[0].tag, 1);
    EXPECT_DOUBLE_EQ(landed[0].left_s, 2.0);
    EXPECT_DOUBLE_EQ(landed[0].landed_s, 2.001);
    EXPECT_EQ(landed[1].tag, 2);
    EXPECT_DOUBLE_EQ(landed[1].left_s, 3.0);
    EXPECT_EQ(flows.in_flight(), 0);
    EXPECT_EQ(flows.rate_solves(), 2);  // at the start and after the first left (none when idle)
    EXPECT_EQ(flows.stalled_transfer_s(), 0.0);
}

TEST(FlowNetwork, RatesAreMaxMinFairAcrossPairsAndEachTransferCountsInItsGroup) {
    // A line 0 — 2 — 1: link 0–2 of 2e9 B/s, link 2–1 of 1e9 B/s, 1 ms each. Two 1 GB transfers
    // 0 → 1 and one 2 → 1 share 2 → 1 three ways (1/3e9 B/s each); 0 → 2 takes what they leave of
    // 0 → 2: 2e9 − 2/3e9 = 4/3e9 B/s, so 4/3 GB leaves at 1 s. The others are held by 2 → 1 and all
    // leave at 3 s, reported in the order they started.
    const std::vector series{topology(3, {make_link(0, 2, 2 * GBps, 1e-3), make_link(2, 1, GBps, 1e-3)})};
    sw::NetworkClock clock(sw::topology_source(series));
    sw::FlowNetwork flows(clock, sw::RoutingPolicy::shortest_latency);
    double now = 0.0;
    flows.start(now, 0, 1, 1e9, 10);
    flows.start(now, 2, 1, 1e9, 11);
    flows.start(now, 0, 1, 1e9, 12);
    flows.start(now, 0, 2, 4e9 / 3.0, 13);
    const auto landed = run_to_idle(flows, now);
    ASSERT_EQ(landed.size(), 4u);
    EXPECT_EQ(landed[0].tag, 13);
    EXPECT_NEAR(landed[0].left_s, 1.0, 1e-12);
    EXPECT_NEAR(landed[0].landed_s, 1.001, 1e-12);
    const std::int64_t order[] = {10, 11, 12};
    const double latency[] = {2e-3, 1e-3, 2e-3};
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(landed[static_cast<std::size_t>(1 + i)].tag, order[i]);
        EXPECT_NEAR(landed[static_cast<std::size_t>(1 + i)].left_s, 3.0, 1e-12);
        EXPECT_NEAR(landed[static_cast<std::size_t>(1 + i)].landed_s, 3.0 + latency[i], 1e-12);
    }
}

TEST(FlowNetwork, ACancelledTransferLeavesItsShareToTheOthers) {
    // Two 1 GB transfers on one 1e9 B/s link; at 1 s the second is cancelled (each sent 0.5 GB):
    // the first sends its last 0.5 GB at the full rate, leaving at 1.5 s.
    const std::vector series{topology(2, {make_link(0, 1, GBps, 0.0)})};
    sw::NetworkClock clock(sw::topology_source(series));
    sw::FlowNetwork flows(clock, sw::RoutingPolicy::shortest_latency);
    double now = 0.0;
    flows.start(now, 0, 1, 1e9, 1);
    flows.start(now, 0, 1, 1e9, 2);
    EXPECT_TRUE(run_to_idle(flows, now, 1.0).empty());
    now = 1.0;
    std::vector<std::int64_t> in_flight;
    flows.for_each_in_flight([&](std::int64_t tag) { in_flight.push_back(tag); });
    EXPECT_EQ(in_flight, (std::vector<std::int64_t>{1, 2}));
    flows.cancel(now, 2);
    EXPECT_EQ(flows.in_flight(), 1);
    const auto landed = run_to_idle(flows, now);
    ASSERT_EQ(landed.size(), 1u);
    EXPECT_EQ(landed[0].tag, 1);
    EXPECT_DOUBLE_EQ(landed[0].left_s, 1.5);
    // Cancelling a tag with nothing in flight still asks for a solve (the caller's rates are stale).
    flows.cancel(now, 7);
    EXPECT_FALSE(flows.rates_current());
}

TEST(FlowNetwork, ATransferWithNoPathWaitsForTheTopologyThatGivesOne) {
    // No link until 10 s, then one of 1e9 B/s: 1 GB stalls 10 s, then leaves at 11 s. From 20 s the
    // link runs at half the rate: 2 GB started at 19 s sent 1 GB by 20 s, and its second GB takes
    // 2 s at 0.5e9 B/s: it leaves at 22 s.
    const std::vector series{topology(2, {}, 0.0), topology(2, {make_link(0, 1, GBps, 0.0)}, 10.0),
                             topology(2, {make_link(0, 1, GBps / 2, 0.0)}, 20.0)};
    sw::NetworkClock clock(sw::topology_source(series));
    sw::FlowNetwork flows(clock, sw::RoutingPolicy::shortest_latency);
    double now = 0.0;
    flows.start(now, 0, 1, 1e9, 1);
    auto landed = run_to_idle(flows, now, 19.0);
    ASSERT_EQ(landed.size(), 1u);
    EXPECT_DOUBLE_EQ(landed[0].left_s, 11.0);
    EXPECT_DOUBLE_EQ(flows.stalled_transfer_s(), 10.0);
    now = 19.0;
    flows.start(now, 0, 1, 2e9, 2);
    landed = run_to_idle(flows, now);
    ASSERT_EQ(landed.size(), 1u);
    EXPECT_DOUBLE_EQ(landed[0].left_s, 22.0);
    EXPECT_DOUBLE_EQ(flows.stalled_transfer_s(), 10.0);
}

TEST(FlowNetwork, BorderRateCountsTheCountedTransfersOnEachLinkBetweenClusters) {
    // 0 — 1 — 2 — 3, clusters {0, 1} and {2, 3}: a transfer 0 → 3 crosses one border link. Two of
    // them share the path at 0.5e9 B/s each; only the counted one is counted: 8 × 0.5e9 bit/s.
    const std::vector series{topology(4, {make_link(0, 1, GBps, 0.0), make_link(1, 2, GBps, 0.0), make_link(2, 3, GBps, 0.0)})};
    const std::vector<std::int32_t> cluster_of{0, 0, 1, 1};
    sw::NetworkClock clock(sw::topology_source(series));
    sw::FlowNetwork flows(clock, sw::RoutingPolicy::shortest_latency, cluster_of);
    double now = 0.0;
    flows.start(now, 0, 3, 1e9, 1);
    flows.start(now, 0, 3, 1e9, 2, /*counted=*/false);
    EXPECT_DOUBLE_EQ(flows.next_drain_s(now), 2.0);
    EXPECT_DOUBLE_EQ(flows.border_bps(), 4e9);
    flows.start(now, 0, 1, 1e9, 3);  // inside a cluster: shares link 0–1, adds no border bits
    EXPECT_EQ(flows.border_bps(), 4e9) << "rates hold until the next solve";
    (void)flows.next_drain_s(now);
    EXPECT_NEAR(flows.border_bps(), 8.0 * 1e9 / 3.0, 1e-3);
}
