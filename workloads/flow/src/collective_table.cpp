#include <skyfabric/workloads/collective_table.hpp>

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace skyfabric::workloads {

namespace {
constexpr double inf = std::numeric_limits<double>::infinity();
}  // namespace

std::vector<double> size_sweep(double min_bytes, double max_bytes, double factor) {
    if (!(min_bytes > 0.0) || !(factor > 1.0)) throw std::invalid_argument("size_sweep: need min > 0, factor > 1");
    std::vector<double> sizes;
    for (double s = min_bytes; s <= max_bytes * (1.0 + 1e-12); s *= factor) sizes.push_back(s);
    return sizes;
}

std::vector<CollectiveTableRow> collective_table(const links::Topology& topology, CollectiveOp op,
                                                 Algorithm algorithm,
                                                 std::span<const double> sizes_bytes,
                                                 const CollectiveTableOptions& options, const FlowContext& context) {
    const std::int32_t p = options.ranks > 0 ? options.ranks : topology.node_count;
    const Placement placement = options.topology_aware_placement ? ring_placement(build_network(topology), p)
                                                                 : identity_placement(p);
    return collective_table(topology, placement, op, algorithm, sizes_bytes, options.flow, options.schedule, context);
}

std::vector<CollectiveTableRow> collective_table(const links::Topology& topology, const Placement& placement,
                                                 CollectiveOp op, Algorithm algorithm,
                                                 std::span<const double> sizes_bytes, const FlowOptions& flow,
                                                 const ScheduleOptions& schedule, const FlowContext& context) {
    const std::vector<links::Topology> series{topology};
    NetworkClock clock(topology_source(series));
    CollectiveEngine engine(clock, flow, context);
    const auto p = static_cast<std::int32_t>(placement.size());
    const double bandwidth = single_link_bandwidth_Bps(clock.network(), placement, p);
    std::vector<CollectiveTableRow> rows;
    rows.reserve(sizes_bytes.size());
    std::int64_t key = 0;
    for (double n : sizes_bytes) {
        const Schedule s = build_schedule(op, algorithm, p, n, schedule);
        // One cache key per row: phases of equal pattern (all 2(p−1) steps of a ring) are
        // solved once and replayed exactly.
        const CollectiveResult r = engine.run(s, placement, topology.time_s, key++);
        CollectiveTableRow row;
        row.bytes = n;
        row.time_s = r.duration_s();
        row.alg_bw_Bps = r.alg_bw_Bps;
        row.bus_bw_Bps = r.bus_bw_Bps;
        row.bound_bus_bw_Bps = bandwidth;
        row.lower_bound_s = bandwidth > 0.0 ? bus_bandwidth_factor(op, p) * n / bandwidth : inf;
        rows.push_back(row);
    }
    return rows;
}

CollectiveResult run_collective(const links::Topology& topology, CollectiveOp op, Algorithm algorithm,
                                double bytes, const Placement& placement, const FlowOptions& flow,
                                const ScheduleOptions& schedule) {
    const std::vector<links::Topology> series{topology};
    NetworkClock clock(topology_source(series));
    CollectiveEngine engine(clock, flow);
    const Schedule s = build_schedule(op, algorithm, static_cast<std::int32_t>(placement.size()), bytes, schedule);
    return engine.run(s, placement, topology.time_s);
}

}  // namespace skyfabric::workloads
