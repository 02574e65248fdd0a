#pragma once
// Two-body orbit elements, conversions and orbit design helpers (SSO, LTAN).
#include <skyfabric/physics/time.hpp>

#include <Eigen/Core>

namespace skyfabric::physics {

// Position and velocity in one inertial frame (ECI unless a name says otherwise).
struct CartesianState {
    Eigen::Vector3d position_m = Eigen::Vector3d::Zero();
    Eigen::Vector3d velocity_m_s = Eigen::Vector3d::Zero();
};

struct KeplerianElements {
    double semi_major_axis_m = 0.0;
    double eccentricity = 0.0;
    double inclination_rad = 0.0;
    double raan_rad = 0.0;
    double arg_perigee_rad = 0.0;
    double true_anomaly_rad = 0.0;
};

CartesianState keplerian_to_cartesian(const KeplerianElements& elements, double mu_m3_s2);
KeplerianElements cartesian_to_keplerian(const CartesianState& state_eci, double mu_m3_s2);

double mean_motion_rad_s(double semi_major_axis_m, double mu_m3_s2);
double orbital_period_s(double semi_major_axis_m, double mu_m3_s2);

// Mean anomaly from the true anomaly and back (Kepler's equation, elliptic orbits).
double mean_anomaly_from_true_rad(double true_anomaly_rad, double eccentricity);
double true_anomaly_from_mean_rad(double mean_anomaly_rad, double eccentricity);

// Secular rates of the mean elements under J2 (Brouwer 1959, first order; Vallado 2013 Eqs. 9-41):
// dOmega/dt = -(3/2) n J2 (R/p)^2 cos i, domega/dt = (3/4) n J2 (R/p)^2 (5 cos^2 i - 1),
// dM/dt = n [1 + (3/4) J2 (R/p)^2 sqrt(1-e^2) (3 cos^2 i - 1)], n = sqrt(mu/a^3) of the MEAN a.
struct J2SecularRates {
    double raan_rad_s = 0.0;
    double arg_perigee_rad_s = 0.0;
    double mean_anomaly_rad_s = 0.0;
    // Rate of the mean argument of latitude u = omega + M (the chief's rate in its orbit plane).
    double arg_latitude_rad_s() const { return arg_perigee_rad_s + mean_anomaly_rad_s; }
};
J2SecularRates j2_secular_rates(double semi_major_axis_m, double eccentricity, double inclination_rad, double j2);

// Nodal (draconitic) period, node to node: 2 pi / (dM/dt + domega/dt). 5,859.4 s at 650 km SSO
// where the Keplerian period is 5,863.7 s. With j2 = 0 it is the Keplerian period.
double nodal_period_s(double semi_major_axis_m, double eccentricity, double inclination_rad, double j2);

// Mean elements -> osculating elements with the first-order short-period and long-period J2 terms
// (Brouwer 1959 with Lyddane's 1963 non-singular form, as written out in Schaub & Junkins,
// "Analytical Mechanics of Space Systems", 2nd ed. 2009, Appendix F). Regular at e = 0, not at the
// critical inclination (63.4 deg, where cos^2 i = 1/5: the long-period terms diverge). true_anomaly_rad
// is the mean element's true anomaly (from the mean anomaly by Kepler's equation). j2 = 0: identity.
KeplerianElements mean_to_osculating(const KeplerianElements& mean, double j2);

// Inclination at which J2 nodal precession equals the Sun's mean motion:
// cos i = -(2/3) * rate * a^(7/2) (1-e^2)^2 / (J2 R_E^2 sqrt(mu)).
double sun_synchronous_inclination_rad(double semi_major_axis_m, double eccentricity);

// Unit vector from Earth to the Sun in ECI (low-precision solar ephemeris,
// Astronomical Almanac, ~0.01 deg).
Eigen::Vector3d sun_direction_eci(double julian_date_days);

// RAAN that puts the ascending node at local mean solar time ltan_h at the epoch
// (6 h or 18 h: dawn-dusk).
double raan_for_ltan_rad(double ltan_h, double julian_date_days);

}  // namespace skyfabric::physics
