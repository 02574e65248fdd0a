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

// Least-squares normal equations N x = b (8 × 8, symmetric positive definite).
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

void FormationPropagator::Impl::station_keep(Block& b, Block& g, double t) {
    g.advance(force, t);
    lvlh_of_block(g, reference_now);
    const CartesianState chief = chief_of(b);
    const Eigen::Matrix3d rot = lvlh_to_eci_rotation(chief);
    const Eigen::Vector3d w = chief.position_m.cross(chief.velocity_m_s) / chief.position_m.squaredNorm();
    const Eigen::Matrix<double, 6, 6> phi = hcw_state_transition(reference_n, transfer_time_s);
    const Eigen::Matrix3d gain = phi.block<3, 3>(0, 3).inverse() * phi.block<3, 3>(0, 0);
    bool changed = false;
    for (std::size_t k = 0; k < b.count; ++k) {
        const std::size_t i = b.first + k;
        const Eigen::Vector3d dr = b.pos(b.out, k + 1);
        Eigen::Vector3d dv = b.vel(b.out, k + 1);
        const Eigen::Vector3d e = rot.transpose() * dr - reference_now[i].position_m;
        const Eigen::Vector3d e_dot = rot.transpose() * (dv - w.cross(dr)) - reference_now[i].velocity_m_s;
        Eigen::Vector3d impulse = Eigen::Vector3d::Zero();
        const double tol = settings.station_keeping.tolerance_m;
        if (arrival_time[i] >= 0.0) {
            if (t < arrival_time[i]) continue;
            // Leave the residual error on a bounded HCW ellipse (e_y' = -2n e_x, e_x' = n e_y / 2)
            // rather than at rest, where a radial residual would drift -3 pi e_x per orbit.
            const Eigen::Vector3d bounded(0.5 * reference_n * e.y(), -2.0 * reference_n * e.x(), 0.0);
            impulse = bounded - e_dot;
            arrival_time[i] = -1.0;
            along_fit[i].reset(t);
        } else {
            AlongTrackFit& fit = along_fit[i];
            const double period = 2.0 * pi / reference_n;
            const double since = (t - fit.since_s) / period;
            fit.add(since, e.y());
            if (e.norm() <= 0.8 * tol) continue;
            // Right after a reversal the error still moves outwards a little (HCW: an along-track
            // impulse first moves the satellite the old way by ~0.5 dvy/n and radially by up to 4 dvy/n):
            // let it, unless it nears the tolerance itself.
            if (fit.after_reversal && since < 0.5 && e.norm() <= 0.9 * tol) continue;
            // Drag make-up: a differential drag f makes e_y a parabola, e_y'' = -g. When the error is
            // along-track and the parabola is known (fitted over >= 1 orbit), one along-track impulse
            // sets the drift rate v so that the apex lies at the far side of the dead band,
            // v = sign(g) sqrt(2|g| max(0, Y - sign(g) e_y)), Y = 0.6 tolerance (HCW: velocity change dvy
            // changes the drift rate by -3 dvy). Otherwise: the two-impulse transfer back to e = 0.
            bool reversed = false;
            if (since >= 1.0 && fit.s_pow[0] >= 10.0 && std::abs(e.y()) >= 0.8 * e.norm()) {
                const Eigen::Vector3d abc = fit.solve();
                const double curvature = -2.0 * abc(2) / (period * period);
                const double rate_now = (abc(1) + 2.0 * abc(2) * since) / period;
                const double sg = curvature >= 0.0 ? 1.0 : -1.0;
                // At the near edge already (apex overshot): stop the outward drift there.
                const double room = std::max(0.0, 0.6 * tol - sg * e.y());
                // Only for a clearly parabolic arc (drag); a straight drift goes back by transfer.
                if (std::abs(abc(2)) * since * since >= 0.25 * tol) {
                    const double rate_new = sg * std::sqrt(2.0 * std::abs(curvature) * room);
                    impulse.y() = -(rate_new - rate_now) / 3.0;
                    fit.reset(t);
                    fit.after_reversal = true;
                    reversed = true;
                }
            }
            if (!reversed) {
                impulse = -gain * e - e_dot;
                arrival_time[i] = t + transfer_time_s;
            }
        }
        dv += rot * impulse;
        b.set(b.out, k + 1, dr, dv);
        delta_v[i] += impulse.norm();
        changed = true;
    }
    if (changed) {
        b.y = b.out;
        b.restart(force, t);
    }
}

}  // namespace skyfabric::physics
