#include <skyfabric/physics/atmosphere.hpp>

#include <skyfabric/physics/constants.hpp>

#include <gtest/gtest.h>

#include <cmath>

using namespace skyfabric::physics;

namespace {
// Equatorial point at height h (spherical = ellipsoidal height on the equator).
Eigen::Vector3d at_height(double h_m) { return {earth_equatorial_radius_m + h_m, 0.0, 0.0}; }
}  // namespace

TEST(HarrisPriester, ReproducesTableValuesAt640Km) {
    // Montenbruck & Gill Table 3.8: 640 km rho_min 0.04519, rho_max 0.4121 g/km^3.
    const Eigen::Vector3d sun = Eigen::Vector3d::UnitY();
    EXPECT_NEAR(atmospheric_density_kg_m3(at_height(640e3), sun, SolarActivity::low), 0.04519e-12, 1e-18);
    EXPECT_NEAR(atmospheric_density_kg_m3(at_height(640e3), sun, SolarActivity::high), 0.4121e-12, 1e-17);
}

TEST(HarrisPriester, InterpolatesExponentiallyBetweenTableHeights) {
    const Eigen::Vector3d sun = Eigen::Vector3d::UnitY();
    const double mid = atmospheric_density_kg_m3(at_height(650e3), sun, SolarActivity::low);
    EXPECT_NEAR(mid, std::sqrt(0.04519e-12 * 0.03430e-12), 1e-18);
}

TEST(HarrisPriester, DiurnalBulgePeaksThirtyDegreesEastOfTheSubsolarPoint) {
    // Moderate activity: rho_max at the bulge apex (Sun + 30 deg right ascension), rho_min opposite.
    const Eigen::Vector3d sun = Eigen::Vector3d::UnitX();
    const double r = earth_equatorial_radius_m + 640e3;
    const double lag = 30.0 * pi / 180.0;
    const Eigen::Vector3d apex(r * std::cos(lag), r * std::sin(lag), 0.0);
    EXPECT_NEAR(atmospheric_density_kg_m3(apex, sun, SolarActivity::moderate), 0.4121e-12, 1e-17);
    EXPECT_NEAR(atmospheric_density_kg_m3(-apex, sun, SolarActivity::moderate), 0.04519e-12, 1e-18);
    const double side = atmospheric_density_kg_m3(at_height(640e3), Eigen::Vector3d::UnitY(), SolarActivity::moderate);
    EXPECT_GT(side, 0.04519e-12);
    EXPECT_LT(side, 0.4121e-12);
}

TEST(HarrisPriester, IsZeroAbove1000Km) {
    EXPECT_EQ(atmospheric_density_kg_m3(at_height(1200e3), Eigen::Vector3d::UnitX(), SolarActivity::high), 0.0);
}

TEST(DragAcceleration, OpposesVelocityRelativeToTheCorotatingAtmosphere) {
    const Eigen::Vector3d r = at_height(650e3);
    const Eigen::Vector3d v(0.0, 7500.0, 0.0);
    const Eigen::Vector3d a = drag_acceleration_m_s2(r, v, 1e-13, 50.0);
    const double v_rel = 7500.0 - earth_rotation_rad_s * r.x();
    // a = -1/2 rho v_rel^2 / B along -y.
    EXPECT_NEAR(a.y(), -0.5 * 1e-13 * v_rel * v_rel / 50.0, 1e-22);
    EXPECT_EQ(a.x(), 0.0);
    EXPECT_EQ(a.z(), 0.0);
}

TEST(CounterNormal, IsDeterministicWithUnitVarianceAndZeroMean) {
    EXPECT_EQ(counter_normal(42, 7), counter_normal(42, 7));
    EXPECT_NE(counter_normal(42, 7), counter_normal(43, 7));
    double sum = 0, sum2 = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) {
        const double z = counter_normal(42, static_cast<std::uint64_t>(i));
        sum += z;
        sum2 += z * z;
    }
    EXPECT_NEAR(sum / n, 0.0, 0.01);
    EXPECT_NEAR(sum2 / n, 1.0, 0.01);
}

TEST(BallisticCoefficient, SpreadsWithTheRequestedRelativeSigma) {
    DragSettings d;
    d.ballistic_coefficient_kg_m2 = 60.0;
    d.dispersion = 0.05;
    double sum = 0, sum2 = 0;
    const int n = 50000;
    for (int i = 0; i < n; ++i) {
        const double b = satellite_ballistic_coefficient_kg_m2(d, static_cast<std::uint64_t>(i)) / 60.0 - 1.0;
        sum += b;
        sum2 += b * b;
    }
    EXPECT_NEAR(sum / n, 0.0, 0.002);
    EXPECT_NEAR(std::sqrt(sum2 / n), 0.05, 0.002);
}
