#include <skyfabric/physics/neighbours.hpp>

#include <nanoflann.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace skyfabric::physics {
namespace {

// nanoflann reads points through this adaptor; no copy of the positions is made.
struct PointCloud {
    std::span<const Eigen::Vector3d> points;
    std::size_t kdtree_get_point_count() const { return points.size(); }
    double kdtree_get_pt(std::size_t i, std::size_t dim) const { return points[i][static_cast<Eigen::Index>(dim)]; }
    template <class Box>
    bool kdtree_get_bbox(Box&) const { return false; }
};

using KdTree = nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<double, PointCloud>,
                                                   PointCloud, 3, std::uint32_t>;

}  // namespace

NearestNeighbours k_nearest_neighbours(std::span<const Eigen::Vector3d> positions_m, int k) {
    NearestNeighbours out;
    out.k = std::max(k, 0);
    const std::size_t n = positions_m.size();
    out.index.assign(n * static_cast<std::size_t>(out.k), -1);
    out.distance_m.assign(n * static_cast<std::size_t>(out.k), std::numeric_limits<double>::infinity());
    if (n < 2 || out.k == 0) return out;

    PointCloud cloud{positions_m};
    KdTree tree(3, cloud, nanoflann::KDTreeSingleIndexAdaptorParams(16));
    tree.buildIndex();

    // Ask for k+1 because the query point finds itself at distance zero.
    const std::size_t want = std::min<std::size_t>(static_cast<std::size_t>(out.k) + 1, n);
    std::vector<std::uint32_t> found(want);
    std::vector<double> found_sq(want);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t got = tree.knnSearch(positions_m[i].data(), want, found.data(), found_sq.data());
        std::size_t slot = i * static_cast<std::size_t>(out.k);
        const std::size_t row_end = slot + static_cast<std::size_t>(out.k);
        for (std::size_t m = 0; m < got && slot < row_end; ++m) {
            if (found[m] == i) continue;
            out.index[slot] = static_cast<std::int32_t>(found[m]);
            out.distance_m[slot] = std::sqrt(found_sq[m]);
            ++slot;
        }
    }
    return out;
}

std::vector<PointPair> pairs_within(std::span<const Eigen::Vector3d> positions_m, double max_distance_m) {
    std::vector<PointPair> pairs;
    const std::size_t n = positions_m.size();
    if (n < 2 || !(max_distance_m >= 0.0)) return pairs;

    PointCloud cloud{positions_m};
    KdTree tree(3, cloud, nanoflann::KDTreeSingleIndexAdaptorParams(16));
    tree.buildIndex();

    std::vector<std::pair<std::uint32_t, double>> matches;
    nanoflann::SearchParams params;
    params.sorted = false;
    const double radius_sq = max_distance_m * max_distance_m;
    for (std::size_t i = 0; i < n; ++i) {
        matches.clear();
        tree.radiusSearch(positions_m[i].data(), radius_sq, matches, params);
        for (const auto& [j, d_sq] : matches) {
            if (j <= i) continue;
            pairs.push_back({static_cast<std::int32_t>(i), static_cast<std::int32_t>(j), std::sqrt(d_sq)});
        }
    }
    std::sort(pairs.begin(), pairs.end(), [](const PointPair& a, const PointPair& b) {
        return a.first != b.first ? a.first < b.first : a.second < b.second;
    });
    return pairs;
}

}  // namespace skyfabric::physics
