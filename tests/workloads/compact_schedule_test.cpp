// Compact schedules (a ring's 2(p−1) equal steps as one repeated phase entry, O(p)
// transfers) against the explicit ones (every step listed, O(p²)): the same transfers
// when unrolled, and the same times, link bytes and event counts from the engine, on
// fixed and on changing topologies, p = 1…17. Times, stalls, losses and event counts come
// out bit for bit; so do link bytes (a repeated phase's b + b + … summed in closed form, with
// the same roundings: repeated_sum_test.cpp); the 1e-12 tolerance is what the comparisons allow.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include <skyfabric/workloads/collectives.hpp>
#include <skyfabric/workloads/collective_engine.hpp>
#include <skyfabric/workloads/training.hpp>

#include "test_helpers.hpp"

namespace sw = skyfabric::workloads;
using skyfabric::links::Topology;
using sw::Algorithm;
using sw::CollectiveOp;

namespace {

constexpr double rel_tol = 1e-12;

::testing::AssertionResult close(double a, double b) {
    if (a == b) return ::testing::AssertionSuccess();
    const double scale = std::max(std::abs(a), std::abs(b));
    if (std::abs(a - b) <= rel_tol * scale) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << a << " vs " << b << " (relative " << std::abs(a - b) / scale << ")";
}

// The ring steps as the builder listed them before schedules were compact: rings as
// explicit rank lists, every step its own phase (kept verbatim as the reference).
struct Reference {
    sw::Schedule s;
    void ring_steps(const std::vector<std::vector<std::int32_t>>& rings, std::int32_t steps, double chunk,
                    std::int32_t pattern) {
        for (std::int32_t k = 0; k < steps; ++k) {
            s.phases.push_back(sw::Phase{static_cast<std::int32_t>(s.transfers.size()), 0, pattern, 1});
            for (const auto& ring : rings) {
                const auto m = static_cast<std::int32_t>(ring.size());
                for (std::int32_t i = 0; i < m; ++i) {
                    s.transfers.push_back(sw::Transfer{ring[i], ring[(i + 1) % m], chunk});
                    ++s.phases.back().transfer_count;
                }
            }
        }
    }
};

sw::Schedule reference_ring(CollectiveOp op, std::int32_t p, double n) {
    Reference r;
    std::vector<std::vector<std::int32_t>> whole(1);
    for (std::int32_t i = 0; i < p; ++i) whole[0].push_back(i);
    if (op == CollectiveOp::all_reduce) {
        if (p > 1) r.ring_steps(whole, 2 * (p - 1), n / p, 0);
    } else if (p > 1) {
        r.ring_steps(whole, p - 1, n / p, 0);
    }
    return r.s;
}

// Ring steps in the rows of `grid` (ranks per row, in ring order), an all-reduce along its
// columns on n/k, ring steps in the rows again.
sw::Schedule reference_hierarchical(const std::vector<std::vector<std::int32_t>>& grid, double n) {
    Reference r;
    const auto m = static_cast<std::int32_t>(grid.size());
    const auto k = static_cast<std::int32_t>(grid.front().size());
    if (m * k == 1) return r.s;
    std::vector<std::vector<std::int32_t>> columns(k);
    for (const auto& row : grid)
        for (std::int32_t c = 0; c < k; ++c) columns[c].push_back(row[c]);
    if (k > 1) r.ring_steps(grid, k - 1, n / k, 0);
    if (m > 1) r.ring_steps(columns, 2 * (m - 1), n / k / m, 1);
    if (k > 1) r.ring_steps(grid, k - 1, n / k, 0);
    return r.s;
}

// Groups of k consecutive ranks: row g is g·k … g·k + k − 1.
std::vector<std::vector<std::int32_t>> consecutive_groups(std::int32_t p, std::int32_t k) {
    std::vector<std::vector<std::int32_t>> grid(p / k);
    for (std::int32_t x = 0; x < p; ++x) grid[x / k].push_back(x);
    return grid;
}

// A d0 × d1 grid numbered as a snake, walked cell by cell: row r, column c holds the rank
// met there; ring order in a row is by column.
std::vector<std::vector<std::int32_t>> snake_grid(std::int32_t d0, std::int32_t d1) {
    std::vector<std::vector<std::int32_t>> grid(d1, std::vector<std::int32_t>(d0));
    std::int32_t rank = 0;
    for (std::int32_t r = 0; r < d1; ++r)
        for (std::int32_t step = 0; step < d0; ++step) grid[r][r % 2 == 0 ? step : d0 - 1 - step] = rank++;
    return grid;
}

void expect_same_listing(const sw::Schedule& a, const sw::Schedule& b) {
    ASSERT_EQ(a.phases.size(), b.phases.size());
    ASSERT_EQ(a.transfers.size(), b.transfers.size());
    for (std::size_t i = 0; i < a.phases.size(); ++i) {
        EXPECT_EQ(a.phases[i].first_transfer, b.phases[i].first_transfer);
        EXPECT_EQ(a.phases[i].transfer_count, b.phases[i].transfer_count);
        EXPECT_EQ(a.phases[i].pattern, b.phases[i].pattern);
        EXPECT_EQ(a.phases[i].repeat, 1);
        EXPECT_EQ(b.phases[i].repeat, 1);
    }
    for (std::size_t i = 0; i < a.transfers.size(); ++i) {
        EXPECT_EQ(a.transfers[i].source_rank, b.transfers[i].source_rank);
        EXPECT_EQ(a.transfers[i].target_rank, b.transfers[i].target_rank);
        EXPECT_EQ(a.transfers[i].bytes, b.transfers[i].bytes);
    }
}

std::vector<std::int32_t> divisors(std::int32_t p) {
    std::vector<std::int32_t> d;
    for (std::int32_t k = 1; k <= p; ++k)
        if (p % k == 0) d.push_back(k);
    return d;
}

struct Case {
    CollectiveOp op;
    Algorithm algorithm;
    sw::ScheduleOptions options;
};

std::string name(const Case& c) {
    std::string s = sw::to_string(c.algorithm) + " " + sw::to_string(c.op) + " k=" +
                    std::to_string(c.options.hierarchical_group_size);
    for (auto d : c.options.dims) s += " d=" + std::to_string(d);
    return s;
}

std::vector<Case> cases(std::int32_t p) {
    std::vector<Case> c{{CollectiveOp::all_reduce, Algorithm::ring, {}},
                        {CollectiveOp::reduce_scatter, Algorithm::ring, {}},
                        {CollectiveOp::all_gather, Algorithm::ring, {}},
                        {CollectiveOp::all_reduce, Algorithm::halving_doubling, {}},
                        {CollectiveOp::all_reduce, Algorithm::double_binary_tree, {}}};
    for (auto k : divisors(p)) {
        sw::ScheduleOptions o;
        o.hierarchical_group_size = k;
        c.push_back({CollectiveOp::all_reduce, Algorithm::hierarchical_ring, o});
        sw::ScheduleOptions grid;
        grid.dims = {k, p / k};
        c.push_back({CollectiveOp::all_reduce, Algorithm::hierarchical_ring, grid});
        c.push_back({CollectiveOp::all_reduce, Algorithm::halving_doubling, grid});
    }
    c.push_back({CollectiveOp::all_to_all, Algorithm::pairwise, {}});
    c.push_back({CollectiveOp::all_to_all, Algorithm::direct, {}});
    return c;
}

// A 4 × 5 lattice whose links differ in capacity and latency (so flows of one ring step
// contend on multi-hop routes and finish at different times).
Topology uneven_lattice(double time_s, int variant) {
    Topology t = sw::testing::lattice(4, 5, 100e9, 2e-6);
    t.time_s = time_s;
    for (std::size_t i = 0; i < t.links.size(); ++i) {
        const auto h = static_cast<double>((i * 7 + static_cast<std::size_t>(variant) * 3) % 5);
        t.links[i].capacity_bps = (40.0 + 30.0 * h) * 1e9;
        t.links[i].latency_s = (1.0 + 0.5 * h) * 1e-6;
    }
    if (variant % 3 == 2) t.links.erase(t.links.begin() + 3);  // a link down
    if (variant % 4 == 3) t.links[5].capacity_bps = 0.0;       // another re-acquiring
    return t;
}

// A placement scattering p ranks over the 20 lattice nodes (ring neighbours far apart).
sw::Placement scattered(std::int32_t p) {
    sw::Placement pl;
    for (std::int32_t i = 0; i < 20 && static_cast<std::int32_t>(pl.size()) < p; ++i) pl.push_back((i * 7) % 20);
    return pl;
}

struct Outcome {
    std::vector<sw::CollectiveResult> results;
    std::vector<sw::LinkUtilisation> links;
    std::int64_t flow_events = 0;
    std::int64_t rate_solves = 0;
};

// Collectives back to back (and some overlapping their predecessor's end) over a series
// with changes every `spacing` seconds; cache keys as training uses them, or none.
Outcome run_series(const std::vector<Topology>& series, const std::vector<sw::Schedule>& schedules,
                   const sw::Placement& placement, bool keyed, const sw::FlowOptions& flow = {}) {
    sw::NetworkClock clock(sw::topology_source(series));
    clock.start_accounting(series.front().time_s);
    sw::CollectiveEngine engine(clock, flow);
    Outcome o;
    double t = series.front().time_s;
    for (int round = 0; round < 3; ++round)
        for (std::size_t i = 0; i < schedules.size(); ++i) {
            const auto r = engine.run(schedules[i], placement, t, keyed ? static_cast<std::int64_t>(i) : -1);
            o.results.push_back(r);
            if (!r.completed) return o;
            t = r.end_s + 1e-5 * static_cast<double>(i % 2);
        }
    o.links = clock.link_utilisation(t);
    o.flow_events = engine.flow_events();
    o.rate_solves = engine.rate_solves();
    return o;
}

void expect_same_outcome(const Outcome& compact, const Outcome& full) {
    ASSERT_EQ(compact.results.size(), full.results.size());
    for (std::size_t i = 0; i < compact.results.size(); ++i) {
        const auto& a = compact.results[i];
        const auto& b = full.results[i];
        EXPECT_TRUE(close(a.start_s, b.start_s)) << "collective " << i;
        EXPECT_TRUE(close(a.end_s, b.end_s)) << "collective " << i;
        EXPECT_TRUE(close(a.alg_bw_Bps, b.alg_bw_Bps)) << "collective " << i;
        EXPECT_TRUE(close(a.bus_bw_Bps, b.bus_bw_Bps)) << "collective " << i;
        EXPECT_TRUE(close(a.stalled_s, b.stalled_s)) << "collective " << i;
        EXPECT_TRUE(close(a.lost_s, b.lost_s)) << "collective " << i;
        EXPECT_EQ(a.topology_changes, b.topology_changes) << "collective " << i;
        EXPECT_EQ(a.completed, b.completed) << "collective " << i;
    }
    ASSERT_EQ(compact.links.size(), full.links.size());
    for (std::size_t i = 0; i < compact.links.size(); ++i) {
        EXPECT_EQ(compact.links[i].source, full.links[i].source);
        EXPECT_EQ(compact.links[i].target, full.links[i].target);
        EXPECT_TRUE(close(compact.links[i].bytes, full.links[i].bytes)) << "link " << i;
        EXPECT_TRUE(close(compact.links[i].capacity_bytes, full.links[i].capacity_bytes)) << "link " << i;
    }
    EXPECT_EQ(compact.flow_events, full.flow_events);
}

}  // namespace

TEST(CompactSchedule, UnrollsToTheExplicitListing) {
    for (std::int32_t p = 1; p <= 17; ++p) {
        SCOPED_TRACE(p);
        for (const auto& c : cases(p)) {
            SCOPED_TRACE(name(c));
            const auto compact = sw::build_schedule(c.op, c.algorithm, p, 3.0e8, c.options);
            const auto full = sw::build_explicit_schedule(c.op, c.algorithm, p, 3.0e8, c.options);
            EXPECT_EQ(compact.phase_count(), full.phase_count());
            EXPECT_EQ(compact.transfer_count(), full.transfer_count());
            EXPECT_EQ(full.transfer_count(), static_cast<std::int64_t>(full.transfers.size()));
            expect_same_listing(sw::expand_schedule(compact), full);
            if (c.algorithm == Algorithm::ring)
                expect_same_listing(full, reference_ring(c.op, p, 3.0e8));
            if (c.algorithm == Algorithm::hierarchical_ring) {
                const auto& d = c.options.dims;
                const auto grid = d.empty() ? consecutive_groups(p, c.options.hierarchical_group_size)
                                            : snake_grid(d[0], d[1]);
                expect_same_listing(full, reference_hierarchical(grid, 3.0e8));
            }
        }
    }
}

TEST(CompactSchedule, RingsHoldLinearlyManyTransfers) {
    const std::int32_t p = 10000;
    const auto ar = sw::build_schedule(CollectiveOp::all_reduce, Algorithm::ring, p, 1e9);
    EXPECT_EQ(ar.transfers.size(), static_cast<std::size_t>(p));
    EXPECT_EQ(ar.phases.size(), 1u);
    EXPECT_EQ(ar.phase_count(), 2 * (p - 1));
    EXPECT_EQ(ar.transfer_count(), 2LL * (p - 1) * p);
    for (auto op : {CollectiveOp::reduce_scatter, CollectiveOp::all_gather}) {
        const auto s = sw::build_schedule(op, Algorithm::ring, p, 1e9);
        EXPECT_EQ(s.transfers.size(), static_cast<std::size_t>(p));
        EXPECT_EQ(s.phase_count(), p - 1);
    }
    sw::ScheduleOptions o;
    o.hierarchical_group_size = 100;
    const auto h = sw::build_schedule(CollectiveOp::all_reduce, Algorithm::hierarchical_ring, p, 1e9, o);
    EXPECT_EQ(h.transfers.size(), static_cast<std::size_t>(2 * p));  // in-group rings once, cross rings
    EXPECT_EQ(h.phases.size(), 3u);
    EXPECT_EQ(h.phase_count(), 2 * 99 + 2 * 99);
}

TEST(CompactSchedule, SameTimesAsExplicitOnAFixedTopology) {
    const std::vector<Topology> fixed{uneven_lattice(0.0, 1)};
    for (std::int32_t p = 2; p <= 17; ++p) {
        SCOPED_TRACE(p);
        for (const auto& c : cases(p)) {
            SCOPED_TRACE(name(c));
            const std::vector<sw::Schedule> compact{sw::build_schedule(c.op, c.algorithm, p, 2.0e8, c.options)};
            const std::vector<sw::Schedule> full{sw::build_explicit_schedule(c.op, c.algorithm, p, 2.0e8, c.options)};
            for (bool keyed : {false, true}) {
                expect_same_outcome(run_series(fixed, compact, scattered(p), keyed),
                                    run_series(fixed, full, scattered(p), keyed));
            }
        }
    }
}

TEST(CompactSchedule, SameTimesAsExplicitAcrossTopologyChanges) {
    // Changes every 0.7 ms: collectives of a few ms cross several, some phases end by a
    // change and some straddle one (solved as flows), a link goes down and comes back.
    std::vector<Topology> series;
    for (int i = 0; i < 40; ++i) series.push_back(uneven_lattice(7e-4 * i, i));
    sw::FlowOptions two_paths;
    two_paths.paths_per_transfer = 2;
    two_paths.per_message_overhead_s = 3e-6;
    for (std::int32_t p = 2; p <= 17; ++p) {
        SCOPED_TRACE(p);
        for (const auto& c : cases(p)) {
            // Ring steps repeat; the other schedules (and the grid's rings, the same steps
            // relabelled) have nothing new to show here.
            if (c.algorithm != Algorithm::ring && c.algorithm != Algorithm::hierarchical_ring) continue;
            if (!c.options.dims.empty()) continue;
            SCOPED_TRACE(name(c));
            std::vector<sw::Schedule> compact, full;
            for (double n : {2.0e7, 6.0e7}) {
                compact.push_back(sw::build_schedule(c.op, c.algorithm, p, n, c.options));
                full.push_back(sw::build_explicit_schedule(c.op, c.algorithm, p, n, c.options));
            }
            for (bool keyed : {true, false})
                for (const auto& flow : {sw::FlowOptions{}, two_paths}) {
                    const auto a = run_series(series, compact, scattered(p), keyed, flow);
                    const auto b = run_series(series, full, scattered(p), keyed, flow);
                    expect_same_outcome(a, b);
                    std::int32_t crossed = 0;
                    for (const auto& r : a.results) crossed += r.topology_changes;
                    EXPECT_GT(crossed, 0);
                }
        }
    }
}

TEST(CompactSchedule, TrainingGivesTheSameResultsAsExplicitSchedules) {
    std::vector<Topology> series;
    for (int i = 0; i < 30; ++i) series.push_back(uneven_lattice(0.01 * i, i));
    for (std::int32_t p : {2, 5, 12, 16, 20}) {
        SCOPED_TRACE(p);
        for (auto algo : {Algorithm::ring, Algorithm::hierarchical_ring}) {
            sw::TrainingJob job;
            job.parameters = 1e7;
            job.tokens_per_step = 1e5;
            job.data_parallel = p;
            job.gradient_buckets = 3;
            sw::TrainingOptions o;
            o.all_reduce = algo;
            sw::TrainingContext explicit_schedules;
            explicit_schedules.explicit_schedules = true;
            const auto a = sw::simulate_training(job, sw::tpu_v6e(), series, o);
            const auto b = sw::simulate_training(job, sw::tpu_v6e(), series, o, explicit_schedules);
            ASSERT_GT(a.summary.steps, 10);
            ASSERT_EQ(a.summary.steps, b.summary.steps);
            ASSERT_EQ(a.collectives.size(), b.collectives.size());
            for (std::size_t i = 0; i < a.steps.size(); ++i) {
                EXPECT_TRUE(close(a.steps[i].end_s, b.steps[i].end_s));
                EXPECT_EQ(a.steps[i].status, b.steps[i].status);
            }
            for (std::size_t i = 0; i < a.collectives.size(); ++i) {
                EXPECT_TRUE(close(a.collectives[i].end_s, b.collectives[i].end_s));
                EXPECT_TRUE(close(a.collectives[i].lost_s, b.collectives[i].lost_s));
            }
            EXPECT_TRUE(close(a.summary.time_lost_s, b.summary.time_lost_s));
            EXPECT_EQ(a.summary.flow_events, b.summary.flow_events);
            EXPECT_EQ(a.summary.replans, b.summary.replans);
            ASSERT_EQ(a.links.size(), b.links.size());
            for (std::size_t i = 0; i < a.links.size(); ++i) EXPECT_TRUE(close(a.links[i].bytes, b.links[i].bytes));
        }
    }
}
