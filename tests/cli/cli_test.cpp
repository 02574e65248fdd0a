// The skyfabric program end to end: runs the smoke scenario, reads the HDF5 back
// with h5py (Debian's python3), and checks bad input exits 2 with file:line:column.
#include "cli_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <cmath>
#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace fs = std::filesystem;
using namespace skyfabric_test;

namespace {



}  // namespace

TEST(Cli, VersionHelpAndInfo) {
    EXPECT_EQ(run_command(skyfabric() + " --version").status, 0);
    const auto help = run_command(skyfabric() + " run --help");
    EXPECT_EQ(help.status, 0);
    EXPECT_NE(help.output.find("--set"), std::string::npos);
    const auto info = run_command(skyfabric() + " info");
    EXPECT_EQ(info.status, 0);
    EXPECT_NE(info.output.find("CUDA"), std::string::npos);
    EXPECT_EQ(run_command(skyfabric() + " run --no-such-flag x.yaml").status, 2);
}

TEST(Cli, ProvenanceInEveryOutput) {
    // Issue 28: version, git commit and dirty flag (baked in at build time), the command line, the
    // resolved scenario and its SHA-256, read back from summary.json, result.h5, the trace and sweep.h5
    // by tests/cli/check_provenance.py (hashlib and git, not skyfabric's code); issue 54: the resolved
    // settings' SHA-256, that of what `validate --settings` prints.
    const auto dir = fresh_dir("provenance");
    const auto run_dir = dir / "run", trace = dir / "run.trace.json";
    const auto r = run_command(run_line("scenarios/smoke.yaml", " --set duration_s=60 --set output.vtk=false", run_dir) + " --trace " + trace.string());
    ASSERT_EQ(r.status, 0) << r.output;
    const auto sweep = run_command(skyfabric() + " sweep " + source("scenarios/smoke.yaml") +
                                   " --set duration_s=60 --set output.vtk=false --vary seed=1,2 --no-plot -q -o " +
                                   (dir / "sweep").string());
    ASSERT_EQ(sweep.status, 0) << sweep.output;
    const auto settings = dir / "settings.json";
    const auto printed = run_command(skyfabric() + " validate " + source("scenarios/smoke.yaml") +
                                     " --set duration_s=60 --set output.vtk=false --settings > " + settings.string());
    ASSERT_EQ(printed.status, 0) << printed.output;
    const auto check = run_command("/usr/bin/python3 " + source("tests/cli/check_provenance.py") + " " + source("") + " " +
                                   run_dir.string() + " " + trace.string() + " " + (dir / "sweep").string() + " " +
                                   settings.string());
    EXPECT_EQ(check.status, 0) << check.output;
    EXPECT_NE(check.output.find("ok"), std::string::npos) << check.output;
    // --version names the commit too.
    const auto version = run_command(skyfabric() + " --version");
    EXPECT_NE(version.output.find("(commit "), std::string::npos) << version.output;
    fs::remove_all(dir);
}

TEST(Cli, OemExportEqualsTheRunsEciStates) {
    // Issue 28: a run's orbits as a CCSDS OEM for other tools. tests/cli/check_oem.py parses it from
    // the standard (not skyfabric's code) and compares every state and epoch with result.h5; the
    // epoch has a fraction of a second and the run crosses a year's end.
    const auto dir = fresh_dir("oem");
    const auto run_dir = dir / "run";
    auto r = run_scenario("scenarios/smoke.yaml", " --set orbit.epoch_utc=2027-12-31T23:55:00.25Z --set output.vtk=false", run_dir);
    ASSERT_EQ(r.status, 0) << r.output;
    r = run_command(skyfabric() + " oem " + run_dir.string() + " 2>&1");
    ASSERT_EQ(r.status, 0) << r.output;
    auto check = run_command("/usr/bin/python3 " + source("tests/cli/check_oem.py") + " " + (run_dir / "formation.oem").string() +
                             " " + (run_dir / "result.h5").string());
    EXPECT_EQ(check.status, 0) << check.output;
    EXPECT_NE(check.output.find("ok 5"), std::string::npos) << check.output;
    EXPECT_NE(read_file(run_dir / "formation.oem").find("2028-01-01T00:04:30.250000"), std::string::npos);
    // A subset, in the order asked, to a named file.
    r = run_command(skyfabric() + " oem " + run_dir.string() + " --satellites 3,1 -o " + (dir / "two.oem").string() + " 2>&1");
    ASSERT_EQ(r.status, 0) << r.output;
    check = run_command("/usr/bin/python3 " + source("tests/cli/check_oem.py") + " " + (dir / "two.oem").string() + " " +
                        (run_dir / "result.h5").string() + " 3 1");
    EXPECT_EQ(check.status, 0) << check.output;
    // Bad input: exit 2 with the reason.
    r = run_command(skyfabric() + " oem " + run_dir.string() + " --satellites 5 -o - 2>&1");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("not a satellite of this run (0..4)"), std::string::npos) << r.output;
    r = run_command(skyfabric() + " oem " + dir.string() + " 2>&1");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("no result.h5"), std::string::npos) << r.output;
    const auto no_eci = dir / "no_eci";
    r = run_scenario("scenarios/smoke.yaml", " --set output.eci=false --set output.vtk=false", no_eci);
    ASSERT_EQ(r.status, 0) << r.output;
    r = run_command(skyfabric() + " oem " + no_eci.string() + " 2>&1");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("output.eci: true"), std::string::npos) << r.output;
    fs::remove_all(dir);
}

TEST(Cli, ConstellationComparesEachClusterWithItsOwnNonlinearTruth) {
    // Issue 25: compare_to: nonlinear was refused with a constellation. Each cluster now has its own
    // nonlinear truth: cluster 0 of two suncatcher-81 clusters is the suncatcher-81 lattice about the
    // same chief, so its HCW error equals a single-formation run's, satellite by satellite; the second
    // cluster's (its own chief, 100 km ahead) is of the same size; and the nonlinear model compared
    // with itself has no error at all.
    const auto dir = fresh_dir("compare_clusters");
    const std::string common = " --set duration_s=3000 --set dynamics.compare_to=nonlinear --set output.vtk=false";
    auto r = run_scenario("scenarios/constellation-4x81.yaml", common +
                         " --set dynamics.model=hcw --set constellation.clusters=2 --set constellation.algorithms=ring", dir / "two");
    ASSERT_EQ(r.status, 0) << r.output;
    r = run_scenario("scenarios/suncatcher-81.yaml", common +
                    " --set dynamics.model=hcw", dir / "one");
    ASSERT_EQ(r.status, 0) << r.output;
    r = run_scenario("scenarios/constellation-4x81.yaml", common +
                    " --set constellation.clusters=2 --set constellation.algorithms=ring", dir / "self");
    ASSERT_EQ(r.status, 0) << r.output;
    std::ofstream(dir / "check.py") << R"(import sys, h5py, numpy as np
two, one, itself = (h5py.File(p, "r")["dynamics/model_error_m"][...] for p in sys.argv[1:4])
assert two.shape[1] == 162 and one.shape[1] == 81, (two.shape, one.shape)
assert np.array_equal(two[:, :81], one), abs(two[:, :81] - one).max()
first, second = two[-1, :81].max(), two[-1, 81:].max()
assert first > 0.1 and 0.5 < second / first < 2.0, (first, second)
assert itself.max() == 0.0, itself.max()
print("ok", first, second)
)";
    const auto check = run_command("/usr/bin/python3 " + (dir / "check.py").string() + " " + (dir / "two" / "result.h5").string() +
                                   " " + (dir / "one" / "result.h5").string() + " " + (dir / "self" / "result.h5").string());
    EXPECT_EQ(check.status, 0) << check.output;
    fs::remove_all(dir);
}

TEST(Cli, ConstellationSummaryWritesLocalStepsAndItsOldNameInnerSteps) {
    // Issue 54: summary.json's constellation.inner_steps is now local_steps, the name of the key it
    // comes from (workload.local_steps); the old name is written beside it for one release.
    const auto dir = fresh_dir("local_steps_alias");
    const auto r = run_scenario("scenarios/constellation-4x81.yaml", " --set duration_s=60 --set output.vtk=false --set output.hdf5=false"
                               " --set constellation.algorithms=ring --set workload.local_steps=7 --yes", dir / "out");
    ASSERT_EQ(r.status, 0) << r.output;
    const auto c = nlohmann::json::parse(read_file(dir / "out" / "summary.json"))["constellation"];
    EXPECT_EQ(c["local_steps"], 7) << c.dump();
    EXPECT_EQ(c["inner_steps"], 7) << c.dump();
    fs::remove_all(dir);
}

TEST(Cli, ConstellationRecordsItsRoutingModelAndBothModelsTrainAlike) {
    // Issue 48: the routing model is versioned in summary.json and result.h5. auto resolves to flat
    // for four clusters of four gateways (12 gateway links into a cluster, within the flat guide's
    // limit) and to two_level for 18 clusters (68); either can be asked for; both models give the same
    // shortest-path latencies and differ only in where a transfer's later UCMP paths run inside its
    // end clusters (two-level: each cluster's own shortest way to its border, which the paths may
    // share; flat: disjoint everywhere), so an algorithm trains alike to 1e-3 (the ring: 2.8e-4).
    const auto dir = fresh_dir("routing_model");
    const std::string common = " --set duration_s=600 --set output.vtk=false --set constellation.algorithms=[ring,diloco]";
    const auto run = [&](const std::string& name, const std::string& sets) {
        const auto r = run_scenario("scenarios/constellation-4x81.yaml", common + sets +
                                   " --yes", dir / name);
        EXPECT_EQ(r.status, 0) << r.output;
    };
    run("auto4", "");
    run("two4", " --set constellation.routing_model=two_level");
    run("flat4", " --set constellation.routing_model=flat");
    run("auto18", " --set constellation.clusters=18 --set duration_s=60 --set output.hdf5=false");
    std::ofstream(dir / "check.py") << R"(import sys, json, os, h5py
d = sys.argv[1]
def model(run):
    return json.load(open(os.path.join(d, run, "summary.json")))["constellation"]["routing_model"]
assert [model(r) for r in ("auto4", "two4", "flat4", "auto18")] == ["flat", "two_level", "flat", "two_level"]
for run in ("two4", "flat4"):
    with h5py.File(os.path.join(d, run, "result.h5"), "r") as f:
        attr = f["constellation"].attrs["routing_model"]
        assert (attr.decode() if isinstance(attr, bytes) else attr) == model(run), attr
two, flat = (json.load(open(os.path.join(d, r, "summary.json")))["constellation"]["algorithms"] for r in ("two4", "flat4"))
for name in ("ring", "diloco"):
    for key in ("steps", "step_time_mean_s", "tokens_per_s", "gateway_bytes"):
        a, b = two[name][key], flat[name][key]
        assert abs(a - b) <= 1e-3 * abs(b), (name, key, a, b)
print("ok")
)";
    const auto check = run_command("/usr/bin/python3 " + (dir / "check.py").string() + " " + dir.string());
    EXPECT_EQ(check.status, 0) << check.output;
    const auto bad = run_command(skyfabric() + " validate " + source("scenarios/constellation-4x81.yaml") +
                                 " --set constellation.routing_model=bgp");
    EXPECT_EQ(bad.status, 2) << bad.output;
    EXPECT_NE(bad.output.find("routing_model"), std::string::npos) << bad.output;
    fs::remove_all(dir);
}

TEST(Cli, PrintedWallTimeIncludesWritingTheFiles) {
    // Issue 28: the wall time printed and in summary.json (wall_s) spans the files' writing, after the
    // simulation's own figure (simulation_wall_s) was taken: wall_s > simulation_wall_s, and the table prints wall_s.
    const auto dir = fresh_dir("wall_time");
    const auto r = run_scenario("scenarios/smoke.yaml", "", dir, false);
    ASSERT_EQ(r.status, 0) << r.output;
    const auto check = run_command(
        "/usr/bin/python3 -c \"import json,sys; s=json.load(open(sys.argv[1]+'/summary.json')); "
        "assert s['wall_s'] > s['simulation_wall_s'] > 0, s; print('%.2f s (simulation %.2f s' % (s['wall_s'], s['simulation_wall_s']))\" " +
        dir.string());
    ASSERT_EQ(check.status, 0) << check.output;
    EXPECT_NE(r.output.find("wall time                          " + check.output.substr(0, check.output.size() - 1)), std::string::npos)
        << r.output << check.output;
    fs::remove_all(dir);
}

TEST(Cli, RunsSmokeAndWritesReadableHdf5) {
    const auto dir = fresh_dir("smoke");
    const auto r = run_scenario("scenarios/smoke.yaml", "", dir, false);
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("minimum separation"), std::string::npos) << r.output;
    ASSERT_TRUE(fs::exists(dir / "result.h5"));
    ASSERT_TRUE(fs::exists(dir / "summary.json"));
    EXPECT_FALSE(fs::exists(dir / "result.h5.partial"));

    // Read it back with h5py: shapes, units, root attributes, and physics sanity
    // (positions in ECI are the chief plus the LVLH offset rotated: |r_sat - r_chief| = |r_lvlh|).
    const std::string script = R"(
import h5py, numpy as np, sys
f = h5py.File(sys.argv[1], 'r')
assert f.attrs['complete'] == True
assert 'name: smoke' in f.attrs['scenario_yaml']
assert int(f.attrs['seed']) == 7
t = f['time_s'][:]
assert t[0] == 0 and abs(t[-1] - 600) < 1e-9 and len(t) == 21, t
n = int(f.attrs['satellite_count'])
for name, shape in [('formation/position_lvlh_m', (21, n, 3)), ('formation/position_eci_m', (21, n, 3)),
                    ('formation/velocity_eci_m_s', (21, n, 3)), ('orbit/chief_position_eci_m', (21, 3)),
                    ('formation/min_separation_m', (21,)), ('station_keeping/delta_v_m_s', (n,))]:
    assert f[name].shape == shape, (name, f[name].shape)
    assert 'units' in f[name].attrs, name
assert f['formation/position_lvlh_m'].attrs['units'] == 'm'
rel = f['formation/position_eci_m'][:] - f['orbit/chief_position_eci_m'][:][:, None, :]
d_eci = np.linalg.norm(rel, axis=2)
d_lvlh = np.linalg.norm(f['formation/position_lvlh_m'][:], axis=2)
assert np.max(np.abs(d_eci - d_lvlh)) < 1e-3, np.max(np.abs(d_eci - d_lvlh))
r = np.linalg.norm(f['orbit/chief_position_eci_m'][:], axis=1)
assert np.all(np.abs(r - (6378137 + 650e3)) < 30e3), r
print('ok', n)
)";
    const auto script_path = dir / "check.py";
    std::ofstream(script_path) << script;
    const auto check = run_command("/usr/bin/python3 " + script_path.string() + " " + (dir / "result.h5").string());
    EXPECT_EQ(check.status, 0) << check.output;
    EXPECT_NE(check.output.find("ok"), std::string::npos) << check.output;
    fs::remove_all(dir);
}

TEST(Cli, StationKeepingReportsAcquisitionApartAndASteadyRateBesideTheDifferentialDragMinimum) {
    // Two days of the smoke lattice with moderate drag and a 10 % B spread: the per-year rate is the steady
    // delta-v (total minus the one-off acquisition) over the steady window, beside the differential-drag
    // minimum over the same window; a run shorter than a day gives no rate.
    const auto dir = fresh_dir("station_keeping");
    const std::string sets = " --set station_keeping.enabled=true --set dynamics.drag.enabled=true"
                             " --set dynamics.drag.dispersion=0.1 --set links.enabled=false --set workload.enabled=false"
                             " --set radiation.enabled=false --set output.vtk=false --set output_step_s=30";
    const auto r = run_command(run_line("scenarios/smoke.yaml", "", dir / "two_days", false) +
                               sets + " --set duration_s=172800");
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("excl. acquisition"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("differential-drag minimum"), std::string::npos) << r.output;
    const auto short_run = run_command(run_line("scenarios/smoke.yaml", "", dir / "short", false) + sets);
    ASSERT_EQ(short_run.status, 0) << short_run.output;
    EXPECT_NE(short_run.output.find("n/a (window"), std::string::npos) << short_run.output;
    const std::string script = R"(
import h5py, json, sys
year = 365.25 * 86400
j = json.load(open(sys.argv[1] + '/two_days/summary.json'))['station_keeping']
f = h5py.File(sys.argv[1] + '/two_days/result.h5', 'r')
n = int(f.attrs['satellite_count'])
for name in ['delta_v_m_s', 'acquisition_delta_v_m_s', 'differential_drag_delta_v_m_s']:
    d = f['station_keeping/' + name]
    assert d.shape == (n,) and d.attrs['units'] == 'm/s', name
total, acquisition = f['station_keeping/delta_v_m_s'][:].sum(), f['station_keeping/acquisition_delta_v_m_s'][:].sum()
assert abs(j['acquisition_delta_v_total_m_s'] - acquisition) <= 1e-12 * total, (j, acquisition)
assert 0 < acquisition < total, (acquisition, total)
assert j['steady_window_s'] == 172800, j
rate = j['delta_v_per_satellite_per_year_m_s']
assert abs(rate - (total - acquisition) / n / (172800 / year)) <= 1e-9 * rate, (rate, total, acquisition)
minimum = j['differential_drag_minimum_per_satellite_per_year_m_s']
assert abs(minimum - f['station_keeping/differential_drag_delta_v_m_s'][:].sum() / n / (172800 / year)) <= 1e-9 * minimum
assert 0 < rate <= 3 * minimum, (rate, minimum)
assert j['deviation_max_m'] <= 5.0, j
s = json.load(open(sys.argv[1] + '/short/summary.json'))['station_keeping']
assert s['delta_v_per_satellite_per_year_m_s'] is None and s['differential_drag_minimum_per_satellite_per_year_m_s'] is None, s
assert s['acquisition_delta_v_total_m_s'] > 0, s
print('ok')
)";
    const auto script_path = dir / "check.py";
    std::ofstream(script_path) << script;
    const auto check = run_command("/usr/bin/python3 " + script_path.string() + " " + dir.string());
    EXPECT_EQ(check.status, 0) << check.output;
    EXPECT_NE(check.output.find("ok"), std::string::npos) << check.output;
    fs::remove_all(dir);
}

TEST(Cli, RefusesToOverwriteCompleteRunWithoutForce) {
    const auto dir = fresh_dir("force");
    ASSERT_EQ(run_scenario("scenarios/smoke.yaml", "", dir).status, 0);
    const auto again = run_scenario("scenarios/smoke.yaml", "", dir);
    EXPECT_EQ(again.status, 2) << again.output;
    EXPECT_NE(again.output.find("--force"), std::string::npos) << again.output;
    EXPECT_EQ(run_scenario("scenarios/smoke.yaml", " --force", dir).status, 0);
    fs::remove_all(dir);
}

TEST(Cli, BadScenarioExitsTwoWithLocation) {
    const auto dir = fresh_dir("bad");
    const auto bad = dir / "bad.yaml";
    std::ofstream(bad) << "name: bad\nduration_s: 10\norbit:\n  altitude_km: 650\n  sun_synchronus: true\nformation: {}\n";
    const auto r = run_command(skyfabric() + " validate " + bad.string());
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find(bad.string() + ":5:3"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("sun_synchronous"), std::string::npos) << r.output;

    const auto missing = run_command(skyfabric() + " run " + (dir / "nope.yaml").string());
    EXPECT_EQ(missing.status, 2) << missing.output;
    const auto bad_set = run_command(skyfabric() + " validate " + source("scenarios/smoke.yaml") + " --set orbit.altitude_km=abc");
    EXPECT_EQ(bad_set.status, 2) << bad_set.output;
    EXPECT_NE(bad_set.output.find("--set orbit.altitude_km"), std::string::npos) << bad_set.output;
    fs::remove_all(dir);
}

TEST(Cli, LinkBudgetReproducesPaperEquationOneAtFiveThousandKm) {
    // Paper Eq. 1 defaults: 5 W, 10 cm, 80 %, 1.55 um, -3 dB -> about 1.6 uW at 5000 km.
    const auto r = run_command(skyfabric() + " link-budget --distances 5000km");
    ASSERT_EQ(r.status, 0) << r.output;
    const auto line_start = r.output.find("   5000000.0");
    ASSERT_NE(line_start, std::string::npos) << r.output;
    std::istringstream line(r.output.substr(line_start));
    double distance = 0, beam = 0, coupling = 0, p_rx_uw = 0, friis_uw = 0;
    line >> distance >> beam >> coupling >> p_rx_uw >> friis_uw;
    EXPECT_NEAR(friis_uw, 1.6, 0.06) << r.output;
    EXPECT_NEAR(10 * std::log10(p_rx_uw / friis_uw), 0.0, 0.1) << "near/far-field model agrees with Friis far out";
    EXPECT_NE(r.output.find("gain 105.1"), std::string::npos) << r.output;
    // Only the divergence the model uses: the clipped beam's far-field half-angle (15.6 urad for 10 cm, 1550 nm).
    EXPECT_EQ(r.output.find("divergence"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("half-angle 15.6"), std::string::npos) << r.output;
    EXPECT_EQ(run_command(skyfabric() + " link-budget --distances 5000parsecs").status, 2);
}

TEST(Cli, LinkBudgetAsCsvAndJsonInSiUnits) {
    // The same budget machine-readable: paper Eq. 1 (about 1.6 uW at 5000 km) in watts, and the
    // CSV and JSON rows hold the same numbers to the bit.
    const auto json = run_command(skyfabric() + " link-budget --distances 200,5000km --format json");
    ASSERT_EQ(json.status, 0) << json.output;
    const auto j = nlohmann::json::parse(json.output);
    ASSERT_EQ(j["rows"].size(), 2u);
    EXPECT_EQ(j["rows"][1]["distance_m"].get<double>(), 5e6);
    EXPECT_NEAR(j["rows"][1]["friis_received_power_w"].get<double>(), 1.6e-6, 0.06e-6);
    EXPECT_EQ(j["parameters"]["aperture_m"].get<double>(), 0.1);
    EXPECT_GT(j["rows"][0]["capacity_bps"].get<double>(), j["rows"][1]["capacity_bps"].get<double>());
    const auto csv = run_command(skyfabric() + " link-budget --distances 200,5000km --format csv");
    ASSERT_EQ(csv.status, 0) << csv.output;
    std::istringstream in(csv.output);
    std::string header, line;
    std::getline(in, header);
    std::vector<std::string> names;
    for (std::istringstream h(header); std::getline(h, line, ',');) names.push_back(line);
    ASSERT_EQ(names.front(), "distance_m");
    for (std::size_t row = 0; row < 2; ++row) {
        ASSERT_TRUE(std::getline(in, line)) << csv.output;
        std::istringstream cells(line);
        std::string cell;
        for (const auto& name : names) {
            ASSERT_TRUE(std::getline(cells, cell, ',')) << line;
            EXPECT_EQ(std::stod(cell), j["rows"][row][name].get<double>()) << name;
        }
    }
    EXPECT_EQ(run_command(skyfabric() + " link-budget --format xml").status, 2);
}

TEST(Cli, CollectiveTableBusBandwidthStaysUnderTheBound) {
    const auto r = run_command(skyfabric() + " collective " + source("scenarios/smoke.yaml") + " --sizes 1MiB,1GiB");
    ASSERT_EQ(r.status, 0) << r.output;
    std::istringstream in(r.output);
    std::string line;
    int rows = 0;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#' || line.find("size(B)") != std::string::npos) continue;
        std::istringstream fields(line);
        double bytes = 0, time_us = 0, alg = 0, bus = 0, bound = 0;
        fields >> bytes >> time_us >> alg >> bus >> bound;
        EXPECT_GT(time_us, 0.0);
        EXPECT_LE(bus, bound * 1.0001) << line;
        ++rows;
    }
    EXPECT_EQ(rows, 2) << r.output;
    EXPECT_EQ(run_command(skyfabric() + " collective " + source("scenarios/smoke.yaml") + " --op all_wrong").status, 2);
}

TEST(Cli, InterruptLeavesValidIncompleteOutputs) {
    const auto dir = fresh_dir("interrupt");
    // Twenty orbits of the 81-satellite cluster take many seconds; interrupt once frames
    // (every 6th sample) have been written.
    const auto r = signal_when(run_line("scenarios/suncatcher-81.yaml", " --set duration_orbits=20", dir),
                               staged_exists(dir, "vtk/formation_000002.vtp"), "INT");
    EXPECT_EQ(r.status, 130) << r.output;
    EXPECT_NE(r.output.find("marked incomplete"), std::string::npos) << r.output;
    ASSERT_TRUE(fs::exists(dir / "result.h5")) << r.output;
    const auto check = run_command(
        "/usr/bin/python3 -c \"import h5py,sys; f=h5py.File(sys.argv[1],'r'); "
        "assert f.attrs['complete'] == False; assert 'interrupted' in f.attrs['stop_reason']; "
        "n=len(f['time_s']); assert n > 0 and f['formation/position_eci_m'].shape[0] == n; "
        "assert f['links/offsets'].shape[0] == n + 1; "
        // The training and the faults computed before the stop are kept (issue 18, finding 8).
        "assert 'workload/steps' in f and len(f['workload/steps']['start_s'] if 'start_s' in f['workload/steps'] else f['workload/steps']) > 0; "
        "t_end = f['time_s'][-1]; ev = f['radiation/events/time_s'][:] if 'radiation/events' in f else []; "
        "assert all(e <= t_end for e in ev); print('ok', n)\" " + (dir / "result.h5").string());
    EXPECT_EQ(check.status, 0) << check.output;
    std::ifstream summary(dir / "summary.json");
    const std::string text((std::istreambuf_iterator<char>(summary)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("\"complete\": false"), std::string::npos) << text;
    EXPECT_NE(text.find("\"stopped\": true"), std::string::npos) << text;
    EXPECT_NE(text.find("\"goodput\""), std::string::npos) << text;
    // The .pvd written so far is well-formed XML that closes.
    std::ifstream pvd(dir / "vtk" / "formation.pvd");
    const std::string xml((std::istreambuf_iterator<char>(pvd)), std::istreambuf_iterator<char>());
    EXPECT_NE(xml.find("</VTKFile>"), std::string::npos);
    fs::remove_all(dir);
}

TEST(Cli, InterruptDuringTheFaultTrialsStopsThemPromptly) {
    // The Monte Carlo trials run after the samples, for minutes on a big constellation: Ctrl-C there
    // stops them (no further trial starts), and the physics and the nominal trial are kept. The signal
    // goes when `--progress` reports the trials' phase (a file written during the samples could appear
    // while the training replays, under load).
    const auto dir = fresh_dir("interrupt_trials");
    const auto log = dir.string() + ".stderr";
    const auto r = signal_when(run_line("scenarios/constellation-4x81.yaml", " --set duration_s=600 --set radiation.enabled=true --set radiation.rate_scale=100"
                                   " --set radiation.trials=5000 --progress", dir) + " 2> " + log,
                               "grep -q \"fault trials\" " + log, "INT", 120);
    const std::string err = read_file(log);
    EXPECT_EQ(r.status, 130) << r.output << err;
    EXPECT_NE(err.find("interrupted during the fault trials"), std::string::npos) << err;
    EXPECT_NE(err.find("skyfabric: 100% of the samples (t = 600 s)\nskyfabric: samples done; training"), std::string::npos) << err;
    fs::remove(log);
    const std::string summary = read_file(dir / "summary.json");
    EXPECT_NE(summary.find("\"complete\": false"), std::string::npos) << summary;
    EXPECT_NE(summary.find("\"dose_max_rad\""), std::string::npos) << summary;
    fs::remove_all(dir);
}

TEST(Cli, RadiationDoseAndFaultsOverADay) {
    // One day of the smoke formation at 650 km SSO behind 10 mm Al: the mean dose rate is
    // calibrated to about 150 rad(Si)/yr (docs/references.md), dose only grows, and every fault
    // event lies inside the run with a known kind and effect.
    const auto dir = fresh_dir("radiation");
    const auto r = run_scenario("scenarios/smoke.yaml", " --set duration_s=86400 --set output_step_s=60 --set output.vtk=false", dir);
    ASSERT_EQ(r.status, 0) << r.output;
    const auto check = run_command(
        "/usr/bin/python3 -c \"import h5py,json,sys,numpy as np; d=sys.argv[1]; f=h5py.File(d+'/result.h5','r'); "
        "s=json.load(open(d+'/summary.json'))['radiation']; "
        "dose=f['radiation/dose_rad'][:]; rate=f['radiation/dose_rate_rad_s'][:]; t=f['time_s'][:]; "
        "assert dose.shape == rate.shape == (len(t), int(f.attrs['satellite_count'])); "
        "assert np.all(np.diff(dose, axis=0) >= 0); "
        "per_yr = dose[-1].mean() / t[-1] * 365.25 * 86400; assert 120 < per_yr < 180, per_yr; "
        "assert abs(s['dose_rate_mean_rad_per_yr'] - per_yr) < 1e-6 * per_yr; "
        "assert f['radiation/flux'].shape == t.shape and f['radiation/flux'][:].max() > 1.5; "
        "ev = f['radiation/events/time_s'][:] if 'radiation/events' in f else np.zeros(0); "
        "assert np.all((ev >= 0) & (ev <= t[-1])); "
        "assert 0 < s['goodput'] <= 1 and 'monte_carlo' in s and 0 < s['trial0']['goodput'] <= 1; "
        "assert s['monte_carlo']['backend'] in ('cpu', 'cuda'); "
        "g=f['radiation/job_timeline']; a=g['start_s'][:]; b=g['end_s'][:]; ph=g['phase'][:]; "
        "assert a[0] == 0 and abs(b[-1] - t[-1]) < 1e-9 and np.all(np.abs(a[1:] - b[:-1]) < 1e-6) and np.all(b > a); "
        "assert 'recovery' in g['phase'].attrs['phase_names'] and set(ph) <= set(range(9)); "
        "kept = ((ph == 0) | (ph == 1)); g0 = s['trial0']['goodput']; assert abs((b - a)[kept].sum() / t[-1] - g0) < 1e-9, g0; "
        "print('ok', per_yr, len(ev))\" " + dir.string());
    EXPECT_EQ(check.status, 0) << check.output;
    fs::remove_all(dir);
}

TEST(Cli, SunlightSeriesShowTheDecemberEclipseAndNoneAtTheMarchEquinox) {
    // Issue 16 (docs/references.md, astropy check): the 650 km dawn-dusk orbit has |beta| >= 58.6 deg and
    // at most 20.2 min of shadow per orbit (19.3 min umbra) around 22 Dec; at the March 2027 epoch
    // (beta -81.5 deg) none. /sun/* in result.h5 and "sun" in summary.json must say so.
    const char* epochs[2] = {"2027-12-22T00:00:00Z", "2027-03-20T00:00:00Z"};
    for (int k = 0; k < 2; ++k) {
        const auto dir = fresh_dir(std::string("sun_") + std::to_string(k));
        const auto r = run_scenario("scenarios/smoke.yaml", std::string(" --set duration_s=5871 ") +
                                   "--set output_step_s=5 --set output.vtk=false --set orbit.epoch_utc=" + epochs[k], dir);
        ASSERT_EQ(r.status, 0) << r.output;
        const std::string expect = k == 0 ? "assert abs(shadow - 20.2) < 0.3 and abs(umbra - 19.3) < 0.3, (shadow, umbra); "
                                            "assert abs(beta + 58.6) < 0.3, beta; assert s['samples_in_shadow'] > 0; "
                                          : "assert shadow == 0 and s['samples_in_shadow'] == 0; assert abs(beta + 81.5) < 0.3, beta; ";
        const auto check = run_command(
            "/usr/bin/python3 -c \"import h5py,json,sys,numpy as np; d=sys.argv[1]; f=h5py.File(d+'/result.h5','r'); "
            "s=json.load(open(d+'/summary.json'))['sun']; fr=f['sun/shadow_fraction'][:]; t=f['time_s'][:]; "
            "assert fr.shape == (len(t), int(f.attrs['satellite_count'])) and fr.min() >= 0 and fr.max() <= 1; "
            "assert f['sun/shadow_fraction'].attrs['units'] == '1'; "
            "u=f['sun/direction_eci'][:]; assert np.allclose(np.linalg.norm(u, axis=1), 1); "
            "shadow=(fr[:,0] > 0).sum()*5/60; umbra=(fr[:,0] >= 1).sum()*5/60; beta=np.degrees(f['sun/beta_angle_rad'][0]); "
            + expect + "print('ok', shadow, umbra, beta)\" " + dir.string());
        EXPECT_EQ(check.status, 0) << check.output;
        fs::remove_all(dir);
    }
}

TEST(Cli, PowerCyclesTheBatteryThroughShadowsAndThrottlesTrainingByTheDeficit) {
    // Issue 16: a day on 2027-12-21 (eclipse season, ~20 min of shadow per orbit): the battery cycles
    // every orbit and, with the preset, never limits compute; an undersized battery (200 Wh) throttles it,
    // and the training does exactly the share of the steps that the power left it; a flat battery browns
    // satellites out and drops their links.
    auto run = [&](const std::string& name, const std::string& extra) {
        const auto dir = fresh_dir(name);
        const auto r = run_scenario("scenarios/smoke.yaml", " --set duration_s=86400 --set output_step_s=30 --set output.vtk=false "
                                   "--set radiation.enabled=false --set power.enabled=true " + extra, dir);
        EXPECT_EQ(r.status, 0) << r.output;
        return dir;
    };
    const auto december = " --set orbit.epoch_utc=2027-12-21T00:00:00Z";
    const auto full = run("power_full", december);
    const auto small = run("power_small", std::string(december) + " --set power.battery_capacity_wh=200");
    const auto march = run("power_march", "--set power.battery_capacity_wh=200");
    const auto check = run_command(
        "/usr/bin/python3 -c \"import h5py,json,sys,numpy as np; a,b,c=sys.argv[1:4]; "
        "j=lambda d: json.load(open(d+'/summary.json')); "
        "f=h5py.File(a+'/result.h5','r'); soc=f['power/state_of_charge'][:,0]; sh=f['sun/shadow_fraction'][:,0]; "
        "assert f['power/state_of_charge'].attrs['units'] == '1' and f['power/solar_w'].attrs['units'] == 'W'; "
        "passes=int(((sh[1:] > 0) & (sh[:-1] == 0)).sum()); assert 14 <= passes <= 16, passes; "
        "drops=int(((np.diff(soc) < 0)[1:] & (np.diff(soc) >= 0)[:-1]).sum()); assert abs(drops - passes) <= 1, (drops, passes); "
        "assert np.all(f['power/solar_w'][:,0][sh >= 1] == 0); "
        "pa=j(a)['power']; assert pa['compute_lost_s'] == 0 and 0.7 <= pa['state_of_charge_min'] < 0.95, pa; "
        "pb=j(b)['power']; lost=pb['compute_lost_fraction']; assert 0.05 < lost < 0.5, pb; "
        "g=h5py.File(b+'/result.h5','r'); cf=g['power/compute_fraction'][:]; assert cf.min() < 1 and np.all((cf >= 0) & (cf <= 1)); "
        "ratio=j(b)['workload']['steps'] / j(a)['workload']['steps']; assert abs(ratio - (1 - lost)) < 0.01, (ratio, lost); "
        "assert j(c)['power']['compute_lost_s'] == 0 and j(c)['sun']['samples_in_shadow'] == 0; "
        "print('ok', passes, lost, ratio)\" " + full.string() + " " + small.string() + " " + march.string());
    EXPECT_EQ(check.status, 0) << check.output;
    // A battery too small even for the base loads, policy ignore: in the shadow the satellites brown out
    // and their terminals, unpowered, carry no links.
    const auto flat = run("power_flat", std::string(december) + " --set power.battery_capacity_wh=50 --set workload.power_policy=ignore");
    const auto brown = run_command(
        "/usr/bin/python3 -c \"import h5py,json,sys; d=sys.argv[1]; p=json.load(open(d+'/summary.json'))['power']; "
        "f=h5py.File(d+'/result.h5','r'); lc=f['links/link_count'][:]; sh=f['sun/shadow_fraction'][:,0]; "
        "assert p['brownouts'] > 0, p; assert lc[sh >= 1].min() == 0 and lc[sh == 0].min() > 0, (lc[sh >= 1].min(), lc[sh == 0].min()); "
        "print('ok', p['brownouts'])\" " + flat.string());
    EXPECT_EQ(brown.status, 0) << brown.output;
    for (const auto& d : {full, small, march, flat}) fs::remove_all(d);
}

TEST(Cli, SeasonReproducesTheEclipseSeasonAndShowsWhereAnUndersizedBatteryLimitsCompute) {
    // Issue 16: `season` scans a year, one orbit a day. For the default orbit (docs/references.md, astropy):
    // 89 eclipse days from about 8 Nov to 4 Feb, at most 20.2 min of shadow per orbit around 22 Dec,
    // |beta| >= 58.6 deg. With a 600 Wh battery compute falls below full only in the eclipse season.
    const auto dir = fresh_dir("season");
    const auto csv = (dir / "season.csv").string();
    const auto r = run_command(skyfabric() + " season " + source("scenarios/suncatcher-81.yaml") + " --year 2027 --csv " + csv);
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("days with an eclipse"), std::string::npos) << r.output;
    const auto small = (dir / "small.csv").string();
    ASSERT_EQ(run_command(skyfabric() + " season " + source("scenarios/suncatcher-81.yaml") +
                          " --set power.battery_capacity_wh=600 --csv " + small).status, 0);
    const auto check = run_command(
        "/usr/bin/python3 -c \"import csv,sys; rows=list(csv.DictReader(open(sys.argv[1]))); small=list(csv.DictReader(open(sys.argv[2]))); "
        "assert len(rows) == 365; ecl=[r for r in rows if float(r['shadow_min']) > 0]; assert abs(len(ecl) - 89) <= 3, len(ecl); "
        "worst=max(rows, key=lambda r: float(r['shadow_min'])); assert abs(float(worst['shadow_min']) - 20.2) < 0.5, worst; "
        "assert worst['date'][5:7] == '12', worst['date']; assert min(abs(float(r['beta_deg'])) for r in rows) > 58.3; "
        "assert all(float(r['sustainable_compute']) == 1 for r in rows); "
        "lim=[r for r in small if float(r['sustainable_compute']) < 1]; assert lim and all(float(r['shadow_min']) > 0 for r in lim); "
        "assert min(float(r['sustainable_compute']) for r in lim) > 0; print('ok', len(ecl), worst['date'], len(lim))\" " + csv + " " + small);
    EXPECT_EQ(check.status, 0) << check.output;
    const auto png = dir / "season.png";
    const auto plot = run_command(source("scripts/plot") + " --season " + csv + " --out " + png.string() + " 2>&1");
    EXPECT_EQ(plot.status, 0) << plot.output;
    EXPECT_GT(fs::exists(png) ? fs::file_size(png) : 0u, 20000u);
    fs::remove_all(dir);
}

TEST(Cli, AnnualDoseIsTheOrbitsLongTermAverageWhateverTheRunLength) {
    // Issue 14: a one-orbit run printed its own SAA passes scaled to a year (any single orbit gives
    // 11-350 rad(Si)/yr). The annual figure must be the orbit's long-term average: within 100-225
    // rad(Si)/yr at 650 km SSO behind 10 mm Al (Suncatcher: ~150), the same for a half-orbit and a
    // one-orbit run, and printed beside the run's own dose, labelled as such. Issue 28: the automatic
    // checkpoint interval is planned on it too, the same for both runs: Daly's τ(δ, M) at the long-term
    // MTBF M = 1 / (5 ranks · Σ 1/D_k · Ḋ_year), Σ 1/D_k = 1/44 + 1/5000 + 1/450 + 1/400 per rad (UECC,
    // SEFI, host CPU, host RAM), τ = √(2δM)(1 + √(δ/2M)/3 + δ/(18M)) − δ (Daly 2006).
    std::string annual[2];
    const char* durations[2] = {"2935", "5871"};
    for (int k = 0; k < 2; ++k) {
        const auto dir = fresh_dir(std::string("annual_dose_") + durations[k]);
        const auto r = run_scenario("scenarios/smoke.yaml", std::string(" --set duration_s=") + durations[k] +
                                   " --set output_step_s=30 --set output.vtk=false", dir, false);
        ASSERT_EQ(r.status, 0) << r.output;
        EXPECT_NE(r.output.find("annual dose (long-term average)"), std::string::npos) << r.output;
        EXPECT_NE(r.output.find("over this run"), std::string::npos) << r.output;
        const auto check = run_command(
            "/usr/bin/python3 -c \"import json,sys,math; s=json.load(open(sys.argv[1]+'/summary.json'))['radiation']; "
            "a=s['annual_dose_rad_per_yr']; assert 100 <= a <= 225, a; "
            "M = 1 / (5 * a / (365.25 * 86400) * (1/44 + 1/5000 + 1/450 + 1/400)); d = 60.0; x = d / (2 * M); "
            "tau = math.sqrt(2 * d * M) * (1 + math.sqrt(x) / 3 + x / 9) - d; "
            "assert abs(s['long_term_mean_time_between_interruptions_s'] - M) < 1e-9 * M, (s, M); "
            "assert abs(s['checkpoint_interval_s'] - tau) < 1e-9 * tau, (s['checkpoint_interval_s'], tau); "
            "assert s['checkpoint_interval_from'] == 'long_term_mtbf'; print(repr(a), repr(s['checkpoint_interval_s']))\" " +
            dir.string());
        EXPECT_EQ(check.status, 0) << check.output;
        annual[k] = check.output;
        fs::remove_all(dir);
    }
    EXPECT_EQ(annual[0], annual[1]);
}

TEST(Cli, FaultFreeGoodputIsDividedOut) {
    // Issue 28: with no faults (rate_scale 0) goodput is below 1 (the unfinished last step), and the
    // trials' goodput over the fault-free goodput is 1: the boundary step is divided out.
    const auto dir = fresh_dir("fault_free_ratio");
    const auto r = run_scenario("scenarios/smoke.yaml", " --set radiation.rate_scale=0 --set output.vtk=false", dir);
    ASSERT_EQ(r.status, 0) << r.output;
    const auto check = run_command(
        "/usr/bin/python3 -c \"import json,sys; s=json.load(open(sys.argv[1]+'/summary.json'))['radiation']; "
        "assert s['goodput'] < 0.999 and abs(s['goodput_vs_fault_free'] - 1) < 1e-9, s; print('ok')\" " + dir.string());
    EXPECT_EQ(check.status, 0) << check.output;
    fs::remove_all(dir);
}

TEST(Cli, VtkFramesShowRadiationFaultsRebootsAndSpares) {
    // A solar particle event a million times the background over the poles, 16 chips per satellite
    // (crashes every few minutes across the formation) and one hot spare: the frames' status,
    // filled in after the run, must agree with /radiation/events (tests/cli/check_vtk_fault_status.py).
    const auto dir = fresh_dir("vtk_faults");
    const auto r = run_scenario("scenarios/smoke.yaml", " --set duration_s=2400 --set 'radiation.solar_particle_events=[{start_s: 0, "
                               "duration_s: 100000, flux_factor: 1e6}]' --set radiation.chips_per_satellite=16"
                               " --set radiation.spare_satellites=1 --set radiation.reboot_s=120"
                               " --set output.vtk_every=1", dir);
    ASSERT_EQ(r.status, 0) << r.output;
    const auto check = run_command("/usr/bin/python3 " + source("tests/cli/check_vtk_fault_status.py") + " " +
                                   dir.string() + " 120");
    EXPECT_EQ(check.status, 0) << check.output;
    EXPECT_NE(check.output.find("ok"), std::string::npos) << check.output;
    // The spare holds no rank: the job trains on the other satellites, so the faults act on its fabric.
    const auto coupled = run_command(
        "/usr/bin/python3 -c \"import json,sys; s=json.load(open(sys.argv[1]+'/summary.json')); "
        "n=s['satellites']; "
        "assert s['workload']['data_parallel'] == n - 1, (s['workload']['data_parallel'], n); "
        "assert s['radiation']['fabric']['coupled'], s['radiation']['fabric']; print('ok')\" " + dir.string());
    EXPECT_EQ(coupled.status, 0) << coupled.output;
    fs::remove_all(dir);
}

TEST(Cli, FaultsActOnTheFabricTheirTrialsAndFrames) {
    // Issue 13: faults scaled up so every trial has crashes and terminal outages; ranks leave a
    // shrunk ring and links go down. The trials, trial 0's outages and the frames' fault_down must
    // agree (tests/cli/check_fabric_faults.py), and coupled goodput must fall below the fault-free 1.
    const auto dir = fresh_dir("fabric_faults");
    const auto r = run_scenario("scenarios/smoke.yaml", " --set duration_s=3000 --set radiation.rate_scale=200000 --set radiation.link_outages_per_day=0.0002"
                               " --set workload.on_rank_loss=shrink --set radiation.trials=16 --set output.vtk_every=1", dir);
    ASSERT_EQ(r.status, 0) << r.output;
    const auto check = run_command("/usr/bin/python3 " + source("tests/cli/check_fabric_faults.py") + " " + dir.string());
    EXPECT_EQ(check.status, 0) << check.output;
    EXPECT_NE(check.output.find("ok"), std::string::npos) << check.output;
    fs::remove_all(dir);
}

TEST(Cli, VtkFramesCarryTheTrainingsLinkUtilisation) {
    // Issue 18, finding 6: `utilisation` was 0 in every frame. Each frame now holds the training's
    // use of every link over the epoch starting at its sample; averaged over the frames it must
    // equal the run's utilisation per link in /workload/link_utilisation (equal epochs, steady
    // capacities on the smoke run), and some link must be busy.
    const auto dir = fresh_dir("vtk_utilisation");
    const auto r = run_scenario("scenarios/smoke.yaml", " --set output.vtk_every=1", dir);
    ASSERT_EQ(r.status, 0) << r.output;
    const auto check = run_command(
        "/usr/bin/python3 -c \"import glob,sys,h5py,numpy as np; from vtkmodules.vtkIOXML import vtkXMLPolyDataReader; "
        "from vtkmodules.util.numpy_support import vtk_to_numpy as v; d=sys.argv[1]; g=h5py.File(d+'/result.h5','r')['workload/link_utilisation']; "
        "run={(int(a),int(b)):u for a,b,u in zip(g['source'][:],g['target'][:],g['utilisation'][:])}; acc={}; "
        "files=sorted(glob.glob(d+'/vtk/formation_*.vtp'))[:-1]; assert len(files) > 5\n"
        "for fn in files:\n"
        " rd=vtkXMLPolyDataReader(); rd.SetFileName(fn); rd.Update(); cd=rd.GetOutput().GetCellData()\n"
        " [acc.setdefault((int(x),int(y)),[]).append(u) for x,y,u in zip(v(cd.GetArray('link_source')),v(cd.GetArray('link_target')),v(cd.GetArray('utilisation'))) if x>=0]\n"
        "assert max(max(u) for u in acc.values()) > 0\n"
        "bad=[(k,run[k],np.mean(u)) for k,u in acc.items() if k in run and len(u)==len(files) and abs(np.mean(u)-run[k]) > 0.02*max(run[k],1e-12)]\n"
        "assert not bad, bad[:3]; print('ok', len(files), len(acc))\" " + dir.string());
    EXPECT_EQ(check.status, 0) << check.output;
    fs::remove_all(dir);
}

TEST(Cli, MixtureOfExpertsScenarioBreaksItsStepsDown) {
    // Issue 19: the shipped Kanana-2-class MoE on suncatcher-81 runs, and every step is compute +
    // its MoE all-to-alls + the exposed all-reduce (/workload/steps), as the summary says.
    const auto dir = fresh_dir("moe");
    const auto r = run_scenario("scenarios/suncatcher-81-moe.yaml", " --set duration_s=1200 --set output.vtk=false --set radiation.trials=2", dir, false);
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("MoE all-to-all"), std::string::npos) << r.output;
    const auto check = run_command(
        "/usr/bin/python3 -c \"import h5py,json,sys,numpy as np; d=sys.argv[1]; f=h5py.File(d+'/result.h5','r'); "
        "w=json.load(open(d+'/summary.json'))['workload']; g=f['workload/steps']; "
        "dur=g['end_s'][:]-g['start_s'][:]; parts=g['compute_s'][:]+g['all_to_all_s'][:]+g['exposed_communication_s'][:]; "
        "assert len(dur) > 10 and np.allclose(dur, parts, rtol=1e-9), abs(dur-parts).max(); "
        "assert g['all_to_all_s'][:].min() > 0 and abs(g['all_to_all_s'][:].mean() - w['all_to_all_per_step_s']) < 1e-9; "
        "print('ok', len(dur), w['all_to_all_per_step_s'])\" " + dir.string());
    EXPECT_EQ(check.status, 0) << check.output;
    fs::remove_all(dir);
}

TEST(Cli, ConstellationTraceHasEveryAlgorithmAndOneTrackForRanksInStep) {
    // Issue 28 item 6: a constellation's trace showed only its first algorithm, on 324 identical rank
    // tracks (31 MB for an orbit). Now: a process per algorithm, the ranks that step together on one
    // track, and DiLoCo's and NoLoCo's replicas one track each, whose rounds end where the outer sync ends.
    const auto dir = fresh_dir("constellation_trace");
    const auto trace = dir / "run.trace.json";
    const auto r = run_command(run_line("scenarios/constellation-4x81.yaml", " --set duration_s=1200 --set output.vtk=false", dir / "run") + " --trace " +
                               trace.string());
    ASSERT_EQ(r.status, 0) << r.output;
    std::ofstream(dir / "check.py") << R"(import json, sys
d = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))["constellation"]["algorithms"]
ev = d["traceEvents"]
procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
for name in ("ring", "hierarchical"):
    pid = [p for p, n in procs.items() if n == name + ": ranks"]
    assert len(pid) == 1, procs
    threads = [e for e in ev if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == pid[0]]
    assert len(threads) == 1 and threads[0]["args"]["name"].startswith("all 324 ranks"), threads
    assert d["metadata"][name + "_steps_total"] == s[name]["steps"], (name, d["metadata"], s[name]["steps"])
for name in ("diloco", "noloco"):
    pid = [p for p, n in procs.items() if n == name + ": replicas"][0]
    threads = {e["tid"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == pid}
    assert threads == {0, 1, 2, 3}, threads
    rounds = [e for e in ev if e["ph"] == "X" and e["pid"] == pid and e["name"].startswith("round ")]
    syncs = {(e["tid"], e["args"]["round"]): e for e in ev if e["ph"] == "X" and e["pid"] == pid and e["name"].startswith("outer sync")}
    assert rounds and syncs
    for e in rounds:
        k = (e["tid"], e["args"]["round"])
        if k in syncs:
            assert abs(syncs[k]["ts"] + syncs[k]["dur"] - (e["ts"] + e["dur"])) < 1e-3, (e, syncs[k])
    assert d["metadata"][name + "_outer_rounds"] == s[name]["outer_rounds"]
# Issue 25 item 6, the convergence model beside the measured rate: ring is data-parallel (x1); diloco at
# M = 4, H = 50 > 30 is bounded above by the H = 30 figure; noloco has no covering figure and says why.
assert s["ring"]["effective_tokens_per_s"] == s["ring"]["tokens_per_s"]
assert s["diloco"]["effective_bound"] == "at_most" and s["diloco"]["token_multiplier"] > 1
assert abs(s["diloco"]["effective_tokens_per_s"] * s["diloco"]["token_multiplier"] - s["diloco"]["tokens_per_s"]) < 1e-6 * s["diloco"]["tokens_per_s"]
assert s["noloco"]["effective_tokens_per_s"] is None and "arXiv" in s["noloco"]["convergence_not_covered"]
print("ok", len(ev))
)";
    const auto check = run_command("/usr/bin/python3 " + (dir / "check.py").string() + " " + trace.string() + " " +
                                   (dir / "run" / "summary.json").string());
    EXPECT_EQ(check.status, 0) << check.output;
    EXPECT_LT(fs::file_size(trace), 2u << 20);
    fs::remove_all(dir);
}

TEST(Cli, TraceMatchesTheHdf5StepTimings) {
    const auto dir = fresh_dir("trace");
    const auto trace = dir / "run.trace.json";
    const auto r = run_command(run_line("scenarios/smoke.yaml", " --set output.vtk=false", dir) + " --trace " + trace.string());
    ASSERT_EQ(r.status, 0) << r.output;
    // The ranks, all in step, share one named track; each written "step N" slice has the start
    // and duration of step N in /workload/steps (microseconds in the trace).
    const auto check = run_command(
        "/usr/bin/python3 -c \"import h5py,json,sys; d=json.load(open(sys.argv[1])); f=h5py.File(sys.argv[2],'r'); "
        "ev=d['traceEvents']; ranks=int(f.attrs['satellite_count']); "
        "names=[e for e in ev if e['ph']=='M' and e['name']=='thread_name' and e['pid']==1]; "
        "assert [n['args']['name'].split(' (')[0] for n in names]==['all %d ranks' % ranks], names; "
        "st=f['workload/steps/start_s'][:]; en=f['workload/steps/end_s'][:]; "
        "steps=[e for e in ev if e['ph']=='X' and e['name'].startswith('step ')]; assert steps; "
        "bad=[e for e in steps if abs(e['ts']-st[int(e['name'][5:])]*1e6)>1 or abs(e['dur']-(en[int(e['name'][5:])]-st[int(e['name'][5:])])*1e6)>1]; "
        "assert not bad, bad[:3]; "
        // Link counters follow the run (issue 18, finding 5): a busy link has a sample per topology
        // epoch, and its utilisation is not one flat value.
        "c=[e for e in ev if e['ph']=='C']; import collections; u=collections.defaultdict(list); "
        "[u[e['name']].append(e['args']['utilisation']) for e in c if 'utilisation' in e['args']]; "
        "assert u and max(len(v) for v in u.values()) > 2 and any(len(set(v)) > 1 for v in u.values()), dict(u); "
        "print('ok', len(steps))\" " +
        trace.string() + " " + (dir / "result.h5").string());
    EXPECT_EQ(check.status, 0) << check.output;
    // A trace that cannot hold every step says so (it used to sample silently).
    const auto small = run_command(run_line("scenarios/smoke.yaml", " --set output.vtk=false --set output.trace_max_events=60", dir) +
                                   " --force --trace " + trace.string());
    ASSERT_EQ(small.status, 0) << small.output;
    EXPECT_NE(small.output.find("step in"), std::string::npos) << small.output;
    EXPECT_NE(small.output.find("output.trace_max_events"), std::string::npos) << small.output;
    fs::remove_all(dir);
}

TEST(Cli, CollectiveOnASyntheticRingMatchesAlphaBetaAndWritesATrace) {
    // Ring all-reduce on ring:p=8 at 400 Gbit/s, 500 ns per link: 2(p-1)a + 2(p-1)/p n/B.
    const auto dir = fresh_dir("fabric");
    const auto r = run_command(skyfabric() + " collective --topology ring:p=8,bw_gbps=400,latency_ns=500 --sizes 1GiB --trace " +
                               (dir / "c.json").string());
    ASSERT_EQ(r.status, 0) << r.output;
    const auto line_start = r.output.find("    1073741824");
    ASSERT_NE(line_start, std::string::npos) << r.output;
    std::istringstream line(r.output.substr(line_start));
    double bytes = 0, time_us = 0;
    line >> bytes >> time_us;
    const double p = 8, alpha = 500e-9, bandwidth = 400e9 / 8;
    const double expected_s = 2 * (p - 1) * alpha + 2 * (p - 1) / p * bytes / bandwidth;
    EXPECT_NEAR(time_us * 1e-6, expected_s, 0.01 * expected_s);
    const auto json = run_command("/usr/bin/python3 -c \"import json,sys; d=json.load(open(sys.argv[1])); "
                                  "x=[e for e in d['traceEvents'] if e['ph']=='X']; assert len(x)==1 and x[0]['dur']>0; print('ok')\" " +
                                  (dir / "c.json").string());
    EXPECT_EQ(json.status, 0) << json.output;
    EXPECT_EQ(run_command(skyfabric() + " collective --topology ring:p=8,bw=4").status, 2);
    fs::remove_all(dir);
}

namespace {
// The time column (µs, as seconds) of the table row for `bytes`; NaN when there is none.
double table_time_s(const std::string& output, const std::string& bytes) {
    std::istringstream in(output);
    for (std::string line; std::getline(in, line);) {
        std::istringstream fields(line);
        std::string size;
        double time_us = 0;
        if (fields >> size >> time_us && size == bytes) return time_us * 1e-6;
    }
    return std::nan("");
}
}  // namespace

TEST(Cli, CollectiveOnAShippedScenarioWithASyntheticTopologyIgnoresTheOrbit) {
    // suncatcher-81 has an orbit, a formation, links and radiation; torus2d:x=8,y=8 replaces
    // them (one note on stderr) and its 64 ranks replace the 81 satellites. With the fabric's
    // grid, hierarchical_ring is the 2-D ring: 28a + 1.96875 n/B (docs/collectives.md).
    const std::string command = skyfabric() + " collective " + source("scenarios/suncatcher-81.yaml") +
                                " --topology torus2d:x=8,y=8,bw_gbps=400,latency_ns=500 --sizes 1GiB";
    const double alpha = 500e-9, bandwidth = 400e9 / 8, n = 1073741824;
    const auto ring = run_command(command);
    ASSERT_EQ(ring.status, 0) << ring.output;
    EXPECT_NE(ring.output.find("note: --topology replaces the orbit of"), std::string::npos) << ring.output;
    EXPECT_NE(ring.output.find("ignoring orbit, formation, dynamics, station_keeping, metrics, links, radiation, "
                               "duration_orbits, workload.parallelism.data"),
              std::string::npos)
        << ring.output;
    EXPECT_NE(ring.output.find("over 64 ranks on torus2d:x=8,y=8"), std::string::npos) << ring.output;
    EXPECT_NEAR(table_time_s(ring.output, "1073741824"), 126 * (alpha + n / 64 / bandwidth), 1e-6);
    const auto two_d = run_command(command + " --algorithm hierarchical_ring");
    ASSERT_EQ(two_d.status, 0) << two_d.output;
    EXPECT_NEAR(table_time_s(two_d.output, "1073741824"), 28 * alpha + 1.96875 * n / bandwidth, 1e-6);
    // Without --topology the scenario is still its own: radiation keeps needing its orbit.
    const auto orbit = run_command(skyfabric() + " collective " + source("scenarios/smoke.yaml") + " --sizes 1MiB");
    EXPECT_EQ(orbit.status, 0) << orbit.output;
    EXPECT_EQ(orbit.output.find("note:"), std::string::npos) << orbit.output;
}

TEST(Cli, DirectAllToAllOnASwitchIsOneStepAtTheInjectionBound) {
    // Every rank sends n/p to each other rank at once over its one link: 2a + (p-1)/p n/B.
    const auto r = run_command(skyfabric() +
                               " collective --topology switch:p=8,bw_gbps=400,latency_ns=500 --op all_to_all "
                               "--algorithm direct --sizes 1GiB");
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("all_to_all, direct over 8 ranks"), std::string::npos) << r.output;
    const double alpha = 500e-9, bandwidth = 400e9 / 8, n = 1073741824;
    EXPECT_NEAR(table_time_s(r.output, "1073741824"), 2 * alpha + 7.0 / 8 * n / bandwidth, 1e-6);
}

TEST(Cli, SetTakesOneValuePerUseSoTheScenarioMayComeAnywhere) {
    // Issue 18: `run --set k=v SCENARIO -o DIR` said "scenario is required": --set took the
    // scenario as a second value.
    const auto dir = fresh_dir("set_order");
    const auto r = run_command(skyfabric() + " run --set output.vtk=false " + source("scenarios/smoke.yaml") +
                               " -o " + dir.string() + " --set radiation.enabled=false -q");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_TRUE(fs::exists(dir / "result.h5")) << r.output;
    for (const char* command : {"validate", "season", "collective"}) {
        const auto c = run_command(skyfabric() + " " + command + " --set seed=3 " + source("scenarios/smoke.yaml") +
                                   (std::string(command) == "collective" ? " --sizes 1MiB" : ""));
        EXPECT_EQ(c.status, 0) << command << ": " << c.output;
    }
    // Two values after one --set: the second is no override.
    const auto two = run_command(skyfabric() + " validate --set seed=3 seed=4 " + source("scenarios/smoke.yaml"));
    EXPECT_EQ(two.status, 2) << two.output;
    fs::remove_all(dir);
}

TEST(Cli, CollectiveWritesCsvJsonAndTheAverageBusBandwidth) {
    // Issue 18: a machine-readable table and nccl-tests' closing "# Avg bus bandwidth" line.
    const std::string base = skyfabric() + " collective --topology ring:p=8,bw_gbps=400,latency_ns=500 --sizes 1MiB,64MiB,1GiB";
    const auto table = run_command(base);
    ASSERT_EQ(table.status, 0) << table.output;
    std::istringstream in(table.output);
    std::string line;
    double bus_sum = 0.0, average = -1.0;
    int rows = 0;
    while (std::getline(in, line)) {
        if (line.rfind("# Avg bus bandwidth : ", 0) == 0) {
            average = std::stod(line.substr(22));
            EXPECT_NE(line.find(" GB/s"), std::string::npos) << line;
        }
        if (line.empty() || line[0] == '#' || line.find("size(B)") != std::string::npos) continue;
        std::istringstream fields(line);
        double bytes = 0, time_us = 0, alg = 0, bus = 0;
        fields >> bytes >> time_us >> alg >> bus;
        bus_sum += bus;
        ++rows;
    }
    ASSERT_EQ(rows, 3) << table.output;
    EXPECT_NEAR(average, bus_sum / 3, 0.01 * average) << table.output;

    const auto dir = fresh_dir("collective_formats");
    const auto csv = run_command(base + " --format csv > " + (dir / "c.csv").string());
    ASSERT_EQ(csv.status, 0) << csv.output;
    const auto json = run_command(base + " --format json > " + (dir / "c.json").string());
    ASSERT_EQ(json.status, 0) << json.output;
    // The CSV and JSON rows are the table's, in SI units.
    const auto check = run_command(
        "/usr/bin/python3 -c \"import csv,json,sys; rows=list(csv.DictReader(open(sys.argv[1]))); j=json.load(open(sys.argv[2])); "
        "assert [float(r['bytes']) for r in rows] == [1048576, 67108864, 1073741824], rows; "
        "assert j['complete'] is True and j['ranks'] == 8 and j['op'] == 'all_reduce' and len(j['rows']) == 3, j; "
        "assert all(abs(float(a['bus_bw_B_s']) - b['bus_bw_B_s']) <= 1e-9 * b['bus_bw_B_s'] for a, b in zip(rows, j['rows'])); "
        "assert all(float(r['bus_bw_B_s']) <= float(r['bound_bus_bw_B_s']) * 1.0001 and float(r['time_s']) > 0 for r in rows); "
        "avg=sum(r['bus_bw_B_s'] for r in j['rows']) / 3; assert abs(j['avg_bus_bw_B_s'] - avg) <= 1e-9 * avg; "
        "print('ok', avg / 1e9)\" " + (dir / "c.csv").string() + " " + (dir / "c.json").string());
    EXPECT_EQ(check.status, 0) << check.output;
    EXPECT_EQ(run_command(base + " --format xml").status, 2);
    fs::remove_all(dir);
}

TEST(Cli, ThreadsCapTheMonteCarloTrials) {
    // Issue 18: --threads N caps the threads a run uses, radiation.threads included.
    const auto dir = fresh_dir("threads");
    const auto r = run_scenario("scenarios/smoke.yaml", " --set output.vtk=false --set radiation.threads=4 --threads 1", dir);
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(read_file(dir / "summary.json").find("\"threads\": 1"), std::string::npos) << read_file(dir / "summary.json");
    EXPECT_EQ(run_scenario("scenarios/smoke.yaml", " --threads -1", dir).status, 2);
    fs::remove_all(dir);
}

TEST(Cli, ResultOpensInXarrayWithNamedDimensionsAndTheEpoch) {
    // Issue 18: every axis of result.h5 is a netCDF dimension (HDF5 dimension scales), so xarray's
    // h5netcdf engine opens the file and each of its groups with named dimensions; the epoch is a
    // root attribute in ISO-8601 UTC.
    const auto dir = fresh_dir("xarray");
    const auto r = run_scenario("scenarios/smoke.yaml", " --set orbit.epoch_utc=2027-06-01T12:30:00Z --set radiation.trials=4", dir);
    ASSERT_EQ(r.status, 0) << r.output;
    const std::string script = R"(
import h5py, sys, xarray as xr
path = sys.argv[1]
ds = xr.open_dataset(path, engine="h5netcdf")
assert ds.attrs["epoch_utc"] == "2027-06-01T12:30:00Z", ds.attrs["epoch_utc"]
assert ds.attrs["Conventions"] == "CF-1.8", ds.attrs
assert " run -q " in ds.attrs["history"] and ds.attrs["history"][:2] == "20", ds.attrs["history"]
assert ds.attrs["source"].startswith("skyfabric "), ds.attrs["source"]
assert "epoch_utc" in ds["time_s"].attrs["long_name"], ds["time_s"].attrs
assert ds["time_s"].dims == ("time_s",) and float(ds["time_s"][-1]) == 600.0, ds["time_s"]
ds_root_time = ds["time_s"].values
f = xr.open_dataset(path, engine="h5netcdf", group="formation")
p = f["position_lvlh_m"]
assert p.dims == ("time_s", "satellite", "xyz"), p.dims
assert f["reference_neighbours_m"].dims == ("time_s", "neighbour"), f["reference_neighbours_m"].dims
h = h5py.File(path, "r")
assert float(p[20, 3, 1]) == h["formation/position_lvlh_m"][20, 3, 1] != 0
assert p.sizes["satellite"] == h.attrs["satellite_count"]
links = xr.open_dataset(path, engine="h5netcdf", group="links")
assert links["capacity_bps"].dims == ("link",) and links["offsets"].sizes["offset"] == 22, links
assert xr.open_dataset(path, engine="h5netcdf", group="radiation/trials")["goodput"].dims == ("trial",)
steps = xr.open_dataset(path, engine="h5netcdf", group="workload/steps")
assert steps["end_s"].dims == ("step",) and int(steps["step"][0]) == 0
# Every group opens: no axis is left without a dimension.
groups = []
h.visititems(lambda name, obj: groups.append(name) if isinstance(obj, h5py.Group) else None)
# Every group with a time axis holds the sample times as its own coordinate: selecting by time
# works group by group (issue 28), and the values are the root's.
timed = 0
for g in groups:
    ds = xr.open_dataset(path, engine="h5netcdf", group=g).load()
    if "time_s" in ds.dims:
        assert (ds["time_s"].values == ds_root_time).all(), g
        assert ds.sel(time_s=600.0).sizes.get("time_s") is None, g
        timed += 1
assert timed >= 4, timed
# Every enum's "0=a,1=b" names are also CF flags in the dataset's own type.
flagged = []
def flags(name, obj):
    names = [a for a in obj.attrs if a.endswith("_names")] if isinstance(obj, h5py.Dataset) else []
    for a in names:
        pairs = [p.split("=") for p in obj.attrs[a].split(",")]
        assert list(obj.attrs["flag_values"]) == [int(k) for k, _ in pairs], name
        assert obj.attrs["flag_values"].dtype == obj.dtype, name
        assert obj.attrs["flag_meanings"] == " ".join(v for _, v in pairs), name
        flagged.append(name)
h.visititems(flags)
assert "workload/steps/status" in flagged, flagged
print("ok", len(groups))
)";
    const auto script_path = dir / "check_xarray.py";
    std::ofstream(script_path) << script;
    const auto check = run_command("/usr/bin/python3 " + script_path.string() + " " + (dir / "result.h5").string());
    EXPECT_EQ(check.status, 0) << check.output;
    EXPECT_NE(check.output.find("ok"), std::string::npos) << check.output;
    fs::remove_all(dir);
}

TEST(Cli, ConstellationRadiationReportsEveryAlgorithmsGoodputAndGatewayLosses) {
    // Issue 25: radiation with a constellation. A short, heavily scaled run so that every trial
    // has faults: each algorithm's goodput interval is its trials' min-max (6 trials) with its median
    // below its fault-free goodput, gateway terminals lose links, and result.h5 holds one row per
    // algorithm and each algorithm's trials, consistent with summary.json.
    const auto dir = fresh_dir("constellation_radiation");
    const auto r = run_scenario("scenarios/constellation-4x81.yaml", " --set duration_s=1800 --set output_step_s=60 --set output.vtk=false"
                               " --set workload.local_steps=5 --set radiation.enabled=true --set radiation.rate_scale=1000"
                               " --set radiation.trials=6 --set radiation.link_outages_per_day=0", dir, false);
    ASSERT_EQ(r.status, 0) << r.output;
    // Issue 52 (item 13): the summary table says the goodput's interval is where the trials lie
    // (min–max of 6), prints the mean's 95 % confidence interval beside it, leaves out the envelope
    // (cluster 0's frame over every cluster is no formation's envelope), and says what capacity 0 on a
    // link is; the link-samples it counts are those of result.h5 (tests/cli/check_summary_table.py).
    const auto table = dir / "table.txt";
    std::ofstream(table) << r.output;
    const auto rows = run_command("/usr/bin/python3 " + source("tests/cli/check_summary_table.py") + " " + dir.string() + " " +
                                  table.string());
    EXPECT_EQ(rows.status, 0) << rows.output;
    EXPECT_NE(rows.output.find("ok"), std::string::npos) << rows.output;
    const auto check = run_command(
        "/usr/bin/python3 -c \"import h5py,json,sys,numpy as np; d=sys.argv[1]; f=h5py.File(d+'/result.h5','r'); "
        "s=json.load(open(d+'/summary.json'))['radiation']['constellation']; "
        "names=['ring','hierarchical','diloco','noloco']; assert sorted(s) == sorted(names), list(s); "
        "g=f['radiation/constellation']; assert list(g['algorithm'][:]) == [0, 1, 2, 3]; "
        "[(lambda a, i: ("
        "  a['goodput']['interval'] == [min(f['radiation/constellation/' + n + '/goodput'][:]), max(f['radiation/constellation/' + n + '/goodput'][:])] or sys.exit('interval ' + n), "
        "  g.attrs['interval'] == 'min_max' or sys.exit('kind'), "
        "  g['goodput_interval_low'][i] == a['goodput']['interval'][0] or sys.exit('h5 interval ' + n), "
        "  a['goodput']['median'] < a['fault_free_goodput'] or sys.exit('median ' + n), "
        "  a['gateway_links_lost']['mean'] > 0 or sys.exit('gateway ' + n), "
        "  abs(np.median(f['radiation/constellation/' + n + '/goodput'][:]) - a['goodput']['median']) < 1e-12 or sys.exit('h5 ' + n), "
        "  abs(g['fault_free_goodput'][i] - a['fault_free_goodput']) < 1e-12 or sys.exit('row ' + n), "
        "  len(f['radiation/constellation/' + n + '/gateway_links_lost'][:]) == 6 or sys.exit('trials ' + n)))(s[n], i) "
        " for i, n in enumerate(names)]; "
        "print('ok')\" " + dir.string());
    EXPECT_EQ(check.status, 0) << check.output;
    EXPECT_NE(check.output.find("ok"), std::string::npos) << check.output;
    fs::remove_all(dir);
}

TEST(Cli, ConstellationHotSparesArePerClusterAndTrainOnlyAsReplacements) {
    // radiation.spare_satellites in a constellation: each cluster keeps its own (4 x 81 with 2 each:
    // 316 ranks), every algorithm's trials run with them, and a cluster cannot give all its
    // satellites to spares (exit 2, the key named).
    const auto dir = fresh_dir("constellation_spares");
    const std::string common = " --set duration_s=1200 --set output_step_s=60 --set output.vtk=false --set output.hdf5=false"
                               " --set workload.local_steps=5 --set radiation.enabled=true --set radiation.rate_scale=1000"
                               " --set radiation.trials=4";
    const auto r = run_scenario("scenarios/constellation-4x81.yaml", common +
                               " --set radiation.spare_satellites=2", dir);
    ASSERT_EQ(r.status, 0) << r.output;
    // A rank moves to a spare only once lost (the swaps' counts and costs: ClusterFaults' tests).
    const auto check = run_command(
        "/usr/bin/python3 -c \"import json,sys; s=json.load(open(sys.argv[1]+'/summary.json')); "
        "assert s['workload']['data_parallel'] == 316, s['workload']['data_parallel']; "
        "c=s['radiation']['constellation']; assert sorted(c) == ['diloco','hierarchical','noloco','ring'], list(c); "
        "assert all(0 < a['goodput']['median'] <= a['fault_free_goodput'] and a['spare_swaps']['mean'] <= a['ranks_lost']['mean'] for a in c.values()); "
        "assert all(a['bytes_outside_own_clusters'] == 0 for n, a in s['constellation']['algorithms'].items() if n != 'noloco'); "
        "print('ok')\" " + dir.string());
    EXPECT_EQ(check.status, 0) << check.output;
    EXPECT_NE(check.output.find("ok"), std::string::npos) << check.output;
    const auto all = run_command(skyfabric() + " validate " + source("scenarios/constellation-4x81.yaml") +
                                 " --set radiation.enabled=true --set radiation.spare_satellites=81");
    EXPECT_EQ(all.status, 2) << all.output;
    EXPECT_NE(all.output.find("radiation.spare_satellites"), std::string::npos) << all.output;
    EXPECT_NE(all.output.find("per cluster"), std::string::npos) << all.output;
    fs::remove_all(dir);
}

TEST(Cli, ConstellationRunsItsClustersGatewayLayerAndAlgorithms) {
    // Issue 17: four clusters with their aggregation layer, checked independently
    // (tests/cli/check_constellation.py): chiefs spaced along the orbit, cluster 1 where its own
    // single-formation run puts it, gateway links exactly where the line of sight clears the Earth,
    // and every algorithm's figures. At 3,000 km the outer pairs (6,000 and 9,000 km apart) are hidden.
    for (const char* spacing_km : {"100", "3000"}) {
        const auto dir = fresh_dir(std::string("constellation_") + spacing_km);
        const std::string common = " --set duration_s=600 --set output_step_s=60 --set output.vtk=false";
        const auto r = run_scenario("scenarios/constellation-4x81.yaml", common +
                                   " --set constellation.spacing_km=" + spacing_km + " --set workload.local_steps=5", dir / "four", false);
        ASSERT_EQ(r.status, 0) << r.output;
        for (const char* name : {"ring", "hierarchical", "diloco", "noloco"}) EXPECT_NE(r.output.find(name), std::string::npos) << r.output;
        // Cluster 1 alone: suncatcher-81 with its chief moved `spacing` along the orbit (a = R_E + 650 km).
        char arg_latitude_deg[32];
        std::snprintf(arg_latitude_deg, sizeof arg_latitude_deg, "%.17g", std::stod(spacing_km) * 1e3 / (6378137.0 + 650e3) * 180.0 / M_PI);
        const auto one = run_scenario("scenarios/suncatcher-81.yaml", common +
                                     " --set radiation.enabled=false --set orbit.arg_latitude_deg=" +
                                     arg_latitude_deg, dir / "one");
        ASSERT_EQ(one.status, 0) << one.output;
        const auto check = run_command("/usr/bin/python3 " + source("tests/cli/check_constellation.py") + " " +
                                       (dir / "four").string() + " " + (dir / "one").string() + " " + spacing_km);
        EXPECT_EQ(check.status, 0) << check.output;
        EXPECT_NE(check.output.find("ok"), std::string::npos) << check.output;
        fs::remove_all(dir);
    }
}

TEST(Cli, LocalSgdSettingsHaveOneHome) {
    // Issue 30 item 5: H and the outer gradients are workload.local_steps and
    // workload.outer_bytes_per_element for every local-SGD replica; the constellation's old keys
    // name the new ones at their line and column (exit 2).
    const auto dir = fresh_dir("local_sgd_keys");
    std::string text = read_file(source("scenarios/constellation-4x81.yaml"));
    const std::string algorithms = "  algorithms: [ring, hierarchical, diloco, noloco]\n";
    const auto at = text.find(algorithms);
    ASSERT_NE(at, std::string::npos);
    text.insert(at + algorithms.size(), "  inner_steps: 20\n");
    const auto line = 2 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
    const auto old_keys = dir / "old_keys.yaml";
    std::ofstream(old_keys) << text;
    auto r = run_command(skyfabric() + " validate " + old_keys.string() + " 2>&1");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("old_keys.yaml:" + std::to_string(line) + ":16: key 'constellation.inner_steps'"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("moved to workload.local_steps"), std::string::npos) << r.output;
    // Rank replicas (sync: local_steps) beside cluster replicas (diloco, noloco) is refused...
    const std::string constellation = skyfabric() + " validate " + source("scenarios/constellation-4x81.yaml") +
                                      " --set workload.sync=local_steps";
    r = run_command(constellation + " 2>&1");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("workload.sync"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("diloco and noloco make each cluster one"), std::string::npos) << r.output;
    // ...and with ring and hierarchical alone they are local SGD's outer syncs over rank replicas.
    r = run_command(constellation + " --set constellation.algorithms=ring 2>&1");
    EXPECT_EQ(r.status, 0) << r.output;
    fs::remove_all(dir);
}
