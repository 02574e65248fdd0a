#include <skyfabric/physics/orbit.hpp>

#include <skyfabric/physics/constants.hpp>

#include <gtest/gtest.h>

#include <cmath>

using namespace skyfabric::physics;

namespace {
constexpr double deg = pi / 180.0;
}

TEST(SunSynchronousInclination, Is97_99DegreesAt650KmCircular) {
    // REFERENCES.md: 650 km SSO inclination ~97.99 deg (derived from J2).
    const double i = sun_synchronous_inclination_rad(earth_equatorial_radius_m + 650e3, 0.0);
    EXPECT_NEAR(i / deg, 97.99, 0.01);
}

TEST(SunSynchronousInclination, NodalRateEqualsSunMeanMotion) {
    const double a = earth_equatorial_radius_m + 800e3;
    const double i = sun_synchronous_inclination_rad(a, 0.001);
    const double p = a * (1 - 0.001 * 0.001);
    const double rate = -1.5 * mean_motion_rad_s(a, earth_mu_m3_s2) * earth_j2 *
                        std::pow(earth_equatorial_radius_m / p, 2) * std::cos(i);
    // 360 deg per tropical year = 0.9856 deg/day.
    EXPECT_NEAR(rate * 86400.0 / deg, 0.98565, 1e-4);
}

TEST(OrbitalPeriod, GeostationaryRadiusGivesOneSiderealDay) {
    EXPECT_NEAR(orbital_period_s(42164.17e3, earth_mu_m3_s2), 86164.09, 0.2);
}

TEST(KeplerianConversion, RoundTripsAnEccentricInclinedOrbit) {
    KeplerianElements el{7200e3, 0.05, 63.4 * deg, 120 * deg, 270 * deg, 33 * deg};
    const CartesianState s = keplerian_to_cartesian(el, earth_mu_m3_s2);
    const KeplerianElements back = cartesian_to_keplerian(s, earth_mu_m3_s2);
    EXPECT_NEAR(back.semi_major_axis_m, el.semi_major_axis_m, 1e-6);
    EXPECT_NEAR(back.eccentricity, el.eccentricity, 1e-12);
    EXPECT_NEAR(back.inclination_rad, el.inclination_rad, 1e-12);
    EXPECT_NEAR(back.raan_rad, el.raan_rad, 1e-12);
    EXPECT_NEAR(back.arg_perigee_rad, el.arg_perigee_rad, 1e-10);
    EXPECT_NEAR(back.true_anomaly_rad, el.true_anomaly_rad, 1e-10);
    const CartesianState again = keplerian_to_cartesian(back, earth_mu_m3_s2);
    EXPECT_LT((again.position_m - s.position_m).norm(), 1e-6);
    EXPECT_LT((again.velocity_m_s - s.velocity_m_s).norm(), 1e-9);
}

TEST(KeplerianConversion, CircularOrbitKeepsArgumentOfLatitude) {
    KeplerianElements el{7028137.0, 0.0, 97.99 * deg, 10 * deg, 0.0, 75 * deg};
    const CartesianState s = keplerian_to_cartesian(el, earth_mu_m3_s2);
    EXPECT_NEAR(s.position_m.norm(), el.semi_major_axis_m, 1e-6);
    EXPECT_NEAR(s.velocity_m_s.norm(), std::sqrt(earth_mu_m3_s2 / el.semi_major_axis_m), 1e-9);
    const CartesianState again = keplerian_to_cartesian(cartesian_to_keplerian(s, earth_mu_m3_s2), earth_mu_m3_s2);
    EXPECT_LT((again.position_m - s.position_m).norm(), 1e-6);
}

TEST(SunDirection, LiesInEquatorAtTheMarch2027Equinox) {
    // March equinox 2027: 2027-03-20 20:25 UTC (USNO); declination crosses zero.
    const double jd = julian_date({2027, 3, 20, 20, 25, 0.0});
    const Eigen::Vector3d s = sun_direction_eci(jd);
    EXPECT_NEAR(s.norm(), 1.0, 1e-12);
    EXPECT_NEAR(std::asin(s.z()) / deg, 0.0, 0.02);
    EXPECT_GT(s.x(), 0.999);
}

TEST(SunDirection, DeclinationIsObliquityAtTheJune2027Solstice) {
    // June solstice 2027: 2027-06-21 14:11 UTC; declination = obliquity 23.436 deg.
    const Eigen::Vector3d s = sun_direction_eci(julian_date({2027, 6, 21, 14, 11, 0.0}));
    EXPECT_NEAR(std::asin(s.z()) / deg, 23.436, 0.01);
}

TEST(RaanForLtan, DawnDuskNodesAreOppositeAndNoonNodeFacesTheSun) {
    const double jd = julian_date({2027, 3, 20, 0, 0, 0.0});
    const double r6 = raan_for_ltan_rad(6.0, jd);
    const double r18 = raan_for_ltan_rad(18.0, jd);
    // Opposite nodes: the difference is +pi or -pi (remainder may round to either side).
    EXPECT_NEAR(std::abs(std::remainder(r18 - r6, 2 * pi)), pi, 1e-12);
    // LTAN 12 h: node at the mean Sun, within the equation of time (< 4.2 deg) of the true Sun.
    const Eigen::Vector3d s = sun_direction_eci(jd);
    EXPECT_LT(std::abs(std::remainder(raan_for_ltan_rad(12.0, jd) - std::atan2(s.y(), s.x()), 2 * pi)) / deg, 4.2);
    // Dawn-dusk: the orbit normal of a 6 h node is within ~25 deg of the Sun line.
    const double raan = r6;
    const double i = sun_synchronous_inclination_rad(earth_equatorial_radius_m + 650e3, 0.0);
    const Eigen::Vector3d normal(std::sin(raan) * std::sin(i), -std::cos(raan) * std::sin(i), std::cos(i));
    EXPECT_GT(std::abs(normal.dot(s)), std::cos(25 * deg));
}
