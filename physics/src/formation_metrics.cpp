#include <skyfabric/physics/formation_metrics.hpp>

#include <skyfabric/physics/neighbours.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace skyfabric::physics {

std::vector<double> nearest_neighbour_distances_m(std::span<const Eigen::Vector3d> positions_m) {
    const NearestNeighbours nn = k_nearest_neighbours(positions_m, 1);
    return nn.distance_m;
}

// The closest pair is mutual nearest neighbours, so one 1-NN query over all points finds it.
MinimumSeparation minimum_separation(std::span<const Eigen::Vector3d> positions_m) {
    MinimumSeparation best;
    best.distance_m = std::numeric_limits<double>::infinity();
    const NearestNeighbours nn = k_nearest_neighbours(positions_m, 1);
    for (std::size_t i = 0; i < positions_m.size(); ++i) {
        const std::int32_t j = nn.index[i];
        if (j < 0) continue;
        const double d = nn.distance_m[i];
        const std::int32_t a = std::min<std::int32_t>(static_cast<std::int32_t>(i), j);
        const std::int32_t b = std::max<std::int32_t>(static_cast<std::int32_t>(i), j);
        if (d < best.distance_m || (d == best.distance_m && (a < best.first || (a == best.first && b < best.second)))) {
            best = {a, b, d};
        }
    }
    return best;
}

FormationEnvelope formation_envelope(std::span<const RelativeState> satellites_lvlh) {
    FormationEnvelope e;
    for (const auto& s : satellites_lvlh) {
        e.max_abs_radial_m = std::max(e.max_abs_radial_m, std::abs(s.position_m.x()));
        e.max_abs_along_track_m = std::max(e.max_abs_along_track_m, std::abs(s.position_m.y()));
        e.max_abs_cross_track_m = std::max(e.max_abs_cross_track_m, std::abs(s.position_m.z()));
    }
    return e;
}

std::vector<double> k_nearest_distances_m(std::span<const Eigen::Vector3d> positions_m, std::size_t satellite, int k) {
    // One query point only: a partial sort is O(N) and needs no tree.
    std::vector<double> d;
    if (satellite >= positions_m.size() || k <= 0) return d;
    d.reserve(positions_m.size());
    for (std::size_t j = 0; j < positions_m.size(); ++j) {
        if (j != satellite) d.push_back((positions_m[j] - positions_m[satellite]).norm());
    }
    const std::size_t kk = std::min<std::size_t>(static_cast<std::size_t>(k), d.size());
    std::partial_sort(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(kk), d.end());
    d.resize(kk);
    return d;
}

std::vector<Eigen::Vector3d> positions_of(std::span<const RelativeState> satellites_lvlh) {
    std::vector<Eigen::Vector3d> p;
    p.reserve(satellites_lvlh.size());
    for (const auto& s : satellites_lvlh) p.push_back(s.position_m);
    return p;
}

}  // namespace skyfabric::physics
