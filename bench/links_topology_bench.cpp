// Topology + link budgets per time step for N random satellites in a planar-ish cloud at
// constant density (N ∝ R²). Target: < 50 ms per step at N = 10,000 on one core, growing
// as N log N (k-d tree candidates + sort), not N².
#include <skyfabric/links/metrics.hpp>
#include <skyfabric/links/topology_policy.hpp>

#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

namespace {

using namespace skyfabric::links;

std::vector<Eigen::Vector3d> cloud(int n, std::uint32_t seed) {
    const double spacing_m = 150.0;  // one satellite per (150 m)²
    const double radius_m = spacing_m * std::sqrt(n / 3.14159265358979);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<Eigen::Vector3d> p;
    p.reserve(static_cast<std::size_t>(n));
    while (static_cast<int>(p.size()) < n) {
        Eigen::Vector3d x(u(rng), u(rng), 0.05 * u(rng));
        if (x.head<2>().norm() <= 1.0) p.push_back(radius_m * x);
    }
    return p;
}

void run(benchmark::State& state, TopologyPolicy policy) {
    const int n = static_cast<int>(state.range(0));
    auto pos = cloud(n, 42u);
    TopologyParameters params;  // defaults: 8 terminals, paper optics
    params.policy = policy;
    TopologyBuilder builder(params);
    std::vector<LinkEvent> events;
    std::mt19937 rng(1);
    std::normal_distribution<double> drift(0.0, 2.0);
    double t = 0.0;
    std::size_t links = 0;
    builder.update(t, pos, events);  // first step (and budget table) outside the timing
    for (auto _ : state) {
        state.PauseTiming();
        for (auto& x : pos) x += Eigen::Vector3d(drift(rng), drift(rng), 0.0);
        events.clear();
        t += 10.0;
        state.ResumeTiming();
        const Topology topo = builder.update(t, pos, events);
        links = topo.links.size();
        benchmark::DoNotOptimize(topo.links.data());
    }
    state.SetComplexityN(n);
    state.counters["links"] = static_cast<double>(links);
}

void BM_TopologyNearestK(benchmark::State& state) { run(state, TopologyPolicy::nearest_k); }
void BM_TopologyMaxCapacity(benchmark::State& state) { run(state, TopologyPolicy::max_capacity); }

void BM_TopologyMetrics(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    const auto pos = cloud(n, 42u);
    const Topology topo = build_topology(pos, TopologyParameters{});
    for (auto _ : state) benchmark::DoNotOptimize(summarize(topo, pos));
    state.SetComplexityN(n);
}

}  // namespace

BENCHMARK(BM_TopologyNearestK)->Arg(1000)->Arg(3000)->Arg(10000)->Arg(30000)->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oNLogN);
BENCHMARK(BM_TopologyMaxCapacity)->Arg(1000)->Arg(3000)->Arg(10000)->Arg(30000)->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oNLogN);
BENCHMARK(BM_TopologyMetrics)->Arg(1000)->Arg(3000)->Arg(10000)->Arg(30000)->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oNLogN);
