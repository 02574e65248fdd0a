#pragma once
// Thermospheric density driven by solar and geomagnetic activity, and the drag acceleration of a
// co-rotating atmosphere. Model and sources: docs/environment-models.md "Atmospheric density".
#include <skyfabric/physics/propagation.hpp>

#include <Eigen/Core>

#include <cstdint>

namespace skyfabric::physics {

// Local exospheric temperature T_inf (K), Jacchia 1971 (SAO Special Report 332):
//   T_c = 379 + 3.24 F81 + 1.3 (F - F81)                       night-time global minimum
//   T_l = T_c [1 + R sin^m(theta) + R (cos^m(eta) - sin^m(theta)) cos^n(tau/2)]
//         eta = |phi - delta|/2, theta = |phi + delta|/2, tau = H - 37 deg + 6 deg sin(H + 43 deg),
//         R = 0.3, m = 2.2, n = 3 (diurnal bulge peaking near 14 h local time)
//   T_inf = T_l + Ap + 100 (1 - exp(-0.08 Ap))                  geomagnetic heating
// phi: latitude, delta: solar declination, H: hour angle of the point from the Sun (0 at local noon,
// positive in the afternoon), all in radians.
double exospheric_temperature_k(const SolarActivity& activity, double latitude_rad, double sun_declination_rad,
                                double hour_angle_rad);

// Mass density (kg/m^3) at height h above 120 km for exospheric temperature T_inf: Bates (1959)
// temperature profile T = T_inf - (T_inf - T_120) exp(-s xi), s = T'_120 / (T_inf - T_120), xi the
// geopotential height above 120 km, and each species (N2, O2, O, Ar, He, H) in diffusive equilibrium
// from its 120 km number density (Bates-Walker closed form, as in MSIS; thermal diffusion alpha = -0.38
// for He, -0.25 for H). T'_120 = 16.67 K/km and the 120 km densities are NRLMSISE-00's (mean gradient
// and global-mean densities at F10.7 = 150, Ap = 15); T_120 = 369 K + 0.3125 K/sfu (F81 - 150) follows
// NRLMSISE-00's global-mean 120 km temperature (344, 369, 394 K at F10.7 = 70, 150, 250). Below 120 km:
// the 120 km value (no orbit this simulator flies goes there).
double thermosphere_density_kg_m3(double height_m, double exospheric_temperature_k, double f107_81day_mean_sfu);

// Density (kg/m^3) at ECI position r; sun_direction_eci is the unit Sun vector. The exospheric
// temperature above, at the point's latitude and local solar time, then the diffusion profile.
// Within 1.5x of NRLMSISE-00 from 400 to 900 km at the low/moderate/high presets (orbit average
// of a dawn-dusk orbit and global mean; tests/physics/atmosphere_test.cpp).
double atmospheric_density_kg_m3(const Eigen::Vector3d& position_eci_m, const Eigen::Vector3d& sun_direction_eci,
                                 const SolarActivity& activity);

// a = -1/2 rho |v_rel| v_rel / B, v_rel = v - w_E x r (atmosphere co-rotates with the Earth).
Eigen::Vector3d drag_acceleration_m_s2(const Eigen::Vector3d& position_eci_m, const Eigen::Vector3d& velocity_eci_m_s,
                                       double density_kg_m3, double ballistic_coefficient_kg_m2);

// Portable normal deviate for (seed, index): splitmix64 counter hash -> two uniforms -> Box-Muller.
// Same value on every platform and compiler (unlike std::normal_distribution).
double counter_normal(std::uint64_t seed, std::uint64_t index);

// Ballistic coefficient of satellite i: B (1 + dispersion * N(0,1)), clamped to >= 0.2 B.
double satellite_ballistic_coefficient_kg_m2(const DragSettings& drag, std::uint64_t satellite_index);

}  // namespace skyfabric::physics
