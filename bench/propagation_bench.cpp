// Formation propagation benchmarks (issue 2): the 81-satellite Suncatcher cluster (650 km dawn-dusk
// SSO, lattice R = 1 km, 100 m x 200 m), nonlinear two-body + J2, default tolerances, sampled every
// 10 s into memory (a FormationSnapshot reused at every sample; no file I/O). Counter
// `sat_steps_per_s`: satellites x output samples per second of wall time.
//
//   BM_Suncatcher81_Day            81 satellites, one day (8,641 samples).
//   BM_Suncatcher81_Day_Every/S    the same day sampled every S s (what the 10 s output costs).
//   BM_Suncatcher81_Day_Rtol/E     the same day at rtol = 1e-E, atol = 1e3 rtol m (default: E = 10).
//   BM_ScaledLattice_Orbit/R       the same lattice at radius R (N ~ R^2): R = 3580 m -> 1,005,
//                                  R = 11285 m -> 10,005 satellites; one orbit (5,862 s, 587 samples).
//                                  One FormationPropagator, threads automatic: blocks of 128 satellites
//                                  on a pool of std::thread::hardware_concurrency() threads from 512
//                                  satellites up.
//   BM_ScaledLattice_Orbit_1T/R    the same propagator with PropagationSettings::threads = 1.
//
// Mode besides the Google Benchmark command line (used by bench/scipy_propagation.py):
//   propagation_bench --export-initial-states     CSV of the chief (index -1) and the 81 satellites'
//                                                  initial ECI states (t = 0), full precision.
#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/formation.hpp>
#include <skyfabric/physics/orbit.hpp>
#include <skyfabric/physics/propagation.hpp>
#include <skyfabric/physics/time.hpp>

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace sp = skyfabric::physics;

constexpr double altitude_m = 650e3;
constexpr double output_step_s = 10.0;

struct Setup {
    sp::KeplerianElements mean;  // the chief's mean elements
    sp::CartesianState chief;    // its osculating state
    double mean_motion = 0.0;
    double period_s = 0.0;       // nodal period
};

// As scenarios/suncatcher-81.yaml builds it (src/scenario/scenario.cpp initial_chief_state and
// initial_formation): mean elements, circular, sun-synchronous inclination, RAAN for LTAN 06:00 at
// 2027-03-20T00:00Z, argument of latitude 0, mapped to osculating; J2-bounded relative orbits.
Setup suncatcher_orbit() {
    sp::KeplerianElements e;
    e.semi_major_axis_m = sp::earth_equatorial_radius_m + altitude_m;
    e.eccentricity = 0.0;
    e.inclination_rad = sp::sun_synchronous_inclination_rad(e.semi_major_axis_m, 0.0);
    e.raan_rad = sp::raan_for_ltan_rad(6.0, sp::julian_date(sp::UtcEpoch{}));
    Setup s;
    s.mean = e;
    s.chief = sp::keplerian_to_cartesian(sp::mean_to_osculating(e, sp::earth_j2), sp::earth_mu_m3_s2);
    s.mean_motion = sp::mean_motion_rad_s(e.semi_major_axis_m, sp::earth_mu_m3_s2);
    s.period_s = sp::nodal_period_s(e.semi_major_axis_m, 0.0, e.inclination_rad, sp::earth_j2);
    return s;
}

std::vector<sp::RelativeState> lattice(const Setup& s, double radius_m) {
    return sp::j2_mean_element_formation(s.mean, sp::suncatcher_lattice(radius_m, 100.0, 200.0, s.mean_motion), sp::earth_j2)
        .satellites_lvlh;
}

// Propagate `groups` (each its own FormationPropagator) from 0 to span_s, every step_s; returns samples.
std::size_t propagate(const Setup& s, const std::vector<std::vector<sp::RelativeState>>& groups, double span_s,
                      const sp::PropagationSettings& settings = {},  // nonlinear, J2, default tolerances
                      double step_s = output_step_s) {
    const auto samples = static_cast<std::size_t>(std::floor(span_s / step_s + 1e-9)) + 1;
    sp::FormationSnapshot snap;
    for (const auto& g : groups) {
        sp::FormationPropagator prop(s.chief, g, settings);
        for (std::size_t k = 0; k < samples; ++k) {
            prop.advance_to(step_s * static_cast<double>(k), snap);
            benchmark::DoNotOptimize(snap.satellites_eci.data());
        }
        benchmark::ClobberMemory();
    }
    return samples;
}

void report(benchmark::State& state, std::size_t satellites, std::size_t samples, double span_s) {
    const double sat_steps = static_cast<double>(satellites * samples);
    state.counters["satellites"] = static_cast<double>(satellites);
    state.counters["samples"] = static_cast<double>(samples);
    state.counters["span_s"] = span_s;
    state.counters["sat_steps_per_s"] =
        benchmark::Counter(sat_steps * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_Suncatcher81_Day(benchmark::State& state) {
    const Setup s = suncatcher_orbit();
    const std::vector<std::vector<sp::RelativeState>> groups{lattice(s, 1000.0)};
    std::size_t samples = 0;
    for (auto _ : state) samples = propagate(s, groups, sp::seconds_per_day);
    report(state, groups.front().size(), samples, sp::seconds_per_day);
}

// What the 10 s output costs: the same day sampled every range(0) seconds (the integrator's steps are
// ~105 s at the default tolerances, so from 120 s up almost every sample needs its own step's output).
void BM_Suncatcher81_Day_Every(benchmark::State& state) {
    const Setup s = suncatcher_orbit();
    const std::vector<std::vector<sp::RelativeState>> groups{lattice(s, 1000.0)};
    const auto step = static_cast<double>(state.range(0));
    std::size_t samples = 0;
    for (auto _ : state) samples = propagate(s, groups, sp::seconds_per_day, {}, step);
    report(state, groups.front().size(), samples, sp::seconds_per_day);
}

// Looser tolerances than the default (rtol 1e-10, atol 1e-7 m): rtol = 10^-range(0), atol = 1000 rtol
// (metres of offset).
void BM_Suncatcher81_Day_Rtol(benchmark::State& state) {
    const Setup s = suncatcher_orbit();
    const std::vector<std::vector<sp::RelativeState>> groups{lattice(s, 1000.0)};
    sp::PropagationSettings settings;
    settings.relative_tolerance = std::pow(10.0, -static_cast<double>(state.range(0)));
    settings.absolute_tolerance = 1e3 * settings.relative_tolerance;
    std::size_t samples = 0;
    for (auto _ : state) samples = propagate(s, groups, sp::seconds_per_day, settings);
    report(state, groups.front().size(), samples, sp::seconds_per_day);
}

// What one 10 s output sample costs alone: the day's samples, each asked for twice (the second call
// only re-interpolates and re-fills the snapshot), minus BM_Suncatcher81_Day.
void BM_Suncatcher81_Day_OutputTwice(benchmark::State& state) {
    const Setup s = suncatcher_orbit();
    const std::vector<sp::RelativeState> g = lattice(s, 1000.0);
    const auto samples = static_cast<std::size_t>(std::floor(sp::seconds_per_day / output_step_s + 1e-9)) + 1;
    sp::FormationSnapshot snap;
    for (auto _ : state) {
        sp::FormationPropagator prop(s.chief, g, {});
        for (std::size_t k = 0; k < samples; ++k) {
            prop.advance_to(output_step_s * static_cast<double>(k), snap);
            prop.advance_to(output_step_s * static_cast<double>(k), snap);
            benchmark::DoNotOptimize(snap.satellites_eci.data());
        }
        benchmark::ClobberMemory();
    }
    report(state, g.size(), samples, sp::seconds_per_day);
}

void scaled(benchmark::State& state, unsigned threads) {
    const Setup s = suncatcher_orbit();
    const std::vector<std::vector<sp::RelativeState>> groups{lattice(s, static_cast<double>(state.range(0)))};
    sp::PropagationSettings settings;
    settings.threads = threads;
    std::size_t samples = 0;
    for (auto _ : state) samples = propagate(s, groups, s.period_s, settings);
    report(state, groups.front().size(), samples, s.period_s);
}

void BM_ScaledLattice_Orbit(benchmark::State& state) { scaled(state, 0); }
void BM_ScaledLattice_Orbit_1T(benchmark::State& state) { scaled(state, 1); }

}  // namespace

// Wall time throughout (UseRealTime): the threaded propagator's work is on its worker threads.
BENCHMARK(BM_Suncatcher81_Day)->Unit(benchmark::kMillisecond)->MinTime(1.0)->UseRealTime();
BENCHMARK(BM_Suncatcher81_Day_Every)->Arg(60)->Arg(120)->Arg(600)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Suncatcher81_Day_OutputTwice)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Suncatcher81_Day_Rtol)->Arg(9)->Arg(8)->Unit(benchmark::kMillisecond)->UseRealTime();
// R = 1000 m: 81, 3580 m: 1,005, 11285 m: 10,005 satellites.
BENCHMARK(BM_ScaledLattice_Orbit)->Arg(1000)->Arg(3580)->Arg(11285)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ScaledLattice_Orbit_1T)->Arg(1000)->Arg(3580)->Arg(11285)->Unit(benchmark::kMillisecond)->UseRealTime();

namespace {

int export_initial_states() {
    const Setup s = suncatcher_orbit();
    const auto sats = lattice(s, 1000.0);
    // The satellites' ECI states exactly as the propagator starts them (chief + rotated LVLH offset),
    // read back from the snapshot at t = 0.
    sp::FormationPropagator prop(s.chief, sats, sp::PropagationSettings{});
    sp::FormationSnapshot snap;
    prop.advance_to(0.0, snap);
    std::printf("index,x_m,y_m,z_m,vx_m_s,vy_m_s,vz_m_s\n");
    auto row = [](long i, const sp::CartesianState& c) {
        std::printf("%ld,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", i, c.position_m.x(), c.position_m.y(),
                    c.position_m.z(), c.velocity_m_s.x(), c.velocity_m_s.y(), c.velocity_m_s.z());
    };
    row(-1, s.chief);  // -1: the chief
    for (std::size_t i = 0; i < snap.satellites_eci.size(); ++i) row(static_cast<long>(i), snap.satellites_eci[i]);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 2 && std::strcmp(argv[1], "--export-initial-states") == 0) return export_initial_states();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
