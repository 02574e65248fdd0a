#include <skyfabric/physics/illumination.hpp>

#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/orbit.hpp>
#include <skyfabric/physics/propagation.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace skyfabric::physics;

namespace {
constexpr double deg = pi / 180.0;
}

TEST(SunPosition, MatchesValladoExample5_1) {
    // Vallado, Fundamentals of Astrodynamics (2013), Example 5-1: 2006-04-02 00:00 UT1 (JD 2453827.5),
    // r_sun = (0.9771945, 0.1924424, 0.0834308) AU (mean of date).
    const Eigen::Vector3d expected = Eigen::Vector3d(0.9771945, 0.1924424, 0.0834308) * astronomical_unit_m;
    const Eigen::Vector3d s = sun_position_eci_m(2453827.5);
    EXPECT_LT(std::acos(s.normalized().dot(expected.normalized())) / deg, 0.01);
    EXPECT_NEAR(s.norm() / astronomical_unit_m, expected.norm() / astronomical_unit_m, 2e-4);
}

TEST(ShadowFraction, UmbraPenumbraAndSunlightAtTheRightPlaces) {
    const Eigen::Vector3d sun(astronomical_unit_m, 0.0, 0.0);
    const double r = earth_equatorial_radius_m + 650e3;
    // Sunward side, and straight behind the Earth.
    EXPECT_EQ(shadow_fraction(Eigen::Vector3d(r, 0, 0), sun), 0.0);
    EXPECT_EQ(shadow_fraction(Eigen::Vector3d(-r, 0, 0), sun), 1.0);
    EXPECT_EQ(shadow_fraction(Eigen::Vector3d(-r, 0, 0), sun, ShadowModel::cylindrical), 1.0);
    // Across the shadow edge at 650 km the fraction rises monotonically from 0 to 1 over the penumbra,
    // whose width is about the Sun's apparent diameter (0.53 deg) times the distance behind the limb:
    // sqrt(r^2 - R^2) ~ 2,950 km -> ~27 km.
    double previous = 0.0, first_partial = 0.0, last_partial = 0.0;
    bool seen_partial = false;
    for (double y = earth_equatorial_radius_m + 40e3; y > earth_equatorial_radius_m - 40e3; y -= 100.0) {
        const Eigen::Vector3d p(-std::sqrt(r * r - y * y), y, 0.0);
        const double f = shadow_fraction(p, sun);
        EXPECT_GE(f, previous - 1e-12);
        if (f > 0.0 && f < 1.0) {
            if (!seen_partial) first_partial = y;
            last_partial = y;
            seen_partial = true;
        }
        previous = f;
    }
    EXPECT_EQ(previous, 1.0);
    ASSERT_TRUE(seen_partial);
    EXPECT_NEAR(first_partial - last_partial, 27e3, 5e3);
    // The cylinder's edge lies inside the penumbra.
    EXPECT_LT(last_partial, earth_equatorial_radius_m);
    EXPECT_GT(first_partial, earth_equatorial_radius_m);
}

TEST(Eclipses, DawnDuskOrbitSeasonMatchesTheIndependentAstropyCheck) {
    // docs/references.md (astropy check: Sun, cylindrical shadow): 650 km dawn-dusk SSO, LTAN 06:00, from
    // 2027-03-20 over a year: beta at the epoch -81.5 deg, |beta| >= 58.6 deg, 89 eclipse days
    // (about 8 Nov - 4 Feb), 4.0 % of the year in shadow; at most 20.2 min of shadow per orbit, of it
    // 19.3 min umbra (around 22 Dec): the conical model's penumbra-or-umbra and umbra times, between which
    // the cylinder falls. The orbit: mean elements, node advancing at the J2 rate (sun-synchronous), u
    // at dM/dt + dw/dt.
    const double a = earth_equatorial_radius_m + 650e3;
    const double inc = sun_synchronous_inclination_rad(a, 0.0);
    const double jd0 = PropagationSettings{}.epoch_julian_date;
    const J2SecularRates rates = j2_secular_rates(a, 0.0, inc, earth_j2);
    const double raan0 = raan_for_ltan_rad(6.0, jd0);
    const double period = 2 * pi / rates.arg_latitude_rad_s();
    const int per_orbit = 1000;
    const double dt = period / per_orbit;
    auto state = [&](double t) {
        return keplerian_to_cartesian({a, 0.0, inc, raan0 + rates.raan_rad_s * t, 0.0, rates.arg_latitude_rad_s() * t},
                                      earth_mu_m3_s2);
    };
    // Positions around one orbit from its plane's axes (the node moves 0.07 deg in an orbit: held fixed).
    auto positions = [&](double t_orbit, std::vector<Eigen::Vector3d>& out) {
        const CartesianState s = state(t_orbit);
        const Eigen::Vector3d p = s.position_m.normalized(), q = s.position_m.cross(s.velocity_m_s).cross(s.position_m).normalized();
        out.resize(per_orbit);
        for (int j = 0; j < per_orbit; ++j) {
            const double u = 2 * pi * j / per_orbit;
            out[static_cast<std::size_t>(j)] = a * (std::cos(u) * p + std::sin(u) * q);
        }
    };
    std::vector<Eigen::Vector3d> around;
    const CartesianState s0 = state(0.0);
    EXPECT_NEAR(beta_angle_rad(s0.position_m, s0.velocity_m_s, sun_position_eci_m(jd0)) / deg, -81.5, 0.3);

    const int orbits = static_cast<int>(365.0 * 86400.0 / period);
    double min_abs_beta = pi, max_shadow_s = 0.0, shadow_s = 0.0, max_any_shadow_s = 0.0, max_umbra_s = 0.0;
    std::vector<bool> eclipse_day(366, false);
    for (int k = 0; k < orbits; ++k) {
        const double t_orbit = k * period;
        const Eigen::Vector3d sun = sun_position_eci_m(jd0 + t_orbit / 86400.0);  // fixed over one orbit
        const CartesianState c = state(t_orbit);
        min_abs_beta = std::min(min_abs_beta, std::abs(beta_angle_rad(c.position_m, c.velocity_m_s, sun)));
        double in_shadow = 0.0, any_shadow = 0.0, umbra = 0.0;
        positions(t_orbit, around);
        for (int j = 0; j < per_orbit; ++j) {
            const Eigen::Vector3d& p = around[static_cast<std::size_t>(j)];
            in_shadow += dt * shadow_fraction(p, sun, ShadowModel::cylindrical);
            const double f = shadow_fraction(p, sun, ShadowModel::conical);
            any_shadow += f > 0.0 ? dt : 0.0;
            umbra += f >= 1.0 ? dt : 0.0;
        }
        max_any_shadow_s = std::max(max_any_shadow_s, any_shadow);
        max_umbra_s = std::max(max_umbra_s, umbra);
        if (in_shadow > 0.0) eclipse_day[static_cast<std::size_t>(t_orbit / 86400.0)] = true;
        max_shadow_s = std::max(max_shadow_s, in_shadow);
        shadow_s += in_shadow;
    }
    const auto days = std::count(eclipse_day.begin(), eclipse_day.end(), true);
    EXPECT_NEAR(min_abs_beta / deg, 58.6, 0.3);
    EXPECT_NEAR(static_cast<double>(days), 89.0, 3.0);
    EXPECT_NEAR(max_any_shadow_s / 60.0, 20.2, 0.3);
    EXPECT_NEAR(max_umbra_s / 60.0, 19.3, 0.3);
    EXPECT_GT(max_shadow_s, max_umbra_s);
    EXPECT_LT(max_shadow_s, max_any_shadow_s);
    EXPECT_NEAR(shadow_s / (orbits * period), 0.040, 0.002);
}

TEST(ShadowFraction, OrbitShareInTheCylinderMatchesTheTextbookFormulaAndVanishesAboveTheCriticalBeta) {
    // Circular orbit of radius r with the Sun at beta above its plane, cylindrical shadow: the share of
    // the orbit in shadow is (1/pi) acos(sqrt(r^2 - R^2) / (r cos beta)) for |beta| < asin(R/r), none
    // above (derived: shadowed while behind the Earth at a distance from the shadow axis below R; at beta = 0
    // it is asin(R/r)/pi, 36.2 % of the orbit at 650 km).
    const double R = earth_shadow_radius_m, r = earth_equatorial_radius_m + 650e3;
    const Eigen::Vector3d sun(astronomical_unit_m, 0.0, 0.0);
    const double critical = std::asin(R / r);
    EXPECT_NEAR(critical / deg, 65.17, 0.01);
    for (const double beta_deg : {0.0, 30.0, 60.0, 64.0, 66.0, 80.0}) {
        const double b = beta_deg * deg;
        const Eigen::Vector3d e1(std::cos(b), 0.0, -std::sin(b)), e2(0.0, 1.0, 0.0);  // plane with normal (sin b, 0, cos b)
        const int samples = 50000;
        double in_shadow = 0.0;
        for (int k = 0; k < samples; ++k) {
            const double u = 2 * pi * (k + 0.5) / samples;
            in_shadow += shadow_fraction(r * (std::cos(u) * e1 + std::sin(u) * e2), sun, ShadowModel::cylindrical);
        }
        const double expected = b < critical ? std::acos(std::sqrt(r * r - R * R) / (r * std::cos(b))) / pi : 0.0;
        EXPECT_NEAR(in_shadow / samples, expected, 5e-5) << beta_deg;
        if (beta_deg == 0.0) {
            EXPECT_NEAR(expected, 0.3621, 1e-4);
        }
        if (beta_deg > 65.2) {
            EXPECT_EQ(in_shadow, 0.0) << beta_deg;
        }
    }
}
