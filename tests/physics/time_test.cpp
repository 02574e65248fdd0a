#include <skyfabric/physics/time.hpp>

#include <skyfabric/physics/constants.hpp>

#include <gtest/gtest.h>

#include <cmath>

using namespace skyfabric::physics;

TEST(JulianDate, J2000EpochIs2451545) {
    EXPECT_DOUBLE_EQ(julian_date({2000, 1, 1, 12, 0, 0.0}), 2451545.0);
}

TEST(JulianDate, MatchesValladoExample3_4) {
    // Vallado Example 3-4: 1996 Oct 26, 14:20:00 UT -> JD 2450383.09722222.
    EXPECT_NEAR(julian_date({1996, 10, 26, 14, 20, 0.0}), 2450383.09722222, 1e-8);
}

TEST(GreenwichSiderealAngle, MatchesValladoExample3_5) {
    // Vallado Example 3-5: 1992 Aug 20, 12:14 UT1 -> GMST = 152.578787886 deg.
    const double jd = julian_date({1992, 8, 20, 12, 14, 0.0});
    EXPECT_NEAR(greenwich_sidereal_angle_rad(jd) * 180.0 / pi, 152.578787886, 1e-6);
}

TEST(GreenwichSiderealAngle, AdvancesBySiderealRate) {
    const double jd = 2461484.5;
    const double a0 = greenwich_sidereal_angle_rad(jd);
    const double a1 = greenwich_sidereal_angle_rad(jd, 3600.0);
    double d = a1 - a0;
    if (d < 0) d += 2 * pi;
    EXPECT_NEAR(d / 3600.0, earth_rotation_rad_s, 1e-10);
}
