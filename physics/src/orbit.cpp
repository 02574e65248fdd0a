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

// Kepler's equation M = E - e sin E, tan(f/2) = sqrt((1+e)/(1-e)) tan(E/2).
double mean_anomaly_from_true_rad(double f, double e) {
    const double ecc_anomaly = 2.0 * std::atan2(std::sqrt(1.0 - e) * std::sin(0.5 * f), std::sqrt(1.0 + e) * std::cos(0.5 * f));
    return ecc_anomaly - e * std::sin(ecc_anomaly);
}

double true_anomaly_from_mean_rad(double m, double e) {
    double ecc_anomaly = m + e * std::sin(m);
    for (int k = 0; k < 50; ++k) {  // Newton; converges in a few steps for e < 0.9
        const double step = (ecc_anomaly - e * std::sin(ecc_anomaly) - m) / (1.0 - e * std::cos(ecc_anomaly));
        ecc_anomaly -= step;
        if (std::abs(step) < 1e-15) break;
    }
    return 2.0 * std::atan2(std::sqrt(1.0 + e) * std::sin(0.5 * ecc_anomaly), std::sqrt(1.0 - e) * std::cos(0.5 * ecc_anomaly));
}

J2SecularRates j2_secular_rates(double a, double e, double i, double j2) {
    const double n = mean_motion_rad_s(a, earth_mu_m3_s2);
    const double eta2 = 1.0 - e * e;
    const double p = a * eta2;
    const double k = j2 * (earth_equatorial_radius_m / p) * (earth_equatorial_radius_m / p) * n;
    const double c2 = std::cos(i) * std::cos(i);
    J2SecularRates r;
    r.raan_rad_s = -1.5 * k * std::cos(i);
    r.arg_perigee_rad_s = 0.75 * k * (5.0 * c2 - 1.0);
    r.mean_anomaly_rad_s = n + 0.75 * k * std::sqrt(eta2) * (3.0 * c2 - 1.0);
    return r;
}

double nodal_period_s(double a, double e, double i, double j2) {
    return 2.0 * pi / j2_secular_rates(a, e, i, j2).arg_latitude_rad_s();
}

// Schaub & Junkins (2009) Eqs. F.1-F.22, mean -> osculating (gamma2 > 0). f, M: the mean true and
// mean anomalies; K the long-period factor 1 - 11 c^2 - 40 c^4 / (1 - 5 c^2). Eccentricity and mean
// anomaly are rebuilt from (e + de, e dM) and inclination and node from (sin(i/2) + ..., sin(i/2) dOmega)
// (Lyddane), so nothing divides by e or sin i except the di term e de1 / tan i, which vanishes with e.
KeplerianElements mean_to_osculating(const KeplerianElements& mean, double j2) {
    if (j2 == 0.0) return mean;
    const double a = mean.semi_major_axis_m, e = mean.eccentricity, i = mean.inclination_rad;
    const double raan = mean.raan_rad, w = mean.arg_perigee_rad, f = mean.true_anomaly_rad;
    const double m = mean_anomaly_from_true_rad(f, e);

    const double g2 = 0.5 * j2 * (earth_equatorial_radius_m / a) * (earth_equatorial_radius_m / a);
    const double eta = std::sqrt(1.0 - e * e);
    const double eta2 = eta * eta, eta3 = eta2 * eta, eta6 = eta3 * eta3;
    const double g2p = g2 / (eta2 * eta2);
    const double c = std::cos(i), c2 = c * c, s2 = 1.0 - c2;
    const double k_long = 1.0 - 11.0 * c2 - 40.0 * c2 * c2 / (1.0 - 5.0 * c2);
    const double a_over_r = (1.0 + e * std::cos(f)) / eta2;
    const double ar3 = a_over_r * a_over_r * a_over_r;
    const double cf = std::cos(f);
    const double cos_sum = 3.0 * std::cos(2.0 * w + 2.0 * f) + 3.0 * e * std::cos(2.0 * w + f) + e * std::cos(2.0 * w + 3.0 * f);
    const double sin_sum = 3.0 * std::sin(2.0 * w + 2.0 * f) + 3.0 * e * std::sin(2.0 * w + f) + e * std::sin(2.0 * w + 3.0 * f);
    // Equation of the centre (f - M, taken in (-pi, pi]: f may be any angle) plus e sin f.
    const double centre = std::remainder(f - m, 2.0 * pi) + e * std::sin(f);

    const double a_osc = a + a * g2 * ((3.0 * c2 - 1.0) * (ar3 - 1.0 / eta3) + 3.0 * s2 * ar3 * std::cos(2.0 * w + 2.0 * f));
    const double de1 = g2p / 8.0 * e * eta2 * k_long * std::cos(2.0 * w);
    const double cubic = 3.0 * cf + 3.0 * e * cf * cf + e * e * cf * cf * cf;
    const double de = de1 + 0.5 * eta2 *
                                (g2 * ((3.0 * c2 - 1.0) / eta6 * (e * eta + e / (1.0 + eta) + cubic) +
                                       3.0 * s2 / eta6 * (e + cubic) * std::cos(2.0 * w + 2.0 * f)) -
                                 g2p * s2 * (3.0 * std::cos(2.0 * w + f) + std::cos(2.0 * w + 3.0 * f)));
    // e de1 / tan i: 0 for a circular orbit (de1 carries a factor e), so an equatorial circular orbit maps.
    const double di = (e > 0.0 ? -e * de1 / (eta2 * std::tan(i)) : 0.0) + 0.5 * g2p * c * std::sqrt(s2) * cos_sum;
    const double long_node = -g2p / 8.0 * e * e * c *
                             (11.0 + 80.0 * c2 / (1.0 - 5.0 * c2) + 200.0 * c2 * c2 / ((1.0 - 5.0 * c2) * (1.0 - 5.0 * c2))) *
                             std::sin(2.0 * w);
    const double short_node = -0.5 * g2p * c * (6.0 * centre - sin_sum);
    const double d_raan = long_node + short_node;
    const double total_angle =
        m + w + raan + g2p / 8.0 * eta3 * k_long * std::sin(2.0 * w) -
        g2p / 16.0 *
            (2.0 + e * e - 11.0 * (2.0 + 3.0 * e * e) * c2 - 40.0 * (2.0 + 5.0 * e * e) * c2 * c2 / (1.0 - 5.0 * c2) -
             400.0 * e * e * c2 * c2 * c2 / ((1.0 - 5.0 * c2) * (1.0 - 5.0 * c2))) *
            std::sin(2.0 * w) +
        g2p / 4.0 * (-6.0 * (1.0 - 5.0 * c2) * centre + (3.0 - 5.0 * c2) * sin_sum) + d_raan;
    const double e_dm = g2p / 8.0 * e * eta3 * k_long * std::sin(2.0 * w) -
                        g2p / 4.0 * eta3 *
                            (2.0 * (3.0 * c2 - 1.0) * (a_over_r * a_over_r * eta2 + a_over_r + 1.0) * std::sin(f) +
                             3.0 * s2 *
                                 ((-a_over_r * a_over_r * eta2 - a_over_r + 1.0) * std::sin(2.0 * w + f) +
                                  (a_over_r * a_over_r * eta2 + a_over_r + 1.0 / 3.0) * std::sin(2.0 * w + 3.0 * f)));

    const double d1 = (e + de) * std::sin(m) + e_dm * std::cos(m);
    const double d2 = (e + de) * std::cos(m) - e_dm * std::sin(m);
    const double half_sin = std::sin(0.5 * i) + 0.5 * std::cos(0.5 * i) * di;
    const double d3 = half_sin * std::sin(raan) + std::sin(0.5 * i) * d_raan * std::cos(raan);
    const double d4 = half_sin * std::cos(raan) - std::sin(0.5 * i) * d_raan * std::sin(raan);

    KeplerianElements osc;
    osc.semi_major_axis_m = a_osc;
    osc.eccentricity = std::hypot(d1, d2);
    const double m_osc = std::atan2(d1, d2);
    osc.raan_rad = wrap_two_pi(std::atan2(d3, d4));
    osc.inclination_rad = 2.0 * std::asin(std::min(1.0, std::hypot(d3, d4)));
    osc.arg_perigee_rad = wrap_two_pi(total_angle - m_osc - osc.raan_rad);
    osc.true_anomaly_rad = wrap_two_pi(true_anomaly_from_mean_rad(m_osc, osc.eccentricity));
    return osc;
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
