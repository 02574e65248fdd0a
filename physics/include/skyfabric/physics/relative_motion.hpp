#pragma once
// Closed-form relative-motion models (LVLH, rotating-frame velocity) and analytic
// two-body propagation of a chief. Used by the propagator and the formation generators.
#include <skyfabric/physics/frames.hpp>

#include <Eigen/Core>

namespace skyfabric::physics {

// Hill-Clohessy-Wiltshire state transition matrix Phi(t) for the state (x, y, z, vx, vy, vz):
// x'' = 2n y' + 3n^2 x, y'' = -2n x', z'' = -n^2 z.
Eigen::Matrix<double, 6, 6> hcw_state_transition(double mean_motion_rad_s, double time_s);
RelativeState hcw_propagate(const RelativeState& initial_lvlh, double mean_motion_rad_s, double time_s);

// Schweighart & Sedwick (2002) J2 parameter s = 3 J2 R_E^2 / (8 r^2) (1 + 3 cos 2i); c = sqrt(1 + s).
double schweighart_sedwick_s(double reference_radius_m, double inclination_rad);

// Closed-form solution of the Schweighart-Sedwick linearised equations
// x'' = 2 n c y' + (5c^2 - 2) n^2 x, y'' = -2 n c x', z'' = -q^2 z, q = n sqrt(3c^2 - 2).
// (The cross-track forcing 2 l q cos(qt + phi) of a differential inclination is left out:
// deputies are taken in the chief's plane to first order.) c = 1 gives HCW.
RelativeState schweighart_sedwick_propagate(const RelativeState& initial_lvlh, double mean_motion_rad_s, double c,
                                            double time_s);

// Two-body propagation by Lagrange f and g coefficients (eccentric-anomaly form; elliptic orbits).
CartesianState kepler_propagate(const CartesianState& initial_eci, double mu_m3_s2, double time_s);

}  // namespace skyfabric::physics
