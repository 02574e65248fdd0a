#include <skyfabric/physics/frames.hpp>

#include <skyfabric/physics/constants.hpp>

#include <gtest/gtest.h>

#include <cmath>

using namespace skyfabric::physics;

namespace {
constexpr double deg = pi / 180.0;
const double a650 = earth_equatorial_radius_m + 650e3;

CartesianState circular(double a, double u) {
    return keplerian_to_cartesian({a, 0.0, 97.99 * deg, 30 * deg, 0.0, u}, earth_mu_m3_s2);
}
}  // namespace

TEST(LvlhFrame, AxesAreRadialAlongTrackAndOrbitNormal) {
    const CartesianState c = circular(a650, 40 * deg);
    const Eigen::Matrix3d m = lvlh_to_eci_rotation(c);
    EXPECT_LT((m.transpose() * m - Eigen::Matrix3d::Identity()).norm(), 1e-14);
    EXPECT_NEAR(m.determinant(), 1.0, 1e-14);
    EXPECT_NEAR(m.col(0).dot(c.position_m.normalized()), 1.0, 1e-14);
    EXPECT_NEAR(m.col(1).dot(c.velocity_m_s.normalized()), 1.0, 1e-12);  // circular: velocity along-track
}

TEST(LvlhTransform, RoundTripsEciToLvlhAndBack) {
    const CartesianState c = keplerian_to_cartesian({7100e3, 0.02, 51 * deg, 10 * deg, 20 * deg, 200 * deg},
                                                    earth_mu_m3_s2);
    const RelativeState s{Eigen::Vector3d(123.0, -456.0, 78.9), Eigen::Vector3d(0.1, -0.2, 0.05)};
    const CartesianState d = lvlh_to_eci(c, s);
    const RelativeState back = eci_to_lvlh(c, d);
    EXPECT_LT((back.position_m - s.position_m).norm(), 1e-8);
    EXPECT_LT((back.velocity_m_s - s.velocity_m_s).norm(), 1e-11);
}

TEST(LvlhTransform, DeputyAheadOnTheSameCircularOrbitHasChordPositionAndZeroVelocity) {
    // Same circle, phase ahead by dtheta: rho = r (cos dtheta - 1, sin dtheta, 0), rho_dot = 0.
    const double dtheta = 200.0 / a650;
    const CartesianState c = circular(a650, 10 * deg);
    const CartesianState d = circular(a650, 10 * deg + dtheta);
    const RelativeState s = eci_to_lvlh(c, d);
    EXPECT_NEAR(s.position_m.x(), a650 * (std::cos(dtheta) - 1.0), 1e-6);
    EXPECT_NEAR(s.position_m.y(), a650 * std::sin(dtheta), 1e-6);
    EXPECT_NEAR(s.position_m.z(), 0.0, 1e-6);
    EXPECT_LT(s.velocity_m_s.norm(), 1e-9);
}

TEST(LvlhTransform, DeputyOnAHigherCircleMovesAtTheDifferenceOfRates) {
    // Radial offset dr on a circle of radius r + dr: rho = (dr, 0, 0), rho_dot = (0, (n_d - n_c)(r + dr), 0).
    const double dr = 100.0;
    const CartesianState c = circular(a650, 0.3);
    const CartesianState d = circular(a650 + dr, 0.3);
    const RelativeState s = eci_to_lvlh(c, d);
    const double nc = std::sqrt(earth_mu_m3_s2 / std::pow(a650, 3));
    const double nd = std::sqrt(earth_mu_m3_s2 / std::pow(a650 + dr, 3));
    EXPECT_NEAR(s.position_m.x(), dr, 1e-6);
    EXPECT_NEAR(s.position_m.y(), 0.0, 1e-6);
    EXPECT_NEAR(s.velocity_m_s.y(), (nd - nc) * (a650 + dr), 1e-9);
    EXPECT_NEAR(s.velocity_m_s.x(), 0.0, 1e-9);
    // HCW check: a bounded orbit needs vy = -2 n x; a circle drifts at -(3/2) n x to first order.
    EXPECT_NEAR(s.velocity_m_s.y(), -1.5 * nc * dr, 1e-4);
}
