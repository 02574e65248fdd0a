// A formation's training pulls its topologies from the run's one producer (RunState::run_orbit,
// src/simulation/topology_producer.hpp): with two threads at capacity 16, the physics on a thread of
// its own up to 16 samples ahead; with one at capacity 0, each pull advancing the physics. The same
// code path either way (tests/src/topology_producer_test.cpp tests the producer itself at both), so
// the training sees the same topologies and the run's end at the same pull: same steps, same trials,
// same samples, also when the run is stopped part-way.
#include "scenario/scenario.hpp"
#include "simulation/simulation.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

namespace {

namespace sim = skyfabric::simulation;

// Keeps each sample's link count; with `stop`, raises it once `stop_after` samples are recorded.
struct LinkCountRecorder final : sim::Recorder {
    std::vector<std::size_t> links;
    std::atomic<bool>* stop = nullptr;
    std::size_t stop_after = 0;
    void begin(const sim::RunSetup&) override {}
    void record(const sim::Sample& s) override {
        links.push_back(s.topology ? s.topology->links.size() : 0);
        if (stop && links.size() == stop_after) stop->store(true);
    }
    void end(const sim::RunSummary&) override {}
};

const char* const scenario_text = R"(name: physics-thread
seed: 11
duration_s: 3000
output_step_s: 10
orbit: {altitude_km: 650, sun_synchronous: true, ltan_h: 6.0}
formation: {layout: suncatcher_lattice, radius_m: 300, radial_pitch_m: 100, along_track_pitch_m: 200}
dynamics: {model: nonlinear}
links: {topology: nearest_k, terminals_per_satellite: 4}
workload: {model_parameters: 1.0e9, tokens_per_step: 1.0e6}
radiation: {shielding_mm_al: 10, rate_scale: 300, trials: 4, link_outages_per_day: 5}
)";

struct RunResult {
    sim::RunSummary summary;
    std::vector<std::size_t> links;
};

// threads 1: the producer at capacity 0; 2: at capacity 16 (RunState::producer_capacity).
RunResult run_with_threads(std::int32_t threads, std::size_t stop_after = 0, const std::string& text = scenario_text) {
    auto sc = skyfabric::scenario::load_scenario_text(text, "physics-thread.yaml");
    sc.threads = threads;
    std::atomic<bool> stop{false};
    LinkCountRecorder recorder;
    if (stop_after > 0) {
        recorder.stop = &stop;
        recorder.stop_after = stop_after;
    }
    RunResult r;
    r.summary = sim::run(sc, {&recorder}, &stop);
    r.links = recorder.links;
    return r;
}

void expect_same_training(const RunResult& inline_run, const RunResult& threaded) {
    ASSERT_TRUE(inline_run.summary.training && threaded.summary.training);
    const auto& a = *inline_run.summary.training;
    const auto& b = *threaded.summary.training;
    EXPECT_EQ(a.summary.steps, b.summary.steps);
    EXPECT_EQ(a.summary.end_s, b.summary.end_s);
    EXPECT_EQ(a.summary.stopped, b.summary.stopped);
    EXPECT_EQ(a.summary.topology_epochs, b.summary.topology_epochs);
    EXPECT_EQ(a.summary.time_lost_s, b.summary.time_lost_s);
    ASSERT_EQ(a.steps.size(), b.steps.size());
    for (std::size_t i = 0; i < a.steps.size(); ++i) {
        EXPECT_EQ(a.steps[i].start_s, b.steps[i].start_s) << "step " << i;
        EXPECT_EQ(a.steps[i].end_s, b.steps[i].end_s) << "step " << i;
    }
    EXPECT_EQ(inline_run.links, threaded.links);
    EXPECT_EQ(inline_run.summary.samples_written, threaded.summary.samples_written);
    EXPECT_EQ(inline_run.summary.simulated_s, threaded.summary.simulated_s);
    EXPECT_EQ(inline_run.summary.stop_reason, threaded.summary.stop_reason);
}

}  // namespace

TEST(PhysicsThread, TrainingBesideThePhysicsIsTheTrainingInline) {
    const RunResult inline_run = run_with_threads(1);
    const RunResult threaded = run_with_threads(2);
    ASSERT_TRUE(inline_run.summary.complete) << inline_run.summary.stop_reason;
    ASSERT_TRUE(threaded.summary.complete) << threaded.summary.stop_reason;
    EXPECT_GT(inline_run.summary.training->summary.topology_epochs, 10);  // the fabric changed under it
    expect_same_training(inline_run, threaded);
    ASSERT_TRUE(inline_run.summary.radiation && threaded.summary.radiation);
    const auto& ra = *inline_run.summary.radiation;
    const auto& rb = *threaded.summary.radiation;
    EXPECT_EQ(ra.fabric_keyframes, rb.fabric_keyframes);  // the trials damaged the same timeline
    EXPECT_EQ(ra.fabric_evaluations, rb.fabric_evaluations);
    ASSERT_TRUE(ra.monte_carlo && rb.monte_carlo);
    EXPECT_EQ(ra.monte_carlo->goodput_per_trial, rb.monte_carlo->goodput_per_trial);
}

TEST(PhysicsThread, AStoppedRunEndsTheTrainingWhereTheInlineRunDoes) {
    // Stopped after 120 of 301 samples: at capacity 16 the physics runs up to 16 samples ahead, yet
    // the training must end at the same step, not where the thread stopped.
    const RunResult inline_run = run_with_threads(1, 120);
    const RunResult threaded = run_with_threads(2, 120);
    EXPECT_FALSE(inline_run.summary.complete);
    EXPECT_FALSE(threaded.summary.complete);
    EXPECT_EQ(inline_run.summary.samples_written, 120u);
    EXPECT_TRUE(inline_run.summary.training->summary.stopped);
    expect_same_training(inline_run, threaded);
}

TEST(PhysicsThread, APowerLimitedTrainingStoppedPartWayKeepsTheStepsBeforeTheStop) {
    // Noon-midnight orbit with a 200 Wh battery: eclipses throttle the compute, and the training asks
    // the producer to look ahead for the samples each step's compute spans. Stopped after 120 samples,
    // the look-ahead or a pull meets the stop; the steps done by the last sample simulated must be
    // those of the run that was not stopped, and none may end after it.
    std::string text = scenario_text;
    text.replace(text.find("ltan_h: 6.0"), 11, "ltan_h: 12.0");
    text += "power: {battery_capacity_wh: 200}\n";
    const RunResult whole = run_with_threads(2, 0, text);
    const RunResult stopped = run_with_threads(2, 120, text);
    ASSERT_TRUE(whole.summary.complete) << whole.summary.stop_reason;
    EXPECT_GT(whole.summary.power_compute_lost_s, 0.0);  // the power limit acted
    EXPECT_EQ(stopped.summary.samples_written, 120u);
    const auto& w = *whole.summary.training;
    const auto& s = *stopped.summary.training;
    EXPECT_TRUE(s.summary.stopped);
    ASSERT_GT(s.steps.size(), 0u);
    ASSERT_LT(s.steps.size(), w.steps.size());
    for (std::size_t i = 0; i < s.steps.size(); ++i) {
        EXPECT_LE(s.steps[i].end_s, stopped.summary.simulated_s) << "step " << i;
        EXPECT_EQ(s.steps[i].start_s, w.steps[i].start_s) << "step " << i;
        EXPECT_EQ(s.steps[i].end_s, w.steps[i].end_s) << "step " << i;
    }
    // The next step of the whole run ends after the last sample the stopped run simulated.
    EXPECT_GT(w.steps[s.steps.size()].end_s, stopped.summary.simulated_s);
}

TEST(PhysicsThread, ANumericalFailureEndsTheTrainingWhereTheInlineRunDoes) {
    // A 150 km orbit under strong drag re-enters within the hour (as Hardening's decay run): the
    // propagation fails part-way. At capacity 16 the thread meets the failure up to 16 samples ahead
    // of the training, which must still see it at the same pull as at capacity 0: the same steps,
    // none ending after the last sample simulated, and the failure as the stop reason: where the
    // physics failed, as without a workload (the failed propagator is not advanced again).
    std::string text = scenario_text;
    text.replace(text.find("altitude_km: 650"), 16, "altitude_km: 150");
    text.replace(text.find("dynamics: {model: nonlinear}"), 28,
                 "dynamics: {model: nonlinear, drag: {solar_activity: high, ballistic_coefficient_kg_m2: 1, dispersion: 0}}");
    const RunResult inline_run = run_with_threads(1, 0, text);
    const RunResult threaded = run_with_threads(2, 0, text);
    EXPECT_NE(inline_run.summary.stop_reason.find("numerical failure"), std::string::npos) << inline_run.summary.stop_reason;
    EXPECT_FALSE(inline_run.summary.complete);
    EXPECT_LT(inline_run.summary.samples_written, 301u);  // of 301
    const auto& a = *inline_run.summary.training;
    EXPECT_TRUE(a.summary.stopped);
    ASSERT_GT(a.steps.size(), 0u);
    EXPECT_LE(a.steps.back().end_s, inline_run.summary.simulated_s);
    expect_same_training(inline_run, threaded);
    std::string physics_only = text;
    const auto workload = physics_only.find("workload:");
    physics_only.erase(workload, physics_only.find('\n', workload) + 1 - workload);
    const RunResult alone = run_with_threads(1, 0, physics_only);
    EXPECT_EQ(alone.summary.samples_written, inline_run.summary.samples_written);
    EXPECT_EQ(alone.summary.stop_reason, inline_run.summary.stop_reason);
}
