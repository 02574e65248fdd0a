#pragma once
// Upper-atmosphere density (Harris-Priester, Montenbruck & Gill "Satellite Orbits" 3.5.2)
// and drag acceleration for a co-rotating atmosphere.
#include <skyfabric/physics/propagation.hpp>

#include <Eigen/Core>

#include <cstdint>

namespace skyfabric::physics {

// Density (kg/m^3) at ECI position r; sun_direction_eci is the unit Sun vector.
// Harris-Priester: rho = rho_min(h) + (rho_max(h) - rho_min(h)) cos^n(psi/2), psi the angle from the
// diurnal bulge apex (Sun direction lagged 30 deg in right ascension), n = 6 (polar orbits),
// rho_min/max interpolated exponentially between 100 and 1000 km (table for mean solar activity).
// Solar activity: moderate = the model above; low = rho_min(h) everywhere (night-side floor),
// high = rho_max(h) everywhere (bulge apex). At 650 km low:high ~ 1:10, the order of the
// solar-cycle swing there; a proxy, not a flux-driven model. Above 1000 km: 0.
double atmospheric_density_kg_m3(const Eigen::Vector3d& position_eci_m, const Eigen::Vector3d& sun_direction_eci,
                                 SolarActivity activity);

// a = -1/2 rho |v_rel| v_rel / B, v_rel = v - w_E x r (atmosphere co-rotates with the Earth).
Eigen::Vector3d drag_acceleration_m_s2(const Eigen::Vector3d& position_eci_m, const Eigen::Vector3d& velocity_eci_m_s,
                                       double density_kg_m3, double ballistic_coefficient_kg_m2);

// Portable normal deviate for (seed, index): splitmix64 counter hash -> two uniforms -> Box-Muller.
// Same value on every platform and compiler (unlike std::normal_distribution).
double counter_normal(std::uint64_t seed, std::uint64_t index);

// Ballistic coefficient of satellite i: B (1 + dispersion * N(0,1)), clamped to >= 0.2 B.
double satellite_ballistic_coefficient_kg_m2(const DragSettings& drag, std::uint64_t satellite_index);

}  // namespace skyfabric::physics
