// Nothing lost, round three (issue 51): hostile numbers, traces, bytes and options against the real
// program. Each test is one finding's reproducer: every number read passes one range check (exit 2
// with file:line:column, key and range), messages quote at most ~80 escaped characters of bad
// input, counts are written in 64 bits, and paths and text that are not UTF-8 never fail a run late.
#include "cli_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/mount.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;
using namespace skyfabric_test;

namespace {

// A training job on the edge list `csv` (written as dir/edges.csv), run with a time limit so that a
// regression that spins (finding 1) fails the test instead of hanging it.
Result run_on_edges(const fs::path& dir, const std::string& csv, const std::string& extra = "") {
    std::ofstream(dir / "edges.csv", std::ios::binary) << csv;
    std::ofstream(dir / "job.yaml") << "name: job\nduration_s: 600\ntopology: file:edges.csv\n"
                                       "workload: {model_parameters: 1.0e9}\n";
    return run_command("timeout -s KILL 120 " + skyfabric() + " run -q " + (dir / "job.yaml").string() + " -o " +
                       (dir / "out").string() + " --force " + extra);
}

// The serving-two-datacentres scenario in dir/s.yaml with `arrivals` in place of its Poisson stream;
// a trace replaces the prompt and output length distributions.
void write_serving(const fs::path& dir, const std::string& arrivals, const std::string& extra_yaml = "") {
    fs::copy_file(source("scenarios/two-datacentres.csv"), dir / "two-datacentres.csv", fs::copy_options::overwrite_existing);
    std::ifstream in(source("scenarios/serving-two-datacentres.yaml"));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string from = "arrivals: { rate_per_s: 1 }";
    text.replace(text.find(from), from.size(), "arrivals: " + arrivals);
    if (arrivals.find("trace") != std::string::npos)
        for (const char* key : {"    prompt_tokens:", "    output_tokens:"}) {
            const auto at = text.find(key);
            text.erase(at, text.find('\n', at) + 1 - at);
        }
    std::ofstream(dir / "s.yaml") << text << extra_yaml;
}

const std::string header = "source,target,bw_gbps,latency_ns\n";
const std::string ring_rest = "1,2,400,500\n2,3,400,500\n3,0,400,500\n";

}  // namespace

TEST(RoundThree, AnEdgeListLinkOutsideTheBandwidthRangeIsRefusedWithItsCellAndRange) {
    // Finding 1: 0,1,1e300,500 in a 4-ring spun in the flow solver for ever; 1e200 exited 0 with a
    // false "no path". Finding 11: 1e-300 trained "0 steps" silently. Now one range check refuses
    // each with the file:line:column of the cell, the key and the range, exit 2.
    const auto dir = fresh_dir("r3_edge_range");
    for (const std::string bw : {"1e300", "1e200", "1e-300", "1e8"}) {
        const auto r = run_on_edges(dir, header + "0,1," + bw + ",500\n" + ring_rest);
        EXPECT_EQ(r.status, 2) << bw << ": " << r.output;
        EXPECT_NE(r.output.find((dir / "edges.csv").string() + ":2:5: key 'bw_gbps': expected a finite number in "
                                "[1e-06, 1e+07] Gbit/s, got '" + bw + "'"),
                  std::string::npos)
            << r.output;
    }
    auto r = run_on_edges(dir, header + "0,1,400,1e300\n" + ring_rest);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("edges.csv:2:9: key 'latency_ns': expected a finite number in [0, 1e+12] ns"), std::string::npos)
        << r.output;
    // The spec string and the mapping read the same range.
    r = run_command(skyfabric() + " validate " + (dir / "job.yaml").string() + " --set topology=ring:p=4,bw_gbps=1e300");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("ring: bw_gbps: expected a finite number in [1e-06, 1e+07] Gbit/s, got '1e300'"), std::string::npos)
        << r.output;
    // At the range's ends the job trains.
    r = run_on_edges(dir, header + "0,1,1e7,500\n" + ring_rest);
    EXPECT_EQ(r.status, 0) << r.output;
    fs::remove_all(dir);
}

TEST(RoundThree, AJobThatTrainsNoStepSaysSoAndStrictCountsIt) {
    // Finding 11: a fabric too slow for one step in the run trained "0 steps" without a word.
    const auto dir = fresh_dir("r3_zero_steps");
    const std::string slow = header + "0,1,1e-6,500\n1,2,1e-6,500\n2,3,1e-6,500\n3,0,1e-6,500\n";
    auto r = run_on_edges(dir, slow);
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("warning: the job trained no step"), std::string::npos) << r.output;
    r = run_on_edges(dir, slow, "--strict");
    EXPECT_EQ(r.status, 3) << r.output;
    r = run_on_edges(dir, header + "0,1,400,500\n" + ring_rest, "--strict");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(r.output.find("no step"), std::string::npos) << r.output;
    fs::remove_all(dir);
}

TEST(RoundThree, ConstellationFaultTrialsOfAnAlgorithmThatTrainedNoStepAreNamedNotFailed) {
    // A constellation under radiation whose run is shorter than a step (5 s here; 64 clusters' ring over
    // 5,184 ranks in 600 s alike) exited 1 with "step duration must be > 0" (ring) or "a replica did no
    // fault-free step" (diloco) after computing everything. With nothing to replay, their trials are not
    // played: exit 0, and summary.json and the table name them.
    const auto dir = fresh_dir("r3_constellation_no_step");
    const auto out = dir / "run";
    const auto run_for = [&](const std::string& seconds) {
        return run_command(skyfabric() + " run --yes " + source("scenarios/constellation-4x81.yaml") + " --set duration_s=" + seconds +
                           " --set radiation.enabled=true --set 'constellation.algorithms=[ring, diloco]' -o " + out.string() + " --force");
    };
    auto r = run_for("5");
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("fault trials not played          ring, diloco"), std::string::npos) << r.output;
    auto summary = nlohmann::json::parse(read_file(out / "summary.json"));
    EXPECT_EQ(summary["radiation"]["constellation_not_played"], nlohmann::json::array({"ring", "diloco"})) << summary["radiation"].dump();
    EXPECT_FALSE(summary["radiation"].contains("constellation"));
    // Long enough for both: played as before, none named.
    r = run_for("40");
    ASSERT_EQ(r.status, 0) << r.output;
    summary = nlohmann::json::parse(read_file(out / "summary.json"));
    EXPECT_FALSE(summary["radiation"].contains("constellation_not_played"));
    EXPECT_TRUE(summary["radiation"]["constellation"].contains("ring"));
    EXPECT_TRUE(summary["radiation"]["constellation"].contains("diloco"));
    fs::remove_all(dir);
}

TEST(RoundThree, AByteOrderMarkBeforeATraceOrAnEdgeListIsAccepted) {
    // Finding 11: a UTF-8 BOM (as spreadsheets save CSV) was refused with the BOM invisible in the message.
    const auto dir = fresh_dir("r3_bom");
    auto r = run_on_edges(dir, "\xEF\xBB\xBF" + header + "0,1,400,500\n" + ring_rest);
    EXPECT_EQ(r.status, 0) << r.output;
    std::ofstream(dir / "requests.csv", std::ios::binary) << "\xEF\xBB\xBF" "arrival_s,prompt_tokens,output_tokens\n0,4000,10\n1,4000,12\n";
    write_serving(dir, "{ trace: requests.csv }");
    r = run_command(skyfabric() + " validate " + (dir / "s.yaml").string());
    EXPECT_EQ(r.status, 0) << r.output;
    fs::remove_all(dir);
}

TEST(RoundThree, TraceErrorsQuoteAtMostEightyEscapedCharacters) {
    // Finding 4: a bad trace cell was echoed whole (10 MB of stderr), raw binary reached the
    // terminal, and a file pointed at by mistake had its first line printed.
    const auto dir = fresh_dir("r3_trace_echo");
    write_serving(dir, "{ trace: requests.csv }");
    const auto refused = [&](const std::string& trace) {
        std::ofstream(dir / "requests.csv", std::ios::binary) << trace;
        return run_command(skyfabric() + " validate " + (dir / "s.yaml").string());
    };
    const std::string head = "arrival_s,prompt_tokens,output_tokens\n0,4000,10\n";
    auto r = refused(head + "1," + std::string(10'000'000, '7') + "x,10\n");
    EXPECT_EQ(r.status, 2) << r.output.substr(0, 2000);
    EXPECT_LT(r.output.size(), 2000u) << r.output.substr(0, 2000);
    EXPECT_NE(r.output.find(":3:3: column 'prompt_tokens': expected a whole number"), std::string::npos) << r.output.substr(0, 2000);
    EXPECT_NE(r.output.find("… (10000001 bytes)"), std::string::npos) << r.output.substr(0, 2000);
    r = refused(head + "1,\x1b[2J\x07\x01,10\n");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_EQ(r.output.find('\x1b'), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find('\x07'), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("got '\\x1B[2J\\x07\\x01'"), std::string::npos) << r.output;
    r = refused("root:SECRET-HASH:20228:0:99999:7:::\ndaemon:*:20228:0:99999:7:::\n");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("not a request trace"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("SECRET"), std::string::npos) << r.output;
    // A cell past the range of a token count is refused with the range, not written as a negative count.
    r = refused(head + "1,4000,3000000000000\n");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find(":3:8: column 'output_tokens': expected a whole number of tokens in [1, 1000000000000]"),
              std::string::npos)
        << r.output;
    fs::remove_all(dir);
}

TEST(RoundThree, PromptLengthsAbove2To31AreWrittenAsThemselves) {
    // Finding 3: lengths from a lognormal tail above 2^31 were written to result.h5 as negative int32.
    const auto dir = fresh_dir("r3_int64");
    write_serving(dir, "{ rate_per_s: 2 }");
    const auto r = run_command(skyfabric() + " run -q " + (dir / "s.yaml").string() + " -o " + (dir / "out").string() +
                               " --set duration_s=60 --set output.vtk=false"
                               " --set 'workload.inference.prompt_tokens={distribution: lognormal, mean: 1.0e8, sigma: 3}'");
    ASSERT_EQ(r.status, 0) << r.output;
    std::ofstream(dir / "check.py") << R"(import sys, h5py, numpy as np
with h5py.File(sys.argv[1] + '/result.h5', 'r') as f:
    for group in [k for k in ('inference', 'inference/local_pd', 'inference/prfaas') if k + '/requests' in f]:
        p = f[group + '/requests/prompt_tokens']
        assert p.dtype == np.int64, p.dtype
        v = p[:]
        assert v.min() >= 1, v.min()
        assert v.max() > 2**31, v.max()
        assert np.all(f[group + '/requests/cached_tokens'][:] <= v)
print('ok')
)";
    const auto check = run_command("/usr/bin/python3 " + (dir / "check.py").string() + " " + (dir / "out").string());
    EXPECT_EQ(check.status, 0) << check.output;
    EXPECT_NE(check.output.find("ok"), std::string::npos) << check.output;
    fs::remove_all(dir);
}

TEST(RoundThree, PathsThatAreNotUtf8RunToTheEndAndUtf16IsRefusedUpFront) {
    // Finding 8: a non-UTF-8 byte in the output, scenario or trace path let the run compute and then
    // fail with exit 1 (type_error.316); a UTF-16 scenario too.
    const auto dir = fresh_dir("r3_utf8");
    const std::string smoke_text = read_file(source("scenarios/smoke.yaml"));
    std::ofstream(dir / "s\xFE.yaml") << smoke_text;
    auto r = run_command(skyfabric() + " run -q '" + (dir / "s\xFE.yaml").string() + "' -o '" + (dir / "out\xFF").string() +
                         "' --set duration_s=60 --set output.vtk=false");
    EXPECT_EQ(r.status, 0) << r.output;
    const std::string summary = read_file(dir / "out\xFF" / "summary.json");
    ASSERT_FALSE(summary.empty());
    EXPECT_TRUE(nlohmann::json::accept(summary));
    EXPECT_NE(summary.find("\\\\xFF"), std::string::npos) << summary.substr(0, 800);
    // A trace whose name is not UTF-8.
    std::ofstream(dir / "req\xFF.csv") << "arrival_s,prompt_tokens,output_tokens\n0,4000,10\n1,4000,12\n";
    write_serving(dir, "{ trace: \"req\xFF.csv\" }");
    r = run_command(skyfabric() + " run -q " + (dir / "s.yaml").string() + " -o " + (dir / "serving").string() +
                    " --set duration_s=30 --set output.vtk=false");
    EXPECT_NE(r.status, 1) << r.output;
    EXPECT_EQ(r.output.find("type_error"), std::string::npos) << r.output;
    // UTF-16 (with its byte-order mark) and a Latin-1 byte are refused before any run, with exit 2.
    std::string utf16 = "\xFF\xFE";
    for (char c : smoke_text) utf16 += std::string{c, '\0'};
    std::ofstream(dir / "utf16.yaml", std::ios::binary) << utf16;
    r = run_command(skyfabric() + " run -q " + (dir / "utf16.yaml").string() + " -o " + (dir / "u16").string());
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("UTF-16"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(dir / "u16"));
    std::ofstream(dir / "latin1.yaml", std::ios::binary) << "# caf\xE9\n" << smoke_text;
    r = run_command(skyfabric() + " validate " + (dir / "latin1.yaml").string());
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("latin1.yaml:1:6: byte 0xE9 is not UTF-8"), std::string::npos) << r.output;
    fs::remove_all(dir);
}

TEST(RoundThree, LinkBudgetRefusesNanInfAndOverflowingOptions) {
    // Finding 10: --distance-m nan exited 0 and printed "channels -2147483648/24".
    for (const std::string option :
         {"--distance-m nan", "--distance-m inf", "--distance-m 1e300", "--aperture-m inf", "--aperture-m 1e300",
          "--power-w nan", "--power-w 1e300", "--efficiency nan", "--wavelength-nm nan", "--losses-db nan",
          "--grid-ghz inf", "--rate-gbps 1e300", "--margin-db nan", "--pointing-jitter-urad inf",
          "--pointing-error-urad nan", "--distances 1e308km", "--distances nan"}) {
        const auto r = run_command(skyfabric() + " link-budget " + option);
        EXPECT_EQ(r.status, 2) << option << ": " << r.output;
        EXPECT_NE(r.output.find("expected a finite number in ["), r.output.find("is not a distance in [")) << r.output;
        EXPECT_EQ(r.output.find("-2147483648"), std::string::npos) << r.output;
    }
    // At the ends of the ranges every figure is a number and the channel counts are within 0..planned.
    for (const std::string option : {"--distance-m 1e13 --power-w 1e6 --aperture-m 100",
                                     "--distance-m 0.001 --power-w 1e-12 --aperture-m 1e-4 --rate-gbps 1e5"}) {
        const auto r = run_command(skyfabric() + " link-budget --format json " + option);
        ASSERT_EQ(r.status, 0) << option << ": " << r.output;
        const auto j = nlohmann::json::parse(r.output);
        for (const auto& row : j["rows"]) {
            EXPECT_GE(row["channels_closing"].get<double>(), 0.0) << option;
            EXPECT_LE(row["channels_closing"].get<double>(), row["channels_planned"].get<double>()) << option;
            for (const auto& [name, value] : row.items()) EXPECT_TRUE(value.is_number()) << option << " " << name;
        }
    }
}

TEST(RoundThree, SetErrorsOnAListEntryNameTheSetNotLineOneOfTheFile) {
    // Finding 11: --set constellation.clusters.1.along_track_km=1e9 was reported at FILE:1:1.
    const auto r = run_command(skyfabric() + " validate " + source("scenarios/constellation-4x81-stress.yaml") +
                               " --set constellation.clusters.1.along_track_km=1e9");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("--set constellation.clusters.1.along_track_km: key 'constellation.clusters[1].along_track_km': "
                            "value 1e9 is out of range"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find(".yaml:1:1"), std::string::npos) << r.output;
}

TEST(RoundThree, TwoClustersAtOnePlaceAreRefusedByValidate) {
    // Finding 11: two clusters at one place passed validate and ran into a separation alarm.
    const std::string stress = source("scenarios/constellation-4x81-stress.yaml");
    auto r = run_command(skyfabric() + " validate " + stress + " --set constellation.clusters.1.along_track_km=0");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("clusters 0 and 1 are 0 km apart in one plane"), std::string::npos) << r.output;
    // Lattices that overlap along-track (a count spaced closer than two radii) too; the scenarios as shipped pass.
    r = run_command(skyfabric() + " validate " + source("scenarios/constellation-4x81.yaml") + " --set constellation.spacing_km=0.01");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("their satellites would collide"), std::string::npos) << r.output;
    for (const char* shipped : {"constellation-4x81.yaml", "constellation-4x81-stress.yaml", "serving-4x81.yaml"}) {
        r = run_command(skyfabric() + " validate " + source(std::string("scenarios/") + shipped));
        EXPECT_EQ(r.status, 0) << shipped << ": " << r.output;
    }
}

TEST(RoundThree, AFullDiskIsOneLineWithTheOsReasonAndNoHdf5Diagnostics) {
    // Finding 11: a disk filling while HDF5 wrote printed 39 lines of HDF5-DIAG (from the thread
    // that writes in the background) before the reason.
    const auto dir = fresh_dir("r3_full_disk");
    const fs::path mounted = dir / "mnt";
    fs::create_directories(mounted);
    if (::mount("tmpfs", mounted.c_str(), "tmpfs", 0, "size=1m") != 0) {
        fs::remove_all(dir);
        GTEST_SKIP() << "cannot mount a small tmpfs here (needs root): " << std::strerror(errno);
    }
    const auto r = run_command(skyfabric() + " run -q " + source("scenarios/suncatcher-81.yaml") +
                               " --set output.vtk=false -o " + (mounted / "out").string());
    ::umount(mounted.c_str());
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("No space left on device"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("HDF5-DIAG"), std::string::npos) << r.output;
    EXPECT_LE(std::count(r.output.begin(), r.output.end(), '\n'), 3) << r.output;
    fs::remove_all(dir);
}

TEST(RoundThree, AnEarlyInterruptSaysSoWithoutInternalText) {
    // Finding 11: Ctrl-C or SIGTERM before the first sample printed "(NetworkClock: empty topology series)".
    const auto dir = fresh_dir("r3_early_interrupt");
    for (int twentieth = 1; twentieth <= 16; ++twentieth) {
        const std::string ms = std::to_string(50 * twentieth);
        const auto r = run_command("sh -c '" + skyfabric() + " run -q " + source("scenarios/suncatcher-81.yaml") +
                                   " --set output.vtk=false --force -o " + (dir / "out").string() +
                                   " & pid=$!; sleep " + std::to_string(0.05 * twentieth) + "; kill -TERM $pid; wait $pid'");
        // 143: the signal came before the program had started (its handler is installed first thing in
        // main; under the sanitizers loading alone takes longer than 50 ms): killed, nothing printed.
        EXPECT_TRUE(r.status == 130 || r.status == 0 || r.status == 143) << ms << " ms: " << r.output;
        EXPECT_EQ(r.output.find("NetworkClock"), std::string::npos) << ms << " ms: " << r.output;
        EXPECT_EQ(r.output.find("topology series"), std::string::npos) << ms << " ms: " << r.output;
    }
    fs::remove_all(dir);
}

TEST(RoundThree, ASignalAfterTheLastSampleStillExits130) {
    // Finding 11: a signal in a run's last second was ignored (exit 0). The run is held after its
    // last sample by a trace written to a pipe nobody reads yet; SIGTERM is sent while it waits.
    const auto dir = fresh_dir("r3_last_second");
    const fs::path out = dir / "out", pid = dir / "pid", rc = dir / "rc";
    const std::string script = "( " + skyfabric() + " run -q " + source("scenarios/smoke.yaml") + " -o " + out.string() +
                               " --trace - & echo $! > " + pid.string() + "; wait $!; echo $? > " + rc.string() +
                               " ) | ( i=0; while [ $i -lt 600 ] && ! grep -q pipe_write /proc/$(cat " + pid.string() +
                               " 2>/dev/null || echo 0)/wchan 2>/dev/null; do sleep 0.1; i=$((i+1)); done; kill -TERM $(cat " +
                               pid.string() + "); cat > /dev/null )";
    std::ofstream(dir / "script.sh") << script << "\n";
    const auto r = run_command("sh " + (dir / "script.sh").string());
    EXPECT_EQ(read_file(rc), "130\n") << r.output;
    EXPECT_NE(r.output.find("interrupted as the run ended"), std::string::npos) << r.output;
    EXPECT_NE(read_file(out / "summary.json").find("\"complete\": true"), std::string::npos);
    fs::remove_all(dir);
}
