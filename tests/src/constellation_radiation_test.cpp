// A constellation's dose is each satellite's own: clusters spaced along the orbit cross the South
// Atlantic Anomaly one after another, by the time the orbit takes to cover their spacing.
#include "scenario/scenario.hpp"
#include "simulation/simulation.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

struct DoseRecorder final : skyfabric::simulation::Recorder {
    std::vector<std::vector<double>> dose_rate;  // [sample][satellite]
    void begin(const skyfabric::simulation::RunSetup&) override {}
    void record(const skyfabric::simulation::Sample& s) override {
        dose_rate.emplace_back(s.dose_rate_rad_s.begin(), s.dose_rate_rad_s.end());
    }
    void end(const skyfabric::simulation::RunSummary&) override {}
};

}  // namespace

// Two clusters 2,000 km apart along one 650 km orbit: cluster 1 leads, so it reaches each point of
// the ground track Δt = s / v earlier, v = a n = sqrt(μ / a) (circular orbit; J2 moves this by
// ~0.1 %): Δt = 2e6 / sqrt(3.986004418e14 / 7.028137e6) = 265.6 s. The Earth turns
// ω⊕ Δt = 1.1° meanwhile, small against the SAA's 30° width, so cluster 1's dose-rate history is
// cluster 0's, Δt earlier: the lag that best aligns them over half a day is Δt within the 10 s
// sampling (±20 s allowed).
TEST(ConstellationRadiation, ClustersApartCrossTheSaaAtDifferentTimes) {
    const std::string text = R"(name: saa
duration_s: 43200
output_step_s: 10
orbit: {altitude_km: 650, sun_synchronous: true, ltan_h: 6.0, epoch_utc: 2027-03-20T00:00:00Z}
formation: {layout: suncatcher_lattice, radius_m: 100, radial_pitch_m: 100, along_track_pitch_m: 200}
links: {}
radiation: {shielding_mm_al: 10}
constellation: {clusters: 2, spacing_km: 2000, gateways: {per_cluster: 1}}
)";
    const auto sc = skyfabric::scenario::load_scenario_text(text, "saa.yaml");
    DoseRecorder recorder;
    const auto summary = skyfabric::simulation::run(sc, {&recorder});
    ASSERT_TRUE(summary.complete) << summary.stop_reason;
    const std::size_t per_cluster = recorder.dose_rate.front().size() / 2;
    const double a_m = 6378137.0 + 650e3;
    const double expected_lag_s = 2e6 / std::sqrt(3.986004418e14 / a_m);
    EXPECT_NEAR(expected_lag_s, 265.6, 0.1);
    // Σ_t D1(t) D0(t + L) over lags L = 0 … 600 s.
    double best = -1.0;
    int best_lag = -1;
    const int n = static_cast<int>(recorder.dose_rate.size());
    for (int lag = 0; lag <= 60; ++lag) {
        double sum = 0.0;
        for (int k = 0; k + lag < n; ++k)
            sum += recorder.dose_rate[static_cast<std::size_t>(k)][per_cluster] * recorder.dose_rate[static_cast<std::size_t>(k + lag)][0];
        if (sum > best) {
            best = sum;
            best_lag = lag;
        }
    }
    EXPECT_NEAR(10.0 * best_lag, expected_lag_s, 20.0);
    // At one instant the two differ: at cluster 0's highest dose rate cluster 1 has left the peak.
    std::size_t peak = 0;
    for (std::size_t k = 0; k < recorder.dose_rate.size(); ++k)
        if (recorder.dose_rate[k][0] > recorder.dose_rate[peak][0]) peak = k;
    EXPECT_LT(recorder.dose_rate[peak][per_cluster], 0.9 * recorder.dose_rate[peak][0]);
}
