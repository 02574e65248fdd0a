#pragma once
// Summaries of one Topology: capacity per link, links per satellite, connectivity and a
// bisection-capacity estimate. Pure functions.

#include <skyfabric/links/topology.hpp>

#include <Eigen/Core>

#include <span>
#include <vector>

namespace skyfabric::links {

struct TopologyMetrics {
    int link_count = 0;
    double capacity_min_bps = 0.0;   // per direction, over links (0 if no links)
    double capacity_mean_bps = 0.0;
    double capacity_max_bps = 0.0;
    int links_per_satellite_min = 0;
    double links_per_satellite_mean = 0.0;
    int links_per_satellite_max = 0;
    int components = 0;              // connected components (isolated satellites count)
    double bisection_capacity_bps = 0.0;
    int bisection_axis = 0;          // 0 = x, 1 = y, 2 = z of the positions' frame
};

// Degree of every satellite.
std::vector<int> links_per_satellite(const Topology& topology);
// Number of connected components (union–find over links; a satellite alone is one).
// Links still re-acquiring count: they are pointed and will carry traffic.
int connected_components(const Topology& topology);
// Bisection capacity estimate, per direction: the satellites are split into two halves of
// ⌊N/2⌋ and ⌈N/2⌉ by their rank along the axis of largest extent (the median plane
// perpendicular to the formation's longest axis), and the capacities of the links crossing
// that plane are summed. This is one balanced cut, so it bounds the true minimum bisection
// from above; for a lattice-like formation it is the natural narrowest cut.
double bisection_capacity_bps(const Topology& topology, std::span<const Eigen::Vector3d> positions_m,
                              int* axis_out = nullptr);

TopologyMetrics summarize(const Topology& topology, std::span<const Eigen::Vector3d> positions_m);

}  // namespace skyfabric::links
