// TopologyTimeline: keyframes rebuilt from their changes come out the same whichever keyframes were
// rebuilt before (the kept ones only shorten the work), on one thread and on several at once.

#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <skyfabric/workloads/topology_timeline.hpp>

#include "test_helpers.hpp"

namespace sw = skyfabric::workloads;
namespace links = skyfabric::links;

namespace {

// 200 topologies of a 40-node fabric whose links come and go and change capacity and light time
// (most samples change something; some repeat the one before), in (source, target) order.
std::vector<links::Topology> churning_fabric() {
    std::mt19937 rng(11);
    std::vector<links::Topology> series;
    links::Topology t;
    t.node_count = 40;
    for (std::int32_t v = 0; v + 1 < 40; ++v) t.links.push_back(sw::testing::make_link(v, v + 1, 100e9, 1e-6));
    for (int i = 0; i < 200; ++i) {
        t.time_s = i;
        if (i % 7 != 3) {
            const auto a = static_cast<std::int32_t>(rng() % 40), b = static_cast<std::int32_t>(rng() % 40);
            if (a != b) {
                const auto link = sw::testing::make_link(a, b, 1e9 * static_cast<double>(1 + rng() % 50), 1e-6 * (1.0 + rng() % 5));
                auto at = std::lower_bound(t.links.begin(), t.links.end(), link, [](const links::Link& x, const links::Link& y) {
                    return std::pair(x.source, x.target) < std::pair(y.source, y.target);
                });
                if (at != t.links.end() && at->source == link.source && at->target == link.target) {
                    if (rng() % 3 == 0) t.links.erase(at);
                    else *at = link;
                } else {
                    t.links.insert(at, link);
                }
            }
        }
        series.push_back(t);
    }
    return series;
}

void expect_same(const links::Topology& got, const links::Topology& want) {
    ASSERT_EQ(got.links.size(), want.links.size());
    EXPECT_EQ(got.node_count, want.node_count);
    EXPECT_EQ(got.time_s, want.time_s);
    for (std::size_t i = 0; i < got.links.size(); ++i) {
        EXPECT_EQ(got.links[i].source, want.links[i].source);
        EXPECT_EQ(got.links[i].target, want.links[i].target);
        EXPECT_EQ(got.links[i].capacity_bps, want.links[i].capacity_bps);
        EXPECT_EQ(got.links[i].latency_s, want.links[i].latency_s);
        EXPECT_EQ(got.links[i].distance_m, want.links[i].distance_m);
    }
}

}  // namespace

TEST(TopologyTimeline, KeyframesAreTheSameWhicheverWereRebuiltBefore) {
    const auto series = churning_fabric();
    const auto make = [&] {
        sw::TopologyTimeline timeline(8);
        for (const auto& t : series) timeline.append(t);
        return timeline;
    };
    const sw::TopologyTimeline reference = make();
    ASSERT_GT(reference.keyframe_count(), 100u);
    // Each keyframe from its full copy alone: a fresh timeline per keyframe, nothing kept yet.
    std::vector<links::Topology> alone;
    for (std::size_t k = 0; k < reference.keyframe_count(); ++k) alone.push_back(make().keyframe(k));
    // Every keyframe appended is what the series held then, its links and capacities exactly.
    for (std::size_t k = 0; k < alone.size(); ++k) {
        const auto& sample = series[static_cast<std::size_t>(alone[k].time_s)];
        ASSERT_EQ(alone[k].links.size(), sample.links.size()) << k;
        for (std::size_t i = 0; i < sample.links.size(); ++i) EXPECT_EQ(alone[k].links[i].capacity_bps, sample.links[i].capacity_bps);
    }
    // Asked in random order, again and again, on one timeline: kept keyframes and rebuilds from them.
    sw::TopologyTimeline asked = make();
    std::mt19937 rng(5);
    for (int i = 0; i < 600; ++i) {
        const std::size_t k = i < 100 ? static_cast<std::size_t>(i) : rng() % alone.size();
        SCOPED_TRACE(testing::Message() << "ask " << i << ": keyframe " << k);
        expect_same(asked.keyframe(k), alone[k]);
    }
    // Four threads replaying from different times at once.
    std::vector<std::thread> threads;
    for (int w = 0; w < 4; ++w)
        threads.emplace_back([&, w] {
            std::mt19937 mine(static_cast<std::uint32_t>(w));
            for (int i = 0; i < 300; ++i) {
                const std::size_t k = mine() % alone.size();
                const auto got = asked.keyframe(k);
                if (got.links.size() != alone[k].links.size() || got.time_s != alone[k].time_s) ADD_FAILURE() << "thread " << w << " keyframe " << k;
            }
        });
    for (auto& t : threads) t.join();
}
