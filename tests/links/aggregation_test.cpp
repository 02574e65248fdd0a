#include <skyfabric/links/aggregation.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <tuple>
#include <stdexcept>
#include <vector>

using namespace skyfabric::links;

namespace {

constexpr double pi = 3.14159265358979323846;
constexpr double earth_radius_m = 6378137.0;  // WGS-84 a, the sphere of the blockage test
constexpr double orbit_radius_m = earth_radius_m + 650e3;
constexpr double light_speed_m_s = 299792458.0;

// The long-range gateway terminal of the brief: 30 cm, 10 W, 24 × 400ZR on the 100 GHz grid.
OpticalTerminalParameters gateway_optics() {
    OpticalTerminalParameters p;
    p.aperture_m = 0.3;
    p.tx_power_w = 10.0;
    p.dwdm.transceivers_fitted = 24;
    return p;
}

// Paper Eq. 1 by hand: P_R = P_T G² (λ/4πd)² L, G = η(πD/λ)².
double friis_received_w(double distance_m, const OpticalTerminalParameters& p) {
    const double gain = p.aperture_efficiency * std::pow(pi * p.aperture_m / p.wavelength_m, 2);
    const double path = std::pow(p.wavelength_m / (4.0 * pi * distance_m), 2);
    return p.tx_power_w * gain * gain * path * std::pow(10.0, -p.other_losses_db / 10.0);
}

// Per-channel power a lit channel needs: sensitivity + margin, or the power whose OSNR in
// 0.1 nm (12.5 GHz) through a pre-amplifier of noise figure NF meets the requirement,
// P = OSNR · NF · hν · B_ref — whichever is higher.
double needed_per_channel_w(const OpticalTerminalParameters& p) {
    const double sensitivity_w = 1e-3 * std::pow(10.0, (p.transceiver.sensitivity_dbm + p.required_margin_db) / 10.0);
    const double photon_j = 6.62607015e-34 * light_speed_m_s / p.wavelength_m;
    const double osnr_w = std::pow(10.0, (p.transceiver.required_osnr_db + p.amplifier_noise_figure_db) / 10.0) *
                          photon_j * 12.5e9;
    return std::max(sensitivity_w, osnr_w);
}

// Channels that close when P_R is split over the lit ones: all if P_R/24 suffices, else
// floor(P_R / P_needed), for a received power scaled by `db_offset` (the model's Fresnel
// transmit gain lies ≈ 0.08 dB above Friis's η at 5,000 km).
int hand_closing_channels(double received_w, const OpticalTerminalParameters& p, double db_offset) {
    const double r = received_w * std::pow(10.0, db_offset / 10.0) / needed_per_channel_w(p);
    return static_cast<int>(std::min(std::floor(r), 24.0));
}

// Two points on the circle of radius `orbit_radius_m` in the x–y plane, central angle θ apart.
std::vector<Eigen::Vector3d> on_orbit_circle(std::initializer_list<double> angles_rad) {
    std::vector<Eigen::Vector3d> out;
    for (double a : angles_rad) out.emplace_back(orbit_radius_m * std::cos(a), orbit_radius_m * std::sin(a), 0.0);
    return out;
}

// θ at which the chord's lowest point is 100 km up: (R+h)cos(θ/2) = R + 100 km.
double grazing_angle_rad() { return 2.0 * std::acos((earth_radius_m + 100e3) / orbit_radius_m); }

}  // namespace

TEST(AggregationTopologyNames, RoundTrip) {
    EXPECT_EQ(aggregation_topology_from_name("planar"), AggregationTopology::planar);
    EXPECT_EQ(aggregation_topology_from_name("spread"), AggregationTopology::spread);
    EXPECT_EQ(aggregation_topology_from_name("Planar"), std::nullopt);
    EXPECT_EQ(to_string(AggregationTopology::planar), "planar");
    EXPECT_EQ(to_string(AggregationTopology::spread), "spread");
}

TEST(GatewayPairs, BothTopologiesGiveGTimesClusterPairsLinksAndClustersMinusOnePerGateway) {
    const std::int32_t clusters = 6, g = 4;
    for (auto topology : {AggregationTopology::planar, AggregationTopology::spread}) {
        const auto pairs = gateway_pairs(clusters, g, topology);
        EXPECT_EQ(pairs.size(), static_cast<std::size_t>(g * clusters * (clusters - 1) / 2));
        std::vector<int> degree(static_cast<std::size_t>(clusters * g), 0);
        std::set<std::pair<int, int>> seen;
        for (const auto& p : pairs) {
            EXPECT_LT(p.cluster_a, p.cluster_b);
            ++degree[static_cast<std::size_t>(p.cluster_a * g + p.gateway_a)];
            ++degree[static_cast<std::size_t>(p.cluster_b * g + p.gateway_b)];
            EXPECT_TRUE(seen.insert({p.cluster_a * g + p.gateway_a, p.cluster_b * g + p.gateway_b}).second);
        }
        for (int d : degree) EXPECT_EQ(d, clusters - 1) << to_string(topology);
    }
    EXPECT_TRUE(gateway_pairs(1, g, AggregationTopology::planar).empty());
    EXPECT_TRUE(gateway_pairs(5, 0, AggregationTopology::spread).empty());
}

TEST(GatewayPairs, PlanarJoinsEqualIndicesSpreadReachesDistinctIndices) {
    const std::int32_t clusters = 4, g = 4;  // the shipped constellation
    for (const auto& p : gateway_pairs(clusters, g, AggregationTopology::planar)) EXPECT_EQ(p.gateway_a, p.gateway_b);
    std::vector<std::set<int>> reached(static_cast<std::size_t>(clusters * g));
    for (const auto& p : gateway_pairs(clusters, g, AggregationTopology::spread)) {
        reached[static_cast<std::size_t>(p.cluster_a * g + p.gateway_a)].insert(p.gateway_b);
        reached[static_cast<std::size_t>(p.cluster_b * g + p.gateway_b)].insert(p.gateway_a);
    }
    for (const auto& r : reached) EXPECT_EQ(r.size(), static_cast<std::size_t>(clusters - 1));
}

namespace {
// Connected components of the gateway layer alone (gateways as vertices, pairs as edges).
int layer_components(std::int32_t clusters, std::int32_t g, AggregationTopology topology) {
    std::vector<int> parent(static_cast<std::size_t>(clusters * g));
    for (std::size_t i = 0; i < parent.size(); ++i) parent[i] = static_cast<int>(i);
    auto find = [&](int x) {
        while (parent[static_cast<std::size_t>(x)] != x) x = parent[static_cast<std::size_t>(x)];
        return x;
    };
    for (const auto& p : gateway_pairs(clusters, g, topology))
        parent[static_cast<std::size_t>(find(p.cluster_a * g + p.gateway_a))] = find(p.cluster_b * g + p.gateway_b);
    std::set<int> roots;
    for (int i = 0; i < clusters * g; ++i) roots.insert(find(i));
    return static_cast<int>(roots.size());
}
}  // namespace

// Planar's layer is G planes that meet only inside the clusters; spread's is one mesh.
TEST(GatewayPairs, SpreadJoinsThePlanesIntoOneMesh) {
    for (auto [clusters, g] : {std::pair{4, 4}, std::pair{3, 4}, std::pair{4, 8}, std::pair{8, 8}, std::pair{7, 4}}) {
        EXPECT_EQ(layer_components(clusters, g, AggregationTopology::planar), g);
        EXPECT_EQ(layer_components(clusters, g, AggregationTopology::spread), 1) << clusters << "x" << g;
    }
}

namespace {
// Links' worth of capacity between clusters a and b over the gateway layer once gateway index
// `failed` is down in every cluster (gateway plane `failed` lost): the max flow with each cluster
// one node (its own mesh carries several times its gateway capacity, so it is never the cut) and
// each surviving gateway link one unit (Edmonds–Karp on the cluster multigraph).
int links_between_after_plane_failure(std::int32_t clusters, std::int32_t g, AggregationTopology topology,
                                      std::int32_t failed, int a, int b) {
    const auto n = static_cast<std::size_t>(clusters);
    std::vector<std::vector<int>> capacity(n, std::vector<int>(n, 0));
    for (const auto& p : gateway_pairs(clusters, g, topology)) {
        if (p.gateway_a == failed || p.gateway_b == failed) continue;
        ++capacity[static_cast<std::size_t>(p.cluster_a)][static_cast<std::size_t>(p.cluster_b)];
        ++capacity[static_cast<std::size_t>(p.cluster_b)][static_cast<std::size_t>(p.cluster_a)];
    }
    int flow = 0;
    for (;;) {
        std::vector<int> from(n, -1);
        from[static_cast<std::size_t>(a)] = a;
        std::vector<int> queue{a};
        for (std::size_t q = 0; q < queue.size(); ++q)
            for (std::size_t v = 0; v < n; ++v)
                if (from[v] < 0 && capacity[static_cast<std::size_t>(queue[q])][v] > 0) {
                    from[v] = queue[q];
                    queue.push_back(static_cast<int>(v));
                }
        if (from[static_cast<std::size_t>(b)] < 0) return flow;
        for (int v = b; v != a; v = from[static_cast<std::size_t>(v)]) {
            --capacity[static_cast<std::size_t>(from[static_cast<std::size_t>(v)])][static_cast<std::size_t>(v)];
            ++capacity[static_cast<std::size_t>(v)][static_cast<std::size_t>(from[static_cast<std::size_t>(v)])];
        }
        ++flow;
    }
}
}  // namespace

// Issue 25: the capacity left between two clusters after one gateway plane (index k in every
// cluster) fails, 4 clusters × 4 gateways, in units of one gateway link's capacity c.
//  planar: plane k's links join failed gateways only (k ↔ k), one per cluster pair, so every pair
//    keeps G − 1 = 3 direct links; between a and b: 3 direct + 3 through each of the two other
//    clusters = 9 (the cut around a: 3 pairs × 3).
//  spread: gateway k of a meets gateway k + o(a, b) of b, o = a + b + 2ab + 1 mod 4:
//    o(0,1) = 2, o(0,2) = 3, o(0,3) = 0, o(1,2) = 0, o(1,3) = 3, o(2,3) = 2. A pair with o ≠ 0
//    loses two links to the failed index (k → k + o and k − o → k, each with one live end), a pair
//    with o = 0 one: multiplicities 2, 2, 3, 3, 2, 2. Every cluster has one o = 0 pair, so the cut
//    around any cluster is 3 + 2 + 2 = 7 and every cut splitting two from two is 2+3+3+2 = 10 or
//    2+2+2+2 = 8: 7 between any pair.
// So in this model spread keeps less than planar when a whole plane fails: planar loses only
// links whose both ends are dead, where spread's cross-plane links lose a live end's partner. With
// c = 12 × 400 Gbit/s = 4.8 Tbit/s: 43.2 Tbit/s (planar) vs 33.6 Tbit/s (spread) of 57.6 Tbit/s.
TEST(GatewayPairs, CapacityLeftBetweenTwoClustersAfterOneGatewayPlaneFails) {
    for (std::int32_t failed = 0; failed < 4; ++failed)
        for (int a = 0; a < 4; ++a)
            for (int b = a + 1; b < 4; ++b) {
                EXPECT_EQ(links_between_after_plane_failure(4, 4, AggregationTopology::planar, failed, a, b), 9)
                    << failed << ": " << a << "-" << b;
                EXPECT_EQ(links_between_after_plane_failure(4, 4, AggregationTopology::spread, failed, a, b), 7)
                    << failed << ": " << a << "-" << b;
                // Before the failure both keep 3 × G = 12.
                EXPECT_EQ(links_between_after_plane_failure(4, 4, AggregationTopology::planar, -1, a, b), 12);
                EXPECT_EQ(links_between_after_plane_failure(4, 4, AggregationTopology::spread, -1, a, b), 12);
            }
}

TEST(ChooseGateways, PicksDistinctRimSatellitesFacingEachDirection) {
    // 24 rim satellites every 15° (φ from +along-track towards +radial) at 1 km, and an inner
    // ring at 600 m offset by 7.5°. Direction 2πk/count, a multiple of 15°, is met exactly by
    // rim satellite 24k/count.
    std::vector<Eigen::Vector3d> lvlh;
    for (int j = 0; j < 24; ++j) {
        const double phi = 2.0 * pi * j / 24;
        lvlh.emplace_back(1000.0 * std::sin(phi), 1000.0 * std::cos(phi), 0.0);
    }
    for (int j = 0; j < 24; ++j) {
        const double phi = 2.0 * pi * (j + 0.5) / 24;
        lvlh.emplace_back(600.0 * std::sin(phi), 600.0 * std::cos(phi), 50.0);
    }
    for (std::int32_t count : {1, 2, 3, 4, 6, 8, 12, 24}) {
        const auto chosen = choose_gateways(lvlh, count);
        ASSERT_EQ(chosen.size(), static_cast<std::size_t>(count));
        for (std::int32_t k = 0; k < count; ++k) EXPECT_EQ(chosen[static_cast<std::size_t>(k)], 24 * k / count) << count;
    }
    // More gateways than rim satellites: still distinct, the rim first.
    const auto all = choose_gateways(lvlh, 48);
    EXPECT_EQ(std::set<std::int32_t>(all.begin(), all.end()).size(), 48u);
    EXPECT_TRUE(choose_gateways(lvlh, 0).empty());
    EXPECT_THROW(choose_gateways(lvlh, 49), std::invalid_argument);
}

TEST(ChooseGateways, NeverPicksTheSameSatelliteTwice) {
    // One satellite far out along +along-track and +radial beats every other for every direction
    // in the first quadrant; the others must still be picked, once each.
    const std::vector<Eigen::Vector3d> lvlh{{0.0, 0.0, 0.0}, {5000.0, 5000.0, 0.0}, {-10.0, 0.0, 0.0}, {0.0, -10.0, 0.0}};
    const auto chosen = choose_gateways(lvlh, 4);
    EXPECT_EQ(chosen[0], 1);
    EXPECT_EQ(std::set<std::int32_t>(chosen.begin(), chosen.end()).size(), 4u);
}

TEST(LineOfSight, LowestAltitudeOfAChordIsRPlusHCosHalfAngleMinusR) {
    for (double theta_deg : {1.0, 10.0, 30.0, 45.0, 60.0, 90.0, 150.0}) {
        const double theta = theta_deg * pi / 180.0;
        const auto p = on_orbit_circle({0.3, 0.3 + theta});
        EXPECT_NEAR(line_of_sight_altitude_m(p[0], p[1]), orbit_radius_m * std::cos(theta / 2) - earth_radius_m,
                    1e-6) << theta_deg;
    }
}

TEST(LineOfSight, ClosestPointIsClampedToTheSegment) {
    // Both ends on one radius: the lower end is the lowest point, not the Earth's centre.
    const Eigen::Vector3d low(0.0, 0.0, earth_radius_m + 650e3), high(0.0, 0.0, earth_radius_m + 2000e3);
    EXPECT_NEAR(line_of_sight_altitude_m(low, high), 650e3, 1e-6);
    EXPECT_NEAR(line_of_sight_altitude_m(high, low), 650e3, 1e-6);
    EXPECT_NEAR(line_of_sight_altitude_m(low, low), 650e3, 1e-6);
    // A short chord off to one side of the tangent point: its nearer end is lowest.
    const Eigen::Vector3d a(orbit_radius_m, 1000e3, 0.0), b(orbit_radius_m, 2000e3, 0.0);
    EXPECT_NEAR(line_of_sight_altitude_m(a, b), std::hypot(orbit_radius_m, 1000e3) - earth_radius_m, 1e-6);
}

TEST(LineOfSight, ClearBelowGrazingAngleBlockedBeyond) {
    const double grazing = grazing_angle_rad();  // ≈ 45.6° at 650 km over 100 km
    EXPECT_NEAR(grazing * 180.0 / pi, 45.6, 0.1);
    for (double f : {0.05, 0.5, 0.9, 0.99}) {
        const auto p = on_orbit_circle({1.0, 1.0 + f * grazing});
        EXPECT_TRUE(line_of_sight_clear(p[0], p[1], 100e3)) << f;
    }
    for (double f : {1.01, 1.1, 2.0, 3.0}) {
        const auto p = on_orbit_circle({1.0, 1.0 + f * grazing});
        EXPECT_FALSE(line_of_sight_clear(p[0], p[1], 100e3)) << f;
    }
    // The docs' chord (docs/constellations.md): 2√(r² − (R_E + 100 km)²) = 5,451.0 km by hand
    // (r = 7,028.137 km, R_E + 100 km = 6,478.137 km: √7,428,450 km² = 2,725.5 km).
    const auto at_chord = [](double chord_m) {
        return on_orbit_circle({0.0, 2.0 * std::asin(chord_m / (2.0 * orbit_radius_m))});
    };
    const auto clear = at_chord(5450.9e3), blocked = at_chord(5451.1e3);
    EXPECT_TRUE(line_of_sight_clear(clear[0], clear[1], 100e3));
    EXPECT_FALSE(line_of_sight_clear(blocked[0], blocked[1], 100e3));
}

TEST(AggregationBudget, ClosingChannelsMatchFriisByHand) {
    GatewayParameters parameters;
    parameters.optics = gateway_optics();
    const AggregationBuilder builder(parameters);
    const OpticalTerminalParameters& p = parameters.optics;
    // By hand: G = 0.8(π·0.3/1.55e-6)² = 114.7 dB, P_R(1,000 km) = 40 + 229.4 − 258.2 − 3 = 8.2 dBm,
    // 24 × −17 dBm needs −3.2 dBm: 24 channels to ≈ 3,300 km; 13 at 5,000 km; 3 at 10,000 km;
    // none at 20,000 km (−17.8 dBm < −17 dBm for a single channel).
    const std::vector<std::pair<double, int>> expected{{100e3, 24}, {1000e3, 24}, {5000e3, 13}, {10000e3, 3}, {20000e3, 0}};
    for (const auto& [d, n] : expected) {
        const double pr = friis_received_w(d, p);
        // The count by hand must not move within ±0.1 dB (the Fresnel model's distance from Friis).
        ASSERT_EQ(hand_closing_channels(pr, p, -0.1), n) << d;
        ASSERT_EQ(hand_closing_channels(pr, p, +0.1), n) << d;
        const LinkBudget b = builder.budget_model().at(d);
        EXPECT_EQ(b.channels_closing, n) << d;
        EXPECT_DOUBLE_EQ(b.capacity_bps, n * 400e9) << d;
        if (d >= 1000e3) {  // far field: Fresnel number a²/(λd) < 0.015
            EXPECT_NEAR(10.0 * std::log10(b.received_power_w / pr), 0.0, 0.1) << d;
        }
    }
}

TEST(AggregationBudget, CapacityNeverIncreasesWithDistance) {
    GatewayParameters parameters;
    parameters.optics = gateway_optics();
    const AggregationBuilder builder(parameters);
    double previous = builder.budget_model().at(10e3).capacity_bps;
    EXPECT_DOUBLE_EQ(previous, 24 * 400e9);
    for (double d = 10e3; d < 40000e3; d *= 1.02) {
        const double c = builder.budget_model().at(d).capacity_bps;
        EXPECT_LE(c, previous) << d;
        previous = c;
    }
    EXPECT_EQ(previous, 0.0);
}

TEST(AggregationBuilder, LinksCarryTheBudgetAtTheirDistanceAndLightTime) {
    GatewayParameters parameters;
    parameters.optics = gateway_optics();
    parameters.gateways_per_cluster = 1;
    const AggregationBuilder builder(parameters);
    // Along the tangent at 650 km: nothing dips lower, so every pair is clear. Node ids are
    // deliberately out of cluster order so that sorting and source < target are exercised.
    const std::vector<Eigen::Vector3d> eci{{orbit_radius_m, 10000e3, 0.0},
                                           {orbit_radius_m, 0.0, 0.0},
                                           {orbit_radius_m, 1000e3, 0.0},
                                           {orbit_radius_m, 35000e3, 0.0}};
    const std::vector<std::vector<std::int32_t>> gateways{{1}, {2}, {0}, {3}};
    const AggregationLayer layer = builder.build(gateways, eci);
    EXPECT_EQ(layer.blocked, 0);
    // Pairs with node 3 are 25,000..35,000 km long: no channel closes (20,000 km already fails).
    EXPECT_EQ(layer.out_of_budget, 3);
    ASSERT_EQ(layer.links.size(), 3u);
    const std::vector<std::tuple<int, int, double>> expected{{0, 1, 10000e3}, {0, 2, 9000e3}, {1, 2, 1000e3}};
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const auto& [s, t, d] = expected[i];
        const int n = hand_closing_channels(friis_received_w(d, parameters.optics), parameters.optics, 0.0);
        ASSERT_EQ(hand_closing_channels(friis_received_w(d, parameters.optics), parameters.optics, 0.1), n) << d;
        const Link& l = layer.links[i];
        EXPECT_EQ(l.source, s);
        EXPECT_EQ(l.target, t);
        EXPECT_NEAR(l.distance_m, d, 1e-6);
        EXPECT_NEAR(l.latency_s, d / light_speed_m_s, 1e-15);
        EXPECT_DOUBLE_EQ(l.capacity_bps, n * 400e9) << d;
        // margin = per-channel power − 400ZR sensitivity (−20 dBm), at least the required 3 dB
        EXPECT_NEAR(l.margin_db, l.received_power_dbm - (-20.0), 1e-9);
        EXPECT_GE(l.margin_db, 3.0 - 1e-9);
        EXPECT_FALSE(l.acquiring);
    }
}

TEST(AggregationBuilder, LeavesEarthBlockedPairsOutAndCountsThem) {
    GatewayParameters parameters;
    parameters.optics = gateway_optics();
    parameters.gateways_per_cluster = 2;
    const double grazing = grazing_angle_rad();
    // Three clusters on the 650 km circle at 0, 0.6θ* and 1.5θ*: 0–1 (0.6θ*) and 1–2 (0.9θ*)
    // see each other, 0–2 (1.5θ*) is behind the Earth. Each cluster's two gateways 1 km apart.
    std::vector<Eigen::Vector3d> eci;
    for (double angle : {0.0, 0.6 * grazing, 1.5 * grazing}) {
        const auto p = on_orbit_circle({angle});
        eci.push_back(p[0]);
        eci.push_back(p[0] + Eigen::Vector3d(0.0, 0.0, 1000.0));
    }
    const std::vector<std::vector<std::int32_t>> gateways{{0, 1}, {2, 3}, {4, 5}};
    for (auto topology : {AggregationTopology::planar, AggregationTopology::spread}) {
        parameters.topology = topology;
        const AggregationLayer layer = AggregationBuilder(parameters).build(gateways, eci);
        EXPECT_EQ(layer.blocked, 2) << to_string(topology);
        EXPECT_EQ(layer.out_of_budget, 0);
        ASSERT_EQ(layer.links.size(), 4u);
        for (const Link& l : layer.links) {
            EXPECT_LT(l.source, l.target);
            EXPECT_FALSE(l.source / 2 == 0 && l.target / 2 == 2) << "0–2 is behind the Earth";
            EXPECT_GT(l.capacity_bps, 0.0);
        }
        EXPECT_TRUE(std::is_sorted(layer.links.begin(), layer.links.end(), [](const Link& a, const Link& b) {
            return a.source != b.source ? a.source < b.source : a.target < b.target;
        }));
    }
}

TEST(AggregationBuilder, RejectsTooFewGatewaysAndUnknownNodes) {
    GatewayParameters parameters;
    parameters.gateways_per_cluster = 2;
    const AggregationBuilder builder(parameters);
    const std::vector<Eigen::Vector3d> eci(4, Eigen::Vector3d(orbit_radius_m, 0.0, 0.0));
    const std::vector<std::vector<std::int32_t>> too_few{{0, 1}, {2}};
    EXPECT_THROW(builder.build(too_few, eci), std::invalid_argument);
    const std::vector<std::vector<std::int32_t>> unknown{{0, 1}, {2, 7}};
    EXPECT_THROW(builder.build(unknown, eci), std::invalid_argument);
}
