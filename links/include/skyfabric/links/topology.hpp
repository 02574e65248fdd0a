#pragma once
// The network at one instant: a sparse, undirected edge list between satellites.
// Produced by the links library, consumed by workloads, written by src/ and viz/.

#include <skyfabric/physics/enum_names.hpp>

#include <cstdint>
#include <vector>

namespace skyfabric::links {

// One bidirectional optical link. Capacity is per direction (full duplex).
struct Link {
    std::int32_t source = 0;  // source < target
    std::int32_t target = 0;
    double distance_m = 0.0;
    double capacity_bps = 0.0;        // per direction; 0 while re-acquiring
    double latency_s = 0.0;           // light time over distance_m
    double received_power_dbm = 0.0;  // per DWDM channel
    double margin_db = 0.0;           // received power minus required sensitivity
    bool acquiring = false;           // pointed but still within its re-acquisition time
};

struct Topology {
    double time_s = 0.0;
    std::int32_t node_count = 0;
    std::vector<Link> links;  // sorted by (source, target)
};

enum class LinkEventKind : std::uint8_t {
    up = 0,
    down_range = 1,         // partner left range / field of regard / margin
    down_reassigned = 2,    // terminal given to another partner by the policy
    reacquired = 3,         // finished re-acquisition, now carries traffic
    down_fault = 4,         // taken down by a fault (radiation, link outage)
};
inline constexpr auto link_event_kind_names = physics::enum_names<LinkEventKind>({
    {LinkEventKind::up, "up"},
    {LinkEventKind::down_range, "down_range"},
    {LinkEventKind::down_reassigned, "down_reassigned"},
    {LinkEventKind::reacquired, "reacquired"},
    {LinkEventKind::down_fault, "down_fault"},
});

struct LinkEvent {
    double time_s = 0.0;
    std::int32_t source = 0;
    std::int32_t target = 0;
    LinkEventKind kind = LinkEventKind::up;
};

}  // namespace skyfabric::links
