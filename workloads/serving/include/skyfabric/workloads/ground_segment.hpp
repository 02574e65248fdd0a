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
};

struct GroundSegmentConfig {
    std::vector<GroundStation> stations;
    double bytes_per_token = 4.0;        // prompt tokens go up, output tokens come down (text, not KV)
    double backhaul_speed_m_s = 2.0e8;   // between stations on the ground: fibre along the great circle
    double segment_s = 10.0;             // the link's rate and serving cluster are held over segments this long
    double epoch_julian_date_days = 0.0;
    std::uint64_t seed = 42;             // each optical site's clouds: its own stream of this seed
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

// One request's journey through the ground segment; times NaN when not reached.
struct GroundJourney {
    double ground_arrival_s = 0.0;
    std::int32_t home_station = 0;
    std::int32_t up_station = -1;
    std::int32_t up_cluster = -1;
    double uplink_start_s = 0.0;    // its prompt starts up (after waiting for a link and for the requests ahead)
    double orbit_arrival_s = 0.0;   // at the satellite overhead: the serving run's arrival
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
                  std::vector<std::int32_t> decode_cluster, double start_s, double end_s);

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
    double gateway_light_s(std::int32_t a, std::int32_t b, double t_s) const;
    std::int32_t home_station(std::int64_t index) const;

    GroundSegmentConfig config_;
    std::vector<StationTimeline> timelines_;
    std::span<const physics::SampledOrbit> orbits_;
    std::vector<std::int32_t> prefill_cluster_, decode_cluster_;
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
