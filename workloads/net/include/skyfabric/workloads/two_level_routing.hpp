#pragma once
// Two-level routing over a network split into clusters (a constellation's), as a backend
// aggregation layer routes (docs/routing.md): inside a cluster over the cluster's own links, across
// clusters over the gateway overlay. Pure: no I/O.
//
// A search from s to t runs on a reduced graph: every node and link of s's and t's clusters, every
// link between clusters, and, for each other cluster, only its border nodes (those with a usable
// link to another cluster) joined by virtual edges weighted by their latency distance inside that
// cluster. Any path's stretch inside a third cluster runs border to border and is no shorter than
// that cluster's own shortest path between them, so the reduced graph's distances are the whole
// network's (the test holds them equal on random multi-cluster fabrics); it has 2·cluster + borders
// nodes instead of every node of the network. A virtual edge is expanded into its cluster's
// shortest path between the two borders.
//
// Between two clusters (s in A, t in B) the search runs on border nodes only: s joined to A's borders
// and B's borders to t by their shortest paths inside A and B (the borders' trees), since a path
// leaves A for the first time at a border it reached inside A and enters B for the last time at a
// border from which it stays in B.
//
// UCMP's k paths are found one after another, each with the earlier ones' links banned: inside one
// cluster, its links, the links between clusters and the virtual edges taken (edge-disjoint inside
// the cluster); between clusters, the links between clusters and the virtual edges taken, while the
// stretches inside A and B are the trees' and may be shared (gateway-disjoint, as a BAG's hosts
// reach the aggregation layer by their cluster's own routes). A later path may cross a third
// cluster by other borders over links an earlier one used there. The flat model's paths are
// edge-disjoint everywhere.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include <skyfabric/workloads/network.hpp>

namespace skyfabric::workloads {

// One network's overlay: its clusters, their border nodes and each border's shortest-path tree
// inside its cluster. Built once per network (RouteTable keeps it beside the routes).
struct ClusterOverlay {
    std::int32_t node_count = 0;
    std::size_t edge_count = 0;                 // directed edges of the network it was built on
    std::vector<std::int32_t> cluster_of;       // per node: dense cluster index
    std::vector<std::int32_t> local_index;      // per node: its place among its cluster's nodes
    std::vector<std::int32_t> cluster_size;     // per cluster: its nodes
    std::vector<std::int32_t> border_offsets;   // per cluster: its border rows, [c, c + 1)
    std::vector<std::int32_t> border_node;      // per row: the node
    std::vector<std::int32_t> row_of;           // per node: its border row, −1 for an inner node
    std::vector<std::size_t> virtual_base;      // per cluster: its rows × rows block in the next two
    std::vector<double> virtual_latency_s;      // border row to border row of a cluster, inside it (inf: none)
    std::vector<std::int32_t> virtual_hops;
    std::vector<std::size_t> tree_base;         // per row: its tree's block in tree_via and tree_latency_s
    std::vector<std::int32_t> tree_via;         // per row, per node of its cluster (local index): edge in, −1
    std::vector<double> tree_latency_s;         // per row, per node of its cluster: latency inside it (inf: none)
    std::vector<std::int32_t> tree_hops;        // per row, per node of its cluster: hops of that path
    // Latency distances between border rows over the whole network, by column: [x · rows + r] is the
    // distance from row r to row x (rows × rows; empty past max_overlay_bound_entries): the searches'
    // bounds towards their targets. A column is found the first time a search needs it
    // (border_distances_to), so a damaged copy's few searches pay for the columns of their targets
    // only; the once-flags make that safe from any thread of a shared overlay.
    mutable std::vector<double> border_distance_s;
    std::unique_ptr<std::once_flag[]> border_distance_once;
    // Per cluster: the usable links into it from other clusters, [c, c + 1) of entries (its bounds
    // leave out those a later disjoint path may not take; kept only up to max_bound_entries a cluster).
    std::vector<std::int32_t> entry_offsets;
    std::vector<std::int32_t> entries;
    std::size_t virtual_index(std::int32_t cluster, std::int32_t from_row, std::int32_t to_row) const {
        const auto first = border_offsets[static_cast<std::size_t>(cluster)];
        const auto rows = static_cast<std::size_t>(border_offsets[static_cast<std::size_t>(cluster) + 1] - first);
        return virtual_base[static_cast<std::size_t>(cluster)] + static_cast<std::size_t>(from_row - first) * rows +
               static_cast<std::size_t>(to_row - first);
    }
    std::size_t bytes() const {
        return (virtual_latency_s.size() + tree_latency_s.size() + border_distance_s.size()) * sizeof(double) + (virtual_base.size() + tree_base.size()) * sizeof(std::size_t) +
               (cluster_of.size() + local_index.size() + cluster_size.size() + border_offsets.size() + border_node.size() +
                row_of.size() + virtual_hops.size() + tree_via.size() + tree_hops.size() + entry_offsets.size() + entries.size()) *
                   sizeof(std::int32_t);
    }
};

// nullopt with fewer than two clusters (there is nothing to reduce: the flat search is the same
// model) or where the overlay would keep more than max_overlay_entries tree or virtual entries.
// cluster_of: any labels, per node (missing or negative: a cluster of their own).
inline constexpr std::size_t max_overlay_entries = std::size_t{1} << 24;
inline constexpr std::size_t max_overlay_bound_entries = std::size_t{1} << 22;  // 32 MB of border distances
inline constexpr std::int32_t max_bound_entries = 64;  // links into a cluster its bounds go through one by one
std::optional<ClusterOverlay> build_cluster_overlay(const Network& network, std::span<const std::int32_t> cluster_of);

// The latency distances from every border row to border row x over the whole network (a Dijkstra
// towards x, found once per overlay and kept): [r] is the distance from row r. Null where the overlay
// keeps no bounds. `network` must be the overlay's.
const double* border_distances_to(const Network& network, const ClusterOverlay& overlay, std::int32_t row);

// Up to k paths from source to target (shortest latency), found one after another on the reduced
// graph as the header says. Each search goes towards its target (A*) on lower bounds from the
// border distances: from a border node b, min over t's cluster's borders b' of D(b, b') + d(b', t)
// (with few links into t's cluster, min over those the search may take, u → w, of
// D(b, u) + l + d(w, t): a later disjoint path's bound leaves out the links the earlier ones took);
// from an inner node, through its cluster's borders; inside t's cluster, the landmark bound over its
// borders. All are consistent, so the paths are shortest (to rounding); among equal ones the
// frontier's order (bound-added label, hops, node) picks one. Empty when target cannot
// be reached; source == target gives one empty path. The overlay must have been built on `network`.
std::vector<Path> route_two_level(const Network& network, const ClusterOverlay& overlay, std::int32_t source,
                                  std::int32_t target, std::int32_t k);

}  // namespace skyfabric::workloads
