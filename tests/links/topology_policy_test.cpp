#include <skyfabric/links/metrics.hpp>
#include <skyfabric/links/topology_policy.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

using namespace skyfabric::links;

namespace {

std::vector<Eigen::Vector3d> random_cloud(int n, double radius_m, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-radius_m, radius_m);
    std::vector<Eigen::Vector3d> p;
    while (static_cast<int>(p.size()) < n) {
        Eigen::Vector3d x(u(rng), u(rng), 0.1 * u(rng));
        if (x.head<2>().norm() <= radius_m) p.push_back(x);
    }
    return p;
}

void expect_well_formed(const Topology& t, int terminals) {
    std::set<std::pair<int, int>> seen;
    for (std::size_t m = 0; m < t.links.size(); ++m) {
        const auto& l = t.links[m];
        EXPECT_LT(l.source, l.target);
        EXPECT_TRUE(seen.insert({l.source, l.target}).second) << "duplicate link";
        if (m > 0) {
            const auto& p = t.links[m - 1];
            EXPECT_TRUE(p.source < l.source || (p.source == l.source && p.target < l.target)) << "unsorted";
        }
    }
    for (int d : links_per_satellite(t)) EXPECT_LE(d, terminals);
}

// Suncatcher-81: integer (i, j) with i² + j² ≤ 25, x = 100 i m radial, y = 200 j m along-track;
// HCW breathing x = x0 cos nt + (y0/2) sin nt, y = −2 x0 sin nt + y0 cos nt.
std::vector<Eigen::Vector3d> suncatcher_81(double n_rad_s, double t_s) {
    std::vector<Eigen::Vector3d> p;
    for (int i = -5; i <= 5; ++i)
        for (int j = -5; j <= 5; ++j) {
            if (i * i + j * j > 25) continue;
            const double x0 = 100.0 * i, y0 = 200.0 * j;
            const double c = std::cos(n_rad_s * t_s), s = std::sin(n_rad_s * t_s);
            p.emplace_back(x0 * c + 0.5 * y0 * s, -2.0 * x0 * s + y0 * c, 0.0);
        }
    return p;
}

}  // namespace

TEST(TopologyPolicy, DegreeNeverExceedsTerminalCount) {
    for (auto policy : {TopologyPolicy::nearest_k, TopologyPolicy::max_capacity, TopologyPolicy::lattice}) {
        for (int terminals : {1, 3, 8}) {
            TopologyParameters p;
            p.policy = policy;
            p.terminals.terminals_per_satellite = terminals;
            p.terminals.max_range_m = 400.0;
            TopologyBuilder builder(p);
            std::vector<LinkEvent> events;
            auto pos = random_cloud(400, 2000.0, 7u + static_cast<std::uint32_t>(terminals));
            std::mt19937 rng(3);
            std::normal_distribution<double> step(0.0, 20.0);
            for (int k = 0; k < 10; ++k) {
                const Topology t = builder.update(10.0 * k, pos, events);
                expect_well_formed(t, terminals);
                EXPECT_FALSE(t.links.empty());
                for (const auto& l : t.links) EXPECT_LE(l.distance_m, 400.0 * 1.1 + 1e-9);
                for (auto& x : pos) x += Eigen::Vector3d(step(rng), step(rng), 0.0);
            }
        }
    }
}

TEST(TopologyPolicy, NearestKOnDenseCloudUsesTerminals) {
    // With plenty of partners in range most satellites should fill their terminals.
    TopologyParameters p;
    p.terminals.terminals_per_satellite = 4;
    const auto pos = random_cloud(500, 1000.0, 11u);
    const Topology t = build_topology(pos, p);
    const auto m = summarize(t, pos);
    EXPECT_GT(m.links_per_satellite_mean, 3.5);
    EXPECT_LE(m.links_per_satellite_max, 4);
}

TEST(TopologyPolicy, HysteresisPreventsFlappingAtRangeBoundary) {
    auto run = [](double h) {
        TopologyParameters p;
        p.terminals.max_range_m = 1000.0;
        p.terminals.reacquisition_time_s = 0.0;
        p.hysteresis_fraction = h;
        TopologyBuilder builder(p);
        std::vector<LinkEvent> events;
        for (int k = 0; k < 50; ++k) {
            const double d = (k % 2 == 0) ? 980.0 : 1020.0;  // ±2 % around the range
            std::vector<Eigen::Vector3d> pos{{0, 0, 0}, {d, 0, 0}};
            builder.update(k * 1.0, pos, events);
        }
        return events;
    };
    const auto with = run(0.1);
    ASSERT_EQ(with.size(), 1u);
    EXPECT_EQ(with[0].kind, LinkEventKind::up);
    const auto without = run(0.0);
    EXPECT_GE(without.size(), 45u);  // the same motion flaps every step without hysteresis
}

TEST(TopologyPolicy, HysteresisPreventsFlappingBetweenEqualPartners) {
    // Satellite 0 has one terminal; partners 1 and 2 take turns being 1 % nearer.
    auto run = [](double h) {
        TopologyParameters p;
        p.terminals.terminals_per_satellite = 1;
        p.terminals.reacquisition_time_s = 0.0;
        p.hysteresis_fraction = h;
        TopologyBuilder builder(p);
        std::vector<LinkEvent> events;
        for (int k = 0; k < 40; ++k) {
            const double a = (k % 2 == 0) ? 99.0 : 101.0;
            std::vector<Eigen::Vector3d> pos{{0, 0, 0}, {a, 0, 0}, {0, 200.0 - a, 0}};
            builder.update(k * 1.0, pos, events);
        }
        return events;
    };
    EXPECT_EQ(run(0.1).size(), 1u);
    const auto flapping = run(0.0);
    EXPECT_GE(flapping.size(), 40u);
    bool reassigned = false;
    for (const auto& e : flapping) reassigned |= e.kind == LinkEventKind::down_reassigned;
    EXPECT_TRUE(reassigned);
}

TEST(TopologyPolicy, ReacquisitionDelaysCapacity) {
    TopologyParameters p;
    p.terminals.reacquisition_time_s = 5.0;
    p.initial_links_acquired = false;
    TopologyBuilder builder(p);
    std::vector<LinkEvent> events;
    std::vector<Eigen::Vector3d> pos{{0, 0, 0}, {200, 0, 0}};
    for (int k = 0; k <= 7; ++k) {
        const Topology t = builder.update(k * 1.0, pos, events);
        ASSERT_EQ(t.links.size(), 1u);
        if (k < 5) {
            EXPECT_EQ(t.links[0].capacity_bps, 0.0) << k;
            EXPECT_TRUE(t.links[0].acquiring);
        } else {
            EXPECT_DOUBLE_EQ(t.links[0].capacity_bps, 9.6e12) << k;
        }
    }
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].kind, LinkEventKind::up);
    EXPECT_EQ(events[0].time_s, 0.0);
    EXPECT_EQ(events[1].kind, LinkEventKind::reacquired);
    EXPECT_EQ(events[1].time_s, 5.0);
}

TEST(TopologyPolicy, InitialLinksCarryTrafficButLaterOnesReacquire) {
    TopologyParameters p;
    p.terminals.reacquisition_time_s = 2.0;
    p.terminals.max_range_m = 1000.0;
    TopologyBuilder builder(p);
    std::vector<LinkEvent> events;
    std::vector<Eigen::Vector3d> pos{{0, 0, 0}, {200, 0, 0}, {5000, 0, 0}};
    auto t0 = builder.update(0.0, pos, events);
    ASSERT_EQ(t0.links.size(), 1u);
    EXPECT_GT(t0.links[0].capacity_bps, 0.0);
    pos[2] = {400, 0, 0};  // comes into range
    auto t1 = builder.update(1.0, pos, events);
    ASSERT_EQ(t1.links.size(), 3u);
    int acquiring = 0;
    for (const auto& l : t1.links) acquiring += l.acquiring;
    EXPECT_EQ(acquiring, 2);
    pos[2] = {5000, 0, 0};  // leaves range
    events.clear();
    builder.update(2.0, pos, events);
    ASSERT_EQ(events.size(), 2u);
    for (const auto& e : events) EXPECT_EQ(e.kind, LinkEventKind::down_range);
}

TEST(TopologyPolicy, Suncatcher81ConnectedAllOrbitWithDefaults) {
    const double mu = 3.986004418e14, a = 6378137.0 + 650e3;
    const double n = std::sqrt(mu / (a * a * a));
    const double period = 2.0 * 3.14159265358979 / n;
    TopologyBuilder builder(TopologyParameters{});  // nearest_k, 8 terminals
    std::vector<LinkEvent> events;
    int steps = 0;
    for (double t = 0.0; t <= period; t += 30.0, ++steps) {
        const auto pos = suncatcher_81(n, t);
        ASSERT_EQ(pos.size(), 81u);
        const Topology topo = builder.update(t, pos, events);
        expect_well_formed(topo, 8);
        const auto m = summarize(topo, pos);
        ASSERT_EQ(m.components, 1) << "disconnected at t = " << t;
        EXPECT_GT(m.bisection_capacity_bps, 0.0);
        for (const auto& l : topo.links)  // every in-cluster link closes; only re-acquiring ones carry 0
            if (!l.acquiring) {
                EXPECT_DOUBLE_EQ(l.capacity_bps, 9.6e12);
            }
    }
    EXPECT_GT(steps, 190);
}

TEST(TopologyPolicy, LatticeFreezesPairs) {
    TopologyParameters p;
    p.policy = TopologyPolicy::lattice;
    TopologyBuilder builder(p);
    std::vector<LinkEvent> events;
    const double n = 1.1e-3;
    const Topology t0 = builder.update(0.0, suncatcher_81(n, 0.0), events);
    events.clear();
    const Topology t1 = builder.update(600.0, suncatcher_81(n, 600.0), events);
    EXPECT_TRUE(events.empty());  // all within 293 km: nothing changes
    ASSERT_EQ(t0.links.size(), t1.links.size());
    for (std::size_t m = 0; m < t0.links.size(); ++m) {
        EXPECT_EQ(t0.links[m].source, t1.links[m].source);
        EXPECT_EQ(t0.links[m].target, t1.links[m].target);
    }
}

TEST(TopologyPolicy, PolicyNames) {
    EXPECT_EQ(topology_policy_from_name("nearest_k"), TopologyPolicy::nearest_k);
    EXPECT_EQ(topology_policy_from_name("max_capacity"), TopologyPolicy::max_capacity);
    EXPECT_EQ(topology_policy_from_name("lattice"), TopologyPolicy::lattice);
    EXPECT_FALSE(topology_policy_from_name("mesh").has_value());
    EXPECT_EQ(to_string(TopologyPolicy::max_capacity), "max_capacity");
}
