#pragma once
// Spatial neighbour queries over satellite positions (any one Cartesian frame).
// Backed by a k-d tree, so every query over N points costs O(N log N), never O(N^2).
// The one place in skyfabric that answers "who is near whom": links and the
// formation metrics both call it.

#include <Eigen/Core>

#include <cstdint>
#include <span>
#include <vector>

namespace skyfabric::physics {

// For each point, the indices and distances of its k nearest other points, nearest first.
// Row i occupies [i*k, (i+1)*k); if fewer than k others exist the row is padded with
// index -1 and distance +inf.
struct NearestNeighbours {
    int k = 0;
    std::vector<std::int32_t> index;
    std::vector<double> distance_m;
};

NearestNeighbours k_nearest_neighbours(std::span<const Eigen::Vector3d> positions_m, int k);

// Every unordered pair (i < j) whose separation is at most max_distance_m,
// sorted by (i, j).
struct PointPair {
    std::int32_t first = 0;
    std::int32_t second = 0;
    double distance_m = 0.0;
};
std::vector<PointPair> pairs_within(std::span<const Eigen::Vector3d> positions_m,
                                    double max_distance_m);

}  // namespace skyfabric::physics
