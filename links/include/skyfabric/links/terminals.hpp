#pragma once
// Optical terminals carried by each satellite: how many links it can hold at once, how far
// it may point, and how long a newly pointed terminal needs before it carries traffic.

namespace skyfabric::links {

struct TerminalParameters {
    int terminals_per_satellite = 8;   // hard limit on a satellite's degree
    // Range limit for a new link (m). 0 = the link budget's full-capacity reach
    // (≈ 293 km with the paper's defaults), so in a km-scale cluster only the terminal
    // count limits the topology.
    double max_range_m = 0.0;
    // A newly pointed link carries 0 bit/s until this has elapsed (acquisition, tracking lock);
    // then a `reacquired` event. Not in the paper: 1 s is an assumed coarse-to-fine
    // acquisition time for terminals that already know the partner's ephemeris.
    double reacquisition_time_s = 1.0;
    bool operator==(const TerminalParameters&) const = default;
};

}  // namespace skyfabric::links
