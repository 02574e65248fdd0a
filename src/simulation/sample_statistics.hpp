#pragma once
// Per-sample figures and the run's running totals over them: the formation metrics each sample
// carries (derive_metrics) and the minima, maxima and means the summary reports (SampleStatistics).
#include "scenario/scenario.hpp"
#include "simulation/simulation.hpp"

namespace skyfabric::simulation {

// Envelope, nearest neighbours, closest pair and the reference satellite's k nearest, into `s`.
void derive_metrics(const scenario::Scenario& sc, const physics::FormationSnapshot& snap, Sample& s);

class SampleStatistics {
public:
    // Folds one sample into the summary's minima and maxima, and into the sums the means need.
    void add(const Sample& s, double min_separation_alarm_m, RunSummary& m);
    // The means, once every sample is in; a figure no sample set (an infinity) becomes 0.
    void finish(RunSummary& m, bool links, bool constellation) const;

private:
    double shadow_sum_ = 0.0;
    double capacity_sum_bps_ = 0.0, bisection_sum_bps_ = 0.0, degree_sum_ = 0.0;
    std::size_t link_samples_ = 0;
    double gateway_capacity_sum_bps_ = 0.0, oversubscription_sum_ = 0.0;
};

}  // namespace skyfabric::simulation
