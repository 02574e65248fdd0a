#pragma once
// Rank placement: which satellite each data-parallel rank runs on. Ring collectives
// send rank i → i+1, so a placement whose consecutive ranks are physical neighbours
// keeps every ring step on one hop.

#include <cstdint>
#include <span>
#include <vector>

#include <skyfabric/links/topology.hpp>
#include <skyfabric/workloads/network.hpp>

namespace skyfabric::workloads {

// rank → node id
using Placement = std::vector<std::int32_t>;

// Greedy nearest-neighbour tour over the link graph: from the lowest-numbered node, go
// to the unvisited direct neighbour with the lowest latency; when none is left, to the
// unvisited node nearest by routed latency. On a lattice this gives a snake. Picks
// `ranks` nodes (all nodes when ranks == node_count). Deterministic.
Placement ring_placement(const Network& network, std::int32_t ranks);
// The same tour over the listed nodes only (one rank on each; starting from the lowest): the
// ring of the ranks that survive a fault, or that include a spare.
Placement ring_placement(const Network& network, std::span<const std::int32_t> nodes);

// The tour over the listed nodes with the edges each hop's choice rests on: the direct edge it
// took, or a dead end's jump along the shortest path the search found. On a copy of the same
// network with some edges' capacity set to 0 (a damaged copy: the same edges and latencies), a hop
// whose edges all still carry capacity is chosen the same from the same state: the edge taken stays
// the cheapest candidate left, and the node jumped to keeps its distance while no other node's shrinks.
struct RingTour {
    Placement order;
    std::vector<std::int32_t> decisive_edges;
    std::vector<std::int32_t> hop_ends;  // hop i (placing order[i]): decisive_edges[hop_ends[i-1] .. hop_ends[i])
};
RingTour ring_tour(const Network& network, std::span<const std::int32_t> nodes);
// ring_placement(damaged, nodes), taking `before` (found on the undamaged network over the same
// nodes, or more: ranks since lost) up to its first hop that the damage breaks or that places a
// lost node, touring on from there, and taking `before` again from where the two tours meet in
// the same state (the same node, the same nodes left) up to its next broken hop.
Placement ring_placement_after_damage(const RingTour& before, const Network& damaged, std::span<const std::int32_t> nodes);
// Uniformly random distinct nodes, from a seeded counter-based generator.
Placement random_placement(std::int32_t node_count, std::int32_t ranks, std::uint64_t seed);
// Identity: rank i on node i.
Placement identity_placement(std::int32_t ranks);

// Sum of routed hop counts between consecutive ranks around the ring (−1 if some hop
// is unreachable). Equals `ranks` for a perfect embedding.
std::int32_t ring_hops(const Network& network, const Placement& placement);
// True when every pair of consecutive ranks is joined by a usable direct link.
bool ring_is_embedded(const Network& network, const Placement& placement);

// Per-rank single-link bandwidth B (bytes/s): min over ranks of the rank's fastest usable
// link. The bandwidth term bus_factor·n/B bounds what a one-link-per-rank algorithm can do.
double single_link_bandwidth_Bps(const Network& network, const Placement& placement,
                                 std::int32_t ranks);

}  // namespace skyfabric::workloads
