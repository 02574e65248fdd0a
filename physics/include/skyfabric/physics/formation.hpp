#pragma once
// Formation generators: initial LVLH states of every satellite relative to the
// chief (the formation's reference point). Velocities are chosen so each relative
// orbit is bounded (no secular along-track drift) with the HCW 2:1 ellipse; under J2
// j2_mean_element_formation() turns those designs into relative orbits that stay bounded.
#include <skyfabric/physics/frames.hpp>
#include <skyfabric/physics/orbit.hpp>

#include <span>
#include <vector>

namespace skyfabric::physics {

struct BoundedOrbitOptions {
    // Out-of-plane (z) amplitude added for passive safety, metres; phase follows the
    // in-plane motion so that satellites never cross the chief's orbit plane together.
    double out_of_plane_amplitude_m = 0.0;
    // Trim the along-track : radial axis ratio for J2 (Schweighart-Sedwick mean motion): the set-up
    // that is bounded under the schweighart_sedwick model. Needs the chief's a and i. Derivation
    // (Schweighart & Sedwick, JGCD 25(6), 2002, Eqs. 22-24): x'' = 2nc y' + (5c^2-2) n^2 x, y'' = -2nc x',
    // c = sqrt(1+s), s = 3 J2 R_E^2/(8 a^2)(1 + 3 cos 2i). No drift needs y' + 2nc x = 0, then x oscillates
    // at w = n sqrt(2 - c^2) and y/x amplitude = 2c/sqrt(2 - c^2) ~ 2(1 + s). At 650 km SSO s = -6.30e-4:
    // 2 : 1.00063 (the Suncatcher paper quotes 2 : 1.0037; SS does not give that figure). Under the full
    // nonlinear J2 force this trim is NOT bounded: the initial state is osculating and the SS reference
    // orbit is not the chief's mean orbit (measured ~37 m/orbit/km drift); use j2_mean_element_formation.
    bool j2_trim = false;
    double chief_semi_major_axis_m = 0.0;
    double chief_inclination_rad = 0.0;
};

// Velocity (LVLH, rotating frame) that makes position_lvlh_m a point on a bounded relative orbit.
Eigen::Vector3d bounded_relative_velocity(const Eigen::Vector3d& position_lvlh_m, double mean_motion_rad_s,
                                          const BoundedOrbitOptions& options = {});

// Suncatcher lattice: integer (i, j) with (i*radial_pitch)^2 + (j*along_track_pitch/2)^2 <= (R/2)^2,
// i.e. i^2 + j^2 <= 25 for R = 1 km, 100 m x 200 m (81 satellites). Satellite 0 is the centre.
std::vector<RelativeState> suncatcher_lattice(double radius_m, double radial_pitch_m, double along_track_pitch_m,
                                              double mean_motion_rad_s, const BoundedOrbitOptions& options = {});

// Hexagonal lattice in the (radial, along-track) plane with the HCW 2:1 stretch
// applied along-track, satellites within radius_m along-track. Satellite 0 is the centre.
std::vector<RelativeState> hexagonal_lattice(double radius_m, double pitch_m, double mean_motion_rad_s,
                                             const BoundedOrbitOptions& options = {});

// The satellites those lattices hold, counted without building (or sorting) their states: a
// scenario is sized before it is run, and a 50 km lattice has ~200,000 of them.
std::size_t suncatcher_lattice_size(double radius_m, double radial_pitch_m, double along_track_pitch_m);
std::size_t hexagonal_lattice_size(double radius_m, double pitch_m);

// The formation's initial state in the nonlinear model: the chief's osculating ECI state and every
// satellite's LVLH state relative to it.
struct FormationInitialState {
    CartesianState chief_eci;
    std::vector<RelativeState> satellites_lvlh;
};

// Relative orbits that stay bounded under J2 (first order). Each HCW design state (the bounded,
// centred 2:1 ellipse of bounded_relative_velocity with the Keplerian n of the chief's mean a) is
// read as quasi-nonsingular relative orbital elements (D'Amico, PhD thesis TU Delft 2010, Eq. 2.19:
// da, dlambda, dex, dey, dix, diy), added to the chief's MEAN elements, and both chief and satellite are
// mapped mean -> osculating (mean_to_osculating) before the satellite's LVLH state is taken. Equal
// mean semi-major axes give equal mean argument-of-latitude rates, so there is no along-track drift;
// a cross-track dix (out_of_plane_amplitude_m) changes the J2 rates d(u + Omega cos i)/dt, which a small
// da cancels (Schaub & Alfriend, Celest. Mech. 79, 2001: J2-invariant relative orbits, to first order).
// The eccentricity vectors then turn together with the J2 perigee rate: the lattice's shape cycle keeps
// its pattern. chief_mean.true_anomaly_rad is the mean true anomaly; j2 = 0 gives Keplerian relative
// orbits with equal semi-major axes (bounded in the two-body problem, nonlinear terms included).
FormationInitialState j2_mean_element_formation(const KeplerianElements& chief_mean,
                                                std::span<const RelativeState> hcw_design_lvlh, double j2);

}  // namespace skyfabric::physics
