#pragma once
// Force model of the nonlinear propagator: two-body + J2 (+ drag), for one body and for a block's
// offsets from the chief (offset'' = a(r_c + d) - a(r_c)).
#include "block_storage.hpp"

#include <skyfabric/physics/atmosphere.hpp>
#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/orbit.hpp>
#include <skyfabric/physics/propagation.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <vector>

namespace skyfabric::physics::detail {

struct ForceModel {
    bool j2 = true;
    bool drag = false;
    SolarActivity activity = SolarActivity::moderate;
    double epoch_julian_date = 0.0;
};

// Two-body + J2:
// a = -mu r / r^3 - (3/2) J2 mu R^2 / r^5 [x (1 - 5z^2/r^2), y (1 - 5z^2/r^2), z (3 - 5z^2/r^2)].
inline Eigen::Vector3d gravity_acceleration(const ForceModel& f, const Eigen::Vector3d& r) {
    const double r2 = r.squaredNorm();
    const double r1 = std::sqrt(r2);
    Eigen::Vector3d a = (-earth_mu_m3_s2 / (r2 * r1)) * r;
    if (f.j2) {
        const double k = -1.5 * earth_j2 * earth_mu_m3_s2 * earth_equatorial_radius_m * earth_equatorial_radius_m /
                         (r2 * r2 * r1);
        const double z5 = 5.0 * r.z() * r.z() / r2;
        a.x() += k * r.x() * (1.0 - z5);
        a.y() += k * r.y() * (1.0 - z5);
        a.z() += k * r.z() * (3.0 - z5);
    }
    return a;
}

// Drag: -1/2 rho |v_rel| v_rel / B. The propagator's one use of the density model.
inline Eigen::Vector3d drag_acceleration(const ForceModel& f, const Eigen::Vector3d& r, const Eigen::Vector3d& v,
                                         double ballistic, const Eigen::Vector3d& sun) {
    return drag_acceleration_m_s2(r, v, atmospheric_density_kg_m3(r, sun, f.activity), ballistic);
}

// Two-body + J2 (+ drag).
inline Eigen::Vector3d acceleration(const ForceModel& f, const Eigen::Vector3d& r, const Eigen::Vector3d& v,
                                    double ballistic, const Eigen::Vector3d& sun) {
    Eigen::Vector3d a = gravity_acceleration(f, r);
    if (f.drag) a += drag_acceleration(f, r, v, ballistic, sun);
    return a;
}

// Two-body + J2 acceleration at chief + offset, minus the chief's acceleration, for n offsets (the
// same formula as acceleration()). Restrict parameters and -fno-math-errno (sqrt) let the compiler
// vectorise it for the target.
inline void offset_accelerations(const double* __restrict dx, const double* __restrict dy, const double* __restrict dz,
                          double* __restrict ax, double* __restrict ay, double* __restrict az, std::size_t n,
                          const std::array<double, 3>& chief_r, const std::array<double, 3>& chief_a, double kj2) {
    const double rcx = chief_r[0], rcy = chief_r[1], rcz = chief_r[2];
    const double acx = chief_a[0], acy = chief_a[1], acz = chief_a[2];
    for (std::size_t e = 0; e < n; ++e) {
        const double x = rcx + dx[e], yy = rcy + dy[e], z = rcz + dz[e];
        const double r2 = x * x + yy * yy + z * z;
        const double r1 = std::sqrt(r2);
        const double g = -earth_mu_m3_s2 / (r2 * r1);
        const double kk5 = kj2 / (r2 * r2 * r1);
        const double z5 = 5.0 * z * z / r2;
        ax[e] = (g * x + kk5 * x * (1.0 - z5)) - acx;
        ay[e] = (g * yy + kk5 * yy * (1.0 - z5)) - acy;
        az[e] = (g * z + kk5 * z * (3.0 - z5)) - acz;
    }
}

// f = dy/dt of a block's state s (layout b): velocities, then the chief's acceleration and each offset's
// a(r_c + d) - a(r_c); ballistic[e] is entity e's ballistic coefficient. With drag, drag_difference[e]
// (e >= 1) receives |a_drag,e - a_drag,chief|, whose time integral is the least delta-v that cancels the
// differential drag.
inline void block_derivative(const ForceModel& f, const BlockLayout& b, const std::vector<double>& ballistic,
                             double time, const double* __restrict s, double* __restrict d,
                             double* __restrict drag_difference) {
    const std::size_t n = b.count + 1, S = b.stride;
    for (std::size_t c = 0; c < 3; ++c) std::copy(s + (c + 3) * S, s + (c + 3) * S + n, d + c * S);
    const Eigen::Vector3d rc(s[0], s[S], s[2 * S]), vc(s[3 * S], s[4 * S], s[5 * S]);
    Eigen::Vector3d sun = Eigen::Vector3d::UnitX();
    if (f.drag) sun = sun_direction_eci(f.epoch_julian_date + time / seconds_per_day);
    Eigen::Vector3d ac = gravity_acceleration(f, rc);
    Eigen::Vector3d drag_c = Eigen::Vector3d::Zero();
    if (f.drag) {
        drag_c = drag_acceleration(f, rc, vc, ballistic[0], sun);
        ac += drag_c;
    }
    d[3 * S] = ac.x();
    d[4 * S] = ac.y();
    d[5 * S] = ac.z();
    if (f.drag) {
        for (std::size_t e = 1; e < n; ++e) {
            const Eigen::Vector3d r = rc + b.pos_of(s, e);
            const Eigen::Vector3d drag_e =
                drag_acceleration(f, r, vc + Eigen::Vector3d(s[3 * S + e], s[4 * S + e], s[5 * S + e]), ballistic[e], sun);
            Eigen::Vector3d a = gravity_acceleration(f, r);
            a += drag_e;
            a = a - ac;
            d[3 * S + e] = a.x();
            d[4 * S + e] = a.y();
            d[5 * S + e] = a.z();
            if (drag_difference) drag_difference[e] = (drag_e - drag_c).norm();
        }
        return;
    }
    // Two-body + J2, vectorised over the satellites.
    const double kj2 = f.j2 ? -1.5 * earth_j2 * earth_mu_m3_s2 * earth_equatorial_radius_m *
                                  earth_equatorial_radius_m
                            : 0.0;
    offset_accelerations(s + 1, s + S + 1, s + 2 * S + 1, d + 3 * S + 1, d + 4 * S + 1, d + 5 * S + 1, n - 1,
                         {rc.x(), rc.y(), rc.z()}, {ac.x(), ac.y(), ac.z()}, kj2);
}

}  // namespace skyfabric::physics::detail
