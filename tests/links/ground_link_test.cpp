// The satellite-to-ground budget against hand calculation (docs/inference.md "Serving from the ground").
#include <skyfabric/links/ground_link.hpp>

#include <skyfabric/physics/constants.hpp>

#include <gtest/gtest.h>

#include <cmath>

using namespace skyfabric::links;

// 650 km above a site on the equator: straight up the altitude; on the horizon √(r² − R²) = 2,951.96 km;
// at 20° 1,489.08 km (law of cosines, computed by hand with Python's math module).
TEST(GroundLink, SlantRangeFromTheElevation) {
    const double R = skyfabric::physics::earth_equatorial_radius_m, r = R + 650e3;
    const double deg = skyfabric::physics::pi / 180.0;
    EXPECT_NEAR(slant_range_m(90.0 * deg, R, r), 650e3, 1e-6);
    EXPECT_NEAR(slant_range_m(0.0, R, r), 2951961.74, 0.01);
    EXPECT_NEAR(slant_range_m(20.0 * deg, R, r), 1489081.06, 0.01);
}

// 1 W from a 10 cm terminal to a 1 m telescope at 1,000 km, 30° elevation, 1550 nm, η = 0.8 each end:
// gains 105.167 + 125.167 = 230.335 dB, free space 20 log10(4π·1e6/1.55e-6) = 258.178 dB, atmosphere
// 1 dB / sin 30° = 2 dB, margins 3 + 3 dB: −35.843 dBW = −5.843 dBm. At 100 photons per bit
// (hν = 1.2816e-19 J) that carries 2.032e13 bit/s, capped at the terminals' 10 Gbit/s.
TEST(GroundLink, OpticalBudgetIsFriisThroughTheAtmosphere) {
    OpticalGroundLinkParameters p;
    const double deg = skyfabric::physics::pi / 180.0;
    auto b = optical_ground_link(p, 1e6, 30.0 * deg);
    EXPECT_NEAR(b.gains_db, 230.3345, 1e-3);
    EXPECT_NEAR(b.free_space_loss_db, 258.1776, 1e-3);
    EXPECT_NEAR(b.atmospheric_attenuation_db, 2.0, 1e-12);
    EXPECT_NEAR(b.received_power_dbm, -5.8430, 1e-3);
    EXPECT_DOUBLE_EQ(b.rate_bps, 10e9);
    p.max_rate_bps = 1e15;
    EXPECT_NEAR(optical_ground_link(p, 1e6, 30.0 * deg).rate_bps / 2.0321e13, 1.0, 1e-4);
    // 60 dB less (60 dB of extra loss): 2.03e7 bit/s; below a 1e8 floor: closed.
    p.other_losses_db += 60.0;
    EXPECT_NEAR(optical_ground_link(p, 1e6, 30.0 * deg).rate_bps / 2.0321e7, 1.0, 1e-4);
    p.min_rate_bps = 1e8;
    EXPECT_EQ(optical_ground_link(p, 1e6, 30.0 * deg).rate_bps, 0.0);
}
