// Serving from the ground end to end (docs/inference.md "Serving from the ground"): the contact time a
// run finds for a station agrees with the closed form, and the ground segment's summary and per-request
// journeys in result.h5 agree with each other and with the serving run's rows.
#include "cli_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace skyfabric_test;

namespace {

// The closed form of a circular two-body polar orbit at 650 km over a station at the North Pole with a
// 10° mask (the geometry the first test below derives): mean motion, period, ψ_max, the rises.
struct PolarPass {
    double mu = 3.986004418e14, a = 6378137.0 + 650e3, b = 6378137.0 * (1.0 - 1.0 / 298.257223563), c = 299792458.0;
    double n = std::sqrt(mu / (a * a * a)), period = 2.0 * M_PI / n;
    double eps = 10.0 * M_PI / 180.0, psi = std::acos(b * std::cos(eps) / a) - eps;
    double t_pole = 0.5 * M_PI / n, rise0 = t_pole - psi / n, rise1 = t_pole + period - psi / n;
    // The light time over the range at t, the central angle from the pole |n (t − t_pole)| (mod a revolution).
    double light(double t) const {
        const double angle = std::remainder(n * (t - t_pole), 2.0 * M_PI);
        return std::sqrt(a * a + b * b - 2.0 * a * b * std::cos(angle)) / c;
    }
    // A link's range is held over 10 s segments from the rise, at the segment's middle.
    static double segment_mid(double rise, double t) { return rise + 10.0 * std::floor((t - rise) / 10.0) + 5.0; }
    // A scenario's lines up to its workload: this orbit, two satellites 200 m apart, an output step of
    // T/600 (to the last bit, so the runs' samples fall where the closed form's revolutions do).
    std::string scenario_head(const std::string& name, int orbits) const {
        char step[64];
        std::snprintf(step, sizeof step, "%.17g", period / 600.0);
        return "name: " + name + "\nduration_orbits: " + std::to_string(orbits) + "\noutput_step_s: " + step + R"(
orbit: { altitude_km: 650, inclination_deg: 90 }
formation:
  layout: explicit
  satellites: [{position_m: [0, 100, 0]}, {position_m: [0, -100, 0]}]
dynamics: { model: nonlinear, j2: false }
links: {}
)";
    }
};

}  // namespace

// A circular polar orbit (two-body: no J2, so its plane stays put) over a station at the North Pole,
// which every revolution passes over and the Earth's rotation does not move. The satellite is above ε
// while its central angle from the pole is under ψ_max = acos(b cos ε / r) − ε (b: the WGS-84 polar
// radius, where the ellipsoid's normal is radial), swept at the mean motion n: each pass lasts
// 2 ψ_max / n = 554.93 s at 650 km (r = 7,028.137 km) and ε = 10°, and over 14 whole revolutions the
// contact is 14 of them, 7,768.96 s, whatever the phase. The run propagates the orbit, keeps its chief
// every output step (T/600) and finds the passes; their total must agree within 1 s.
TEST(CliGround, PolarOrbitOverThePoleStationContactIsTheClosedFormThroughTheRun) {
    const auto dir = fresh_dir("ground_polar");
    const PolarPass pass;
    const double n = pass.n, psi = pass.psi;
    const double expected = 14.0 * 2.0 * psi / n;
    EXPECT_NEAR(2.0 * psi / n, 554.93, 0.01);
    std::ofstream(dir / "polar.yaml") << pass.scenario_head("polar-pass", 14) << R"(workload:
  kind: inference
  inference:
    model: { parameters: 8.0e9, layers: 32, kv_heads: 8, head_dim: 128, attention: dense }
    arrivals: { rate_per_s: 0.01 }
    engines:
      prefill: { instances: 1, satellites_per_instance: 1 }
      decode: { instances: 1, satellites_per_instance: 1 }
ground_stations:
  - { name: north-pole, latitude_deg: 90, longitude_deg: 0, min_elevation_deg: 10, kind: ka_band, rate_gbps: 1 }
output: { hdf5: false }
)";
    const auto r = run_command(skyfabric() + " run " + (dir / "polar.yaml").string() + " -o " + (dir / "out").string());
    ASSERT_EQ(r.status, 0) << r.output;
    std::ofstream(dir / "check.py") << "import json, sys\n"
                                       "g = json.load(open(sys.argv[1] + '/summary.json'))['inference']['routings']['local']['ground']\n"
                                       "s = g['stations'][0]\n"
                                       "print(s['passes'], repr(s['contact_s']))\n";
    const auto check = run_command("/usr/bin/python3 " + (dir / "check.py").string() + " " + (dir / "out").string());
    ASSERT_EQ(check.status, 0) << check.output;
    int passes = 0;
    double contact_s = 0.0;
    ASSERT_EQ(std::sscanf(check.output.c_str(), "%d %lf", &passes, &contact_s), 2) << check.output;
    EXPECT_TRUE(passes == 14 || passes == 15) << passes;  // 15 when the run starts or ends inside a pass
    EXPECT_NEAR(contact_s, expected, 1.0);
    fs::remove_all(dir);
}

// Six hours of serving-from-orbit: every request arrived on the ground is either in orbit or still
// waiting; the stations' counts and bytes add up to the serving run's rows (4 B a token); each journey is
// in time order and its ground TTFT is at least the wait for the link plus the TTFT in orbit. Its SLO
// attainments are a few per cent, and their 95 % intervals stay within [0, 1] (unclipped, both reached
// below 0: [-1.35, 1.43] in orbit over two spans, [-0.019, 0.060] on the ground).
TEST(CliGround, ServingFromOrbitSummaryAndJourneysAgreeWithTheServingRows) {
    const auto dir = fresh_dir("ground_serving");
    const auto r = run_command(skyfabric() + " run " + source("scenarios/serving-from-orbit.yaml") + " -o " +
                               (dir / "out").string() + " --set duration_s=21600");
    ASSERT_EQ(r.status, 0) << r.output;
    for (const char* line : {"ground: requests up / arrived", "ground: TTFT p50 / p90 / p99", "station esa-ogs-tenerife",
                             "station octl-table-mountain", "station oca-meo-calern"})
        EXPECT_NE(r.output.find(line), std::string::npos) << line << "\n" << r.output;
    std::ofstream(dir / "check.py") << R"(
import h5py, json, numpy as np, sys
out = sys.argv[1]
routing = json.load(open(out + '/summary.json'))['inference']['routings']['local']
g = routing['ground']
for block in (routing, g):
    low, high = block['slo_attainment_ci95']
    assert 0.0 <= low <= block['slo_attainment'] <= high <= 1.0, block['slo_attainment_ci95']
    assert block['slo_attainment'] < 0.1 and low == 0.0, block['slo_attainment']  # where clipping matters
assert g['requests'] == g['uplinked'] + g['waiting_on_ground'] and g['uplinked'] > 0, g
st = g['stations']
assert sum(s['requests_up'] for s in st) == g['uplinked']
f = h5py.File(out + '/result.h5', 'r')
req, j = f['inference/requests'], f['inference/ground_requests']
assert j['id'].shape[0] == g['uplinked'] == req['id'].shape[0]
assert abs(sum(s['bytes_up'] for s in st) - 4.0 * req['prompt_tokens'][:].sum()) < 1e-6 * sum(s['bytes_up'] for s in st)
assert np.array_equal(j['orbit_arrival_s'][:], req['arrival_s'][:])
arrival, start, orbit = j['ground_arrival_s'][:], j['uplink_start_s'][:], j['orbit_arrival_s'][:]
assert np.all(start >= arrival) and np.all(orbit > start)
down = np.isfinite(j['first_token_ground_s'][:])
assert down.sum() == g['first_token_down'] and down.sum() > 0
ttft_ground = j['ttft_ground_s'][:][down]
ttft_orbit = req['ttft_s'][:][down]
assert np.all(ttft_ground >= (start - arrival)[down] + ttft_orbit - 1e-9)
assert np.all(j['down_station'][:][down] >= 0)
v = np.sort(ttft_ground)
assert abs(v[int(np.ceil(0.5 * len(v))) - 1] - g['ttft_s']['p50']) < 1e-9
print('ok')
)";
    const auto check = run_command("/usr/bin/python3 " + (dir / "check.py").string() + " " + (dir / "out").string());
    EXPECT_EQ(check.status, 0) << check.output;
    EXPECT_NE(check.output.find("ok"), std::string::npos) << check.output;
    fs::remove_all(dir);
}

// `skyfabric season` on a scenario with ground stations adds each station's contact over the year, month by
// month, and the same times its cloud-free fraction (Tenerife: 0.686 of its contact).
TEST(CliGround, SeasonPrintsEachStationsContactOverTheYear) {
    const auto r = run_command(skyfabric() + " season " + source("scenarios/serving-from-orbit.yaml"));
    ASSERT_EQ(r.status, 0) << r.output;
    const auto at = r.output.find("esa-ogs-tenerife");
    ASSERT_NE(at, std::string::npos) << r.output;
    double contact[13], clear[13];
    const auto line_end = r.output.find('\n', at);
    std::istringstream first(r.output.substr(at, line_end - at)), second(r.output.substr(line_end + 1, r.output.find('\n', line_end + 1) - line_end - 1));
    std::string name, what;
    first >> name >> what;
    second >> what;
    for (int m = 0; m < 13; ++m) first >> contact[m], second >> clear[m];
    ASSERT_TRUE(first && second) << r.output;
    for (int m = 0; m < 13; ++m) {
        EXPECT_GT(contact[m], 5.0) << m;  // two or three passes a day of a few minutes
        EXPECT_NEAR(clear[m], 0.686 * contact[m], 0.09) << m;  // each printed to 0.1 min: 0.05 + 0.686 · 0.05
    }
    for (const char* station : {"octl-table-mountain", "oca-meo-calern"}) EXPECT_NE(r.output.find(station), std::string::npos) << station;
}

namespace {

// The polar orbit over the pole above, with a data centre at the pole station (Ka-band, 1 Gbit/s; no fibre
// length, no backhaul to the users there) holding one H200, the workload's chip a custom 0.04 TFLOP/s (MFU
// 0.4); the decode role on the data centre, the prefill in orbit (`--set`s turn them round). The requests:
// `trace` (ground arrivals).

void write_pole_datacentre(const fs::path& dir, const std::string& trace) {
    std::ofstream(dir / "requests.csv") << trace;
    std::ofstream(dir / "dc.yaml") << PolarPass{}.scenario_head("ground-dc", 2) << R"(workload:
  kind: inference
  accelerator: custom
  peak_tflops: 0.04
  inference:
    model: { parameters: 8.0e9, layers: 32, kv_heads: 8, head_dim: 128, attention: dense }
    arrivals: { trace: requests.csv }
    engines:
      prefill: { instances: 1 }
      decode: { instances: 1, site: pole-dc }
      mfu: 0.4
ground_stations:
  - { name: north-pole, latitude_deg: 90, longitude_deg: 0, min_elevation_deg: 10, kind: ka_band, rate_gbps: 1 }
ground_datacentres:
  - { name: pole-dc, latitude_deg: 90, longitude_deg: 0, accelerator: h200, accelerators: 1, station: north-pole, fibre_km: 0 }
output: { hdf5: true, eci: false, vtk: false }
)";
}

// Each ground request's times from the run: ground arrival, arrival in the serving run, prefill end, first
// token (serving), TTFT on the ground, last − first token on the ground; then the summary's KV wait.
struct DatacentreRun {
    std::vector<std::array<double, 6>> rows;
    double wait_max = 0.0;
    int crossing = 0, waited = 0;
    std::string prefill_accelerator, decode_accelerator;
};

DatacentreRun run_pole_datacentre(const fs::path& dir, const std::string& sets) {
    const auto r = run_command(skyfabric() + " run " + (dir / "dc.yaml").string() + " -o " + (dir / "out").string() + sets);
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("ground: KV waited for a contact    1 of 2"), std::string::npos) << r.output;
    std::ofstream(dir / "check.py") << R"(
import h5py, json, sys
s = json.load(open(sys.argv[1] + '/summary.json'))['inference']
g = s['routings']['local']['ground']
f = h5py.File(sys.argv[1] + '/result.h5', 'r')
req, j = f['inference/requests'], f['inference/ground_requests']
for k in list(j['ground_arrival_s'][:].argsort()):
    print(repr(j['ground_arrival_s'][k]), repr(j['orbit_arrival_s'][k]), repr(req['prefill_end_s'][k]), repr(req['first_token_s'][k]),
          repr(j['ttft_ground_s'][k]), repr(j['last_token_ground_s'][k] - j['first_token_ground_s'][k]))
print(repr(g['kv_contact_wait_max_s']), g['kv_caches_crossing'], g['kv_waited_for_contact'],
      s.get('prefill_accelerator', s['accelerator']), s.get('decode_accelerator', s['accelerator']))
)";
    const auto check = run_command("/usr/bin/python3 " + (dir / "check.py").string() + " " + (dir / "out").string());
    EXPECT_EQ(check.status, 0) << check.output;
    DatacentreRun run;
    std::istringstream rows(check.output);
    run.rows.resize(2);
    for (auto& row : run.rows)
        for (double& v : row) rows >> v;
    rows >> run.wait_max >> run.crossing >> run.waited >> run.prefill_accelerator >> run.decode_accelerator;
    EXPECT_TRUE(rows) << check.output;
    return run;
}

}  // namespace

// Prefill in orbit, decode on a ground data centre (docs/inference.md "Ground data centres"), by hand and by
// the closed form of the polar pass (PolarPass). The prefill runs on satellite 0 (also the cluster's ground
// terminal: the two satellites are equally near the chief, the first wins) at 2 · 8e9 FLOPs a token over
// 0.04e12 · 0.4 FLOP/s, 2.5 s a token; decode on the data centre's H200. Two requests of 2 output tokens arrive
// on the ground in the first pass:
//   B (10 tokens) at rise + 25 s: up in 40 B / 1 Gbit/s + the light time over the segment's range, prefilled in
//     10 s while the pass goes on, its 1,310,720 B of KV down at 1 Gbit/s (10.49 ms) plus the light time: no wait.
//   A (1,000 tokens) at t_p: its 2,500 s prefill outlasts the pass (277 s left), so its cache waits in orbit for
//     the next rise, t_p + T − ψ_max/n, then 131,072,000 B at 1 Gbit/s (1.048576 s) plus the light time.
// Each decode step on the H200 reads the weights and the KV of prompt + 1 tokens at 4.8 TB/s: the TPOT on the
// ground. Times agree within 10⁻⁴ s (the passes' rise is bisected to it; found: 10⁻⁵ s).
TEST(CliGround, PrefillInOrbitDecodeOnAGroundDatacentreIsTheHandCalculationWithTheWaitForTheNextPass) {
    const auto dir = fresh_dir("ground_datacentre");
    const PolarPass pass;
    const double t_b = pass.rise0 + 25.0, t_a = pass.t_pole;
    char times[128];
    std::snprintf(times, sizeof times, "arrival_s,prompt_tokens,output_tokens\n%.17g,10,2\n%.17g,1000,2\n", t_b, t_a);
    write_pole_datacentre(dir, times);
    const auto run = run_pole_datacentre(dir, "");
    const auto& got = run.rows;
    const double rate_Bps = 1e9 / 8.0, weights = 16e9, kv_per_token = 131072.0, h200_Bps = 4.8e12;
    // B: no wait.
    const double up_b = t_b + 40.0 / rate_Bps + pass.light(PolarPass::segment_mid(pass.rise0, t_b));
    const double prefill_b = up_b + 2.0 * 8e9 * 10.0 / (0.04e12 * 0.4);
    const double first_b = prefill_b + 10.0 * kv_per_token / rate_Bps + pass.light(PolarPass::segment_mid(pass.rise0, prefill_b));
    EXPECT_NEAR(got[0][0], t_b, 1e-9);
    EXPECT_NEAR(got[0][1], up_b, 1e-4);
    EXPECT_NEAR(got[0][2], prefill_b, 1e-4);
    EXPECT_NEAR(got[0][3], first_b, 1e-4);
    EXPECT_NEAR(got[0][4], first_b - t_b, 1e-4);
    EXPECT_NEAR(got[0][5], (weights + kv_per_token * 11.0) / h200_Bps, 1e-9);
    // A: its cache waits for the next pass.
    const double up_a = t_a + 4000.0 / rate_Bps + pass.light(PolarPass::segment_mid(pass.rise0, t_a));
    const double prefill_a = up_a + 2.0 * 8e9 * 1000.0 / (0.04e12 * 0.4);
    ASSERT_GT(prefill_a, pass.t_pole + pass.psi / pass.n);  // the pass has ended
    const double first_a = pass.rise1 + 1000.0 * kv_per_token / rate_Bps + pass.light(pass.rise1 + 5.0);
    EXPECT_NEAR(got[1][1], up_a, 1e-4);
    EXPECT_NEAR(got[1][2], prefill_a, 1e-4);
    EXPECT_NEAR(got[1][3], first_a, 1e-4);
    EXPECT_NEAR(got[1][4], first_a - t_a, 1e-4);
    EXPECT_NEAR(got[1][5], (weights + kv_per_token * 1001.0) / h200_Bps, 1e-9);
    EXPECT_NEAR(run.wait_max, pass.rise1 - prefill_a, 1e-4);
    EXPECT_EQ(run.crossing, 2);
    EXPECT_EQ(run.waited, 1);
    EXPECT_EQ(run.decode_accelerator, "h200");  // the data centre's chips, taken by the role placed there
    fs::remove_all(dir);
}

// The reverse: prefill on the ground data centre's H200 (2 · 8e9 FLOPs a token over 989e12 · 0.4 FLOP/s), decode
// in orbit on satellite 0 (the terminal) at the custom chip's compute bound, 2 · 8e9 / (0.04e12 · 0.4) = 1 s a
// step. The users reach the data centre over the backhaul (0 km here), so a request needs no pass to be
// prefilled; its cache goes up over the station's link, and its tokens come down through the station.
//   B (10 tokens) at rise + 25 s: prefilled at once, its cache up in 10.49 ms plus the light time; the first
//     token down at once (4 B) plus the light time; the last one (8 B) a step (1 s) later, in the same segment.
//   A (1,000 tokens) at t_p + 300 s, after the pass: its cache waits on the ground for the next rise.
TEST(CliGround, PrefillOnAGroundDatacentreDecodeInOrbitWaitsOnTheGroundForTheNextPass) {
    const auto dir = fresh_dir("ground_datacentre_reverse");
    const PolarPass pass;
    const double t_b = pass.rise0 + 25.0, t_a = pass.t_pole + 300.0;
    char times[128];
    std::snprintf(times, sizeof times, "arrival_s,prompt_tokens,output_tokens\n%.17g,10,2\n%.17g,1000,2\n", t_b, t_a);
    write_pole_datacentre(dir, times);
    const auto run = run_pole_datacentre(dir, " --set workload.inference.engines.prefill.site=pole-dc --set workload.inference.engines.decode.site=orbit");
    const auto& got = run.rows;
    const double rate_Bps = 1e9 / 8.0, kv_per_token = 131072.0, h200_flops = 989e12 * 0.4, step = 2.0 * 8e9 / (0.04e12 * 0.4);
    const double prefill_b = t_b + 2.0 * 8e9 * 10.0 / h200_flops;
    const double first_b = prefill_b + 10.0 * kv_per_token / rate_Bps + pass.light(PolarPass::segment_mid(pass.rise0, prefill_b));
    const double down_b = first_b + 4.0 / rate_Bps + pass.light(PolarPass::segment_mid(pass.rise0, first_b));
    EXPECT_NEAR(got[0][1], t_b, 1e-9);  // at the data centre at once
    EXPECT_NEAR(got[0][2], prefill_b, 1e-9);
    EXPECT_NEAR(got[0][3], first_b, 1e-4);
    EXPECT_NEAR(got[0][4], down_b - t_b, 1e-4);
    EXPECT_NEAR(got[0][5], step + 4.0 / rate_Bps, 1e-6);  // the last token's 8 B against the first's 4 B
    const double prefill_a = t_a + 2.0 * 8e9 * 1000.0 / h200_flops;
    const double first_a = pass.rise1 + 1000.0 * kv_per_token / rate_Bps + pass.light(pass.rise1 + 5.0);
    EXPECT_NEAR(got[1][2], prefill_a, 1e-9);
    EXPECT_NEAR(got[1][3], first_a, 1e-4);
    EXPECT_NEAR(got[1][4], first_a + 4.0 / rate_Bps + pass.light(pass.rise1 + 5.0) - t_a, 1e-4);
    EXPECT_NEAR(run.wait_max, pass.rise1 - prefill_a, 1e-4);
    EXPECT_EQ(run.crossing, 2);
    EXPECT_EQ(run.waited, 1);
    EXPECT_EQ(run.prefill_accelerator, "h200");
    fs::remove_all(dir);
}
