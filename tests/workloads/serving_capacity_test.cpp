// The capacity search (serving_capacity.hpp): bracketing by doubling or halving, then geometric
// bisection to the resolution, on predicates whose threshold is known.
#include <cmath>
#include <stdexcept>

#include <gtest/gtest.h>

#include <skyfabric/workloads/serving_capacity.hpp>

namespace sw = skyfabric::workloads;

TEST(ServingCapacity, BisectionBracketsAThresholdWithinTheResolution) {
    // A run that meets its objective up to 3.7 requests/s: from 1/s the search doubles to 4 (misses), then
    // bisects geometrically until the rate that misses is within 2 % of the one that meets.
    const auto meets = [](double rate) { return rate <= 3.7; };
    sw::CapacitySearch search;
    search.start_rate_per_s = 1.0;
    const auto up = sw::find_capacity(meets, search);
    EXPECT_LE(up.capacity_per_s, 3.7);
    EXPECT_GT(up.failing_rate_per_s, 3.7);
    EXPECT_LE(up.failing_rate_per_s, up.capacity_per_s * 1.02);
    search.start_rate_per_s = 100.0;  // from above: halves to 3.125, then bisects
    const auto down = sw::find_capacity(meets, search);
    EXPECT_LE(down.capacity_per_s, 3.7);
    EXPECT_GT(down.failing_rate_per_s, 3.7);
    EXPECT_LE(down.failing_rate_per_s, down.capacity_per_s * 1.02);
    // Nothing meets: capacity 0; everything meets: no failing rate.
    search.max_doublings = 5;
    EXPECT_EQ(sw::find_capacity([](double) { return false; }, search).capacity_per_s, 0.0);
    const auto all = sw::find_capacity([](double) { return true; }, search);
    EXPECT_TRUE(std::isinf(all.failing_rate_per_s));
    EXPECT_EQ(all.capacity_per_s, 100.0 * 32.0);
    search.resolution = 0.0;
    EXPECT_THROW(sw::find_capacity(meets, search), std::invalid_argument);
}
