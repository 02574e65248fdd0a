// Ring all-reduce on a synthetic ring fabric (ring:p=P,bw_gbps=400,latency_ns=500) at
// 64 … 4,096 ranks: wall time of one simulated collective, as `skyfabric collective
// --topology ring:…` runs it (fabric_collective_table: equal phases solved once), and
// with every one of the 2(p−1) phases solved by the flow solver (no phase reuse).

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include <skyfabric/workloads/collective_engine.hpp>
#include <skyfabric/workloads/synthetic_fabric.hpp>

namespace sw = skyfabric::workloads;

namespace {

sw::Fabric ring(std::int64_t p) {
    return sw::make_fabric(sw::parse_fabric_spec("ring:p=" + std::to_string(p) + ",bw_gbps=400,latency_ns=500"));
}

constexpr double message_bytes = 1 << 30;  // 1 GiB

// The CLI path: one table row.
void BM_RingAllReduce_Table(benchmark::State& state) {
    const auto fabric = ring(state.range(0));
    const double sizes[] = {message_bytes};
    double t = 0.0;
    for (auto _ : state) {
        const auto rows = sw::fabric_collective_table(fabric, sw::CollectiveOp::all_reduce, sw::Algorithm::ring, sizes);
        benchmark::DoNotOptimize(rows.data());
        t = rows.front().time_s;
    }
    state.counters["ranks"] = static_cast<double>(state.range(0));
    state.counters["simulated_s"] = t;
}

// Every phase through the max-min solver (2(p−1) solves of p flows): the explicit schedule,
// which lists every phase (build_schedule's compact form repeats one phase entry).
void BM_RingAllReduce_EveryPhase(benchmark::State& state) {
    const auto fabric = ring(state.range(0));
    const auto schedule = sw::build_explicit_schedule(sw::CollectiveOp::all_reduce, sw::Algorithm::ring,
                                             fabric.ranks, message_bytes);
    double t = 0.0;
    std::int64_t flows = 0;
    for (auto _ : state) {
        const std::vector<skyfabric::links::Topology> series{fabric.topology};
        sw::NetworkClock clock(sw::topology_source(series));
        sw::CollectiveEngine engine(clock, {});
        const auto r = engine.run(schedule, fabric.placement, 0.0, -1);
        benchmark::DoNotOptimize(&r);
        t = r.duration_s();
        flows += schedule.transfer_count();
    }
    state.counters["ranks"] = static_cast<double>(state.range(0));
    state.counters["simulated_s"] = t;
    state.counters["flows_per_s"] = benchmark::Counter(static_cast<double>(flows), benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(BM_RingAllReduce_Table)->RangeMultiplier(4)->Range(64, 4096)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RingAllReduce_EveryPhase)->RangeMultiplier(4)->Range(64, 4096)->Unit(benchmark::kMillisecond);
