// Workload engine benchmarks: a data-parallel 7B job over one simulated day of a
// suncatcher-like 81-satellite lattice whose topology changes every 10 s, the same at
// ~1,000 ranks, UCMP's disjoint-path searches between clusters, the batched flow solver and the
// batched fault sampler of the radiation Monte Carlo (CPU, and CUDA when a device is present).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

#include <skyfabric/workloads/faults.hpp>
#include <skyfabric/workloads/flow_solver.hpp>
#include <skyfabric/workloads/idle_helpers.hpp>
#include <skyfabric/workloads/spread_solver.hpp>
#include <skyfabric/workloads/network.hpp>
#include <skyfabric/workloads/training.hpp>

namespace sw = skyfabric::workloads;
using skyfabric::links::Link;
using skyfabric::links::Topology;

namespace {

std::uint64_t mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

// Lattice nodes (i, j) with i² + j² ≤ r² on a 100 m × 200 m grid (r = 5 → 81 nodes),
// linked to their 8 grid neighbours. Every epoch: capacities breathe ±10 % with the
// orbit's two shape cycles and two pseudo-random links are down (re-acquiring).
struct Lattice {
    std::vector<std::pair<int, int>> cells;
    std::vector<std::pair<int, int>> pairs;
    explicit Lattice(int radius) {
        for (int i = -radius; i <= radius; ++i)
            for (int j = -radius; j <= radius; ++j)
                if (i * i + j * j <= radius * radius) cells.emplace_back(i, j);
        for (std::size_t a = 0; a < cells.size(); ++a)
            for (std::size_t b = a + 1; b < cells.size(); ++b) {
                const int di = std::abs(cells[a].first - cells[b].first);
                const int dj = std::abs(cells[a].second - cells[b].second);
                if (di <= 1 && dj <= 1) pairs.emplace_back(static_cast<int>(a), static_cast<int>(b));
            }
    }
    Topology at(std::int64_t epoch, double step_s) const {
        Topology t;
        t.time_s = static_cast<double>(epoch) * step_s;
        t.node_count = static_cast<std::int32_t>(cells.size());
        const double phase = 2.0 * 2.0 * M_PI * t.time_s / 5860.0;  // two shape cycles per orbit
        const auto down1 = mix(static_cast<std::uint64_t>(epoch) * 2 + 1) % pairs.size();
        const auto down2 = mix(static_cast<std::uint64_t>(epoch) * 2 + 2) % pairs.size();
        t.links.reserve(pairs.size());
        for (std::size_t k = 0; k < pairs.size(); ++k) {
            const auto [a, b] = pairs[k];
            const double dx = 100.0 * (cells[a].first - cells[b].first);
            const double dy = 200.0 * (cells[a].second - cells[b].second);
            Link l;
            l.source = a;
            l.target = b;
            l.distance_m = std::hypot(dx, dy) * (1.0 + 0.2 * std::sin(phase + 0.1 * a));
            l.latency_s = l.distance_m / 299792458.0;
            l.capacity_bps = (k == down1 || k == down2) ? 0.0 : 9.6e12 * (1.0 + 0.1 * std::cos(phase + 0.07 * b));
            t.links.push_back(l);
        }
        return t;
    }
};

void run_day(benchmark::State& state, int radius, double duration_s) {
    const Lattice lattice(radius);
    const double step_s = 10.0;
    sw::TrainingJob job;
    job.parameters = 7e9;
    job.tokens_per_step = 4e6;
    job.data_parallel = static_cast<std::int32_t>(lattice.cells.size());
    sw::TrainingOptions options;
    options.end_s = duration_s;  // collectives recorded (TrainingContext's default)
    sw::TrainingSummary summary;
    for (auto _ : state) {
        std::int64_t epoch = 0;
        sw::TopologySource source = [&](Topology& next) {
            if (static_cast<double>(epoch) * step_s > duration_s) return false;
            next = lattice.at(epoch++, step_s);
            return true;
        };
        const auto result = sw::simulate_training(job, sw::tpu_v6e(), source, options);
        summary = result.summary;
        benchmark::DoNotOptimize(result.steps.data());
    }
    state.counters["ranks"] = job.data_parallel;
    state.counters["steps"] = static_cast<double>(summary.steps);
    state.counters["epochs"] = static_cast<double>(summary.topology_epochs);
    state.counters["flow_events"] = static_cast<double>(summary.flow_events);
    state.counters["flow_events_per_s"] =
        benchmark::Counter(static_cast<double>(summary.flow_events), benchmark::Counter::kIsIterationInvariantRate);
    state.counters["rate_solves"] = static_cast<double>(summary.rate_solves);
    state.counters["step_median_s"] = summary.step_time_median_s;
    state.counters["mfu"] = summary.mfu;
    state.counters["busbw_over_bound"] = summary.bus_bw_mean_Bps / summary.bus_bw_bound_Bps;
    state.counters["time_lost_s"] = summary.time_lost_s;
}

void BM_Suncatcher81_OneDay(benchmark::State& state) { run_day(state, 5, 86400.0); }
BENCHMARK(BM_Suncatcher81_OneDay)->Unit(benchmark::kSecond)->Iterations(1);

// r = 18 → 1,009 ranks; one simulated hour (the per-day cost scales by 24).
void BM_Lattice1000_OneHour(benchmark::State& state) { run_day(state, 18, 3600.0); }
BENCHMARK(BM_Lattice1000_OneHour)->Unit(benchmark::kSecond)->Iterations(1);

// UCMP's searches between clusters: four copies of the 81-node lattice 100 km apart along track,
// each with four rim satellites that carry one gateway link to each other cluster (as
// constellation-4x81's spread gateways), and every node asking for 4 edge-disjoint paths to the
// same node of the next cluster (hierarchical's shards). Arg 0: plain Dijkstra; 1: guided by the
// clusters' gateways (SearchGuide), the same paths.
void disjoint_routes_between_clusters(benchmark::State& state) {
    const Lattice lattice(5);
    const auto n = static_cast<std::int32_t>(lattice.cells.size());
    const Topology one = lattice.at(0, 10.0);
    Topology t;
    t.node_count = 4 * n;
    std::vector<std::int32_t> cluster_of;
    for (std::int32_t c = 0; c < 4; ++c) {
        for (Link l : one.links) {
            l.source += c * n;
            l.target += c * n;
            t.links.push_back(l);
        }
        cluster_of.insert(cluster_of.end(), static_cast<std::size_t>(n), c);
    }
    // The rim: the cells farthest along each axis, both ways.
    std::int32_t rim[4] = {0, 0, 0, 0};
    for (std::int32_t v = 0; v < n; ++v) {
        const auto [i, j] = lattice.cells[static_cast<std::size_t>(v)];
        if (i < lattice.cells[static_cast<std::size_t>(rim[0])].first) rim[0] = v;
        if (i > lattice.cells[static_cast<std::size_t>(rim[1])].first) rim[1] = v;
        if (j < lattice.cells[static_cast<std::size_t>(rim[2])].second) rim[2] = v;
        if (j > lattice.cells[static_cast<std::size_t>(rim[3])].second) rim[3] = v;
    }
    for (std::int32_t a = 0; a < 4; ++a)
        for (std::int32_t b = a + 1; b < 4; ++b)
            for (std::int32_t g = 0; g < 4; ++g) {
                Link l;
                l.source = a * n + rim[(g + a) % 4];
                l.target = b * n + rim[(g + b) % 4];
                l.distance_m = 100e3 * (b - a);
                l.latency_s = l.distance_m / 299792458.0;
                l.capacity_bps = 4.8e12;
                t.links.push_back(l);
            }
    std::sort(t.links.begin(), t.links.end(), [](const Link& x, const Link& y) {
        return std::pair(x.source, x.target) < std::pair(y.source, y.target);
    });
    const auto net = sw::build_network(t);
    const auto guide = sw::build_search_guide(net, cluster_of);
    if (!guide) {
        state.SkipWithError("no guide for the benchmark's fabric");
        return;
    }
    const sw::SearchGuide* used = state.range(0) ? &*guide : nullptr;
    for (auto _ : state)
        for (std::int32_t c = 0; c < 4; ++c)
            for (std::int32_t v = 0; v < n; ++v)
                benchmark::DoNotOptimize(sw::route_disjoint(net, c * n + v, (c + 1) % 4 * n + v,
                                                            sw::RoutingPolicy::shortest_latency, 4, used));
    state.counters["pairs_per_s"] = benchmark::Counter(4.0 * n, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(disjoint_routes_between_clusters)->Name("BM_DisjointRoutesBetweenClusters")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// Batched drains: independent problems shaped like one ring step on 81 ranks with
// random capacities (Monte Carlo trials).
std::vector<sw::FlowProblem> trials(int count) {
    std::vector<sw::FlowProblem> out(count);
    for (int t = 0; t < count; ++t) {
        auto& p = out[t];
        const int ranks = 81;
        for (int l = 0; l < 2 * ranks; ++l)
            p.capacity_Bps.push_back(1.2e12 * (0.5 + static_cast<double>(mix(t * 1000 + l) % 1000) / 1000.0));
        for (int r = 0; r < ranks; ++r) {
            const std::int32_t hop[2] = {r, (r + 1) % ranks + ranks};  // two-hop paths share links
            p.add_flow(hop, 1.7e8, 2e-6);
        }
    }
    return out;
}

void drain_batch(benchmark::State& state, sw::Backend backend) {
    if (backend == sw::Backend::cuda && sw::cuda_device_count() == 0) {
        state.SkipWithError(("no CUDA device: " + sw::cuda_unavailable_reason()).c_str());
        return;
    }
    const auto problems = trials(static_cast<int>(state.range(0)));
    const auto solver = sw::make_flow_solver(backend);
    for (auto _ : state) benchmark::DoNotOptimize(solver->drain_batch(problems));
    state.counters["trials_per_s"] =
        benchmark::Counter(static_cast<double>(state.range(0)), benchmark::Counter::kIsIterationInvariantRate);
}
void BM_DrainBatch_Cpu(benchmark::State& state) { drain_batch(state, sw::Backend::cpu); }
void BM_DrainBatch_Cuda(benchmark::State& state) { drain_batch(state, sw::Backend::cuda); }
BENCHMARK(BM_DrainBatch_Cpu)->Arg(64)->Arg(256)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DrainBatch_Cuda)->Arg(64)->Arg(256)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

// One large problem: pairwise all-to-all step k = p/2 + 1 (rank i sends to i + k) over p ranks of
// clusters of 81 (9 × 9 tori, 400 Gbps links of 1–2 µs), the clusters on a ring, each joined to the
// next by 4 gateway links of 100 Gbps (50–150 µs): p = 5,184 is the 64-cluster constellation's size.
// Paths are the shortest-latency routes, so a step's flows cross up to half the ring and share its
// gateway links: a solve of tens of rounds over ~10^5 link crossings.
const sw::FlowProblem& cluster_ring_phase(std::int32_t ranks) {
    static std::map<std::int32_t, sw::FlowProblem> made;
    if (auto it = made.find(ranks); it != made.end()) return it->second;
    const std::int32_t side = 9, per = side * side, clusters = ranks / per;
    Topology t;
    t.node_count = clusters * per;
    const auto link = [&](int a, int b, double gbps, double latency_s) {
        Link l;
        l.source = std::min(a, b);
        l.target = std::max(a, b);
        l.capacity_bps = gbps * 1e9;
        l.latency_s = latency_s;
        t.links.push_back(l);
    };
    for (int c = 0; c < clusters; ++c)
        for (int r = 0; r < side; ++r)
            for (int q = 0; q < side; ++q) {
                const int v = c * per + r * side + q;
                const double jitter = 1e-6 * (1.0 + static_cast<double>(mix(static_cast<std::uint64_t>(v)) % 1000) / 1000.0);
                link(v, c * per + r * side + (q + 1) % side, 400.0, jitter);
                link(v, c * per + ((r + 1) % side) * side + q, 400.0, jitter * 1.1);
            }
    for (int c = 0; c < clusters; ++c)
        for (int g = 0; g < 4; ++g) {
            const int a = c * per + g * 20, b = ((c + 1) % clusters) * per + g * 20 + 10;
            link(a, b, 100.0, 1e-4 * (0.5 + static_cast<double>(mix(static_cast<std::uint64_t>(c * 4 + g)) % 1000) / 1000.0));
        }
    const auto net = sw::build_network(t);
    sw::FlowProblem& p = made[ranks];
    p.capacity_Bps = net.capacity_Bps;
    const std::int32_t p_ranks = clusters * per, k = p_ranks / 2 + 1;
    for (std::int32_t i = 0; i < p_ranks; ++i) {
        const auto path = sw::route(net, i, (i + k) % p_ranks, sw::RoutingPolicy::shortest_latency);
        if (path) p.add_flow(path->edges, 1e9 / p_ranks, path->latency_s);
    }
    return p;
}

// Arg 0: ranks; arg 1: threads (0: the one-thread solver, as the engine drains a phase alone;
// N: SpreadMaxMin on N threads).
void BM_OnePhase_Cpu(benchmark::State& state) {
    const auto& p = cluster_ring_phase(static_cast<std::int32_t>(state.range(0)));
    const auto threads = static_cast<std::int32_t>(state.range(1));
    state.counters["flows"] = p.flow_count();
    state.counters["crossings"] = static_cast<double>(p.flow_links.size());
    if (threads == 0) {
        const auto solver = sw::make_flow_solver(sw::Backend::cpu);
        for (auto _ : state) benchmark::DoNotOptimize(solver->drain(p));
        return;
    }
    sw::IdleHelpers helpers;
    const sw::HelperThreads pool(helpers, threads);
    sw::SpreadMaxMin spread;
    std::vector<double> finish(static_cast<std::size_t>(p.flow_count()));
    for (auto _ : state) benchmark::DoNotOptimize(spread.drain(p, finish.data(), helpers, nullptr));
}
void BM_OnePhase_Cuda(benchmark::State& state) {
    if (sw::cuda_device_count() == 0) {
        state.SkipWithError(("no CUDA device: " + sw::cuda_unavailable_reason()).c_str());
        return;
    }
    const auto& p = cluster_ring_phase(static_cast<std::int32_t>(state.range(0)));
    for (auto _ : state) benchmark::DoNotOptimize(sw::device_spread_drain(p));
}
// Where spreading starts to pay (spread_min_flows): the sizes on 1 and 2 threads; and the
// 5,184-rank phase on up to 16 (bench/gpu.sh's "one" section).
BENCHMARK(BM_OnePhase_Cpu)
    ->ArgsProduct({{648, 1296, 2592, 5184}, {0, 1, 2}})
    ->ArgsProduct({{5184}, {4, 8, 16}})
    ->ArgNames({"ranks", "threads"})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_OnePhase_Cuda)->Arg(5184)->ArgName("ranks")->Unit(benchmark::kMillisecond);

// Fault events of range(0) Monte Carlo trials for 81 satellites over one day (10 s dose-rate
// samples with an SAA-like pass every orbit, 4 chips per satellite, link outages on), drawn
// in one batch: what monte_carlo_goodput hands the backend.
void fault_batch(benchmark::State& state, sw::Backend backend) {
    if (backend == sw::Backend::cuda && sw::cuda_device_count() == 0) {
        state.SkipWithError(("no CUDA device: " + sw::cuda_unavailable_reason()).c_str());
        return;
    }
    sw::DoseRateSeries series;
    series.step_s = 10.0;
    series.satellite_count = 81;
    series.sample_count = 8641;
    for (std::int64_t j = 0; j < series.sample_count; ++j)
        for (int s = 0; s < series.satellite_count; ++s) {
            const double phase = std::fmod(static_cast<double>(j) * 10.0 + 7.0 * s, 5880.0) / 5880.0;
            series.dose_rate_rad_s.push_back(2e-6 + (phase < 0.05 ? 1e-4 : 0.0));
        }
    sw::FaultModel model;
    model.chips_per_satellite = 4;
    model.link_outage_rate_per_s = 1e-5;
    const auto trials = static_cast<std::int32_t>(state.range(0));
    std::size_t events = 0;
    for (auto _ : state) {
        const auto drawn = sw::sample_fault_events_batch(series, model, 86400.0, 42, 0, trials, backend);
        events = 0;
        for (const auto& t : drawn) events += t.size();
        benchmark::DoNotOptimize(events);
    }
    state.counters["events_per_trial"] = static_cast<double>(events) / static_cast<double>(trials);
    state.counters["trials_per_s"] =
        benchmark::Counter(static_cast<double>(trials), benchmark::Counter::kIsIterationInvariantRate);
}
void BM_FaultBatch_Cpu(benchmark::State& state) { fault_batch(state, sw::Backend::cpu); }
void BM_FaultBatch_Cuda(benchmark::State& state) { fault_batch(state, sw::Backend::cuda); }
BENCHMARK(BM_FaultBatch_Cpu)->Arg(256)->Arg(4096)->Arg(65536)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FaultBatch_Cuda)->Arg(256)->Arg(4096)->Arg(65536)->Unit(benchmark::kMillisecond);

}  // namespace
