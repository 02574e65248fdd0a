#pragma once
// Serving from the ground (docs/inference.md "Serving from the ground"): users' requests enter at a
// ground station with an open link to a cluster overhead, travel up, are served in orbit by
// simulate_serving (as a trace of their arrivals in orbit), and their tokens come down through the
// first station open after they are generated. When no station is open, a request waits on the ground
// (or its tokens in orbit). Stations see each cluster's chief orbit (physics/ground_station.hpp); the
// link between them is the satellite-to-ground budget (links/ground_link.hpp), blocked by each optical
// site's clouds unless it has a Ka-band fallback. Pure: no I/O.
#include <skyfabric/links/ground_link.hpp>
#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/ground_station.hpp>
#include <skyfabric/workloads/serving.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace skyfabric::workloads {

struct GroundStation {
    std::string name;
    physics::Geodetic site;
    double min_elevation_rad = 20.0 * physics::pi / 180.0;
    links::GroundLinkKind kind = links::GroundLinkKind::optical;
    links::OpticalGroundLinkParameters optical;  // kind optical
    physics::CloudClimate clouds;                // kind optical: its link is closed while cloudy
    // kind ka_band: the link's rate whenever a cluster is above min_elevation (rain fades not modelled);
    // kind optical: a Ka-band terminal beside the telescope, used while cloudy (0: none).
    double ka_band_rate_bps = 0.0;
    double users_share = 0.0;  // of the requests; the stations' shares are normalised (all 0: equal)
    bool operator==(const GroundStation&) const = default;
};

// A data centre on the ground (docs/inference.md "Ground data centres"): a node of the serving fabric
// whose instances run on its own accelerators, joined by fibre to one ground station, through whose
// open link (the station's, as for the users' requests) it reaches the cluster overhead.
struct GroundDatacentre {
    std::string name;
    physics::Geodetic site;
    Accelerator accelerator;              // its chips: the instances placed here run on them
    std::int64_t accelerators = 0;        // chips it holds: its instances' chips must fit
    std::int32_t station = 0;             // the ground station it reaches orbit through
    double fibre_m = 0.0;                 // the fibre's length to that station (at backhaul_speed_m_s)
    double fibre_rate_bps = 100e9;        // per direction
    bool operator==(const GroundDatacentre&) const = default;
};

struct GroundSegmentConfig {
    std::vector<GroundStation> stations;
    std::vector<GroundDatacentre> datacentres;
    double bytes_per_token = 4.0;        // prompt tokens go up, output tokens come down (text, not KV)
    double backhaul_speed_m_s = 2.0e8;   // between stations on the ground: fibre along the great circle
    double segment_s = 10.0;             // the link's rate and serving cluster are held over segments this long
    double epoch_julian_date_days = 0.0;
    std::uint64_t seed = 42;             // each optical site's clouds: its own stream of this seed
    bool operator==(const GroundSegmentConfig&) const = default;
};

// One stretch of a station's open link: one cluster (the highest above the site), one rate.
struct GroundContact {
    double start_s = 0.0;
    double end_s = 0.0;
    std::int32_t cluster = 0;
    double rate_bps = 0.0;
    double range_m = 0.0;   // at the stretch's middle
    bool ka_band = false;   // the Ka-band link (the station's kind, or the fallback under clouds)
};

struct StationTimeline {
    std::vector<GroundContact> contacts;   // in time order, not overlapping
    std::int64_t passes = 0;               // windows with some cluster above min_elevation (clusters merged)
    double visible_s = 0.0;                // their total length
    double optical_open_s = 0.0;           // visible and clear (optical stations)
    double ka_band_open_s = 0.0;           // open on the Ka-band link
    double cloudy_visible_s = 0.0;         // visible but clouded (optical stations)
    std::int64_t cluster_handovers = 0;    // the serving cluster changing within a pass
};

// Each station's open link over [start_s, end_s) from every cluster's chief orbit (cluster_orbits[c]).
std::vector<StationTimeline> ground_timelines(const GroundSegmentConfig& config,
                                              std::span<const physics::SampledOrbit> cluster_orbits, double start_s,
                                              double end_s);

// The serving fabric with the ground data centres on it. Nodes: the satellites (0 … satellites − 1) as
// `space` gives them, then one per data centre, then one per station. Each data centre is joined to its
// station by its fibre; each station that a data centre reaches orbit through is joined, while its link is
// open (its StationTimeline's contacts: the contact's rate, its light time over the contact's range), to
// the terminal satellite of the contact's cluster (cluster_terminal[c]). A topology is given whenever
// space's or the contacts' change: a KV cache bound for the ground crosses the link a contact opens, and
// waits without a path (the serving run's stalled transfer) while none is open.
TopologySource ground_fabric(TopologySource space, const GroundSegmentConfig& config, std::vector<StationTimeline> timelines,
                             std::vector<std::int32_t> cluster_terminal, std::int32_t satellites);
inline std::int32_t ground_datacentre_node(std::int32_t satellites, std::size_t datacentre) {
    return satellites + static_cast<std::int32_t>(datacentre);
}
inline std::int32_t ground_fabric_node_count(const GroundSegmentConfig& config, std::int32_t satellites) {
    return satellites + static_cast<std::int32_t>(config.datacentres.size() + config.stations.size());
}

// Where the serving roles run: in orbit (-1) or on a ground data centre (its index).
struct GroundPlacement {
    std::int32_t prefill_datacentre = -1;
    std::int32_t decode_datacentre = -1;
    bool operator==(const GroundPlacement&) const = default;
};

// One request's journey through the ground segment; times NaN when not reached.
struct GroundJourney {
    double ground_arrival_s = 0.0;
    std::int32_t home_station = 0;
    std::int32_t up_station = -1;
    std::int32_t up_cluster = -1;
    double uplink_start_s = 0.0;    // its prompt starts up (after waiting for a link and for the requests ahead)
    double orbit_arrival_s = 0.0;   // at the satellite overhead (or, prefill on the ground, at its data centre): the serving run's arrival
    std::int32_t down_station = -1;
    double first_token_ground_s = 0.0;
    double last_token_ground_s = 0.0;
    double ttft_ground_s() const { return first_token_ground_s - ground_arrival_s; }
};

struct GroundStationSummary {
    std::string name;
    std::int64_t passes = 0;
    double passes_per_day = 0.0;
    double contact_s = 0.0;          // visible (clusters merged)
    double contact_min_per_day = 0.0;
    double optical_open_s = 0.0;
    double ka_band_open_s = 0.0;
    double cloudy_visible_s = 0.0;
    std::int64_t cluster_handovers = 0;
    std::int64_t requests_up = 0;
    std::int64_t requests_down = 0;
    double bytes_up = 0.0;
    double bytes_down = 0.0;
    double bytes_up_per_day = 0.0;
    double bytes_down_per_day = 0.0;
};

struct GroundServingSummary {
    std::int64_t requests = 0;             // arrived on the ground in the run
    std::int64_t uplinked = 0;             // reached orbit before the end (the serving run's arrivals)
    std::int64_t waiting_on_ground = 0;    // no link open for them before the end
    std::int64_t waited = 0;               // found no station open on arrival
    std::int64_t first_token_down = 0;     // their first token reached the ground before the end
    std::int64_t station_handovers = 0;    // tokens came down through another station than the prompt went up
    Percentiles uplink_wait_s;             // ground arrival to uplink start, of the uplinked
    double uplink_wait_mean_s = 0.0;
    double uplink_wait_max_s = 0.0;
    Percentiles downlink_wait_s;           // first token in orbit to its downlink, of those down
    double downlink_wait_mean_s = 0.0;
    Percentiles ttft_ground_s;             // ground arrival to first token on the ground
    double ttft_ground_mean_s = 0.0;
    Percentiles completion_ground_s;       // ground arrival to the last token on the ground (completed requests)
    // Completed with their last token down, TTFT and TPOT on the ground ((last − first token down) /
    // (output − 1)) within the objectives, over every request arrived on the ground.
    double slo_attainment_ground = 0.0;
    // 95 % intervals by sectioning over spans of ground arrival time, as ServingSummary's.
    PercentileIntervals ttft_ground_ci95;
    Interval95 slo_attainment_ground_ci95;
    // A KV cache between orbit and a ground data centre (one role on each): from its prefill's end, the
    // wait until its data centre's station link is open (0 when open then). Of the caches whose prefill
    // ended in the run; those with no contact before the end are counted apart.
    bool kv_crosses_ground_link = false;  // one role in orbit, the other on a ground data centre
    std::int64_t kv_caches_crossing = 0;
    std::int64_t kv_waited_for_contact = 0;
    std::int64_t kv_no_contact_before_end = 0;
    Percentiles kv_contact_wait_s;
    double kv_contact_wait_mean_s = 0.0;
    double kv_contact_wait_max_s = 0.0;
    std::vector<GroundStationSummary> stations;
};

// The ground side of one serving run: `uplink` turns the ground arrivals into the serving run's trace,
// `downlink` takes its records (in any blocks, in id order) and brings their tokens down.
class GroundSegment {
public:
    // prefill_cluster / decode_cluster: each serving instance's cluster (light time between clusters at
    // the chiefs' distance: the gateway hops, added to the ground-to-ground latency).
    GroundSegment(const GroundSegmentConfig& config, std::vector<StationTimeline> timelines,
                  std::span<const physics::SampledOrbit> cluster_orbits, std::vector<std::int32_t> prefill_cluster,
                  std::vector<std::int32_t> decode_cluster, double start_s, double end_s, GroundPlacement placement = {});

    // Requests in ground-arrival order. Returns those that reach orbit before end_s, as the serving run's
    // trace: in orbit-arrival order, ids 0, 1, ... (journey(id) is each one's).
    std::vector<Request> uplink(std::span<const Request> ground_requests);
    // The serving run's records (ids of the trace); each its first and last token down.
    void downlink(std::span<const RequestRecord> records);
    GroundServingSummary summary(double ttft_slo_s, double tpot_slo_s) const;

    const GroundJourney& journey(std::int64_t trace_id) const { return journeys_[static_cast<std::size_t>(trace_id)]; }
    std::size_t journeys() const { return journeys_.size(); }
    // Every journey, by trace id (for the per-request output); the segment holds none after.
    std::vector<GroundJourney> take_journeys() { return std::move(journeys_); }

private:
    struct Open {
        std::size_t contact = 0;
        double at_s = 0.0;
        bool found = false;
    };
    // The first moment at or after t_s that station s's link is open (and free from free_s), if any.
    Open next_open(std::size_t s, double t_s, double free_s) const;
    double backhaul_s(std::size_t a, std::size_t b) const;
    double backhaul_s(const physics::Geodetic& p, const physics::Geodetic& q) const;
    double gateway_light_s(std::int32_t a, std::int32_t b, double t_s) const;
    std::int32_t home_station(std::int64_t index) const;

    GroundSegmentConfig config_;
    std::vector<StationTimeline> timelines_;
    std::span<const physics::SampledOrbit> orbits_;
    std::vector<std::int32_t> prefill_cluster_, decode_cluster_;
    GroundPlacement placement_;
    std::vector<double> kv_contact_wait_;
    std::int64_t kv_caches_crossing_ = 0, kv_no_contact_ = 0;
    double start_s_ = 0.0, end_s_ = 0.0;
    std::vector<double> cumulative_share_;
    std::vector<double> link_free_s_;  // each station's uplink busy until
    std::vector<GroundJourney> journeys_;
    std::vector<std::int64_t> trace_tokens_out_;  // output tokens of each trace request
    std::int64_t ground_requests_ = 0, waited_ = 0;
    std::vector<double> bytes_up_, bytes_down_;
    std::vector<std::int64_t> requests_up_, requests_down_;
    std::vector<double> uplink_wait_, downlink_wait_, ttft_, completion_;
    std::vector<std::uint8_t> ttft_section_;  // each ttft_ value's span of ground arrival (intervals)
    struct Delivered {
        double ttft_s, tpot_s;
        std::uint8_t section;
    };
    std::vector<Delivered> ttft_tpot_;  // completed and down: TTFT and TPOT on the ground
    std::vector<std::int64_t> arrivals_in_section_;  // ground arrivals per span
    std::int64_t station_handovers_ = 0;
};

}  // namespace skyfabric::workloads
