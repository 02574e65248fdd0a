#include <skyfabric/physics/propagation.hpp>

#include <skyfabric/physics/atmosphere.hpp>
#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/formation.hpp>
#include <skyfabric/physics/formation_metrics.hpp>
#include <skyfabric/physics/orbit.hpp>
#include <skyfabric/physics/relative_motion.hpp>

#include <boost/numeric/odeint.hpp>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <cstdio>

using namespace skyfabric::physics;

namespace {
constexpr double deg = pi / 180.0;
const double a650 = earth_equatorial_radius_m + 650e3;
const double n650 = std::sqrt(earth_mu_m3_s2 / (a650 * a650 * a650));
const double period650 = 2 * pi / n650;

// 650 km circular dawn-dusk sun-synchronous chief at the default epoch.
CartesianState suncatcher_chief() {
    const double jd = PropagationSettings{}.epoch_julian_date;
    return keplerian_to_cartesian({a650, 0.0, sun_synchronous_inclination_rad(a650, 0.0), raan_for_ltan_rad(6.0, jd),
                                   0.0, 0.0},
                                  earth_mu_m3_s2);
}

PropagationSettings with_model(RelativeMotionModel m) {
    PropagationSettings s;
    s.model = m;
    return s;
}

double max_lvlh_difference(const FormationSnapshot& a, const FormationSnapshot& b) {
    double e = 0;
    for (std::size_t i = 0; i < a.satellites_lvlh.size(); ++i) {
        e = std::max(e, (a.satellites_lvlh[i].position_m - b.satellites_lvlh[i].position_m).norm());
    }
    return e;
}
}  // namespace

TEST(HcwClosedForm, MatchesOdeIntegrationOverOneOrbit) {
    const auto sats = suncatcher_lattice(1000.0, 100.0, 200.0, n650);
    const CartesianState chief = suncatcher_chief();
    FormationPropagator closed(chief, sats, with_model(RelativeMotionModel::hcw));
    FormationPropagator ode(chief, sats, with_model(RelativeMotionModel::hcw_ode));
    FormationSnapshot a, b;
    double worst = 0;
    for (double t = 0; t <= period650; t += 60.0) {
        closed.advance_to(t, a);
        ode.advance_to(t, b);
        worst = std::max(worst, max_lvlh_difference(a, b));
    }
    EXPECT_LT(worst, 1e-3);
}

TEST(HcwClosedForm, BoundedLatticeClosesAfterOnePeriodAndMapsToEci) {
    const auto sats = suncatcher_lattice(1000.0, 100.0, 200.0, n650);
    const CartesianState chief = suncatcher_chief();
    FormationPropagator p(chief, sats, with_model(RelativeMotionModel::hcw));
    FormationSnapshot s;
    p.advance_to(period650, s);
    EXPECT_LT((s.chief_eci.position_m - chief.position_m).norm(), 1e-5);
    for (std::size_t i = 0; i < sats.size(); ++i) {
        EXPECT_LT((s.satellites_lvlh[i].position_m - sats[i].position_m).norm(), 1e-8);
        const RelativeState back = eci_to_lvlh(s.chief_eci, s.satellites_eci[i]);
        EXPECT_LT((back.position_m - s.satellites_lvlh[i].position_m).norm(), 1e-6);
    }
}

TEST(NonlinearPropagation, ConservesTwoBodyEnergyAndAngularMomentumOverADay) {
    PropagationSettings settings;
    settings.j2 = false;
    const auto all = suncatcher_lattice(1000.0, 100.0, 200.0, n650);
    const std::vector<RelativeState> sats(all.begin(), all.begin() + 9);
    const CartesianState chief = suncatcher_chief();
    FormationPropagator p(chief, sats, settings);
    FormationSnapshot s0, s;
    p.advance_to(0.0, s0);
    p.advance_to(86400.0, s);
    auto energy = [](const CartesianState& c) {
        return 0.5 * c.velocity_m_s.squaredNorm() - earth_mu_m3_s2 / c.position_m.norm();
    };
    auto momentum = [](const CartesianState& c) { return c.position_m.cross(c.velocity_m_s); };
    EXPECT_LT(std::abs(energy(s.chief_eci) / energy(s0.chief_eci) - 1), 1e-10);
    EXPECT_LT((momentum(s.chief_eci) - momentum(s0.chief_eci)).norm() / momentum(s0.chief_eci).norm(), 1e-10);
    for (std::size_t i = 0; i < sats.size(); ++i) {
        EXPECT_LT(std::abs(energy(s.satellites_eci[i]) / energy(s0.satellites_eci[i]) - 1), 1e-10);
        EXPECT_LT((momentum(s.satellites_eci[i]) - momentum(s0.satellites_eci[i])).norm() /
                      momentum(s0.satellites_eci[i]).norm(),
                  1e-10);
    }
}

TEST(NonlinearPropagation, InitialEciStatesAreLvlhToEciOfTheChief) {
    const auto sats = suncatcher_lattice(1000.0, 100.0, 200.0, n650);
    const CartesianState chief = suncatcher_chief();
    FormationPropagator p(chief, sats, PropagationSettings{});
    FormationSnapshot s;
    p.advance_to(0.0, s);
    for (std::size_t i = 0; i < sats.size(); ++i) {
        const CartesianState e = lvlh_to_eci(chief, sats[i]);
        EXPECT_LT((s.satellites_eci[i].position_m - e.position_m).norm(), 1e-8);
        EXPECT_LT((s.satellites_eci[i].velocity_m_s - e.velocity_m_s).norm(), 1e-11);
    }
}

TEST(NonlinearPropagation, AgreesWithIndependentAbsoluteEciIntegrationOnNeighbourDistancesOverADay) {
    // Reference: each satellite integrated alone in ECI (two-body + J2) by Bulirsch-Stoer at 1e-14.
    const auto all = suncatcher_lattice(1000.0, 100.0, 200.0, n650);
    const std::vector<RelativeState> sats(all.begin(), all.begin() + 9);
    const CartesianState chief = suncatcher_chief();
    FormationPropagator p(chief, sats, PropagationSettings{});
    FormationSnapshot s;
    p.advance_to(86400.0, s);
    using S = std::array<double, 6>;
    auto rhs = [](const S& x, S& d, double) {
        const double r2 = x[0] * x[0] + x[1] * x[1] + x[2] * x[2], r = std::sqrt(r2);
        const double k = -1.5 * earth_j2 * earth_mu_m3_s2 * earth_equatorial_radius_m * earth_equatorial_radius_m /
                         (r2 * r2 * r), z5 = 5 * x[2] * x[2] / r2, g = -earth_mu_m3_s2 / (r2 * r);
        d = {x[3], x[4], x[5], g * x[0] + k * x[0] * (1 - z5), g * x[1] + k * x[1] * (1 - z5),
             g * x[2] + k * x[2] * (3 - z5)};
    };
    std::vector<Eigen::Vector3d> ref;
    for (const auto& sat : sats) {
        const CartesianState e = lvlh_to_eci(chief, sat);
        S x{e.position_m.x(), e.position_m.y(), e.position_m.z(), e.velocity_m_s.x(), e.velocity_m_s.y(),
            e.velocity_m_s.z()};
        boost::numeric::odeint::bulirsch_stoer<S> bs(1e-14, 1e-14);
        boost::numeric::odeint::integrate_adaptive(bs, rhs, x, 0.0, 86400.0, 30.0);
        ref.emplace_back(x[0], x[1], x[2]);
    }
    double worst = 0;
    for (std::size_t i = 0; i < sats.size(); ++i) {
        for (std::size_t j = i + 1; j < sats.size(); ++j) {
            const double d_ref = (ref[i] - ref[j]).norm();
            const double d = (s.satellites_eci[i].position_m - s.satellites_eci[j].position_m).norm();
            worst = std::max(worst, std::abs(d - d_ref));
        }
    }
    EXPECT_LT(worst, 0.01);
}

TEST(NonlinearPropagation, SuncatcherLatticeKeepsPaperNeighbourDistancesUnderJ2OverAnOrbit) {
    // Paper Fig. 3 / docs/references.md: nearest neighbours 100-200 m, S0's 8 nearest 100-275 m,
    // two shape cycles per orbit; J2 changes these by a few metres.
    const auto sats = suncatcher_lattice(1000.0, 100.0, 200.0, n650);
    FormationPropagator p(suncatcher_chief(), sats, PropagationSettings{});
    FormationSnapshot s;
    double nn_min = 1e9, nn_max = 0, c_min = 1e9, c_max = 0;
    std::vector<double> along_pair;  // S0 to its along-track neighbour at (0, 200 m)
    std::size_t ahead = 0;
    for (std::size_t i = 0; i < sats.size(); ++i) {
        if ((sats[i].position_m - Eigen::Vector3d(0, 200, 0)).norm() < 1e-9) ahead = i;
    }
    for (double t = 0; t <= period650; t += 10.0) {
        p.advance_to(t, s);
        std::vector<Eigen::Vector3d> pos;
        for (const auto& e : s.satellites_eci) pos.push_back(e.position_m);
        for (double d : nearest_neighbour_distances_m(pos)) {
            nn_min = std::min(nn_min, d);
            nn_max = std::max(nn_max, d);
        }
        for (double d : k_nearest_distances_m(pos, 0, 8)) {
            c_min = std::min(c_min, d);
            c_max = std::max(c_max, d);
        }
        along_pair.push_back((pos[ahead] - pos[0]).norm());
    }
    EXPECT_GT(nn_min, 100.0 - 3.0);
    EXPECT_LT(nn_max, 200.0 + 3.0);
    EXPECT_GT(c_min, 100.0 - 3.0);
    EXPECT_LT(c_max, 275.0);
    int minima = 0;
    for (std::size_t k = 1; k + 1 < along_pair.size(); ++k) {
        if (along_pair[k] < along_pair[k - 1] && along_pair[k] <= along_pair[k + 1]) ++minima;
    }
    EXPECT_EQ(minima, 2);
}

TEST(NonlinearPropagation, HcwErrorGrowsQuadraticallyWithSeparation) {
    // Keplerian (J2 off): the first neglected term of the relative dynamics is O(d^2 / r), so the
    // HCW position error after a fixed time scales ~ d^2.
    PropagationSettings nl;
    nl.j2 = false;
    std::vector<RelativeState> sats;
    for (double d : {100.0, 200.0, 400.0, 800.0, 1600.0}) {
        const Eigen::Vector3d p(0.5 * d, 0.0, 0.0);
        sats.push_back({p, bounded_relative_velocity(p, n650)});
    }
    const CartesianState chief = suncatcher_chief();
    FormationPropagator a(chief, sats, nl);
    FormationPropagator b(chief, sats, with_model(RelativeMotionModel::hcw));
    FormationSnapshot sa, sb;
    a.advance_to(period650, sa);
    b.advance_to(period650, sb);
    std::vector<double> err;
    for (std::size_t i = 0; i < sats.size(); ++i) {
        err.push_back((sa.satellites_lvlh[i].position_m - sb.satellites_lvlh[i].position_m).norm());
    }
    for (std::size_t i = 0; i + 1 < err.size(); ++i) EXPECT_NEAR(err[i + 1] / err[i], 4.0, 0.4) << i;
    // Magnitude: of order (3 pi) x^2 / r per orbit: within a factor of 10 of d^2/r.
    const double d = 1600.0;
    EXPECT_GT(err.back(), 0.1 * d * d / a650);
    EXPECT_LT(err.back(), 10.0 * 2 * pi * d * d / a650);
}

TEST(NonlinearPropagation, J2TrimRemovesTheMeanAlongTrackDriftSchweighartSedwickPredicts) {
    // A satellite 500 m radially off the chief with HCW velocities drifts along-track under J2 by
    // -3 K T per orbit, K = 2 n x0 (c - 1) (Schweighart-Sedwick, derived: +5.9 m/orbit at 650 km SSO);
    // the trimmed velocity vy = -2 n c x0 makes K = 0. Osculating J2 terms add a drift that depends on
    // the argument of latitude at which the formation is set up (amplitude ~13 m/orbit here), so the
    // secular part is compared as the mean over set-up latitudes spread over half an orbit.
    const double inc = sun_synchronous_inclination_rad(a650, 0.0);
    const double jd = PropagationSettings{}.epoch_julian_date;
    BoundedOrbitOptions trim;
    trim.j2_trim = true;
    trim.chief_semi_major_axis_m = a650;
    trim.chief_inclination_rad = inc;
    const Eigen::Vector3d p(500.0, 0.0, 0.0);
    auto mean_drift_per_orbit = [&](const BoundedOrbitOptions& o) {
        const std::vector<RelativeState> sats{{p, bounded_relative_velocity(p, n650, o)}};
        const int latitudes = 8, per_orbit = 50, orbits = 6;
        double sum = 0;
        for (int j = 0; j < latitudes; ++j) {
            const CartesianState chief = keplerian_to_cartesian(
                {a650, 0.0, inc, raan_for_ltan_rad(6.0, jd), 0.0, pi * j / latitudes}, earth_mu_m3_s2);
            FormationPropagator prop(chief, sats, PropagationSettings{});
            FormationSnapshot s;
            double first = 0, last = 0;
            for (int k = 0; k < orbits * per_orbit; ++k) {
                prop.advance_to(period650 * k / per_orbit, s);
                const double y = s.satellites_lvlh[0].position_m.y();
                if (k < per_orbit) first += y / per_orbit;
                if (k >= (orbits - 1) * per_orbit) last += y / per_orbit;
            }
            sum += (last - first) / (orbits - 1);
        }
        return sum / latitudes;
    };
    const double c = std::sqrt(1 + schweighart_sedwick_s(a650, inc));
    const double predicted = -3.0 * 2.0 * n650 * 500.0 * (c - 1.0) * period650;
    const double plain = mean_drift_per_orbit({});
    const double trimmed = mean_drift_per_orbit(trim);
    EXPECT_NEAR(plain, predicted, 0.15 * std::abs(predicted));
    EXPECT_LT(std::abs(trimmed), 0.15 * std::abs(plain));
}

TEST(NonlinearPropagation, DragDispersionSpreadsTheFormation) {
    const auto all = suncatcher_lattice(1000.0, 100.0, 200.0, n650);
    const std::vector<RelativeState> sats(all.begin(), all.begin() + 13);
    const CartesianState chief = suncatcher_chief();
    PropagationSettings base;  // J2 only
    PropagationSettings uniform = base, dispersed = base;
    uniform.drag.enabled = dispersed.drag.enabled = true;
    uniform.drag.solar_activity = dispersed.drag.solar_activity = SolarActivity::high;
    uniform.drag.dispersion = 0.0;
    dispersed.drag.dispersion = 0.1;
    const double t = 3 * period650;
    auto run = [&](const PropagationSettings& s) {
        FormationPropagator p(chief, sats, s);
        FormationSnapshot snap;
        p.advance_to(t, snap);
        return snap;
    };
    const FormationSnapshot a = run(base), b = run(uniform), c = run(dispersed);
    const double spread_uniform = max_lvlh_difference(a, b);
    const double spread_dispersed = max_lvlh_difference(a, c);
    // Differential drag ~ 0.1 x 1.7e-7 m/s^2 -> along-track ~ (3/2) da t^2 ~ 7 m after 3 orbits.
    EXPECT_GT(spread_dispersed, 1.0);
    EXPECT_GT(spread_dispersed, 20.0 * spread_uniform);
}

TEST(StationKeeping, HoldsEverySatelliteWithinToleranceUnderDragDispersionAndSpendsDeltaV) {
    const auto all = suncatcher_lattice(1000.0, 100.0, 200.0, n650);
    const std::vector<RelativeState> sats(all.begin(), all.begin() + 21);
    const CartesianState chief = suncatcher_chief();
    PropagationSettings s;
    s.drag.enabled = true;
    s.drag.solar_activity = SolarActivity::high;
    s.drag.dispersion = 0.2;
    s.station_keeping.enabled = true;
    s.station_keeping.tolerance_m = 5.0;
    FormationPropagator p(chief, sats, s);
    FormationSnapshot snap;
    double worst = 0;
    for (double t = 0; t <= 86400.0; t += 10.0) {
        p.advance_to(t, snap);
        for (std::size_t i = 0; i < sats.size(); ++i) {
            const RelativeState ref = p.station_keeping_reference_lvlh(i);
            worst = std::max(worst, (snap.satellites_lvlh[i].position_m - ref.position_m).norm());
        }
    }
    EXPECT_LE(worst, 5.0);
    double total = 0;
    for (double dv : p.station_keeping_delta_v_m_s()) total += dv;
    EXPECT_GT(total, 0.0);
    // Without control the same satellites leave the tolerance: differential drag ~0.2 x 1.7e-7 m/s^2
    // moves them ~(3/2) a t^2 ~ hundreds of metres in a day.
    s.station_keeping.enabled = false;
    FormationPropagator free(chief, sats, s);
    free.advance_to(86400.0, snap);
    double free_worst = 0;
    for (std::size_t i = 0; i < sats.size(); ++i) {
        free_worst = std::max(free_worst, (snap.satellites_lvlh[i].position_m - p.station_keeping_reference_lvlh(i).position_m).norm());
    }
    EXPECT_GT(free_worst, 5.0);
}

TEST(StationKeeping, SteadyDeltaVIsWithinThreeTimesTheDifferentialDragMinimum) {
    // Moderate drag, 10 % ballistic-coefficient spread, the whole 81-satellite lattice, nonlinear J2 + drag
    // for 30 days (long enough for the resonant cross-track and eccentricity pumping to need control). The
    // least delta-v that holds a satellite against differential drag is the integral of
    // |a_drag,i - a_drag,chief| dt (the chief flies the nominal B), computed here from the propagated ECI
    // states with the density model (trapezoid over the 30 s samples). After the first day (acquisition and
    // the controller's first estimates) the station-keeping delta-v must stay within 3x of it (measured:
    // 1.01x), and every satellite within the 5 m tolerance all along (measured: 2.8 m).
    const auto sats = suncatcher_lattice(1000.0, 100.0, 200.0, n650);
    PropagationSettings s;
    s.drag.enabled = true;
    s.drag.solar_activity = SolarActivity::moderate;
    s.drag.dispersion = 0.1;
    s.station_keeping.enabled = true;
    s.station_keeping.tolerance_m = 5.0;
    FormationPropagator p(suncatcher_chief(), sats, s);
    std::vector<double> ballistic(sats.size());
    for (std::size_t i = 0; i < sats.size(); ++i) ballistic[i] = satellite_ballistic_coefficient_kg_m2(s.drag, i);
    auto drag_differences = [&](const FormationSnapshot& snap, std::vector<double>& out) {
        const Eigen::Vector3d sun = sun_direction_eci(s.epoch_julian_date + snap.time_s / seconds_per_day);
        auto drag = [&](const CartesianState& x, double b) {
            return drag_acceleration_m_s2(x.position_m, x.velocity_m_s,
                                          atmospheric_density_kg_m3(x.position_m, sun, s.drag.solar_activity), b);
        };
        const Eigen::Vector3d chief = drag(snap.chief_eci, s.drag.ballistic_coefficient_kg_m2);
        for (std::size_t i = 0; i < sats.size(); ++i) out[i] = (drag(snap.satellites_eci[i], ballistic[i]) - chief).norm();
    };
    const double step_s = 30.0, warm_up_s = 86400.0, end_s = 30 * 86400.0;
    FormationSnapshot snap;
    std::vector<double> before(sats.size()), now(sats.size()), minimum(sats.size(), 0.0), minimum_all(sats.size(), 0.0);
    double worst = 0.0, delta_v_at_warm_up = 0.0;
    p.advance_to(0.0, snap);
    drag_differences(snap, before);
    const double acquisition = std::accumulate(p.station_keeping_delta_v_m_s().begin(), p.station_keeping_delta_v_m_s().end(), 0.0);
    for (double t = step_s; t <= end_s; t += step_s) {
        p.advance_to(t, snap);
        drag_differences(snap, now);
        for (std::size_t i = 0; i < sats.size(); ++i) {
            const double piece = 0.5 * (before[i] + now[i]) * step_s;
            minimum_all[i] += piece;
            if (t > warm_up_s) minimum[i] += piece;
            worst = std::max(worst, (snap.satellites_lvlh[i].position_m - p.station_keeping_reference_lvlh(i).position_m).norm());
        }
        std::swap(before, now);
        if (t == warm_up_s) {
            const auto dv = p.station_keeping_delta_v_m_s();
            delta_v_at_warm_up = std::accumulate(dv.begin(), dv.end(), 0.0);
        }
    }
    const auto dv = p.station_keeping_delta_v_m_s();
    const double steady = std::accumulate(dv.begin(), dv.end(), 0.0) - delta_v_at_warm_up;
    const double least = std::accumulate(minimum.begin(), minimum.end(), 0.0);
    const double years = (end_s - warm_up_s) / seconds_per_julian_year;
    std::printf("steady %.4f m/s per satellite-year, differential-drag minimum %.4f, worst deviation %.3f m\n",
                steady / years / sats.size(), least / years / sats.size(), worst);
    EXPECT_LE(worst, 5.0);
    EXPECT_GT(steady, 0.0);
    EXPECT_LE(steady, 3.0 * least);
    // The minimum at 650 km, moderate activity, B = 60 kg/m^2 +- 10 %: ~0.1-1 m/s per satellite-year.
    EXPECT_GT(least / years / sats.size(), 0.05);
    // The acquisition is the first call's impulse alone, and reported as such.
    const auto acquired = p.station_keeping_acquisition_delta_v_m_s();
    EXPECT_NEAR(std::accumulate(acquired.begin(), acquired.end(), 0.0), acquisition, 1e-15);
    EXPECT_GT(acquisition, 0.0);
    EXPECT_EQ(p.station_keeping_steady_since_s(), 0.0);
    // The propagator's own integral of the same quantity (by the integrator's quadrature) agrees.
    const auto reported = p.differential_drag_delta_v_m_s();
    for (std::size_t i = 0; i < sats.size(); ++i) EXPECT_NEAR(reported[i], minimum_all[i], 0.002 * minimum_all[i] + 1e-9) << i;
}

TEST(StationKeeping, WithJ2AloneTheReferenceOrbitNeedsOnlyTheOneOffAcquisition) {
    // The reference is the satellite's initial relative orbit with its along-track velocity trimmed to be
    // bounded under J2. At the first call each satellite takes the reference's velocity: the acquisition,
    // the trim itself (HCW: a drift D per orbit needs D / (3 T); ~0.1-0.3 mm/s for these inner satellites).
    // With J2 alone the satellite then flies its reference: over four days it stays within centimetres and
    // needs (almost) no more delta-v, < 0.01 m/s per year, far below the paper's < 3 m/s per year per km of
    // offset for a trimmed lattice.
    const auto all = suncatcher_lattice(1000.0, 100.0, 200.0, n650);
    const std::vector<RelativeState> sats(all.begin(), all.begin() + 21);
    PropagationSettings s;
    s.station_keeping.enabled = true;
    FormationPropagator p(suncatcher_chief(), sats, s);
    FormationSnapshot snap;
    p.advance_to(0.0, snap);
    const std::vector<double> acquisition(p.station_keeping_delta_v_m_s().begin(), p.station_keeping_delta_v_m_s().end());
    double worst = 0;
    const double end_s = 4 * 86400.0;
    for (double t = 30.0; t <= end_s; t += 30.0) {
        p.advance_to(t, snap);
        for (std::size_t i = 0; i < sats.size(); ++i) {
            worst = std::max(worst, (snap.satellites_lvlh[i].position_m - p.station_keeping_reference_lvlh(i).position_m).norm());
        }
    }
    EXPECT_LE(worst, 0.1);
    for (std::size_t i = 0; i < sats.size(); ++i) {
        EXPECT_NEAR(p.station_keeping_acquisition_delta_v_m_s()[i], acquisition[i], 1e-15) << i;
        EXPECT_LT(acquisition[i], 2e-3) << i;
        // Untrimmed velocities drift under J2 in proportion to the radial offset.
        if (std::abs(sats[i].position_m.x()) >= 100.0) {
            EXPECT_GT(acquisition[i], 1e-5) << i;
        }
        const double steady_per_year = (p.station_keeping_delta_v_m_s()[i] - acquisition[i]) / (end_s / seconds_per_julian_year);
        EXPECT_LT(steady_per_year, 0.01) << i;
    }
}

TEST(StationKeeping, ReferenceOrbitStaysNearTheInitialRelativeOrbitWithoutDrifting) {
    // The reference is the initial relative orbit trimmed to be bounded under J2: over three days it keeps
    // to the initial 2:1 ellipse (|(x, y/2)| = rho0) within a few metres (1.2 m measured), where the untrimmed HCW
    // velocities drift tens of metres per orbit.
    const auto all = suncatcher_lattice(1000.0, 100.0, 200.0, n650);
    const std::vector<RelativeState> sats(all.begin() + 60, all.end());  // outer satellites
    PropagationSettings s;
    s.station_keeping.enabled = true;
    FormationPropagator p(suncatcher_chief(), sats, s);
    FormationSnapshot snap;
    double worst = 0;
    for (double t = 0; t <= 3 * 86400.0; t += 60.0) {
        p.advance_to(t, snap);
        for (std::size_t i = 0; i < sats.size(); ++i) {
            const Eigen::Vector3d r = p.station_keeping_reference_lvlh(i).position_m;
            const double rho0 = std::hypot(sats[i].position_m.x(), 0.5 * sats[i].position_m.y());
            worst = std::max(worst, std::abs(std::hypot(r.x(), 0.5 * r.y()) - rho0));
        }
    }
    EXPECT_LT(worst, 3.0);
}

TEST(SchweighartSedwickModel, ChiefNodePrecessesAtTheSunSynchronousRateAndEciMapsExactly) {
    const auto all = suncatcher_lattice(1000.0, 100.0, 200.0, n650);
    const CartesianState chief = suncatcher_chief();
    FormationPropagator ss(chief, all, with_model(RelativeMotionModel::schweighart_sedwick));
    FormationSnapshot b;
    ss.advance_to(86400.0, b);
    const double raan0 = cartesian_to_keplerian(chief, earth_mu_m3_s2).raan_rad;
    const double raan1 = cartesian_to_keplerian(b.chief_eci, earth_mu_m3_s2).raan_rad;
    // SSO: 360 deg per tropical year = 0.98565 deg/day.
    EXPECT_NEAR(std::remainder(raan1 - raan0, 2 * pi) / deg, 0.98565, 0.002);
    for (std::size_t i = 0; i < all.size(); ++i) {
        EXPECT_LT((eci_to_lvlh(b.chief_eci, b.satellites_eci[i]).position_m - b.satellites_lvlh[i].position_m).norm(),
                  1e-6);
    }
}

TEST(NonlinearPropagation, ThrowsPropagationErrorNamingTheSatelliteOnNonFiniteState) {
    auto sats = suncatcher_lattice(1000.0, 100.0, 200.0, n650);
    sats[3].position_m.x() = std::numeric_limits<double>::quiet_NaN();
    FormationPropagator p(suncatcher_chief(), sats, PropagationSettings{});
    FormationSnapshot s;
    try {
        p.advance_to(100.0, s);
        FAIL() << "expected PropagationError";
    } catch (const PropagationError& e) {
        EXPECT_NE(std::string(e.what()).find("satellite 3"), std::string::npos) << e.what();
    }
}

TEST(NonlinearPropagation, ResultsDoNotDependOnTheThreadCount) {
    // Several blocks of 128 satellites, on the calling thread only and on a pool of 2 and 3 threads.
    const auto sats = suncatcher_lattice(2000.0, 100.0, 200.0, n650);
    ASSERT_GT(sats.size(), 256u);
    const CartesianState chief = suncatcher_chief();
    PropagationSettings one, two, three;
    one.threads = 1;
    two.threads = 2;
    three.threads = 3;
    FormationPropagator a(chief, sats, one), b(chief, sats, two), c(chief, sats, three);
    FormationSnapshot sa, sb, sc;
    for (double t = 0.0; t <= 3000.0; t += 10.0) {
        a.advance_to(t, sa);
        b.advance_to(t, sb);
        c.advance_to(t, sc);
        for (std::size_t i = 0; i < sats.size(); ++i) {
            ASSERT_EQ(sa.satellites_eci[i].position_m, sb.satellites_eci[i].position_m) << i << " " << t;
            ASSERT_EQ(sa.satellites_eci[i].velocity_m_s, sb.satellites_eci[i].velocity_m_s) << i << " " << t;
            ASSERT_EQ(sa.satellites_lvlh[i].position_m, sc.satellites_lvlh[i].position_m) << i << " " << t;
            ASSERT_EQ(sa.satellites_lvlh[i].velocity_m_s, sc.satellites_lvlh[i].velocity_m_s) << i << " " << t;
        }
    }
}

TEST(NonlinearPropagation, PairsAcrossBlocksDriftNoMoreThanPairsInsideABlockOverAWeek) {
    // Issue 52: the satellites are integrated in blocks of 128, each with its own copy of the chief, and the
    // copies' integration errors differ (by 4.4-6.0 cm after 7 days); a satellite placed on its own block's
    // copy then moved by that much against the satellites of another block, where pairs inside a block agree
    // to 0.17 mm. Two-body only, so that the truth is Kepler's closed form for every satellite: over a week of
    // free fall, the worst error of a pair distance must be the same (to 1 mm) across blocks as inside one.
    const auto sats = suncatcher_lattice(1400.0, 100.0, 200.0, n650);
    ASSERT_GT(sats.size(), 128u);
    ASSERT_LE(sats.size(), 256u);
    const CartesianState chief = suncatcher_chief();
    PropagationSettings s;
    s.j2 = false;
    FormationPropagator p(chief, sats, s);
    std::vector<CartesianState> initial;
    for (const auto& sat : sats) initial.push_back(lvlh_to_eci(chief, sat));
    FormationSnapshot snap;
    std::vector<Eigen::Vector3d> truth(sats.size());
    double worst_inside = 0.0, worst_across = 0.0;
    for (double t = 3600.0; t <= 7 * 86400.0; t += 3600.0) {
        p.advance_to(t, snap);
        for (std::size_t i = 0; i < sats.size(); ++i) truth[i] = kepler_propagate(initial[i], earth_mu_m3_s2, t).position_m;
        for (std::size_t i = 0; i < sats.size(); ++i) {
            for (std::size_t j = i + 1; j < sats.size(); ++j) {
                const double d = (snap.satellites_eci[i].position_m - snap.satellites_eci[j].position_m).norm();
                const double error = std::abs(d - (truth[i] - truth[j]).norm());
                double& worst = i / 128 == j / 128 ? worst_inside : worst_across;
                worst = std::max(worst, error);
            }
        }
    }
    std::printf("worst pair-distance error over 7 days: inside a block %.3e m, across blocks %.3e m\n", worst_inside,
                worst_across);
    EXPECT_NEAR(worst_across, worst_inside, 1e-3);
    EXPECT_LT(worst_inside, 1e-3);
}
