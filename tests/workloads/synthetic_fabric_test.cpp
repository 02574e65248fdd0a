// Synthetic fabrics: spec parsing, the edge-list round trip, and every collective
// algorithm's time on a synthetic ring and a switch against the α–β formula for that
// fabric (derivations in docs/collectives.md). B = bw_gbps·1e9/8 bytes/s, α = latency per
// link (per hop). Times must agree to 1e-9 relative: the engine is exact on these inputs.

#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include <skyfabric/workloads/collectives.hpp>
#include <skyfabric/workloads/collective_engine.hpp>
#include <skyfabric/workloads/network.hpp>
#include <skyfabric/workloads/synthetic_fabric.hpp>

namespace sw = skyfabric::workloads;
using sw::Algorithm;
using sw::CollectiveOp;
using sw::FabricKind;
using sw::FabricSpecError;

namespace {

constexpr double bw_gbps = 400.0;
constexpr double B = bw_gbps * 1e9 / 8.0;  // bytes/s per link direction
constexpr double alpha = 500e-9;          // per link
constexpr double tolerance = 1e-9;

sw::Fabric fabric(const std::string& spec) { return sw::make_fabric(sw::parse_fabric_spec(spec)); }

std::string spec_of(const std::string& kind, int p) {
    return kind + ":p=" + std::to_string(p) + ",bw_gbps=400,latency_ns=500";
}

double engine_time(const sw::Fabric& f, CollectiveOp op, Algorithm a, double n, sw::ScheduleOptions so = {}) {
    const double sizes[] = {n};
    const auto rows = sw::fabric_collective_table(f, op, a, sizes, {}, so);
    EXPECT_EQ(rows.size(), 1u);
    return rows.front().time_s;
}

std::string message_of(const std::string& spec) {
    try {
        (void)sw::make_fabric(sw::parse_fabric_spec(spec));
    } catch (const FabricSpecError& e) {
        return e.what();
    }
    return "(no error)";
}

int log2_exact(int p) {
    int k = 0;
    while ((1 << k) < p) ++k;
    return k;
}

int tree_chunks(double n) { return static_cast<int>(std::clamp(std::ceil(n / 2.0 / (1 << 20)), 1.0, 64.0)); }

int heap_depth(int p) {
    int d = 0;
    while ((2 << d) <= p) ++d;  // level of heap index p−1 is floor(log2 p)
    return d;
}

#define EXPECT_REL(actual, expected) EXPECT_NEAR((actual), (expected), tolerance * (expected))

}  // namespace

// ------------------------------------------------------------------- parsing

TEST(FabricSpec, ParsesEveryKindWithUnits) {
    const auto r = sw::parse_fabric_spec("ring:p=64,bw_gbps=400,latency_ns=500");
    EXPECT_EQ(r.kind, FabricKind::ring);
    EXPECT_EQ(r.p, 64);
    EXPECT_DOUBLE_EQ(r.bandwidth_bps, 400e9);
    EXPECT_DOUBLE_EQ(r.latency_s, 500e-9);
    const auto t = sw::parse_fabric_spec(" torus2d: y=4, x=8 ");
    EXPECT_EQ(t.kind, FabricKind::torus2d);
    EXPECT_EQ(t.x, 8);
    EXPECT_EQ(t.y, 4);
    EXPECT_DOUBLE_EQ(t.bandwidth_bps, sw::default_fabric_bandwidth_bps);
    EXPECT_DOUBLE_EQ(t.latency_s, sw::default_fabric_latency_s);
    EXPECT_EQ(sw::parse_fabric_spec("switch:p=16").kind, FabricKind::switch_star);
    EXPECT_EQ(sw::parse_fabric_spec("fully_connected:p=8,bw_gbps=1.5e3").bandwidth_bps, 1.5e12);
    const auto f = sw::parse_fabric_spec("file:/tmp/edges, with comma.csv");
    EXPECT_EQ(f.kind, FabricKind::edge_list);
    EXPECT_EQ(f.file_path, "/tmp/edges, with comma.csv");
}

TEST(FabricSpec, ErrorsNameTheKindTheKeyAndWhatWasExpected) {
    EXPECT_EQ(message_of("ring:p=8,bw_gbps=x"), "ring: bw_gbps: expected a finite number in [1e-06, 1e+07] Gbit/s, got 'x'");
    EXPECT_EQ(message_of("ring:p=8,bw_gbps=-1"), "ring: bw_gbps: expected a finite number in [1e-06, 1e+07] Gbit/s, got '-1'");
    EXPECT_EQ(message_of("switch:p=1.5"), "switch: p: expected an integer >= 2, got '1.5'");
    EXPECT_NE(message_of("ring:p=8,latency_us=3").find("unknown key 'latency_us' (did you mean 'latency_ns'?)"),
              std::string::npos);
    EXPECT_NE(message_of("rnig:p=8").find("unknown fabric kind 'rnig' (did you mean 'ring'?)"), std::string::npos);
    EXPECT_NE(message_of("torus2d:x=8").find("torus2d: y: missing"), std::string::npos);
    EXPECT_NE(message_of("ring:p=4,p=5").find("p: given twice"), std::string::npos);
    EXPECT_NE(message_of("ring:p").find("expected key=value"), std::string::npos);
    EXPECT_NE(message_of("file:").find("expected a path"), std::string::npos);
    EXPECT_THROW(sw::parse_fabric_spec("ring:p=0"), std::invalid_argument);  // FabricSpecError is one
}

TEST(FabricSpec, StructFieldsAreCheckedToo) {
    sw::FabricSpec s;
    s.kind = FabricKind::ring;
    s.p = 1;
    EXPECT_THROW(sw::make_fabric(s), FabricSpecError);
    s.p = 4;
    s.bandwidth_bps = 0.0;
    EXPECT_THROW(sw::make_fabric(s), FabricSpecError);
}

// ----------------------------------------------------------------- topologies

TEST(FabricTopology, RingSwitchTorusAndFullyConnectedHaveTheRightLinks) {
    const auto ring = fabric(spec_of("ring", 6));
    EXPECT_EQ(ring.topology.node_count, 6);
    EXPECT_EQ(ring.ranks, 6);
    EXPECT_EQ(ring.topology.links.size(), 6u);
    for (const auto& l : ring.topology.links) {
        EXPECT_LT(l.source, l.target);
        EXPECT_DOUBLE_EQ(l.capacity_bps, 400e9);
        EXPECT_DOUBLE_EQ(l.latency_s, 500e-9);
    }
    EXPECT_EQ(fabric(spec_of("ring", 2)).topology.links.size(), 1u);

    const auto sw16 = fabric(spec_of("switch", 16));
    EXPECT_EQ(sw16.topology.node_count, 17);
    EXPECT_EQ(sw16.ranks, 16);
    EXPECT_EQ(sw16.topology.links.size(), 16u);
    for (const auto& l : sw16.topology.links) EXPECT_EQ(l.target, 16);
    for (int r = 0; r < 16; ++r) EXPECT_EQ(sw16.placement[r], r);  // the switch is no rank

    const auto torus = fabric("torus2d:x=4,y=3");
    EXPECT_EQ(torus.topology.node_count, 12);
    EXPECT_EQ(torus.topology.links.size(), 24u);  // 2 per node
    EXPECT_EQ(fabric("torus2d:x=2,y=2").topology.links.size(), 4u);  // no doubled links when a dim is 2
    EXPECT_EQ(fabric("torus2d:x=5,y=1").topology.links.size(), 5u);

    const auto net = sw::build_network(fabric("torus2d:x=4,y=4").topology);
    EXPECT_TRUE(sw::ring_is_embedded(net, fabric("torus2d:x=4,y=4").placement));  // the snake closes
    // ScheduleOptions::dims: row r holds ranks r·x … r·x + x − 1, left to right on even rows
    // and right to left on odd ones; row r, column c is node r·x + c.
    EXPECT_EQ(torus.dims, (std::vector<std::int32_t>{4, 3}));
    for (int r = 0; r < 12; ++r) {
        const int row = r / 4, column = row % 2 == 0 ? r % 4 : 3 - r % 4;
        EXPECT_EQ(torus.placement[r], row * 4 + column) << "rank " << r;
    }
    EXPECT_TRUE(ring.dims.empty());
    EXPECT_TRUE(sw16.dims.empty());

    EXPECT_EQ(fabric(spec_of("fully_connected", 8)).topology.links.size(), 28u);
    EXPECT_EQ(fabric(spec_of("ring", 64)).description, "ring:p=64,bw_gbps=400,latency_ns=500");
}

// The scenario reader sizes, checks and describes a fabric without building it (a fully
// connected one of thousands of ranks has millions of links): those answers are the built ones.
TEST(FabricTopology, SizeAndDescriptionWithoutBuildingAgreeWithTheBuiltFabric) {
    for (const std::string& text :
         {spec_of("ring", 2), spec_of("ring", 3), spec_of("ring", 9), spec_of("switch", 2), spec_of("switch", 7),
          spec_of("fully_connected", 2), spec_of("fully_connected", 13), std::string("torus2d:x=2,y=1"),
          std::string("torus2d:x=1,y=7"), std::string("torus2d:x=2,y=2"), std::string("torus2d:x=2,y=5"),
          std::string("torus2d:x=6,y=3,bw_gbps=12.5,latency_ns=7")}) {
        const auto spec = sw::parse_fabric_spec(text);
        const auto built = sw::make_fabric(spec);
        EXPECT_EQ(sw::fabric_ranks(spec), built.ranks) << text;
        EXPECT_EQ(sw::fabric_link_count(spec), static_cast<std::int64_t>(built.topology.links.size())) << text;
        EXPECT_EQ(sw::fabric_description(spec), built.description) << text;
    }
    auto edges = sw::parse_fabric_spec("file:edges.csv");
    edges.csv_text = "# node_count=6\nsource,target,bw_gbps,latency_ns\n0,1,100,10\n1,4,100,10\n4,2,50,10\n";
    const auto built = sw::make_fabric(edges);
    EXPECT_EQ(sw::fabric_ranks(edges), 6);
    EXPECT_EQ(sw::fabric_ranks(edges), built.ranks);
    EXPECT_EQ(sw::fabric_link_count(edges), 3);
    EXPECT_EQ(sw::fabric_description(edges), built.description);
    // The checks are make_fabric's: the same refusals, before anything is built. (Set by field:
    // parse_fabric_spec already refuses these counts in text.)
    auto counted = [](FabricKind kind, std::int32_t p, std::int32_t x, std::int32_t y) {
        sw::FabricSpec spec;
        spec.kind = kind;
        spec.p = p;
        spec.x = x;
        spec.y = y;
        return spec;
    };
    for (const auto& bad : {counted(FabricKind::ring, 1, 0, 0), counted(FabricKind::switch_star, 0, 0, 0),
                            counted(FabricKind::torus2d, 0, 1, 1), counted(FabricKind::torus2d, 0, 0, 4)}) {
        EXPECT_THROW(sw::make_fabric(bad), FabricSpecError);
        EXPECT_THROW(sw::check_fabric_spec(bad), FabricSpecError);
        EXPECT_THROW(sw::fabric_ranks(bad), FabricSpecError);
    }
    sw::FabricSpec zero_bandwidth = sw::parse_fabric_spec(spec_of("fully_connected", 4));
    zero_bandwidth.bandwidth_bps = 0.0;
    EXPECT_THROW(sw::check_fabric_spec(zero_bandwidth), FabricSpecError);
    EXPECT_THROW(sw::fabric_description(zero_bandwidth), FabricSpecError);
    // Sizing is unchecked, for the reader to refuse a spec by its size: no links below 2 ranks.
    sw::FabricSpec one = sw::parse_fabric_spec(spec_of("ring", 4));
    one.p = 1;
    EXPECT_EQ(sw::fabric_link_count(one), 0);
    one.kind = FabricKind::fully_connected;
    one.p = 100000;
    EXPECT_EQ(sw::fabric_link_count(one), std::int64_t{100000} * 99999 / 2);
}

TEST(EdgeListCsv, RoundTripsTheSameEdges) {
    for (const std::string& spec : {std::string("torus2d:x=5,y=3,bw_gbps=123.456789,latency_ns=0.3"),
                                   spec_of("switch", 7), spec_of("ring", 9)}) {
        const auto f = fabric(spec);
        const std::string csv = sw::edge_list_csv(f.topology);
        sw::FabricSpec s;
        s.kind = FabricKind::edge_list;
        s.csv_text = csv;
        s.csv_name = "roundtrip.csv";
        const auto back = sw::make_fabric(s);
        ASSERT_EQ(back.topology.node_count, f.topology.node_count) << spec;
        ASSERT_EQ(back.topology.links.size(), f.topology.links.size()) << spec;
        for (std::size_t i = 0; i < f.topology.links.size(); ++i) {
            const auto& a = f.topology.links[i];
            const auto& b = back.topology.links[i];
            EXPECT_EQ(a.source, b.source);
            EXPECT_EQ(a.target, b.target);
            EXPECT_DOUBLE_EQ(a.capacity_bps, b.capacity_bps);
            EXPECT_DOUBLE_EQ(a.latency_s, b.latency_s);
        }
        EXPECT_EQ(sw::edge_list_csv(back.topology), csv) << spec;
    }
}

TEST(EdgeListCsv, AcceptsAnyColumnOrderAndNamesBadCells) {
    const auto t = sw::parse_edge_list_csv("# a comment\nlatency_ns,bw_gbps,target,source\n\n100,200,0,1\n5,50,2,1\n",
                                           "edges.csv");
    ASSERT_EQ(t.links.size(), 2u);
    EXPECT_EQ(t.node_count, 3);
    EXPECT_EQ(t.links[0].source, 0);
    EXPECT_EQ(t.links[0].target, 1);
    EXPECT_DOUBLE_EQ(t.links[0].capacity_bps, 200e9);
    EXPECT_DOUBLE_EQ(t.links[0].latency_s, 100e-9);
    auto message = [](const std::string& text) {
        try {
            sw::parse_edge_list_csv(text, "edges.csv");
        } catch (const FabricSpecError& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    EXPECT_EQ(message("source,target,bw_gbps,latency_ns\n0,1,fast,5\n"),
              "edges.csv:2:5: key 'bw_gbps': expected a finite number in [1e-06, 1e+07] Gbit/s, got 'fast'");
    EXPECT_NE(message("source,target,bandwidth,latency_ns\n").find("unknown column 'bandwidth'"), std::string::npos);
    EXPECT_NE(message("source,target,bw_gbps,latency_ns\n0,1,1,1\n1,0,1,1\n").find("edges.csv:3: link 0-1 listed twice"),
              std::string::npos);
    EXPECT_NE(message("source,target,bw_gbps,latency_ns\n0,1,1\n").find("expected 4 comma-separated values"),
              std::string::npos);
    EXPECT_NE(message("").find("expected a header"), std::string::npos);
}

// ------------------------------------------------- α–β on the synthetic ring

class SyntheticRing : public ::testing::TestWithParam<int> {};

TEST_P(SyntheticRing, RingReduceScatterAllGatherAllReduce) {
    const int p = GetParam();
    const auto f = fabric(spec_of("ring", p));
    for (double n : {1e3, 1e6, 256e6}) {
        const double step = alpha + n / p / B;
        EXPECT_REL(engine_time(f, CollectiveOp::all_reduce, Algorithm::ring, n), 2.0 * (p - 1) * step);
        EXPECT_REL(engine_time(f, CollectiveOp::reduce_scatter, Algorithm::ring, n), (p - 1) * step);
        EXPECT_REL(engine_time(f, CollectiveOp::all_gather, Algorithm::ring, n), (p - 1) * step);
    }
}

TEST_P(SyntheticRing, PairwiseAllToAllPaysHopsAndSharing) {
    // Step k sends n/p from i to i+k over h = min(k, p−k) hops; every link in that
    // direction carries h flows: h·α + h·(n/p)/B. Σ h = ⌊p²/4⌋.
    const int p = GetParam();
    const auto f = fabric(spec_of("ring", p));
    const double n = 64e6;
    const double H = std::floor(p * p / 4.0);
    EXPECT_REL(engine_time(f, CollectiveOp::all_to_all, Algorithm::pairwise, n), H * alpha + H * n / p / B);
}

TEST_P(SyntheticRing, DirectAllToAllIsLimitedByTheBusiestLink) {
    // Every rank sends n/p to every other at once, each the short way round. Odd p: the
    // transfers at distance d = 1 … h (h = (p−1)/2) put d transfers on every link in their
    // direction, so every link carries (p²−1)/8 and all drain together at that share; the
    // last bits then cross h links. Even p: besides the p(p−2)/8 of distances below p/2, the
    // p transfers at distance p/2 have two equal routes and the tie rule (lower node id next
    // to the target) sends all but two of them the same way, so the busiest link carries
    // p/2 of them: p(p+2)/8 in all. t = ⌊p/2⌋·α + L·(n/p)/B.
    const int p = GetParam();
    const auto f = fabric(spec_of("ring", p));
    const double n = 64e6;
    const double L = p % 2 == 1 ? (p * p - 1) / 8.0 : p * (p + 2) / 8.0;
    EXPECT_REL(engine_time(f, CollectiveOp::all_to_all, Algorithm::direct, n), (p / 2) * alpha + L * n / p / B);
}

TEST_P(SyntheticRing, PointToPointIsOneHop) {
    const auto f = fabric(spec_of("ring", GetParam()));
    EXPECT_REL(engine_time(f, CollectiveOp::point_to_point, Algorithm::direct, 1e6), alpha + 1e6 / B);
}

INSTANTIATE_TEST_SUITE_P(SeveralRankCounts, SyntheticRing, ::testing::Values(2, 3, 5, 8, 16, 31, 64));

TEST(SyntheticRing, HalvingDoublingExchangesNearestFirst) {
    // An exchange at rank distance d crosses d links, and the d transfers of each aligned
    // block of 2d ranks all cross its middle link: d·α + d·bytes/B per step. Nearest first,
    // the halving sends n/2 at d = 1, n/4 at d = 2, …, n/p at d = p/2, so d·bytes = n/2 in
    // every step; per half: (p−1)α + log₂p·n/(2B), so t = 2(p−1)α + log₂p·n/B. (Farthest
    // first, d·bytes would grow to p/4·n and the sum to 2(p−1)α + 2n(p²−1)/(3pB).)
    for (int p : {2, 4, 8, 16, 32, 64}) {
        const auto f = fabric(spec_of("ring", p));
        const double n = 32e6;
        const double expected = 2.0 * (p - 1) * alpha + log2_exact(p) * n / B;
        EXPECT_REL(engine_time(f, CollectiveOp::all_reduce, Algorithm::halving_doubling, n), expected) << "p=" << p;
    }
}

TEST(SyntheticRing, HierarchicalRingPaysTheWrapHopsAndColumnSharing) {
    // Groups of k consecutive ranks: the group ring's closing hop is k−1 links back, so a
    // group step costs (k−1)α + (n/k)/B. Columns (stride k) are rings of hop length k whose
    // k columns share every link: kα + k·(n/(km))/B per step. m ≥ 3 keeps routes unique.
    struct Case { int p, k; };
    for (auto [p, k] : {Case{12, 4}, Case{16, 4}, Case{15, 5}, Case{24, 6}, Case{9, 3}}) {
        const int m = p / k;
        const auto f = fabric(spec_of("ring", p));
        const double n = 48e6;
        sw::ScheduleOptions so;
        so.hierarchical_group_size = k;
        const double expected = 2.0 * (k - 1) * ((k - 1) * alpha + n / k / B) + 2.0 * (m - 1) * (k * alpha + n / m / B);
        EXPECT_REL(engine_time(f, CollectiveOp::all_reduce, Algorithm::hierarchical_ring, n, so), expected)
            << "p=" << p << " k=" << k;
    }
}

// ------------------------------------------------------ α–β on the switch

class SyntheticSwitch : public ::testing::TestWithParam<int> {};

// Every rank-to-rank transfer is 2 hops (up to the switch, down to the target): the rank
// α is 2·latency. Ring, pairwise and halving-doubling give each rank one send and one
// receive per step, so nothing shares a link and the textbook formulas hold with α = 2·lat.
TEST_P(SyntheticSwitch, RingReduceScatterAllGatherAllReduce) {
    const int p = GetParam();
    const auto f = fabric(spec_of("switch", p));
    for (double n : {1e3, 1e6, 256e6}) {
        const double step = 2.0 * alpha + n / p / B;
        EXPECT_REL(engine_time(f, CollectiveOp::all_reduce, Algorithm::ring, n), 2.0 * (p - 1) * step);
        EXPECT_REL(engine_time(f, CollectiveOp::reduce_scatter, Algorithm::ring, n), (p - 1) * step);
        EXPECT_REL(engine_time(f, CollectiveOp::all_gather, Algorithm::ring, n), (p - 1) * step);
    }
}

TEST_P(SyntheticSwitch, PairwiseAllToAll) {
    const int p = GetParam();
    const auto f = fabric(spec_of("switch", p));
    const double n = 64e6;
    EXPECT_REL(engine_time(f, CollectiveOp::all_to_all, Algorithm::pairwise, n), (p - 1) * (2.0 * alpha + n / p / B));
}

TEST_P(SyntheticSwitch, DirectAllToAllSharesEachRanksOneLink) {
    // p−1 transfers of n/p leave each rank on its one up direction and p−1 arrive on its one
    // down direction: all get B/(p−1) and drain together; every route is 2 links.
    const int p = GetParam();
    const auto f = fabric(spec_of("switch", p));
    const double n = 64e6;
    EXPECT_REL(engine_time(f, CollectiveOp::all_to_all, Algorithm::direct, n), 2.0 * alpha + (p - 1.0) / p * n / B);
}

TEST_P(SyntheticSwitch, HalvingDoublingWithFoldInForNonPowersOfTwo) {
    // q = 2^⌊log₂p⌋: 2 log₂q steps, 2((q−1)/q)·n/B; with p > q the p−q extra ranks first
    // send their n to a partner and get the result back: 2(2α + n/B) more.
    const int p = GetParam();
    const auto f = fabric(spec_of("switch", p));
    const double n = 32e6;
    int q = 1;
    while (q * 2 <= p) q *= 2;
    double expected = 2.0 * log2_exact(q) * 2.0 * alpha + 2.0 * (q - 1.0) / q * n / B;
    if (p > q) expected += 2.0 * (2.0 * alpha + n / B);
    EXPECT_REL(engine_time(f, CollectiveOp::all_reduce, Algorithm::halving_doubling, n), expected);
}

TEST_P(SyntheticSwitch, HierarchicalRing) {
    const int p = GetParam();
    const auto f = fabric(spec_of("switch", p));
    const double n = 48e6;
    int k = 1;  // the engine's default group: largest divisor ≤ √p
    for (int d = 1; d * d <= p; ++d)
        if (p % d == 0) k = d;
    const int m = p / k;
    const double expected = 2.0 * (k - 1) * (2.0 * alpha + n / k / B) + 2.0 * (m - 1) * (2.0 * alpha + n / k / m / B);
    EXPECT_REL(engine_time(f, CollectiveOp::all_reduce, Algorithm::hierarchical_ring, n), expected);
}

TEST_P(SyntheticSwitch, PointToPointIsTwoHops) {
    const auto f = fabric(spec_of("switch", GetParam()));
    EXPECT_REL(engine_time(f, CollectiveOp::point_to_point, Algorithm::direct, 1e6), 2.0 * alpha + 1e6 / B);
}

INSTANTIATE_TEST_SUITE_P(SeveralRankCounts, SyntheticSwitch, ::testing::Values(2, 3, 5, 8, 12, 16, 31, 64));

TEST(SyntheticSwitch, DoubleBinaryTreeSharesEachRanksOneLink) {
    // C chunks of c = n/(2C) per tree, depth D = ⌊log₂p⌋: 2(C + D − 1) pipelined steps
    // (reduce, then broadcast). For odd p every inner heap node has two children, so each
    // step has a parent receiving (reduce) or sending (broadcast) two chunks over its one
    // link, and no rank is inner in both trees: every step costs 2α + 2c/B.
    for (int p : {3, 5, 7, 9, 15, 33, 63}) {
        const auto f = fabric(spec_of("switch", p));
        for (double n : {1e5, 8e6, 512e6}) {
            const int C = tree_chunks(n);
            const int D = heap_depth(p);
            const double expected = 2.0 * (C + D - 1) * (2.0 * alpha + 2.0 * (n / (2.0 * C)) / B);
            EXPECT_REL(engine_time(f, CollectiveOp::all_reduce, Algorithm::double_binary_tree, n), expected)
                << "p=" << p << " n=" << n;
        }
    }
}

// ---------------------------------------------- fully connected (docs/references.md as written)

TEST(SyntheticFullyConnected, MatchesTheTextbookFormulas) {
    for (int p : {4, 7, 16}) {
        const auto f = fabric(spec_of("fully_connected", p));
        const double n = 16e6;
        EXPECT_REL(engine_time(f, CollectiveOp::all_reduce, Algorithm::ring, n), 2.0 * (p - 1) * (alpha + n / p / B));
        EXPECT_REL(engine_time(f, CollectiveOp::all_to_all, Algorithm::pairwise, n), (p - 1) * (alpha + n / p / B));
        // Direct: every pair on its own link at once.
        EXPECT_REL(engine_time(f, CollectiveOp::all_to_all, Algorithm::direct, n), alpha + n / p / B);
        if ((p & (p - 1)) == 0) {
            EXPECT_REL(engine_time(f, CollectiveOp::all_reduce, Algorithm::halving_doubling, n),
                       2.0 * log2_exact(p) * alpha + 2.0 * (p - 1.0) / p * n / B);
        }
    }
}

// ------------------------------------------------------- α–β on the 2-D torus

// The table passes the fabric's dims to the schedules: hierarchical_ring runs a ring along
// every row, then along every column, then along the rows again. Rows and columns are
// rings of torus neighbours (one hop a step, wrap links included) and no two rings share a
// link, so with a rings of size x across y rows:
//   reduce-scatter along the rows:  (x−1)(α + n/(xB))
//   all-reduce along the columns on n/x: 2(y−1)(α + n/(xyB))
//   all-gather along the rows:      (x−1)(α + n/(xB))
// For 8×8: 28α + (14/8 + 14/64)·n/B = 28α + 1.96875·n/B (the bandwidth term of a flat ring,
// 2(p−1)/p·n/B, in 28 steps instead of 126).
TEST(SyntheticTorus, HierarchicalRingRunsAlongRowsThenColumns) {
    struct Shape { int x, y; };
    for (auto [x, y] : {Shape{8, 8}, Shape{4, 6}, Shape{5, 3}, Shape{2, 8}, Shape{6, 2}, Shape{3, 3}, Shape{1, 5}}) {
        const auto f = fabric("torus2d:x=" + std::to_string(x) + ",y=" + std::to_string(y) + ",bw_gbps=400,latency_ns=500");
        for (double n : {1e4, 48e6}) {
            const double expected = 2.0 * (x - 1) * (alpha + n / x / B) + 2.0 * (y - 1) * (alpha + n / x / y / B);
            EXPECT_REL(engine_time(f, CollectiveOp::all_reduce, Algorithm::hierarchical_ring, n), expected)
                << x << "x" << y << " n=" << n;
        }
    }
    const auto f = fabric("torus2d:x=8,y=8,bw_gbps=400,latency_ns=500");
    const double n = 1 << 30;
    EXPECT_REL(engine_time(f, CollectiveOp::all_reduce, Algorithm::hierarchical_ring, n), 28 * alpha + 1.96875 * n / B);
    // The snake's flat ring: 126 one-hop steps (y even, so the ring closes in one hop).
    EXPECT_REL(engine_time(f, CollectiveOp::all_reduce, Algorithm::ring, n), 126 * (alpha + n / 64 / B));
}

TEST(SyntheticTorus, HalvingDoublingRunsAlongRowsThenColumns) {
    // x and y powers of two. Along a row (a ring of x), nearest first: n/2 at d = 1, …, n/x
    // at d = x/2, each step d·α + n/(2B) as on a ring fabric; then along the columns on what
    // is left, n/(2x) … n/(xy): d·α + n/(2xB). Per half (x−1 + y−1)α + log₂x·n/(2B) +
    // log₂y·n/(2xB). For 8×8: 28α + 3.375·n/B.
    struct Shape { int x, y; };
    for (auto [x, y] : {Shape{8, 8}, Shape{4, 8}, Shape{8, 2}, Shape{2, 4}, Shape{16, 4}}) {
        const auto f = fabric("torus2d:x=" + std::to_string(x) + ",y=" + std::to_string(y) + ",bw_gbps=400,latency_ns=500");
        const double n = 32e6;
        const double expected =
            2.0 * (x - 1 + y - 1) * alpha + log2_exact(x) * n / B + log2_exact(y) * n / x / B;
        EXPECT_REL(engine_time(f, CollectiveOp::all_reduce, Algorithm::halving_doubling, n), expected) << x << "x" << y;
    }
}

TEST(SyntheticTorus, GroupSizeGivenOverridesTheDims) {
    // hierarchical_group_size: groups of k consecutive ranks whatever the dims; dims given to
    // the table are used in place of the fabric's.
    sw::ScheduleOptions by_group;
    by_group.hierarchical_group_size = 8;
    sw::ScheduleOptions both = by_group;
    both.dims = {8, 8};
    const auto a = sw::build_schedule(CollectiveOp::all_reduce, Algorithm::hierarchical_ring, 64, 1e6, by_group);
    const auto b = sw::build_schedule(CollectiveOp::all_reduce, Algorithm::hierarchical_ring, 64, 1e6, both);
    ASSERT_EQ(a.transfers.size(), b.transfers.size());
    for (std::size_t i = 0; i < a.transfers.size(); ++i) {
        EXPECT_EQ(a.transfers[i].source_rank, b.transfers[i].source_rank);
        EXPECT_EQ(a.transfers[i].target_rank, b.transfers[i].target_rank);
    }
    const auto f = fabric("torus2d:x=8,y=8,bw_gbps=400,latency_ns=500");
    sw::ScheduleOptions as_rows_of_4;
    as_rows_of_4.dims = {4, 16};  // not the fabric's grid: rows of 4 are not rings of neighbours
    EXPECT_GT(engine_time(f, CollectiveOp::all_reduce, Algorithm::hierarchical_ring, 1 << 30, as_rows_of_4),
              engine_time(f, CollectiveOp::all_reduce, Algorithm::hierarchical_ring, 1 << 30));
}

TEST(FabricCollectiveTable, BusBandwidthIsNcclTestsDefinition) {
    const auto f = fabric(spec_of("ring", 16));
    const double sizes[] = {1 << 20, 1 << 30};
    const auto rows = sw::fabric_collective_table(f, CollectiveOp::all_reduce, Algorithm::ring, sizes);
    ASSERT_EQ(rows.size(), 2u);
    for (const auto& r : rows) {
        EXPECT_DOUBLE_EQ(r.alg_bw_Bps, r.bytes / r.time_s);
        EXPECT_DOUBLE_EQ(r.bus_bw_Bps, r.alg_bw_Bps * 2.0 * 15.0 / 16.0);
        EXPECT_DOUBLE_EQ(r.bound_bus_bw_Bps, B);
    }
    EXPECT_GT(rows[1].bus_bw_Bps, 0.99 * B);  // large messages approach the link
}

// ------------------------------------------------- a two-level switch (leaf, spine)

TEST(SyntheticTwoLevelSwitch, LeavesAndASpineWithTheirLinks) {
    // 10 ranks in leaves of 4 (the last holds 2): nodes 0–9 ranks, 10–12 leaves, 13 the spine.
    const auto f = fabric("switch:p=10,leaf=4,uplink_gbps=800,bw_gbps=400,latency_ns=500");
    EXPECT_EQ(f.ranks, 10);
    EXPECT_EQ(f.topology.node_count, 14);
    ASSERT_EQ(f.topology.links.size(), 13u);
    EXPECT_EQ(sw::fabric_link_count(sw::parse_fabric_spec("switch:p=10,leaf=4")), 13);
    for (const auto& l : f.topology.links) {
        if (l.source < 10) {
            EXPECT_EQ(l.target, 10 + l.source / 4);
            EXPECT_DOUBLE_EQ(l.capacity_bps, 400e9);
        } else {
            EXPECT_EQ(l.target, 13);
            EXPECT_DOUBLE_EQ(l.capacity_bps, 800e9);
        }
    }
    for (int r = 0; r < 10; ++r) EXPECT_EQ(f.placement[r], r);
    EXPECT_EQ(f.description, "switch:p=10,leaf=4,uplink_gbps=800,bw_gbps=400,latency_ns=500");
    // Non-blocking by default: a leaf's uplink carries its ranks' links.
    EXPECT_EQ(fabric("switch:p=8,leaf=4").description, "switch:p=8,leaf=4,uplink_gbps=1600,bw_gbps=400,latency_ns=500");
    EXPECT_EQ(message_of("switch:p=8,leaf=8"),
              "switch: leaf: expected an integer in [1, p) ranks per leaf switch (leave it out for one switch), got 8");
    EXPECT_EQ(message_of("switch:p=8,uplink_gbps=100"), "switch: uplink_gbps: needs leaf (a two-level switch)");
    EXPECT_NE(message_of("ring:p=8,leaf=4").find("unknown key 'leaf'"), std::string::npos);
}

TEST(SyntheticTwoLevelSwitch, RingAllReduceCrossesTheThinUplinks) {
    // 2 leaves of 4 ranks, uplinks at 10 Gbit/s: the ring's two hops between leaves (3 → 4 and
    // 7 → 0) go up and down the uplinks, one flow per direction, 4 links of α; every step waits
    // for them: T = 2 (p − 1) (4α + n / p / B_up).
    const int p = 8;
    const auto f = fabric("switch:p=8,leaf=4,uplink_gbps=10,bw_gbps=400,latency_ns=500");
    const double B_up = 10e9 / 8.0;
    for (double n : {1e6, 256e6}) EXPECT_REL(engine_time(f, CollectiveOp::all_reduce, Algorithm::ring, n), 2.0 * (p - 1) * (4.0 * alpha + n / p / B_up));
    // Non-blocking uplinks: the cross-leaf hop's 4 α, the rank link's rate.
    const auto wide = fabric("switch:p=8,leaf=4,bw_gbps=400,latency_ns=500");
    EXPECT_REL(engine_time(wide, CollectiveOp::all_reduce, Algorithm::ring, 256e6), 2.0 * (p - 1) * (4.0 * alpha + 256e6 / p / B));
}
