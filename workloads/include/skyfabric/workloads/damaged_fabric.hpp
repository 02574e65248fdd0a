#pragma once
// The fabric as one Monte Carlo trial's faults have damaged it. A run keeps its fault-free
// topology timeline as keyframes (a new one only when the link set or a capacity changes), and
// a trial asks what a training step costs on a keyframe with links down, satellites rebooting
// and ranks moved or dropped. The answer comes from the same flow engine and step model as the
// fault-free run (simulate_training, one step on the damaged copy), cached per (keyframe,
// damage) and shared by every trial: a thousand trials meet the same few hundred damages.
// Pure: no I/O.

#include <cstdint>
#include <limits>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <skyfabric/links/topology.hpp>
#include <skyfabric/workloads/faults.hpp>
#include <skyfabric/workloads/job.hpp>
#include <skyfabric/workloads/training.hpp>

namespace skyfabric::workloads {

class TopologyTimeline {
public:
    // The topology valid from topology.time_s on (times non-decreasing). Kept as a new keyframe
    // only when its links (endpoints, capacity) differ from the last keyframe's; between
    // keyframes only light-time latencies move (sub-microsecond over a formation), and the
    // keyframe's are used.
    void append(const links::Topology& topology);
    std::size_t keyframe_count() const { return keyframes_.size(); }
    std::int64_t topology_count() const { return appended_; }
    // The keyframe valid at t (the first one before its start).
    std::size_t keyframe_index_at(double t) const;
    const links::Topology& keyframe(std::size_t k) const { return keyframes_[k]; }
    // When keyframe k gives way to the next (+inf for the last).
    double keyframe_end_s(std::size_t k) const;
    std::size_t memory_bytes() const;

private:
    std::vector<links::Topology> keyframes_;
    std::int64_t appended_ = 0;
};

// The step a trial's damaged fabric runs: the job as the fault-free run has it (data_parallel =
// the initial ranks), its accelerator and its options (placement, schedule, flow).
struct StepModel {
    TrainingJob job;
    Accelerator accelerator;
    TrainingOptions options;
};

class DamagedFabric final : public FabricModel {
public:
    // initial_ranks: satellites 0 … initial_ranks-1 hold the ranks of the undamaged fabric.
    DamagedFabric(const TopologyTimeline& timeline, StepModel model, std::int32_t initial_ranks);
    double extra_step_s(double t, const FabricDamage& damage) override;
    bool outage_link(std::int32_t satellite, double t, double mark,
                     std::pair<std::int32_t, std::int32_t>& link) const override;
    double next_change_s(double t) const override;

    // One step's duration on keyframe k with the damage (+inf: it cannot complete). With fewer
    // ranks the data-parallel batch shrinks with them (tokens per rank unchanged). Links down that
    // carry none of the step's traffic without them are left out (same ring, routes and rates).
    double step_s(std::size_t keyframe, const FabricDamage& damage);
    std::int64_t evaluations() const;  // distinct (keyframe, damage) steps solved

private:
    struct Solved {
        double step_s = std::numeric_limits<double>::infinity();
        std::vector<std::pair<std::int32_t, std::int32_t>> used_links;  // carried bytes, sorted
    };
    Solved solve(std::size_t keyframe, const FabricDamage& damage) const;
    const Solved& solved(std::size_t keyframe, const FabricDamage& damage);
    const TopologyTimeline& timeline_;
    StepModel model_;
    std::int32_t initial_ranks_ = 0;
    FabricDamage undamaged_;
    mutable std::shared_mutex mutex_;
    std::unordered_map<std::string, Solved> cache_;
};

}  // namespace skyfabric::workloads
