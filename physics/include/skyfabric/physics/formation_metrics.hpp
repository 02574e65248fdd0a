#pragma once
// Formation geometry summaries, all via the k-d tree in neighbours.hpp (O(N log N)).
#include <skyfabric/physics/frames.hpp>

#include <Eigen/Core>

#include <cstdint>
#include <span>
#include <vector>

namespace skyfabric::physics {

// Distance from each satellite to its nearest other satellite (+inf if alone).
std::vector<double> nearest_neighbour_distances_m(std::span<const Eigen::Vector3d> positions_m);

struct MinimumSeparation {
    std::int32_t first = -1;   // first < second
    std::int32_t second = -1;
    double distance_m = 0.0;   // +inf with fewer than two satellites
};
MinimumSeparation minimum_separation(std::span<const Eigen::Vector3d> positions_m);

// Largest |x| (radial), |y| (along-track), |z| (cross-track) over the formation, LVLH.
struct FormationEnvelope {
    double max_abs_radial_m = 0.0;
    double max_abs_along_track_m = 0.0;
    double max_abs_cross_track_m = 0.0;
};
FormationEnvelope formation_envelope(std::span<const RelativeState> satellites_lvlh);

// Distances from satellite `satellite` to its k nearest others, nearest first (fewer if N-1 < k).
std::vector<double> k_nearest_distances_m(std::span<const Eigen::Vector3d> positions_m, std::size_t satellite, int k);

// Positions of a snapshot's satellites (helper for the functions above).
std::vector<Eigen::Vector3d> positions_of(std::span<const RelativeState> satellites_lvlh);

}  // namespace skyfabric::physics
