#include <skyfabric/physics/relative_motion.hpp>

#include <skyfabric/physics/constants.hpp>

#include <cmath>

namespace skyfabric::physics {

// HCW solution (Vallado Eq. 6-66), C = cos nt, S = sin nt:
// x = (4-3C) x0 + S/n vx0 + 2(1-C)/n vy0
// y = 6(S-nt) x0 + y0 - 2(1-C)/n vx0 + (4S-3nt)/n vy0
// z = C z0 + S/n vz0, and their time derivatives.
Eigen::Matrix<double, 6, 6> hcw_state_transition(double n, double t) {
    const double nt = n * t;
    const double c = std::cos(nt);
    const double s = std::sin(nt);
    Eigen::Matrix<double, 6, 6> m = Eigen::Matrix<double, 6, 6>::Zero();
    m(0, 0) = 4.0 - 3.0 * c;        m(0, 3) = s / n;                 m(0, 4) = 2.0 * (1.0 - c) / n;
    m(1, 0) = 6.0 * (s - nt);       m(1, 1) = 1.0;                   m(1, 3) = -2.0 * (1.0 - c) / n;
    m(1, 4) = (4.0 * s - 3.0 * nt) / n;
    m(2, 2) = c;                    m(2, 5) = s / n;
    m(3, 0) = 3.0 * n * s;          m(3, 3) = c;                     m(3, 4) = 2.0 * s;
    m(4, 0) = -6.0 * n * (1.0 - c); m(4, 3) = -2.0 * s;              m(4, 4) = 4.0 * c - 3.0;
    m(5, 2) = -n * s;               m(5, 5) = c;
    return m;
}

RelativeState hcw_propagate(const RelativeState& s0, double n, double t) {
    Eigen::Matrix<double, 6, 1> x0;
    x0 << s0.position_m, s0.velocity_m_s;
    const Eigen::Matrix<double, 6, 1> x = hcw_state_transition(n, t) * x0;
    return {x.head<3>(), x.tail<3>()};
}

double schweighart_sedwick_s(double r, double i) {
    const double ratio = earth_equatorial_radius_m / r;
    return 3.0 * earth_j2 * ratio * ratio / 8.0 * (1.0 + 3.0 * std::cos(2.0 * i));
}

// With K = vy0 + 2nc x0 (conserved: y' + 2nc x = K), x'' + w^2 x = 2ncK, w = n sqrt(2 - c^2):
// x = xp + (x0 - xp) cos wt + vx0/w sin wt, xp = 2ncK/w^2; y' = K - 2nc x, integrated;
// z = z0 cos qt + vz0/q sin qt.
RelativeState schweighart_sedwick_propagate(const RelativeState& s0, double n, double c, double t) {
    const double w = n * std::sqrt(2.0 - c * c);
    const double q = n * std::sqrt(3.0 * c * c - 2.0);
    const double x0 = s0.position_m.x();
    const double vx0 = s0.velocity_m_s.x();
    const double k = s0.velocity_m_s.y() + 2.0 * n * c * x0;
    const double xp = 2.0 * n * c * k / (w * w);
    const double cw = std::cos(w * t);
    const double sw = std::sin(w * t);
    const double x = xp + (x0 - xp) * cw + vx0 / w * sw;
    const double vx = -(x0 - xp) * w * sw + vx0 * cw;
    const double y = s0.position_m.y() + k * t -
                     2.0 * n * c * (xp * t + (x0 - xp) * sw / w + vx0 * (1.0 - cw) / (w * w));
    const double vy = k - 2.0 * n * c * x;
    const double cq = std::cos(q * t);
    const double sq = std::sin(q * t);
    const double z = s0.position_m.z() * cq + s0.velocity_m_s.z() / q * sq;
    const double vz = -s0.position_m.z() * q * sq + s0.velocity_m_s.z() * cq;
    return {Eigen::Vector3d(x, y, z), Eigen::Vector3d(vx, vy, vz)};
}

// Curtis/Vallado: with sigma0 = r0.v0/sqrt(mu), solve for dE
// n t = dE + sigma0/sqrt(a) (1 - cos dE) - (1 - r0/a) sin dE,
// r = a + (r0 - a) cos dE + sigma0 sqrt(a) sin dE,
// f = 1 - a/r0 (1 - cos dE), g = t - (dE - sin dE)/n,
// fdot = -sqrt(mu a) sin dE / (r r0), gdot = 1 - a/r (1 - cos dE).
CartesianState kepler_propagate(const CartesianState& s0, double mu, double t) {
    const Eigen::Vector3d& r0v = s0.position_m;
    const Eigen::Vector3d& v0v = s0.velocity_m_s;
    const double r0 = r0v.norm();
    const double a = 1.0 / (2.0 / r0 - v0v.squaredNorm() / mu);
    const double n = std::sqrt(mu / (a * a * a));
    const double period = 2.0 * pi / n;
    // Whole revolutions return the same state: reduce t to keep g free of cancellation.
    const double tr = t - std::floor(t / period) * period;
    const double sigma0 = r0v.dot(v0v) / std::sqrt(mu);
    const double sa = std::sqrt(a);
    const double m = n * tr;
    double de = m;
    for (int it = 0; it < 50; ++it) {
        const double f = de + sigma0 / sa * (1.0 - std::cos(de)) - (1.0 - r0 / a) * std::sin(de) - m;
        const double fp = 1.0 + sigma0 / sa * std::sin(de) - (1.0 - r0 / a) * std::cos(de);
        const double step = f / fp;
        de -= step;
        if (std::abs(step) < 1e-15) break;
    }
    const double cde = std::cos(de);
    const double sde = std::sin(de);
    const double r = a + (r0 - a) * cde + sigma0 * sa * sde;
    const double f = 1.0 - a / r0 * (1.0 - cde);
    const double g = tr - (de - sde) / n;
    const double fdot = -std::sqrt(mu * a) * sde / (r * r0);
    const double gdot = 1.0 - a / r * (1.0 - cde);
    return {f * r0v + g * v0v, fdot * r0v + gdot * v0v};
}

}  // namespace skyfabric::physics
