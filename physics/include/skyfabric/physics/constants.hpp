#pragma once
// Physical constants, SI units. Earth values: WGS-84 / EGM96.
namespace skyfabric::physics {

inline constexpr double pi = 3.14159265358979323846;
inline constexpr double earth_mu_m3_s2 = 3.986004418e14;          // GM, WGS-84
inline constexpr double earth_equatorial_radius_m = 6378137.0;     // WGS-84 a
inline constexpr double earth_flattening = 1.0 / 298.257223563;    // WGS-84 f
inline constexpr double earth_j2 = 1.08262668e-3;                  // EGM96, unnormalised C20 = -J2
inline constexpr double earth_rotation_rad_s = 7.2921150e-5;       // WGS-84 omega
inline constexpr double speed_of_light_m_s = 299792458.0;
inline constexpr double seconds_per_day = 86400.0;
inline constexpr double seconds_per_julian_year = 365.25 * 86400.0;
// Mean motion of the Sun for sun-synchronous nodal precession: 2*pi per tropical year.
inline constexpr double sun_synchronous_precession_rad_s = 2.0 * pi / (365.2421897 * 86400.0);

}  // namespace skyfabric::physics
