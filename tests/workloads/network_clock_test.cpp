// The network clock (network_clock.hpp): the topology valid at each instant, and the bytes each link
// carried, its capacity over the time accounted and the per-epoch series, worked by hand on two epochs.
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <skyfabric/workloads/network_clock.hpp>
#include <skyfabric/workloads/topology_timeline.hpp>

#include "test_helpers.hpp"

namespace sw = skyfabric::workloads;

namespace {

// 0–10 s: a triangle of 8 kbit/s links (1,000 B/s each way), listed (0,1), (1,2), (2,0); from 10 s:
// link (0,1) alone at 16 kbit/s (2,000 B/s each way).
std::vector<skyfabric::links::Topology> two_epochs() {
    auto second = sw::testing::ring(2, 16e3, 1e-3, 10.0);
    second.node_count = 3;
    return {sw::testing::ring(3, 8e3, 1e-3, 0.0), second};
}

}  // namespace

TEST(NetworkClock, FollowsTheTopologyValidAtEachInstantAndTheLastHoldsForever) {
    const auto series = two_epochs();
    sw::NetworkClock clock(sw::topology_source(series));
    EXPECT_EQ(clock.epoch(), 0);
    EXPECT_EQ(clock.topology().links.size(), 3u);
    EXPECT_EQ(clock.network().edge_from.size(), 6u);  // each link both ways
    EXPECT_EQ(clock.epoch_start_s(), 0.0);
    EXPECT_EQ(clock.next_change_s(), 10.0);
    clock.advance_to(9.999);
    EXPECT_EQ(clock.epoch(), 0);
    clock.advance_to(10.0);  // the change instant belongs to the new topology
    EXPECT_EQ(clock.epoch(), 1);
    EXPECT_EQ(clock.topology().links.size(), 1u);
    EXPECT_EQ(clock.epoch_start_s(), 10.0);
    EXPECT_TRUE(std::isinf(clock.next_change_s()));
    clock.advance_to(1e9);
    EXPECT_EQ(clock.epoch(), 1);
}

TEST(NetworkClock, AccountsEachLinksBytesBothWaysAgainstItsCapacityOverTime) {
    const auto series = two_epochs();
    sw::NetworkClock clock(sw::topology_source(series));
    std::vector<sw::LinkEpoch> epochs;
    clock.record_epochs(&epochs);
    // Edges 2i and 2i + 1 are link i's two directions: 500 + 300 B on (0,1), 100 B on (2,0).
    clock.add_edge_bytes(0, 500.0);
    clock.add_edge_bytes(1, 300.0);
    clock.add_edge_bytes(4, 100.0);
    clock.advance_to(10.0);
    clock.add_edge_bytes(0, 1000.0);
    const auto links = clock.link_utilisation(20.0);
    // In (source, target) order. Capacity over the time accounted, both ways: (0,1) 2·1000·10 +
    // 2·2000·10 = 60,000 B; (0,2) and (1,2) 2·1000·10 = 20,000 B (down from 10 s).
    ASSERT_EQ(links.size(), 3u);
    EXPECT_EQ(std::make_pair(links[0].source, links[0].target), std::make_pair(0, 1));
    EXPECT_DOUBLE_EQ(links[0].bytes, 1800.0);
    EXPECT_DOUBLE_EQ(links[0].capacity_bytes, 60000.0);
    EXPECT_DOUBLE_EQ(links[0].utilisation, 0.03);
    EXPECT_EQ(std::make_pair(links[1].source, links[1].target), std::make_pair(0, 2));
    EXPECT_DOUBLE_EQ(links[1].bytes, 100.0);
    EXPECT_DOUBLE_EQ(links[1].capacity_bytes, 20000.0);
    EXPECT_DOUBLE_EQ(links[1].utilisation, 0.005);
    EXPECT_EQ(std::make_pair(links[2].source, links[2].target), std::make_pair(1, 2));
    EXPECT_EQ(links[2].bytes, 0.0);
    EXPECT_EQ(links[2].utilisation, 0.0);
    // The series: epoch 0's busy links when it closed, then the open epoch on demand.
    clock.record_open_epoch(20.0);
    ASSERT_EQ(epochs.size(), 3u);
    EXPECT_EQ(epochs[0].start_s, 0.0);
    EXPECT_EQ(epochs[0].end_s, 10.0);
    EXPECT_DOUBLE_EQ(epochs[0].utilisation, 800.0 / 20000.0);
    EXPECT_EQ(epochs[0].capacity_bps, 8e3);
    EXPECT_DOUBLE_EQ(epochs[1].utilisation, 100.0 / 20000.0);
    EXPECT_EQ(epochs[2].start_s, 10.0);
    EXPECT_EQ(epochs[2].end_s, 20.0);
    EXPECT_DOUBLE_EQ(epochs[2].utilisation, 1000.0 / 40000.0);
}

TEST(NetworkClock, AccountingStartsWhereItIsToldAndBytesOnlyListsTheLinksThatCarried) {
    const auto series = two_epochs();
    sw::NetworkClock clock(sw::topology_source(series));
    clock.start_accounting(5.0);
    clock.account_bytes_only();
    // 0.1 B three times over on (0,1), in closed form: the sum the loop gives.
    const std::vector<std::pair<std::int32_t, double>> repeated{{0, 0.1}};
    clock.add_edge_bytes_repeated(repeated, 3);
    clock.advance_to(12.0);
    const auto carried = clock.carried_links();
    ASSERT_EQ(carried.size(), 1u);
    EXPECT_EQ(std::make_pair(carried[0].source, carried[0].target), std::make_pair(0, 1));
    EXPECT_EQ(carried[0].bytes, 0.1 + 0.1 + 0.1);
    // With capacities: from 5 s on, (0,1) 2·1000·5 + 2·2000·10 = 50,000 B by 20 s.
    sw::NetworkClock full(sw::topology_source(series));
    full.start_accounting(5.0);
    full.advance_to(12.0);
    EXPECT_DOUBLE_EQ(full.link_utilisation(20.0)[0].capacity_bytes, 50000.0);
}
