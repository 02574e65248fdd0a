#include <skyfabric/physics/formation.hpp>

#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/formation_metrics.hpp>
#include <skyfabric/physics/orbit.hpp>
#include <skyfabric/physics/propagation.hpp>
#include <skyfabric/physics/relative_motion.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
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
    // docs/references.md (derived, bounded HCW): nearest neighbour 100-200 m; centre's 8 nearest 100-255 m.
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

namespace {

// The suncatcher-81 chief: mean elements of the 650 km dawn-dusk SSO at the default epoch.
KeplerianElements suncatcher_chief_mean() {
    return {a650, 0.0, sun_synchronous_inclination_rad(a650, 0.0), raan_for_ltan_rad(6.0, PropagationSettings{}.epoch_julian_date),
            0.0, 0.0};
}

struct FreeFall {
    double min_pair_m = std::numeric_limits<double>::infinity();
    double worst_drift_m_per_orbit_per_km = 0.0;  // along-track, orbit-averaged, per km of radial amplitude
};

// Free fall under two-body + J2 (nonlinear model) for `days`, every pair's distance every ~4 min; the
// along-track drift from each satellite's y averaged over the first and the last orbit.
FreeFall free_fall(const CartesianState& chief, const std::vector<RelativeState>& sats, double days) {
    const double period = nodal_period_s(a650, 0.0, suncatcher_chief_mean().inclination_rad, earth_j2);
    const double step = period / 50.0;
    const int samples = static_cast<int>(days * 86400.0 / step);
    FormationPropagator prop(chief, sats, PropagationSettings{});
    FormationSnapshot snap;
    FreeFall out;
    const std::size_t n = sats.size();
    std::vector<double> first(n, 0.0), last(n, 0.0);
    const int last_start = samples - 50;
    for (int k = 0; k < samples; ++k) {
        prop.advance_to(step * k, snap);
        const bool pairs = k % 2 == 0;  // every ~4 min: pairs approach slowly (drift of metres per orbit)
        for (std::size_t i = 0; i < n; ++i) {
            const Eigen::Vector3d& pi_m = snap.satellites_lvlh[i].position_m;
            for (std::size_t j = i + 1; pairs && j < n; ++j) {
                out.min_pair_m = std::min(out.min_pair_m, (pi_m - snap.satellites_lvlh[j].position_m).norm());
            }
            if (k < 50) first[i] += pi_m.y() / 50.0;
            if (k >= last_start) last[i] += pi_m.y() / 50.0;
        }
    }
    const double orbits = static_cast<double>(last_start) / 50.0;
    for (std::size_t i = 1; i < n; ++i) {
        const double radial_amplitude_km = std::hypot(sats[i].position_m.x(), 0.5 * sats[i].position_m.y()) / 1000.0;
        out.worst_drift_m_per_orbit_per_km =
            std::max(out.worst_drift_m_per_orbit_per_km, std::abs(last[i] - first[i]) / orbits / radial_amplitude_km);
    }
    return out;
}

}  // namespace

TEST(J2MeanElementFormation, SuncatcherLatticeStaysFormedForAWeekInFreeFall) {
    // Issue 14: with HCW velocities (Keplerian n) the lattice drifts ~25 m per orbit per km of radial
    // offset under J2 and pairs pass the 20 m alarm after ~4.7 days. Relative orbits with equal mean
    // semi-major axes must keep every pair of the 100 m lattice >= 90 m for 7 days and drift <= 1 m per
    // orbit per km; the HCW set-up, propagated the same way, must fail both (the test can tell them apart).
    const KeplerianElements mean = suncatcher_chief_mean();
    const auto design = suncatcher_lattice(1000.0, 100.0, 200.0, n650);
    const FormationInitialState j2 = j2_mean_element_formation(mean, design, earth_j2);
    ASSERT_EQ(j2.satellites_lvlh.size(), 81u);
    // The set-up keeps the lattice: every satellite within a metre of its design point.
    for (std::size_t i = 0; i < design.size(); ++i) {
        EXPECT_LT((j2.satellites_lvlh[i].position_m - design[i].position_m).norm(), 1.0) << i;
    }
    const FreeFall bounded = free_fall(j2.chief_eci, j2.satellites_lvlh, 7.0);
    EXPECT_GE(bounded.min_pair_m, 90.0);
    EXPECT_LE(bounded.worst_drift_m_per_orbit_per_km, 1.0);

    const FreeFall hcw = free_fall(j2.chief_eci, design, 7.0);
    EXPECT_LT(hcw.min_pair_m, 20.0);
    EXPECT_GT(hcw.worst_drift_m_per_orbit_per_km, 10.0);
}

TEST(J2MeanElementFormation, WithoutJ2TheChiefIsTheKeplerianOrbitAndRelativeOrbitsShareItsSemiMajorAxis) {
    const KeplerianElements mean = suncatcher_chief_mean();
    const auto design = suncatcher_lattice(1000.0, 100.0, 200.0, n650);
    const FormationInitialState s = j2_mean_element_formation(mean, design, 0.0);
    EXPECT_LT((s.chief_eci.position_m - keplerian_to_cartesian(mean, earth_mu_m3_s2).position_m).norm(), 1e-6);
    for (std::size_t i = 0; i < design.size(); ++i) {
        const CartesianState eci = lvlh_to_eci(s.chief_eci, s.satellites_lvlh[i]);
        EXPECT_NEAR(cartesian_to_keplerian(eci, earth_mu_m3_s2).semi_major_axis_m, a650, 1e-5) << i;
    }
}
