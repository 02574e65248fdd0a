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
