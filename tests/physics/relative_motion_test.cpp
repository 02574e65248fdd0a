#include <skyfabric/physics/relative_motion.hpp>

#include <skyfabric/physics/constants.hpp>

#include <boost/numeric/odeint.hpp>
#include <gtest/gtest.h>

#include <array>
#include <cmath>

using namespace skyfabric::physics;

namespace {
constexpr double deg = pi / 180.0;
const double a650 = earth_equatorial_radius_m + 650e3;
const double n650 = std::sqrt(earth_mu_m3_s2 / (a650 * a650 * a650));
}  // namespace

TEST(HcwStateTransition, BoundedOrbitClosesAfterOnePeriod) {
    const RelativeState s0{Eigen::Vector3d(300.0, 400.0, 50.0),
                           Eigen::Vector3d(n650 * 400.0 / 2, -2 * n650 * 300.0, 0.01)};
    const RelativeState s1 = hcw_propagate(s0, n650, 2 * pi / n650);
    EXPECT_LT((s1.position_m - s0.position_m).norm(), 1e-9);
    EXPECT_LT((s1.velocity_m_s - s0.velocity_m_s).norm(), 1e-12);
}

TEST(HcwStateTransition, CircleAboveTheChiefDriftsBackwardAt3PiXPerOrbit) {
    // Classic HCW result: x0 offset with vy0 = -(3/2) n x0 drifts -3 pi x0 per orbit along-track.
    const RelativeState s0{Eigen::Vector3d(100.0, 0, 0), Eigen::Vector3d(0, -1.5 * n650 * 100.0, 0)};
    const RelativeState s1 = hcw_propagate(s0, n650, 2 * pi / n650);
    EXPECT_NEAR(s1.position_m.x(), 100.0, 1e-9);
    EXPECT_NEAR(s1.position_m.y(), -3 * pi * 100.0, 1e-9);
}

TEST(HcwStateTransition, IsTheFlowOfTheHcwEquations) {
    // Phi(t1 + t2) = Phi(t1) Phi(t2) and dPhi/dt = A Phi.
    const auto p1 = hcw_state_transition(n650, 700.0);
    const auto p2 = hcw_state_transition(n650, 1300.0);
    EXPECT_LT((p1 * p2 - hcw_state_transition(n650, 2000.0)).norm(), 1e-9);
    Eigen::Matrix<double, 6, 6> a = Eigen::Matrix<double, 6, 6>::Zero();
    a.block<3, 3>(0, 3).setIdentity();
    a(3, 0) = 3 * n650 * n650; a(3, 4) = 2 * n650; a(4, 3) = -2 * n650; a(5, 2) = -n650 * n650;
    const double h = 1e-3;
    const Eigen::Matrix<double, 6, 6> d = (hcw_state_transition(n650, 500.0 + h) - hcw_state_transition(n650, 500.0 - h)) / (2 * h);
    EXPECT_LT((d - a * hcw_state_transition(n650, 500.0)).norm(), 1e-8);
}

TEST(SchweighartSedwick, ReducesToHcwWithoutJ2) {
    const RelativeState s0{Eigen::Vector3d(120.0, -340.0, 20.0), Eigen::Vector3d(0.03, -0.1, 0.02)};
    const RelativeState a = schweighart_sedwick_propagate(s0, n650, 1.0, 4000.0);
    const RelativeState b = hcw_propagate(s0, n650, 4000.0);
    EXPECT_LT((a.position_m - b.position_m).norm(), 1e-8);
    EXPECT_LT((a.velocity_m_s - b.velocity_m_s).norm(), 1e-11);
}

TEST(SchweighartSedwick, ClosedFormMatchesIntegratedLinearisedEquations) {
    // Integrate x'' = 2nc y' + (5c^2-2) n^2 x, y'' = -2nc x', z'' = -(3c^2-2) n^2 z numerically.
    const double c = std::sqrt(1 + schweighart_sedwick_s(a650, 97.99 * deg));
    using S = std::array<double, 6>;
    S x{150.0, 300.0, 40.0, 0.05, -0.2, 0.01};
    const RelativeState s0{Eigen::Vector3d(x[0], x[1], x[2]), Eigen::Vector3d(x[3], x[4], x[5])};
    auto sys = [&](const S& q, S& d, double) {
        d[0] = q[3]; d[1] = q[4]; d[2] = q[5];
        d[3] = 2 * n650 * c * q[4] + (5 * c * c - 2) * n650 * n650 * q[0];
        d[4] = -2 * n650 * c * q[3];
        d[5] = -(3 * c * c - 2) * n650 * n650 * q[2];
    };
    namespace odeint = boost::numeric::odeint;
    odeint::integrate_adaptive(odeint::make_controlled(1e-13, 1e-13, odeint::runge_kutta_fehlberg78<S>()), sys, x,
                               0.0, 6000.0, 10.0);
    const RelativeState s1 = schweighart_sedwick_propagate(s0, n650, c, 6000.0);
    for (int i = 0; i < 3; ++i) {
        EXPECT_NEAR(s1.position_m[i], x[i], 1e-6);
        EXPECT_NEAR(s1.velocity_m_s[i], x[i + 3], 1e-9);
    }
}

TEST(SchweighartSedwick, J2ParameterIsNegativeNearSunSynchronousInclination) {
    // s = 3 J2 R^2/(8 r^2) (1 + 3 cos 2i): at 650 km, i = 97.99 deg, s = -6.30e-4 (derived).
    EXPECT_NEAR(schweighart_sedwick_s(a650, 97.99 * deg), -6.30e-4, 0.02e-4);
}

TEST(KeplerPropagate, AdvancesMeanAnomalyOfAnEccentricOrbit) {
    const KeplerianElements el{7200e3, 0.1, 40 * deg, 10 * deg, 30 * deg, 0.0};
    const CartesianState s0 = keplerian_to_cartesian(el, earth_mu_m3_s2);
    const double n = mean_motion_rad_s(el.semi_major_axis_m, earth_mu_m3_s2);
    const double t = 12345.0;
    // Analytic: M = n t, solve Kepler E - e sin E = M, nu = 2 atan(sqrt((1+e)/(1-e)) tan(E/2)).
    double m = std::fmod(n * t, 2 * pi), e_anom = m;
    for (int i = 0; i < 50; ++i) e_anom -= (e_anom - 0.1 * std::sin(e_anom) - m) / (1 - 0.1 * std::cos(e_anom));
    KeplerianElements el1 = el;
    el1.true_anomaly_rad = 2 * std::atan(std::sqrt(1.1 / 0.9) * std::tan(e_anom / 2));
    const CartesianState expect = keplerian_to_cartesian(el1, earth_mu_m3_s2);
    const CartesianState got = kepler_propagate(s0, earth_mu_m3_s2, t);
    EXPECT_LT((got.position_m - expect.position_m).norm(), 1e-5);
    EXPECT_LT((got.velocity_m_s - expect.velocity_m_s).norm(), 1e-8);
}
