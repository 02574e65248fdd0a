// The ground segment's journey of a request by hand (docs/inference.md "Serving from the ground"):
// waiting for a link, the uplink queue, the backhaul to another station, tokens waiting in orbit.
#include <skyfabric/workloads/ground_segment.hpp>

#include <skyfabric/physics/constants.hpp>

#include <gtest/gtest.h>

#include <cmath>

using namespace skyfabric;
using namespace skyfabric::workloads;

namespace {

constexpr double c = physics::speed_of_light_m_s;

GroundStation station_at(double longitude_deg, double share) {
    GroundStation s;
    s.site = physics::Geodetic{0.0, longitude_deg * physics::pi / 180.0, 0.0};
    s.kind = links::GroundLinkKind::ka_band;
    s.ka_band_rate_bps = 8e6;
    s.users_share = share;
    return s;
}

Request request(std::int64_t id, double arrival_s) {
    Request r;
    r.id = id;
    r.arrival_s = arrival_s;
    r.prompt_tokens = 1000;
    r.output_tokens = 101;
    return r;
}

}  // namespace

// One station open over [100, 200) and [300, 400) at 8 Mbit/s, 1,500 km away; 1,000 B per token. Two
// requests of 1,000 prompt tokens (1 MB: 1 s up) arrive at 10 s and 20 s, when nothing is open: the first
// goes up at 100 s, the second queues behind it, 101–102 s. Each reaches orbit 5.0035 ms (1,500 km / c)
// after its last bit. Request 0's first token is ready in orbit at 150 s: down at once, 1,000 B in 1 ms plus
// the light time: TTFT on the ground 150.006 − 10 s. Its last token (at 250 s, no link) waits for 300 s and
// brings the 101 tokens (101 kB, 0.101 s) down then.
TEST(GroundSegment, RequestsWaitForALinkQueueOnItAndTheirTokensWaitInOrbit) {
    GroundSegmentConfig config;
    config.stations = {station_at(0.0, 1.0)};
    config.bytes_per_token = 1000.0;
    std::vector<StationTimeline> lines(1);
    lines[0].contacts = {{100.0, 200.0, 0, 8e6, 1.5e6, true}, {300.0, 400.0, 0, 8e6, 1.5e6, true}};
    GroundSegment ground(config, lines, {}, {0}, {0}, 0.0, 1000.0);
    const std::vector<Request> arrivals{request(0, 10.0), request(1, 20.0)};
    const auto trace = ground.uplink(arrivals);
    ASSERT_EQ(trace.size(), 2u);
    const double light = 1.5e6 / c;
    EXPECT_NEAR(trace[0].arrival_s, 101.0 + light, 1e-9);
    EXPECT_NEAR(trace[1].arrival_s, 102.0 + light, 1e-9);
    EXPECT_DOUBLE_EQ(ground.journey(1).uplink_start_s, 101.0);

    RequestRecord r;
    r.request = trace[0];
    r.status = RequestStatus::completed;
    r.prefill_instance = 0;
    r.decode_instance = 0;
    r.first_token_s = 150.0;
    r.finish_s = 250.0;
    r.tokens_generated = 101;
    RequestRecord unfinished = r;
    unfinished.request = trace[1];
    unfinished.status = RequestStatus::unfinished;
    unfinished.first_token_s = std::numeric_limits<double>::quiet_NaN();
    const RequestRecord records[] = {r, unfinished};
    ground.downlink(records);
    const auto& j = ground.journey(0);
    EXPECT_NEAR(j.first_token_ground_s, 150.0 + 1e-3 + light, 1e-9);
    EXPECT_NEAR(j.ttft_ground_s(), 140.0 + 1e-3 + light, 1e-9);
    EXPECT_NEAR(j.last_token_ground_s, 300.0 + 0.101 + light, 1e-9);

    const auto s = ground.summary(5.0, 0.05);
    EXPECT_EQ(s.requests, 2);
    EXPECT_EQ(s.uplinked, 2);
    EXPECT_EQ(s.waited, 2);
    EXPECT_EQ(s.first_token_down, 1);
    EXPECT_NEAR(s.uplink_wait_mean_s, (90.0 + 81.0) / 2.0, 1e-9);
    EXPECT_DOUBLE_EQ(s.stations[0].bytes_up, 2e6);
    EXPECT_DOUBLE_EQ(s.stations[0].bytes_down, 101e3);
    EXPECT_EQ(s.slo_attainment_ground, 0.0);
}

// The users of a closed station (on the equator at 0°) reach another one open now (on the equator at 90° E,
// a quarter of the great circle: π/2 · 6,378,137 m over fibre at 2e8 m/s = 50.094 ms) and go up there, rather
// than wait 90 s for their own. The tokens come back the same way.
TEST(GroundSegment, AnotherStationOpenNowTakesTheRequestOverTheBackhaul) {
    GroundSegmentConfig config;
    config.stations = {station_at(0.0, 1.0), station_at(90.0, 0.0)};
    config.bytes_per_token = 1000.0;
    std::vector<StationTimeline> lines(2);
    lines[0].contacts = {{100.0, 200.0, 0, 8e6, 1.5e6, true}};
    lines[1].contacts = {{0.0, 50.0, 0, 8e6, 1.0e6, true}};
    GroundSegment ground(config, lines, {}, {0}, {0}, 0.0, 1000.0);
    const std::vector<Request> arrivals{request(0, 10.0)};
    const auto trace = ground.uplink(arrivals);
    ASSERT_EQ(trace.size(), 1u);
    const double backhaul = physics::pi / 2.0 * physics::earth_equatorial_radius_m / 2e8;
    EXPECT_NEAR(backhaul, 0.050094, 1e-6);
    EXPECT_EQ(ground.journey(0).up_station, 1);
    EXPECT_EQ(ground.journey(0).home_station, 0);
    EXPECT_NEAR(trace[0].arrival_s, 10.0 + backhaul + 1.0 + 1.0e6 / c, 1e-9);
    RequestRecord r;
    r.request = trace[0];
    r.status = RequestStatus::unfinished;
    r.prefill_instance = 0;
    r.decode_instance = 0;
    r.first_token_s = 20.0;
    const RequestRecord records[] = {r};
    ground.downlink(records);
    EXPECT_NEAR(ground.journey(0).first_token_ground_s, 20.0 + 1e-3 + 1.0e6 / c + backhaul, 1e-9);
    EXPECT_EQ(ground.journey(0).down_station, 1);
    EXPECT_EQ(ground.summary(5.0, 0.05).waited, 0);
}

// A ground data centre on the serving fabric (docs/inference.md "Ground data centres"), by hand. Satellites 0
// (the prefill instance) and 1 (the cluster's ground terminal) joined by a link of 1e12 B/s and 1 ms; the
// data centre (node 2, the decode instance) joined by 200 km of fibre (1 ms at 2e8 m/s, 1e9 B/s) to the station
// (node 3), whose link opens over [30, 40) and [40, 50) at 8 Mbit/s (1e6 B/s) over 299.792458 km (1 ms).
// The fabric is given at 0 (space only), 30 and 40 (the contacts), and 50 (closed again).
// A request of 1000 tokens arriving at 0 is prefilled in 2 s (2 · 1e9 · 1000 / 1e12); its 1e6 B cache has no
// path until 30 s, then takes 1 s at the link's 1e6 B/s and lands 3 ms later: first token at 31.003 s, after
// 28 s stalled. Its one decode step on the data centre's chips (0.5e12 B/s) reads 2e9 + 1000 · 1001 B.
TEST(GroundDatacentre, KvCacheCrossesTheStationsLinkOnlyWhileItIsOpen) {
    GroundSegmentConfig config;
    config.stations = {station_at(0.0, 1.0)};
    GroundDatacentre dc;
    dc.station = 0;
    dc.fibre_m = 2e5;
    dc.fibre_rate_bps = 8e9;
    config.datacentres = {dc};
    std::vector<StationTimeline> lines(1);
    const double range = 1e-3 * c;
    lines[0].contacts = {{30.0, 40.0, 0, 8e6, range, true}, {40.0, 50.0, 0, 8e6, range, true}};
    links::Topology space;
    space.node_count = 2;
    links::Link isl;
    isl.source = 0;
    isl.target = 1;
    isl.capacity_bps = 8e12;
    isl.latency_s = 1e-3;
    space.links = {isl};
    const auto source = ground_fabric(topology_source(std::span(&space, 1)), config, lines, {1}, 2);

    // The fabric, pulled by hand: the fibre always, the station's link while a contact is open.
    auto pull = ground_fabric(topology_source(std::span(&space, 1)), config, lines, {1}, 2);
    std::vector<double> times;
    std::vector<std::size_t> link_counts;
    for (links::Topology t; pull(t);) {
        EXPECT_EQ(t.node_count, 4);
        times.push_back(t.time_s);
        link_counts.push_back(t.links.size());
        if (t.time_s == 30.0) {
            ASSERT_EQ(t.links.size(), 3u);
            EXPECT_EQ(t.links[1].source, 1);  // the terminal to the station's node
            EXPECT_EQ(t.links[1].target, 3);
            EXPECT_DOUBLE_EQ(t.links[1].latency_s, 1e-3);
            EXPECT_EQ(t.links[2].source, 2);  // the fibre: the data centre to its station
            EXPECT_DOUBLE_EQ(t.links[2].latency_s, 2e5 / 2e8);
        }
    }
    EXPECT_EQ(times, (std::vector<double>{0.0, 30.0, 40.0, 50.0}));
    EXPECT_EQ(link_counts, (std::vector<std::size_t>{2, 3, 3, 2}));

    ServingConfig s;
    s.model.parameters = 1e9;
    s.model.layers = 1;
    s.model.kv_heads = 1;
    s.model.head_dim = 500;
    s.model.bytes_per_element = 1.0;
    s.engines.mfu = 1.0;
    s.engines.decode.accelerator = Accelerator{"ground", 1e12, 100e9, 0.5e12};
    s.nodes = {0, 2};
    s.start_s = 0.0;
    s.end_s = 100.0;
    Request r;
    r.prompt_tokens = 1000;
    r.output_tokens = 2;
    s.trace = {r};
    const auto result = simulate_serving(s, Accelerator{"orbit", 1e12, 100e9, 1e12}, source);
    ASSERT_EQ(result.requests.size(), 1u);
    const auto& a = result.requests[0];
    EXPECT_NEAR(a.prefill_end_s, 2.0, 1e-12);
    EXPECT_NEAR(a.first_token_s, 31.003, 1e-12);
    EXPECT_NEAR(result.summary.stalled_transfer_s, 28.0, 1e-12);
    EXPECT_NEAR(a.tpot_s(), (2e9 + 1000.0 * 1001.0) / 0.5e12, 1e-12);

    // The ground segment's account of it: the cache waited 28 s for the contact (decode on the data centre).
    GroundSegment ground(config, lines, {}, {0}, {-1}, 0.0, 100.0, GroundPlacement{-1, 0});
    const Request arrivals[] = {request(0, 0.0)};
    ground.uplink(arrivals);  // its journey (the record below is the run above's, its prefill ended at 2 s)
    RequestRecord rec = a;
    rec.request.id = 0;
    rec.prefill_end_s = 2.0;
    const RequestRecord records[] = {rec};
    ground.downlink(records);
    const auto g = ground.summary(5.0, 0.05);
    EXPECT_TRUE(g.kv_crosses_ground_link);
    EXPECT_EQ(g.kv_caches_crossing, 1);
    EXPECT_EQ(g.kv_waited_for_contact, 1);
    EXPECT_DOUBLE_EQ(g.kv_contact_wait_max_s, 28.0);
    EXPECT_EQ(g.stations[0].requests_down, 0);  // decoded on the ground: its tokens take the backhaul, not the link
}
