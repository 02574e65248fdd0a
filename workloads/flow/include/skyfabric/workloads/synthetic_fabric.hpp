#pragma once
// Synthetic fabrics: topologies with no orbit behind them (ring, star through one switch,
// 2-D torus, fully connected, or an edge list), so collective results can be compared
// with other collective simulators' analytical backends and with nccl-tests on identical
// input. Pure: parses text, never opens a file — for "file:PATH" the caller reads PATH
// and puts the text in FabricSpec::csv_text. Model assumptions: docs/collectives.md.
//
// Spec strings (keys in any order; bw_gbps and latency_ns may be left out):
//   ring:p=64,bw_gbps=400,latency_ns=500        p nodes, link i — i+1 (mod p)
//   switch:p=16,bw_gbps=400,latency_ns=500      p ranks, each linked to switch node p
//   switch:p=16,leaf=4,uplink_gbps=800,…        two levels: rank i to leaf switch p + i/leaf, each
//                                               leaf to one spine (the last node) at uplink_gbps
//   torus2d:x=8,y=8,bw_gbps=400,latency_ns=500  node r·x + c, wrap-around in both dims
//   fully_connected:p=8,bw_gbps=400,latency_ns=500
//   file:PATH                                   edge list CSV (see parse_edge_list_csv)
// bw_gbps: per link and per direction (full duplex), 1 Gbps = 1e9 bit/s; default 400.
// latency_ns: per link, i.e. per hop; default 500.

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <skyfabric/links/topology.hpp>
#include <skyfabric/physics/enum_names.hpp>
#include <skyfabric/workloads/collectives.hpp>
#include <skyfabric/workloads/collective_table.hpp>
#include <skyfabric/workloads/collective_engine.hpp>
#include <skyfabric/workloads/placement.hpp>

namespace skyfabric::workloads {

// Bad fabric input. The message names the spec (or CSV source and line), the key and what
// was expected, e.g. "ring: bw_gbps: expected a positive number, got 'x'".
class FabricSpecError : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

enum class FabricKind : std::uint8_t {
    ring = 0,
    switch_star = 1,      // spelled "switch"
    torus2d = 2,
    fully_connected = 3,
    edge_list = 4,        // spelled "file"
};
inline constexpr auto fabric_kind_names = physics::enum_names<FabricKind>({
    {FabricKind::ring, "ring"},
    {FabricKind::switch_star, "switch"},
    {FabricKind::torus2d, "torus2d"},
    {FabricKind::fully_connected, "fully_connected"},
    {FabricKind::edge_list, "file"},
});

inline std::string to_string(FabricKind kind) { return fabric_kind_names.name(kind); }
FabricKind parse_fabric_kind(std::string_view name);  // throws FabricSpecError

inline constexpr double default_fabric_bandwidth_bps = 400e9;
inline constexpr double default_fabric_latency_s = 500e-9;
// The one range of a link's bandwidth and latency, wherever a fabric is read (a spec, a
// scenario mapping, an edge list): beyond it the flow engine's times overflow or underflow.
inline constexpr double min_fabric_bw_gbps = 1e-6;
inline constexpr double max_fabric_bw_gbps = 1e7;
inline constexpr double max_fabric_latency_ns = 1e12;

// A fabric as plain fields, so a scenario `topology:` block can fill it directly.
struct FabricSpec {
    FabricKind kind = FabricKind::ring;
    std::int32_t p = 0;        // ring, switch, fully_connected: ranks
    std::int32_t x = 0;        // torus2d: columns
    std::int32_t y = 0;        // torus2d: rows
    // switch with two levels: ranks per leaf switch (0: one switch), and each leaf's link to the
    // spine, per direction (0: leaf × bandwidth_bps, non-blocking).
    std::int32_t leaf = 0;
    double uplink_bps = 0.0;
    double bandwidth_bps = default_fabric_bandwidth_bps;  // per link, per direction
    double latency_s = default_fabric_latency_s;          // per link (per hop)
    std::string csv_text;      // edge_list: the CSV itself
    std::string csv_name;      // edge_list: names the CSV in error messages (the file path)
    std::string file_path;     // set by parse_fabric_spec for "file:PATH"; the caller reads it
    bool operator==(const FabricSpec&) const = default;
};

// The fabric ready to simulate on.
struct Fabric {
    FabricSpec spec;           // csv_text dropped
    links::Topology topology;  // time_s = 0
    // Ranks are nodes 0 … ranks−1. For switch the switch is node `ranks` and is no rank (two
    // levels: the leaves are nodes ranks … ranks+L−1 and the spine the last); otherwise ranks ==
    // node_count.
    std::int32_t ranks = 0;
    // rank → node: the best ring embedding the fabric has (identity for ring, switch and
    // fully_connected; a boustrophedon snake for torus2d; ring_placement() for file).
    Placement placement;
    // torus2d: {x, y}: the snake placement lays the ranks on the torus as
    // ScheduleOptions::dims describes (grid row r, column c is node r·x + c). Empty for the
    // other kinds.
    std::vector<std::int32_t> dims;
    std::string description;   // canonical spec string, e.g. "ring:p=64,bw_gbps=400,latency_ns=500"
};

// Parses a spec string. For "file:PATH" only kind, file_path and csv_name are set; the caller
// reads the file into csv_text before make_fabric. Throws FabricSpecError.
FabricSpec parse_fabric_spec(std::string_view spec);

// Builds the topology. Throws FabricSpecError for out-of-range fields (p < 2, x·y < 2,
// bandwidth <= 0, latency < 0, bad CSV).
Fabric make_fabric(const FabricSpec& spec);

// What make_fabric would check, and what it would answer for ranks and description,
// without building the links: a fully connected fabric of thousands of ranks has millions,
// and a scenario is validated and summarised long before (or without) a run needs them.
// An edge list is parsed (its node count is the ranks).
void check_fabric_spec(const FabricSpec& spec);               // throws FabricSpecError
std::int32_t fabric_ranks(const FabricSpec& spec);            // checks first
std::string fabric_description(const FabricSpec& spec);       // checks first
// The links make_fabric would build (a pair linked twice, as in a ring of 2, counted once).
// Unchecked and in 64 bits, so it can size a spec before it is refused: 0 below 2 ranks.
std::int64_t fabric_link_count(const FabricSpec& spec);

// Edge-list CSV. A header names the columns (any order): source,target,bw_gbps,latency_ns.
// One link per row, source ≠ target (either order; stored source < target), node ids ≥ 0,
// bw_gbps ≥ 0 (0: link present but down), latency_ns ≥ 0. Blank lines and lines starting
// with '#' are skipped, except "# node_count=N" which sets the node count (default: the
// largest id + 1). `name` names the text in errors ("edges.csv:7: bw_gbps: expected …").
links::Topology parse_edge_list_csv(std::string_view text, std::string_view name);
// Writes a topology in that form, with 17 significant digits, so parsing it back gives
// the same links (and node count).
std::string edge_list_csv(const links::Topology& topology);

// The nccl-tests style table on a fabric with the fabric's placement (collective_table()
// would place ranks itself and, on a switch, put a rank on the switch node) and, unless
// `schedule` gives dims, the fabric's dims. Phases with the same pattern are solved once
// per row and replayed (same numbers as solving each).
std::vector<CollectiveTableRow> fabric_collective_table(const Fabric& fabric, CollectiveOp op,
                                                        Algorithm algorithm,
                                                        std::span<const double> sizes_bytes,
                                                        const FlowOptions& flow = {},
                                                        const ScheduleOptions& schedule = {},
                                                        const FlowContext& context = {});

}  // namespace skyfabric::workloads
