#pragma once
// Formation generators: initial LVLH states of every satellite relative to the
// chief (the formation's reference point). Velocities are chosen so each relative
// orbit is bounded (no secular along-track drift) with the HCW 2:1 ellipse.
#include <skyfabric/physics/frames.hpp>

#include <vector>

namespace skyfabric::physics {

struct BoundedOrbitOptions {
    // Out-of-plane (z) amplitude added for passive safety, metres; phase follows the
    // in-plane motion so that satellites never cross the chief's orbit plane together.
    double out_of_plane_amplitude_m = 0.0;
    // Trim the along-track : radial axis ratio for J2 (Schweighart-Sedwick mean motion). Needs the
    // chief's a and i. Derivation (SS 2002): x'' = 2nc y' + (5c^2-2) n^2 x, y'' = -2nc x', c = sqrt(1+s),
    // s = 3 J2 R_E^2/(8 a^2)(1 + 3 cos 2i). No drift needs y' + 2nc x = 0, then x oscillates at
    // w = n sqrt(2 - c^2) and y/x amplitude = 2c/sqrt(2 - c^2) ~ 2(1 + s). At 650 km SSO s = -6.30e-4:
    // 2 : 1.00063 (the paper quotes 2 : 1.0037; we could not reproduce that figure from SS).
    // The trim removes the MEAN J2 drift (checked against the nonlinear model averaged over set-up
    // latitudes); an osculating initial state adds a latitude-dependent drift of similar size, which
    // only a mean-to-osculating element map (e.g. Gim-Alfriend) would remove.
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

}  // namespace skyfabric::physics
