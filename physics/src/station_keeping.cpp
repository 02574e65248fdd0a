// Station keeping of the nonlinear propagator: each satellite's reference orbit ("ghost") and the
// controller that holds the satellite to it.
#include "propagator_impl.hpp"
#include "snapshot_simd.hpp"

#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/orbit.hpp>
#include <skyfabric/physics/relative_motion.hpp>

#include <Eigen/Core>
#include <Eigen/LU>

#include <algorithm>
#include <cmath>
#include <vector>

namespace skyfabric::physics {
namespace {

// Least-squares normal equations N x = b (symmetric positive definite).
// GCC 12 warns that an AVX-512 register in Eigen's LDLT may be used uninitialised (a known false
// positive in _mm512_extractf64x4_pd under -march=native); silenced here only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
Eigen::Matrix<double, 8, 1> solve_normal_equations(const Eigen::Matrix<double, 8, 8>& n,
                                                   const Eigen::Matrix<double, 8, 1>& b) {
    return n.ldlt().solve(b);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

// Along-track impulse (m/s) that sets the drift rate so that the secular along-track error y_m (m), now
// drifting at v (m/s) with acceleration a (m/s^2), heads back to 0: v+ = -y_m / (2 T) - (1/2) a T (the
// drift's mean over the coming orbit T is then -y_m / (2 T)); impulse (v - v+) / 3 (HCW: dv changes the
// drift rate by -3 dv).
double make_up_delta_v_m_s(double mean_y_m, double drift_m_s, double accel_m_s2, double period_s) {
    const double target_m_s = -mean_y_m / (2.0 * period_s) - 0.5 * accel_m_s2 * period_s;
    return (drift_m_s - target_m_s) / 3.0;
}

}  // namespace

using detail::Block;
using detail::chief_of;
using detail::lvlh_of_block;

double FormationPropagator::Impl::measured_mean_argument_of_latitude_rate() {
    const double period = orbital_period_s(r0, earth_mu_m3_s2);
    Block chief(settings.absolute_tolerance, settings.relative_tolerance, 0);
    chief.ballistic.assign(1, settings.drag.ballistic_coefficient_kg_m2);
    chief.set(chief.y, 0, blocks.front().pos(blocks.front().y, 0), blocks.front().vel(blocks.front().y, 0));
    chief.restart(force, 0.0);
    constexpr int samples = 200;
    double sum_t = 0, sum_u = 0, sum_tt = 0, sum_tu = 0, u_prev = 0, turns = 0;
    for (int k = 0; k <= samples; ++k) {
        const double t = period * k / samples;
        chief.advance(force, t);
        const KeplerianElements el = cartesian_to_keplerian(chief_of(chief), earth_mu_m3_s2);
        const double u = std::fmod(el.arg_perigee_rad + el.true_anomaly_rad, 2.0 * pi);
        if (k > 0 && u < u_prev - pi) turns += 2.0 * pi;
        u_prev = u;
        sum_t += t;
        sum_u += u + turns;
        sum_tt += t * t;
        sum_tu += t * (u + turns);
    }
    const double m = samples + 1;
    return (m * sum_tu - sum_t * sum_u) / (m * sum_tt - sum_t * sum_t);
}

void FormationPropagator::Impl::calibrate_reference_orbits() {
    ghost_initial = initial;
    const double rate = measured_mean_argument_of_latitude_rate();
    const double w_plane = rate / reference_c * std::sqrt(2.0 - reference_c * reference_c);
    const double span = 2.0 * 2.0 * pi / rate;
    constexpr int samples = 160;
    std::vector<RelativeState> now(initial.size());
    for (int pass = 0; pass < 2; ++pass) {
        std::vector<Block> trial = make_blocks(ghost_initial, false);
        std::vector<Eigen::Matrix<double, 8, 8>> normal(initial.size(), Eigen::Matrix<double, 8, 8>::Zero());
        std::vector<Eigen::Matrix<double, 8, 1>> rhs(initial.size(), Eigen::Matrix<double, 8, 1>::Zero());
        parallel_for(trial.size(), [&](std::size_t j) {
            Block& b = trial[j];
            for (int k = 0; k <= samples; ++k) {
                const double t = span * k / samples;
                b.advance(force, t);
                lvlh_of_block(b, now);
                const double tn = t / span;  // scaled time keeps the normal matrix well conditioned
                Eigen::Matrix<double, 8, 1> basis;
                basis << 1.0, tn, std::cos(w_plane * t), std::sin(w_plane * t), tn * std::cos(w_plane * t),
                    tn * std::sin(w_plane * t), std::cos(2.0 * rate * t), std::sin(2.0 * rate * t);
                for (std::size_t i = b.first; i < b.first + b.count; ++i) {
                    normal[i] += basis * basis.transpose();
                    rhs[i] += basis * now[i].position_m.y();
                }
            }
        });
        for (std::size_t i = 0; i < initial.size(); ++i) {
            const double drift_m_s = solve_normal_equations(normal[i], rhs[i])(1) / span;
            ghost_initial[i].velocity_m_s.y() += drift_m_s / 3.0;
        }
    }
    ghosts = make_blocks(ghost_initial, false);
}

void FormationPropagator::Impl::SatelliteControl::observe_from(double t) {
    mode = Mode::observe;
    window_start_s = t;
    samples = 0;
    sum_t = sum_tt = sum_v = sum_tv = 0.0;
}

// Control law (docs/station-keeping.md). The error e = rho - rho_ref (LVLH) of a satellite about its nearby
// reference obeys HCW to O(|e|/r, J2 |e|), forced by the differential drag f (along-track, f_y). Its
// secular part follows from the state at any instant (HCW invariants): along-track position
// y_m = e_y - 2 e_x' / n and drift rate v = -3 (e_y' + 2 n e_x), with dv/dt = -3 f_y; the radial oscillation
// about the mean e_x = 2 (e_y' + 2 n e_x) / n is A cos(theta), A sin(theta) = -e_x' / n. An along-track
// impulse dv changes v by -3 dv and adds -(2 dv / n) cos(n (t - t_burn)) to the radial oscillation.
//  - Acquisition, at the first call: the satellite sits at its reference position (the reference starts
//    there), so one impulse takes the reference's velocity (else a two-impulse transfer).
//  - Drag make-up, about once per orbit: the secular acceleration dv/dt, a least-squares slope of v over
//    the orbit since the last impulse (filtered over orbits), predicts the drift; one along-track impulse
//    sets v so that y_m comes back towards 0, v+ = -y_m / (2 T) - (1/2) (dv/dt) T. In the steady state it
//    gives back what the differential drag took in the orbit, integral |f_y| dt: the physical minimum. It
//    is fired when the radial oscillation is at the extreme that the impulse reduces (theta = 0 for dv > 0,
//    pi for dv < 0), so the same delta-v also damps the eccentricity that once-per-orbit density
//    variations pump up (the tangential-burn scheme of D'Amico's relative-orbit-element control).
//  - Eccentricity and cross-track, when they grow anyway: a radial oscillation past 0.1 tolerance gets an
//    extra along-track pair (+q with the make-up impulse, -q half an orbit later: no net drift); a
//    cross-track oscillation past 0.3 tolerance one cross-track impulse where e_z crosses 0.
//  - Safety: |e| > 0.8 tolerance (margin for the motion between calls) starts a two-impulse HCW transfer:
//    de/dt = -Phi_rv(tau)^-1 Phi_rr(tau) e, so that e reaches 0 after tau = a quarter orbit, and at the first
//    call after that an impulse that leaves what is left of e on a drift-free HCW ellipse.
void FormationPropagator::Impl::station_keep(Block& b, Block& g, double t) {
    g.advance(force, t);
    lvlh_of_block(g, reference_now);
    const CartesianState chief = chief_of(b);
    const Eigen::Matrix3d rot = lvlh_to_eci_rotation(chief);
    const Eigen::Vector3d w = chief.position_m.cross(chief.velocity_m_s) / chief.position_m.squaredNorm();
    const Eigen::Matrix<double, 6, 6> phi = hcw_state_transition(reference_n, transfer_time_s);
    const Eigen::Matrix3d gain = phi.block<3, 3>(0, 3).inverse() * phi.block<3, 3>(0, 0);
    const double tol = settings.station_keeping.tolerance_m;
    const double n_ref = reference_n;
    const double period = 2.0 * pi / n_ref;
    using Mode = SatelliteControl::Mode;
    bool changed = false;
    for (std::size_t k = 0; k < b.count; ++k) {
        const std::size_t i = b.first + k;
        SatelliteControl& c = control[i];
        const Eigen::Vector3d dr = b.pos(b.out, k + 1);
        Eigen::Vector3d dv = b.vel(b.out, k + 1);
        const Eigen::Vector3d e = rot.transpose() * dr - reference_now[i].position_m;
        const Eigen::Vector3d e_dot = rot.transpose() * (dv - w.cross(dr)) - reference_now[i].velocity_m_s;
        Eigen::Vector3d impulse = Eigen::Vector3d::Zero();
        auto apply = [&](const Eigen::Vector3d& lvlh) {
            if (lvlh == Eigen::Vector3d::Zero()) return;
            dv += rot * lvlh;
            b.set(b.out, k + 1, dr, dv);
            delta_v[i] += lvlh.norm();
            changed = true;
        };
        if (c.mode == Mode::acquire) {
            if (e.norm() <= 1e-6 * tol) {
                impulse = -e_dot;
                c.observe_from(t);
            } else {
                impulse = -gain * e - e_dot;
                c.mode = Mode::transfer;
                c.arrival_time_s = t + transfer_time_s;
            }
            acquisition_delta_v[i] += impulse.norm();
        } else if (c.mode == Mode::transfer) {
            if (t < c.arrival_time_s) continue;
            // Leave the residual error on a bounded HCW ellipse (e_y' = -2n e_x, e_x' = n e_y / 2)
            // rather than at rest, where a radial residual would drift -3 pi e_x per orbit.
            const Eigen::Vector3d bounded(0.5 * n_ref * e.y(), -2.0 * n_ref * e.x(), 0.0);
            impulse = bounded - e_dot;
            c.observe_from(t);
        } else if (e.norm() > 0.8 * tol) {
            impulse = -gain * e - e_dot;
            c.mode = Mode::transfer;
            c.arrival_time_s = t + transfer_time_s;
        } else {
            // Cross-track: the co-rotating atmosphere's drag has a once-per-orbit cross-track part that pumps
            // the error's cross-track oscillation (amplitude A_z = |(e_z, e_z' / n)|) at resonance. Past
            // 0.3 tolerance, one impulse where e_z crosses 0 cancels it: dv = n A_z, the least for that.
            const double previous_z = c.previous_z;
            c.previous_z = e.z();
            const double amplitude_z = std::hypot(e.z(), e_dot.z() / n_ref);
            if (amplitude_z > 0.3 * tol && previous_z * e.z() <= 0.0 && std::abs(e.z()) < 0.3 * amplitude_z) {
                impulse.z() = -e_dot.z();
            }
            const double invariant = e_dot.y() + 2.0 * n_ref * e.x();
            const double drift = -3.0 * invariant;
            const double mean_y = e.y() - 2.0 * e_dot.x() / n_ref;
            const double theta = std::atan2(-e_dot.x() / n_ref, e.x() - 2.0 * invariant / n_ref);
            const double tau = t - c.window_start_s;
            c.sum_t += tau;
            c.sum_tt += tau * tau;
            c.sum_v += drift;
            c.sum_tv += tau * drift;
            ++c.samples;
            const double previous_theta = c.theta;
            c.theta = theta;
            if (c.second_burn_time_s > 0.0 && t >= c.second_burn_time_s) {
                impulse.y() = c.second_burn_m_s;
                c.second_burn_time_s = 0.0;
                c.observe_from(t);
                apply(impulse);
                continue;
            }
            if (tau < period || c.samples < 8 || c.second_burn_time_s > 0.0) {
                apply(impulse);
                continue;
            }
            if (c.mode == Mode::observe) {
                const double m = c.samples;
                const double accel = (m * c.sum_tv - c.sum_t * c.sum_v) / (m * c.sum_tt - c.sum_t * c.sum_t);
                // Filtered over orbits: the slope over one orbit also holds what once-per-orbit density
                // variations do to the drift.
                c.accel_m_s2 = c.have_accel ? c.accel_m_s2 + 0.5 * (accel - c.accel_m_s2) : accel;
                c.have_accel = true;
                c.mode = Mode::burn_planned;
            }
            const double burn = make_up_delta_v_m_s(mean_y, drift, c.accel_m_s2, period);
            // Fire when theta passes the target phase (or at the latest two orbits after the last impulse).
            const double target = burn >= 0.0 ? 0.0 : pi;
            const double before = std::remainder(previous_theta - target, 2.0 * pi);
            const double now = std::remainder(theta - target, 2.0 * pi);
            const bool crossed = before < 0.0 && now >= 0.0 && now - before < pi;
            if (!crossed && tau < 2.0 * period) {
                apply(impulse);
                continue;
            }
            impulse.y() = burn;
            c.observe_from(t);
            // When the radial oscillation (A = |(e_x - 2 (e_y' + 2 n e_x) / n, e_x' / n)|) passes 0.1
            // tolerance, split off a pair +q now, -q half an orbit later: no net drift, and together with
            // the make-up impulse they remove A (each impulse dv at the right phase takes 2 |dv| / n off it).
            const double amplitude_x = std::hypot(e.x() - 2.0 * invariant / n_ref, e_dot.x() / n_ref);
            const double q = 0.25 * n_ref * amplitude_x - 0.5 * std::abs(burn);
            if (amplitude_x > 0.1 * tol && q > 0.0) {
                const double s = burn >= 0.0 ? 1.0 : -1.0;
                impulse.y() += s * q;
                c.second_burn_m_s = -s * q;
                c.second_burn_time_s = t + 0.5 * period;
            }
        }
        apply(impulse);
    }
    if (changed) {
        b.y = b.out;
        b.restart(force, t);
    }
}

}  // namespace skyfabric::physics
