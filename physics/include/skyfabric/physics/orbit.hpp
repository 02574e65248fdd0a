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
