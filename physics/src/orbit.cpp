#include <skyfabric/physics/orbit.hpp>

#include <skyfabric/physics/constants.hpp>

#include <Eigen/Geometry>

#include <algorithm>
#include <cmath>

namespace skyfabric::physics {
namespace {

double wrap_two_pi(double angle_rad) {
    double a = std::fmod(angle_rad, 2.0 * pi);
    if (a < 0.0) a += 2.0 * pi;
    return a;
}

constexpr double deg = pi / 180.0;

}  // namespace

// Perifocal state r = p/(1+e cos nu) (cos nu, sin nu, 0), v = sqrt(mu/p) (-sin nu, e + cos nu, 0),
// rotated to ECI by R3(-raan) R1(-i) R3(-argp).
CartesianState keplerian_to_cartesian(const KeplerianElements& el, double mu_m3_s2) {
    const double p = el.semi_major_axis_m * (1.0 - el.eccentricity * el.eccentricity);
    const double cnu = std::cos(el.true_anomaly_rad);
    const double snu = std::sin(el.true_anomaly_rad);
    const double r = p / (1.0 + el.eccentricity * cnu);
    const Eigen::Vector3d r_pf(r * cnu, r * snu, 0.0);
    const double vs = std::sqrt(mu_m3_s2 / p);
    const Eigen::Vector3d v_pf(-vs * snu, vs * (el.eccentricity + cnu), 0.0);
    const Eigen::Matrix3d rot = (Eigen::AngleAxisd(el.raan_rad, Eigen::Vector3d::UnitZ()) *
                                 Eigen::AngleAxisd(el.inclination_rad, Eigen::Vector3d::UnitX()) *
                                 Eigen::AngleAxisd(el.arg_perigee_rad, Eigen::Vector3d::UnitZ()))
                                    .toRotationMatrix();
    return {rot * r_pf, rot * v_pf};
}

// Vallado Alg. 9 (RV2COE). Circular / equatorial cases keep the sum of the undefined
// angles in the defined one (argument of latitude or true longitude), so a round trip is exact.
KeplerianElements cartesian_to_keplerian(const CartesianState& s, double mu_m3_s2) {
    const Eigen::Vector3d& r = s.position_m;
    const Eigen::Vector3d& v = s.velocity_m_s;
    const double rn = r.norm();
    const Eigen::Vector3d h = r.cross(v);
    const double hn = h.norm();
    const Eigen::Vector3d node = Eigen::Vector3d::UnitZ().cross(h);
    const double nn = node.norm();
    const Eigen::Vector3d e_vec = v.cross(h) / mu_m3_s2 - r / rn;
    const double e = e_vec.norm();
    const double energy = 0.5 * v.squaredNorm() - mu_m3_s2 / rn;

    KeplerianElements el;
    el.semi_major_axis_m = -mu_m3_s2 / (2.0 * energy);
    el.eccentricity = e;
    el.inclination_rad = std::acos(std::clamp(h.z() / hn, -1.0, 1.0));
    constexpr double small = 1e-11;
    const bool equatorial = nn < small * hn;
    const bool circular = e < small;
    el.raan_rad = equatorial ? 0.0 : wrap_two_pi(std::atan2(node.y(), node.x()));
    // Reference direction in the orbit plane from which angles are measured.
    const Eigen::Vector3d ref = equatorial ? Eigen::Vector3d::UnitX() : Eigen::Vector3d(node / nn);
    const Eigen::Vector3d h_hat = h / hn;
    auto angle_from = [&](const Eigen::Vector3d& a, const Eigen::Vector3d& b) {
        // Signed angle a -> b about the orbit normal.
        return std::atan2(h_hat.dot(a.cross(b)), a.dot(b));
    };
    if (circular) {
        el.arg_perigee_rad = 0.0;
        el.true_anomaly_rad = wrap_two_pi(angle_from(ref, r));
    } else {
        el.arg_perigee_rad = wrap_two_pi(angle_from(ref, e_vec));
        el.true_anomaly_rad = wrap_two_pi(angle_from(e_vec, r));
    }
    return el;
}

// n = sqrt(mu / a^3)
double mean_motion_rad_s(double semi_major_axis_m, double mu_m3_s2) {
    return std::sqrt(mu_m3_s2 / (semi_major_axis_m * semi_major_axis_m * semi_major_axis_m));
}

// T = 2 pi sqrt(a^3 / mu)
double orbital_period_s(double semi_major_axis_m, double mu_m3_s2) {
    return 2.0 * pi / mean_motion_rad_s(semi_major_axis_m, mu_m3_s2);
}

// Secular J2 nodal rate dOmega/dt = -(3/2) n J2 (R_E/p)^2 cos i set equal to the Sun's mean motion:
// cos i = -(2/3) rate a^(7/2) (1-e^2)^2 / (J2 R_E^2 sqrt(mu)). Elements are mean elements
// (650 km circular -> 97.99 deg); an osculating initial state differs by ~1e-3 deg.
double sun_synchronous_inclination_rad(double semi_major_axis_m, double eccentricity) {
    const double one_minus_e2 = 1.0 - eccentricity * eccentricity;
    const double cos_i = -(2.0 / 3.0) * sun_synchronous_precession_rad_s * std::pow(semi_major_axis_m, 3.5) *
                         one_minus_e2 * one_minus_e2 /
                         (earth_j2 * earth_equatorial_radius_m * earth_equatorial_radius_m * std::sqrt(earth_mu_m3_s2));
    return std::acos(std::clamp(cos_i, -1.0, 1.0));
}

// Astronomical Almanac low-precision Sun (~0.01 deg, 1950-2050), n = JD - 2451545:
// L = 280.460 + 0.9856474 n, g = 357.528 + 0.9856003 n, lambda = L + 1.915 sin g + 0.020 sin 2g,
// eps = 23.439 - 4e-7 n; u = (cos lambda, cos eps sin lambda, sin eps sin lambda).
Eigen::Vector3d sun_direction_eci(double julian_date_days) {
    const double n = julian_date_days - 2451545.0;
    const double mean_longitude = (280.460 + 0.9856474 * n) * deg;
    const double g = (357.528 + 0.9856003 * n) * deg;
    const double lambda = mean_longitude + (1.915 * std::sin(g) + 0.020 * std::sin(2.0 * g)) * deg;
    const double eps = (23.439 - 4.0e-7 * n) * deg;
    return {std::cos(lambda), std::cos(eps) * std::sin(lambda), std::sin(eps) * std::sin(lambda)};
}

// The mean Sun moves on the equator with right ascension equal to its mean longitude L,
// so local mean time at the node is 12 h + (RAAN - L)/15deg: RAAN = L + (LTAN - 12 h) 15 deg/h.
double raan_for_ltan_rad(double ltan_h, double julian_date_days) {
    const double n = julian_date_days - 2451545.0;
    const double mean_sun_ra = (280.460 + 0.9856474 * n) * deg;
    return wrap_two_pi(mean_sun_ra + (ltan_h - 12.0) * 15.0 * deg);
}

}  // namespace skyfabric::physics
