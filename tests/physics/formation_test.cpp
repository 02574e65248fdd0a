#include <skyfabric/physics/formation.hpp>

#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/formation_metrics.hpp>
#include <skyfabric/physics/relative_motion.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <utility>

using namespace skyfabric::physics;

namespace {
constexpr double deg = pi / 180.0;
const double a650 = earth_equatorial_radius_m + 650e3;
const double n650 = std::sqrt(earth_mu_m3_s2 / (a650 * a650 * a650));
}  // namespace

TEST(SuncatcherLattice, Has81SatellitesWithTheCentreFirst) {
    const auto sats = suncatcher_lattice(1000.0, 100.0, 200.0, n650);
    ASSERT_EQ(sats.size(), 81u);
    EXPECT_EQ(sats[0].position_m.norm(), 0.0);
    EXPECT_EQ(sats[0].velocity_m_s.norm(), 0.0);
    std::set<std::pair<int, int>> cells;
    for (const auto& s : sats) {
        const int i = static_cast<int>(std::lround(s.position_m.x() / 100.0));
        const int j = static_cast<int>(std::lround(s.position_m.y() / 200.0));
        EXPECT_LE(i * i + j * j, 25);
        cells.insert({i, j});
    }
    EXPECT_EQ(cells.size(), 81u);
}

TEST(SuncatcherLattice, CountScalesAsRadiusSquared) {
    // N ~ pi (R/2)^2 / (100 m * 100 m) on the scaled grid: R = 2 km -> i^2 + j^2 <= 100: 317 points.
    EXPECT_EQ(suncatcher_lattice(2000.0, 100.0, 200.0, n650).size(), 317u);
}

TEST(BoundedRelativeVelocity, LatticeBreathesRigidlyAsHcwPredicts) {
    // x(t) = x0 cos nt + (y0/2) sin nt, y(t) = -2 x0 sin nt + y0 cos nt.
    const auto sats = suncatcher_lattice(1000.0, 100.0, 200.0, n650);
    for (double t : {500.0, 1700.0, 4000.0}) {
        const double c = std::cos(n650 * t), s = std::sin(n650 * t);
        for (const auto& sat : sats) {
            const RelativeState r = hcw_propagate(sat, n650, t);
            const double x0 = sat.position_m.x(), y0 = sat.position_m.y();
            EXPECT_NEAR(r.position_m.x(), x0 * c + 0.5 * y0 * s, 1e-9);
            EXPECT_NEAR(r.position_m.y(), -2 * x0 * s + y0 * c, 1e-9);
        }
    }
}

TEST(SuncatcherLattice, NeighbourDistancesStayBetween100And200MetresOverAnOrbit) {
    // REFERENCES.md (derived, bounded HCW): nearest neighbour 100-200 m; centre's 8 nearest 100-255 m.
    const auto sats = suncatcher_lattice(1000.0, 100.0, 200.0, n650);
    const double period = 2 * pi / n650;
    double nn_min = 1e9, nn_max = 0, c_min = 1e9, c_max = 0;
    for (int k = 0; k <= 200; ++k) {
        std::vector<RelativeState> now;
        for (const auto& s : sats) now.push_back(hcw_propagate(s, n650, period * k / 200.0));
        const auto pos = positions_of(now);
        for (double d : nearest_neighbour_distances_m(pos)) {
            nn_min = std::min(nn_min, d);
            nn_max = std::max(nn_max, d);
        }
        for (double d : k_nearest_distances_m(pos, 0, 8)) {
            c_min = std::min(c_min, d);
            c_max = std::max(c_max, d);
        }
    }
    EXPECT_NEAR(nn_min, 100.0, 0.5);
    EXPECT_NEAR(nn_max, 200.0, 0.5);
    EXPECT_NEAR(c_min, 100.0, 0.5);
    EXPECT_LE(c_max, 255.0);
    EXPECT_GT(c_max, 200.0);
}

TEST(BoundedRelativeVelocity, J2TrimMakesTheSchweighartSedwickOrbitBoundedAndCentred) {
    BoundedOrbitOptions o;
    o.j2_trim = true;
    o.chief_semi_major_axis_m = a650;
    o.chief_inclination_rad = 97.99 * deg;
    const double c = std::sqrt(1 + schweighart_sedwick_s(a650, o.chief_inclination_rad));
    const Eigen::Vector3d p(400.0, 0.0, 0.0);
    const RelativeState s0{p, bounded_relative_velocity(p, n650, o)};
    const double w = n650 * std::sqrt(2 - c * c);
    double ymax = 0, xmax = 0;
    for (int k = 0; k <= 400; ++k) {
        const RelativeState s = schweighart_sedwick_propagate(s0, n650, c, 10 * 2 * pi / w * k / 400.0);
        xmax = std::max(xmax, std::abs(s.position_m.x()));
        ymax = std::max(ymax, std::abs(s.position_m.y()));
    }
    const RelativeState end = schweighart_sedwick_propagate(s0, n650, c, 10 * 2 * pi / w);
    EXPECT_LT((end.position_m - p).norm(), 1e-6);  // closes: no secular drift
    // Axis ratio 2c / sqrt(2 - c^2) ~ 2 (1 + s): 2 : 1.00063 at 650 km SSO.
    EXPECT_NEAR(ymax / xmax, 2 * c / std::sqrt(2 - c * c), 1e-4);
    EXPECT_NEAR(2.0 / (ymax / xmax), 1.00063, 2e-5);
    // Untrimmed HCW velocities drift under the same equations: ~2 pi x0 |s| per orbit.
    const RelativeState h0{p, bounded_relative_velocity(p, n650)};
    const RelativeState h1 = schweighart_sedwick_propagate(h0, n650, c, 10 * 2 * pi / w);
    EXPECT_GT((h1.position_m - p).norm(), 10.0);
}

TEST(BoundedRelativeVelocity, OutOfPlaneMotionIsInQuadratureWithRadial) {
    BoundedOrbitOptions o;
    o.out_of_plane_amplitude_m = 50.0;
    const auto sats = suncatcher_lattice(1000.0, 100.0, 200.0, n650, o);
    for (const auto& s : sats) {
        if (s.position_m.head<2>().norm() == 0) continue;
        for (double t : {0.0, 900.0, 2500.0}) {
            const RelativeState r = hcw_propagate(s, n650, t);
            // z = A (y/2)/rho: when the radial offset vanishes, |z| = A.
            const double rho = std::hypot(s.position_m.x(), 0.5 * s.position_m.y());
            EXPECT_NEAR(r.position_m.z(), 50.0 * 0.5 * r.position_m.y() / rho, 1e-9);
        }
    }
}

TEST(HexagonalLattice, NeighboursAtPitchInTheScaledPlaneAndCentreFirst) {
    const auto sats = hexagonal_lattice(1000.0, 100.0, n650);
    EXPECT_EQ(sats[0].position_m.norm(), 0.0);
    // Hexagonal disc of radius 5 pitches: 1 + 6 (1 + 2 + ... + 5) = 91 points within the circle,
    // plus the lattice points between the hexagon and the circle: count within |.| <= 500 m is 91.
    EXPECT_EQ(sats.size(), 91u);
    for (double t : {0.0, 1000.0, 3000.0}) {
        std::vector<RelativeState> now;
        for (const auto& s : sats) now.push_back(hcw_propagate(s, n650, t));
        for (double d : nearest_neighbour_distances_m(positions_of(now))) {
            EXPECT_GE(d, 100.0 - 1e-6);
            EXPECT_LE(d, 200.0 + 1e-6);
        }
    }
}
