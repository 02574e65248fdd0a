#include <skyfabric/links/metrics.hpp>

#include <algorithm>
#include <numeric>

namespace skyfabric::links {

std::vector<int> links_per_satellite(const Topology& topology) {
    std::vector<int> degree(static_cast<std::size_t>(std::max(topology.node_count, 0)), 0);
    for (const Link& l : topology.links) {
        ++degree[static_cast<std::size_t>(l.source)];
        ++degree[static_cast<std::size_t>(l.target)];
    }
    return degree;
}

int connected_components(const Topology& topology) {
    const auto n = static_cast<std::size_t>(std::max(topology.node_count, 0));
    std::vector<std::size_t> parent(n);
    std::iota(parent.begin(), parent.end(), std::size_t{0});
    auto find = [&](std::size_t x) {
        while (parent[x] != x) x = parent[x] = parent[parent[x]];  // path halving
        return x;
    };
    int components = static_cast<int>(n);
    for (const Link& l : topology.links) {
        const auto a = find(static_cast<std::size_t>(l.source));
        const auto b = find(static_cast<std::size_t>(l.target));
        if (a != b) {
            parent[a] = b;
            --components;
        }
    }
    return components;
}

double bisection_capacity_bps(const Topology& topology, std::span<const Eigen::Vector3d> positions_m,
                              int* axis_out) {
    const auto n = positions_m.size();
    if (n < 2) {
        if (axis_out) *axis_out = 0;
        return 0.0;
    }
    Eigen::Vector3d lo = positions_m[0], hi = positions_m[0];
    for (const auto& p : positions_m) {
        lo = lo.cwiseMin(p);
        hi = hi.cwiseMax(p);
    }
    Eigen::Index axis = 0;
    (hi - lo).maxCoeff(&axis);
    // Rank along the axis (ties by index) → the lower ⌊N/2⌋ form side A.
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const double xa = positions_m[a][axis], xb = positions_m[b][axis];
        return xa != xb ? xa < xb : a < b;
    });
    std::vector<char> side(n, 1);
    for (std::size_t r = 0; r < n / 2; ++r) side[order[r]] = 0;
    double sum = 0.0;
    for (const Link& l : topology.links)
        if (side[static_cast<std::size_t>(l.source)] != side[static_cast<std::size_t>(l.target)]) sum += l.capacity_bps;
    if (axis_out) *axis_out = static_cast<int>(axis);
    return sum;
}

TopologyMetrics summarize(const Topology& topology, std::span<const Eigen::Vector3d> positions_m) {
    TopologyMetrics m;
    m.link_count = static_cast<int>(topology.links.size());
    if (!topology.links.empty()) {
        m.capacity_min_bps = topology.links.front().capacity_bps;
        m.capacity_max_bps = m.capacity_min_bps;
        double sum = 0.0;
        for (const Link& l : topology.links) {
            m.capacity_min_bps = std::min(m.capacity_min_bps, l.capacity_bps);
            m.capacity_max_bps = std::max(m.capacity_max_bps, l.capacity_bps);
            sum += l.capacity_bps;
        }
        m.capacity_mean_bps = sum / static_cast<double>(topology.links.size());
    }
    const auto degree = links_per_satellite(topology);
    if (!degree.empty()) {
        m.links_per_satellite_min = *std::min_element(degree.begin(), degree.end());
        m.links_per_satellite_max = *std::max_element(degree.begin(), degree.end());
        m.links_per_satellite_mean = 2.0 * m.link_count / static_cast<double>(degree.size());
    }
    m.components = connected_components(topology);
    m.bisection_capacity_bps = bisection_capacity_bps(topology, positions_m, &m.bisection_axis);
    return m;
}

}  // namespace skyfabric::links
