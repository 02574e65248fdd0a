// FormationPropagator: set-up and advance of the four relative-motion models. The nonlinear model's
// parts live beside it: force_model.hpp (two-body + J2 + drag), dop853.hpp (the integrator),
// block_storage.hpp (the blocks' memory layout), snapshot_simd.hpp (LVLH/ECI output), worker_pool.hpp
// (threads) and station_keeping.cpp (reference orbits and the controller).
#include <skyfabric/physics/propagation.hpp>

#include "propagator_impl.hpp"
#include "snapshot_simd.hpp"

#include <skyfabric/physics/atmosphere.hpp>
#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/orbit.hpp>
#include <skyfabric/physics/relative_motion.hpp>

#include <boost/numeric/odeint.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>
#include <vector>

namespace skyfabric::physics {

using detail::Block;
using detail::chief_of;
using detail::fail;
using detail::min_step_s;

CartesianState FormationPropagator::Impl::ss_chief(double t) const {
    const double u = u0 + n * ss_c * t;
    const double om = raan0 + raan_rate * t;
    const double cu = std::cos(u), su = std::sin(u), co = std::cos(om), so = std::sin(om);
    const double ci = std::cos(inclination), si = std::sin(inclination);
    const Eigen::Vector3d r = r0 * Eigen::Vector3d(co * cu - so * su * ci, so * cu + co * su * ci, su * si);
    const Eigen::Vector3d dr_du = r0 * Eigen::Vector3d(-co * su - so * cu * ci, -so * su + co * cu * ci, cu * si);
    const Eigen::Vector3d dr_dom(-r.y(), r.x(), 0.0);
    return {r, n * ss_c * dr_du + raan_rate * dr_dom};
}

std::vector<Block> FormationPropagator::Impl::make_blocks(const std::vector<RelativeState>& states,
                                                           bool dispersed) const {
    std::vector<Block> out;
    const std::size_t total = states.size();
    const double b_nominal = settings.drag.ballistic_coefficient_kg_m2;
    const Eigen::Matrix3d rot = lvlh_to_eci_rotation(chief0);
    const Eigen::Vector3d w = chief0.position_m.cross(chief0.velocity_m_s) / chief0.position_m.squaredNorm();
    for (std::size_t first = 0; first < std::max<std::size_t>(total, 1); first += detail::chunk_capacity) {
        Block b(settings.absolute_tolerance, settings.relative_tolerance, std::min(detail::chunk_capacity, total - first));
        b.first = first;
        b.ballistic.assign(b.count + 1, b_nominal);
        b.set(b.y, 0, chief0.position_m, chief0.velocity_m_s);
        for (std::size_t k = 0; k < b.count; ++k) {
            // Offsets of lvlh_to_eci(chief, s) minus the chief, formed without the 7e6 m round trip.
            const Eigen::Vector3d dr = rot * states[first + k].position_m;
            const Eigen::Vector3d dv = rot * states[first + k].velocity_m_s + w.cross(dr);
            b.set(b.y, k + 1, dr, dv);
            if (dispersed && settings.drag.enabled) {
                b.ballistic[k + 1] = satellite_ballistic_coefficient_kg_m2(settings.drag, first + k);
            }
        }
        b.restart(force, 0.0);
        b.out = b.y;
        out.push_back(std::move(b));
    }
    return out;
}

void FormationPropagator::Impl::advance(double t, FormationSnapshot& snap) {
    const std::size_t count = initial.size();
    snap.time_s = t;
    snap.satellites_lvlh.resize(count);
    snap.satellites_eci.resize(count);
    switch (settings.model) {
        case RelativeMotionModel::hcw:
        case RelativeMotionModel::schweighart_sedwick: {
            const bool ss = settings.model == RelativeMotionModel::schweighart_sedwick;
            snap.chief_eci = ss ? ss_chief(t) : kepler_propagate(chief0, earth_mu_m3_s2, t);
            for (std::size_t i = 0; i < count; ++i) {
                snap.satellites_lvlh[i] = ss ? schweighart_sedwick_propagate(initial[i], n, ss_c, t)
                                             : hcw_propagate(initial[i], n, t);
            }
            break;
        }
        case RelativeMotionModel::hcw_ode: {
            const detail::HcwSystem sys{n};
            if (count > 0) {
                int guard = 0;
                while (dense->current_time() < t) {
                    dense->do_step(sys);
                    if (++guard > 10000000 || dense->current_time() - dense->previous_time() < min_step_s) {
                        fail("step size collapsed", 0, dense->current_time());
                    }
                }
                if (dense->current_time() == t) {
                    rel = dense->current_state();
                } else {
                    dense->calc_state(t, rel);
                }
            }
            for (std::size_t i = 0; i < count; ++i) {
                auto& s = snap.satellites_lvlh[i];
                s.position_m = Eigen::Vector3d(rel[6 * i], rel[6 * i + 1], rel[6 * i + 2]);
                s.velocity_m_s = Eigen::Vector3d(rel[6 * i + 3], rel[6 * i + 4], rel[6 * i + 5]);
                if (!s.position_m.allFinite() || !s.velocity_m_s.allFinite()) fail("non-finite state", i, t);
            }
            snap.chief_eci = kepler_propagate(chief0, earth_mu_m3_s2, t);
            break;
        }
        case RelativeMotionModel::nonlinear: {
            const bool keep = settings.station_keeping.enabled;
            auto work = [&](std::size_t i) {
                blocks[i].advance(force, t);
                if (keep) station_keep(blocks[i], ghosts[i], t);
            };
            // Threads only when a block has steps to take: most 10 s calls only interpolate.
            bool stepping = false;
            for (const Block& b : blocks) stepping = stepping || b.t < t;
            if (keep) {
                for (const Block& g : ghosts) stepping = stepping || g.t < t;
            }
            if (stepping) {
                parallel_for(blocks.size(), work);
            } else {
                for (std::size_t i = 0; i < blocks.size(); ++i) work(i);
            }
            snap.chief_eci = chief_of(blocks.front());
            for (const Block& b : blocks) {
                detail::write_snapshot(b, snap.chief_eci, snap);
                if (force.drag) {
                    std::copy(b.drag_delta_v.begin() + 1, b.drag_delta_v.end(),
                              differential_drag_delta_v.begin() + static_cast<std::ptrdiff_t>(b.first));
                }
            }
            return;
        }
    }
    for (std::size_t i = 0; i < count; ++i) snap.satellites_eci[i] = lvlh_to_eci(snap.chief_eci, snap.satellites_lvlh[i]);
}

FormationPropagator::FormationPropagator(const CartesianState& chief_eci, std::span<const RelativeState> satellites_lvlh,
                                         const PropagationSettings& settings)
    : impl_(std::make_unique<Impl>()) {
    Impl& m = *impl_;
    m.settings = settings;
    m.force = {settings.j2, settings.drag.enabled, settings.drag.solar_activity, settings.epoch_julian_date};
    m.chief0 = chief_eci;
    m.initial.assign(satellites_lvlh.begin(), satellites_lvlh.end());
    m.delta_v.assign(m.initial.size(), 0.0);
    m.acquisition_delta_v.assign(m.initial.size(), 0.0);
    m.control.assign(m.initial.size(), {});
    m.differential_drag_delta_v.assign(m.initial.size(), 0.0);

    const KeplerianElements el = cartesian_to_keplerian(chief_eci, earth_mu_m3_s2);
    m.r0 = chief_eci.position_m.norm();
    m.inclination = el.inclination_rad;
    m.raan0 = el.raan_rad;
    m.u0 = el.arg_perigee_rad + el.true_anomaly_rad;
    m.n = mean_motion_rad_s(el.semi_major_axis_m, earth_mu_m3_s2);

    switch (settings.model) {
        case RelativeMotionModel::hcw: break;
        case RelativeMotionModel::schweighart_sedwick: {
            // SS reference orbit: circular at r0; n = sqrt(mu/r0^3), argument of latitude rate n c,
            // node rate -(3/2) n J2 (R_E/r0)^2 cos i.
            m.n = mean_motion_rad_s(m.r0, earth_mu_m3_s2);
            m.ss_c = std::sqrt(1.0 + schweighart_sedwick_s(m.r0, m.inclination));
            const double q = earth_equatorial_radius_m / m.r0;
            m.raan_rate = -1.5 * m.n * earth_j2 * q * q * std::cos(m.inclination);
            break;
        }
        case RelativeMotionModel::hcw_ode: {
            m.rel.resize(6 * m.initial.size());
            for (std::size_t i = 0; i < m.initial.size(); ++i) {
                for (int c = 0; c < 3; ++c) {
                    m.rel[6 * i + c] = m.initial[i].position_m[c];
                    m.rel[6 * i + 3 + c] = m.initial[i].velocity_m_s[c];
                }
            }
            m.dense = std::make_unique<detail::DenseDopri5>(
                detail::odeint::make_dense_output(settings.absolute_tolerance, settings.relative_tolerance, detail::Dopri5()));
            m.dense->initialize(m.rel, 0.0, 1.0);
            break;
        }
        case RelativeMotionModel::nonlinear: {
            m.setup_nonlinear();
            if (settings.station_keeping.enabled) {
                m.reference_c = settings.j2 ? std::sqrt(1.0 + schweighart_sedwick_s(m.r0, m.inclination)) : 1.0;
                m.reference_n = mean_motion_rad_s(m.r0, earth_mu_m3_s2);
                m.transfer_time_s = 0.25 * 2.0 * pi / m.reference_n;
                m.reference_now.resize(m.initial.size());
                m.calibrate_reference_orbits();
            }
            break;
        }
    }
}

FormationPropagator::~FormationPropagator() = default;
FormationPropagator::FormationPropagator(FormationPropagator&&) noexcept = default;
FormationPropagator& FormationPropagator::operator=(FormationPropagator&&) noexcept = default;

void FormationPropagator::advance_to(double time_s, FormationSnapshot& snapshot) {
    Impl& m = *impl_;
    if (m.started && time_s < m.last_time) {
        fail("advance_to called with a time earlier than the previous one", 0, time_s);
    }
    if (!m.started) m.steady_since_s = time_s;
    m.started = true;
    m.last_time = time_s;
    m.advance(time_s, snapshot);
}

std::size_t FormationPropagator::satellite_count() const { return impl_->initial.size(); }

std::span<const double> FormationPropagator::station_keeping_delta_v_m_s() const { return impl_->delta_v; }

std::span<const double> FormationPropagator::station_keeping_acquisition_delta_v_m_s() const {
    return impl_->acquisition_delta_v;
}

double FormationPropagator::station_keeping_steady_since_s() const { return impl_->steady_since_s; }

std::span<const double> FormationPropagator::differential_drag_delta_v_m_s() const {
    return impl_->differential_drag_delta_v;
}

RelativeState FormationPropagator::station_keeping_reference_lvlh(std::size_t satellite) const {
    return impl_->reference_now.at(satellite);
}

}  // namespace skyfabric::physics
