#pragma once
// nccl-tests style tables: one collective over a fixed topology at a series of sizes, with the
// bandwidth bound each row is checked against; and one collective on a fixed topology. Pure.

#include <cstdint>
#include <span>
#include <vector>

#include <skyfabric/links/topology.hpp>
#include <skyfabric/workloads/collectives.hpp>
#include <skyfabric/workloads/collective_engine.hpp>
#include <skyfabric/workloads/network.hpp>
#include <skyfabric/workloads/placement.hpp>

namespace skyfabric::workloads {

// One row of an nccl-tests style table.
struct CollectiveTableRow {
    double bytes = 0.0;
    double time_s = 0.0;
    double alg_bw_Bps = 0.0;
    double bus_bw_Bps = 0.0;
    // Bandwidth bound: bus_bandwidth_factor × n / B with B the per-rank single-link
    // bandwidth (min over ranks of that rank's fastest link), latency left out.
    double lower_bound_s = 0.0;
    double bound_bus_bw_Bps = 0.0;  // B
};

struct CollectiveTableOptions {
    FlowOptions flow;
    ScheduleOptions schedule;
    std::int32_t ranks = 0;             // 0 = every node
    bool topology_aware_placement = true;  // else identity placement
};

std::vector<CollectiveTableRow> collective_table(const links::Topology& topology,
                                                 CollectiveOp op, Algorithm algorithm,
                                                 std::span<const double> sizes_bytes,
                                                 const CollectiveTableOptions& options = {},
                                                 const FlowContext& context = {});
// The same table with the ranks already placed (rank r on node placement[r]): the one loop every
// table runs. Phases with the same pattern are solved once per row and replayed (the same numbers
// as solving each).
std::vector<CollectiveTableRow> collective_table(const links::Topology& topology, const Placement& placement,
                                                 CollectiveOp op, Algorithm algorithm,
                                                 std::span<const double> sizes_bytes, const FlowOptions& flow,
                                                 const ScheduleOptions& schedule, const FlowContext& context = {});

// min, 2·min, 4·min, … up to max (inclusive when hit exactly).
std::vector<double> size_sweep(double min_bytes, double max_bytes, double factor = 2.0);

// One collective on a fixed topology: convenience for tests and the CLI.
CollectiveResult run_collective(const links::Topology& topology, CollectiveOp op,
                                Algorithm algorithm, double bytes, const Placement& placement,
                                const FlowOptions& flow = {},
                                const ScheduleOptions& schedule = {});

}  // namespace skyfabric::workloads
