#pragma once
// Earth-fixed frames and WGS-84 geodetic coordinates.
//
// ECI here is the frame the propagators use (z to the pole, x to the vernal equinox of the
// scenario epoch). Earth rotation is a rotation about z by the Greenwich mean sidereal
// angle theta (time.hpp, greenwich_sidereal_angle_rad); precession, nutation and polar
// motion are neglected (~0.3 deg at most over decades from J2000 — far below the
// resolution of any radiation-belt map used with these coordinates).
#include <Eigen/Core>

namespace skyfabric::physics {

struct Geodetic {
    double latitude_rad = 0.0;   // geodetic (normal to the WGS-84 ellipsoid), [-pi/2, pi/2]
    double longitude_rad = 0.0;  // east positive, (-pi, pi]
    double altitude_m = 0.0;     // height above the ellipsoid
    bool operator==(const Geodetic&) const = default;
};

// r_ECEF = R_z(theta) r_ECI:  x' = cos(theta) x + sin(theta) y,  y' = -sin(theta) x + cos(theta) y.
Eigen::Vector3d eci_to_ecef(const Eigen::Vector3d& position_eci_m, double sidereal_angle_rad);

// ECEF -> geodetic on WGS-84 (a, f from constants.hpp). Bowring's (1976) parametric-latitude
// iteration: tan(beta) = (1 - f) tan(phi), phi = atan2(z + e'^2 b sin^3 beta, p - e^2 a cos^3 beta);
// three iterations reach < 1e-12 rad anywhere above the Earth's centre region. Height:
// h = p cos(phi) + z sin(phi) - a^2 / N(phi),  N = a / sqrt(1 - e^2 sin^2 phi) (valid at the poles).
Geodetic ecef_to_geodetic(const Eigen::Vector3d& position_ecef_m);

// Inverse: r = ((N + h) cos(phi) cos(lambda), (N + h) cos(phi) sin(lambda), (N (1 - e^2) + h) sin(phi)).
Eigen::Vector3d geodetic_to_ecef(const Geodetic& geodetic);

// Geodetic coordinates of an ECI position at elapsed_s after the epoch whose Julian date is
// epoch_julian_date_days (theta = GMST(epoch + elapsed)).
Geodetic eci_to_geodetic(const Eigen::Vector3d& position_eci_m, double epoch_julian_date_days, double elapsed_s);

}  // namespace skyfabric::physics
