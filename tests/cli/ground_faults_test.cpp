// Operational faults through the program (issue 53): a synthetic fabric with a `faults:` section
// runs without an orbit, and its summary's figures are the hand-derived ones within their Poisson
// and binomial intervals; the shipped Llama 3 scenario over a shorter span.
#include "cli_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <string>

namespace {

using namespace skyfabric_test;
using nlohmann::json;

constexpr double z999 = 3.29;  // two-sided 99.9 %

}  // namespace

TEST(GroundFaults, ASyntheticFabricWithOperationalFaultsRunsWithoutAnOrbit) {
    const auto dir = fresh_dir("ground_faults_fabric");
    // 8 ranks of 2 GPUs: 0.5 GPU failures and 0.25 software restarts per GPU-day, 12 a day in all.
    std::ofstream(dir / "ground.yaml") << R"(name: ground
seed: 3
duration_s: 172800
topology: "switch:p=8,bw_gbps=400,latency_ns=1000"
workload: {model_parameters: 1.0e9, tokens_per_step: 1.0e6, parallelism: {tensor: 2}}
faults:
  causes:
    - {name: gpu, per_gpu_day: 0.5, effect: reboot}
    - {name: software, per_gpu_day: 0.25, effect: restart}
  checkpoint_cost_s: 10
  restart_s: 120
  trials: 40
)";
    const auto r = run_command(skyfabric() + " run " + (dir / "ground.yaml").string() + " -o " + (dir / "run").string());
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("operational faults"), std::string::npos) << r.output;
    const json f = json::parse(read_file(dir / "run" / "summary.json"))["faults"];
    EXPECT_EQ(f["gpus"].get<double>(), 16.0);
    EXPECT_NEAR(f["expected_events_per_day"].get<double>(), 16 * 0.75, 1e-9);
    // Every event interrupts (no person holds the job): the mean rate's Poisson interval holds 12.
    const auto ci = f["interruptions_per_day_mean_ci95"];
    EXPECT_LE(ci[0].get<double>(), 12.0);
    EXPECT_GE(ci[1].get<double>(), 12.0);
    // The causes' shares: binomial around 2/3 and 1/3 of the total.
    const double total = f["interruptions_per_day_mean"].get<double>() * 2.0 * 40;
    const double gpu = f["causes"]["gpu"]["interruptions"].get<double>() * 40;
    EXPECT_NEAR(gpu, 2.0 / 3.0 * total, z999 * std::sqrt(total * 2.0 / 9.0));
    EXPECT_EQ(f["causes"]["software"]["effect"], "restart");
    EXPECT_NEAR(f["causes"]["gpu"]["share"].get<double>() + f["causes"]["software"]["share"].get<double>(), 1.0, 1e-12);
    // Daly's interval at M = 1 / 12 a day, on the 10 s checkpoint.
    EXPECT_NEAR(f["mean_time_between_interruptions_s"].get<double>(), 86400.0 / 12.0, 1e-6);
    const double g = f["goodput"].get<double>();
    EXPECT_GT(g, 0.5);
    EXPECT_LT(g, f["fault_free_goodput"].get<double>());
}

TEST(GroundFaults, TheLlama3ScenarioGivesThePapersRateOverFiveDays) {
    // The shipped scenario, 5 days and 24 trials instead of 54 days and 200 (a few seconds): the
    // rate is the paper's 419 / 54 a day by construction, and the trials' mean holds it.
    const auto dir = fresh_dir("ground_faults_llama3");
    const auto r = run_command(skyfabric() + " run -q " + source("scenarios/llama3-16k-ground.yaml") +
                               " --set duration_s=432000 --set faults.trials=24 -o " + (dir / "run").string());
    ASSERT_EQ(r.status, 0) << r.output;
    const json f = json::parse(read_file(dir / "run" / "summary.json"))["faults"];
    EXPECT_EQ(f["gpus"].get<double>(), 16384.0);
    EXPECT_NEAR(f["expected_events_per_day"].get<double>(), 419.0 / 54.0, 1e-9);
    const auto ci = f["interruptions_per_day_mean_ci95"];
    EXPECT_LE(ci[0].get<double>(), 419.0 / 54.0);
    EXPECT_GE(ci[1].get<double>(), 419.0 / 54.0);
    // "More than 90 % effective training time": the median trial (over 5 days a manual
    // intervention's 2 h hold takes a trial below it; docs/faults.md has the 54-day spread).
    EXPECT_GT(f["goodput"].get<double>(), 0.90);
}

TEST(GroundFaults, OperationalFaultsJoinRadiationOnAnOrbit) {
    // suncatcher-81 for a fifth of an orbit with Llama 3's causes at 2,000 times their rates beside
    // radiation: the expected count per cause is rate × 81 chips × 2,000 × the run, by hand.
    const auto dir = fresh_dir("ground_faults_orbit");
    const auto r = run_command(skyfabric() + " run -q " + source("scenarios/suncatcher-81.yaml") +
                               " --set duration_orbits=0.2 --set radiation.trials=8 --set output.vtk=false"
                               " --set faults.preset=llama3_405b --set faults.rate_scale=2000 -o " + (dir / "run").string());
    ASSERT_EQ(r.status, 0) << r.output;
    const json s = json::parse(read_file(dir / "run" / "summary.json"));
    const json& causes = s["radiation"]["operational"]["causes"];
    const double days = s["simulated_s"].get<double>() / 86400.0;
    EXPECT_NEAR(causes["faulty_gpu"]["expected"].get<double>(), 148.0 / (54.0 * 16384.0) * 81 * 2000 * days, 1e-9);
    EXPECT_EQ(causes["faulty_gpu"]["index"], 0);
    double events = 0.0, expected = 0.0;
    for (const auto& [name, c] : causes.items()) events += c["events"].get<double>() * 8, expected += c["expected"].get<double>() * 8;
    EXPECT_NEAR(events, expected, z999 * std::sqrt(expected));
    // The radiation kinds' expected counts are the dose's alone, as without operational faults.
    const auto plain = run_command(skyfabric() + " run -q " + source("scenarios/suncatcher-81.yaml") +
                                   " --set duration_orbits=0.2 --set radiation.trials=8 --set output.vtk=false -o " +
                                   (dir / "plain").string());
    ASSERT_EQ(plain.status, 0) << plain.output;
    const json p = json::parse(read_file(dir / "plain" / "summary.json"));
    EXPECT_EQ(s["radiation"]["expected_events_by_kind"], p["radiation"]["expected_events_by_kind"]);
}
