#pragma once
// Sunlight on the formation: the Sun's position, the Earth's shadow and the beta angle.
// (The Sun's direction itself is sun_direction_eci() in orbit.hpp.)
#include <Eigen/Core>

namespace skyfabric::physics {

inline constexpr double astronomical_unit_m = 1.495978707e11;  // IAU 2012
inline constexpr double sun_radius_m = 6.957e8;                 // IAU 2015 nominal
// Earth's radius for the shadow: the equatorial radius (WGS-84), as in the independent astropy check
// (docs/references.md). The polar radius is 21 km less and a grazing atmosphere adds tens of km: with +50 km
// the eclipse season of the 650 km dawn-dusk orbit grows from 89 to 95 days.
inline constexpr double earth_shadow_radius_m = 6378137.0;

// Sun position in ECI (metres): sun_direction_eci times the Astronomical Almanac low-precision
// distance r = 1.00014 - 0.01671 cos g - 0.00014 cos 2g AU (g the mean anomaly; ~1e-4 AU, 1950-2050).
// Direction checked against Vallado (2013) Example 5-1 to 0.0004 deg.
Eigen::Vector3d sun_position_eci_m(double julian_date_days);

enum class ShadowModel {
    cylindrical,  // umbra only, a cylinder of earth_shadow_radius_m behind the Earth: fraction 0 or 1
    conical,      // umbra and penumbra from the apparent Sun and Earth disks: fraction in [0, 1]
};

// Fraction of the Sun's disk hidden by the Earth, seen from position_eci_m (0: full sunlight,
// 1: umbra). Conical: Montenbruck & Gill, "Satellite Orbits" (2000) Sec. 3.4.2, Eqs. 3.85-3.87 (the
// overlap of two disks of apparent radii asin(R_sun/|s - r|) and asin(R_E/|r|)).
double shadow_fraction(const Eigen::Vector3d& position_eci_m, const Eigen::Vector3d& sun_position_eci_m,
                       ShadowModel model = ShadowModel::conical);

// Beta angle: the Sun's elevation above the orbit plane, asin(h_hat . s_hat) with h = r x v (rad).
// An orbit sees eclipses only when |beta| < asin(R_E / r) (65.2 deg at 650 km).
double beta_angle_rad(const Eigen::Vector3d& position_eci_m, const Eigen::Vector3d& velocity_eci_m_s,
                      const Eigen::Vector3d& sun_position_eci_m);

}  // namespace skyfabric::physics
