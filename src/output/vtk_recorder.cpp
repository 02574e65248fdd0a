#include "output/vtk_recorder.hpp"

#include <skyfabric/physics/frames.hpp>
#include <skyfabric/workloads/faults.hpp>

#include <algorithm>

namespace skyfabric::output {

namespace {

std::vector<std::int32_t> as_status(const std::vector<workloads::SatelliteCondition>& conditions) {
    std::vector<std::int32_t> out;
    out.reserve(conditions.size());
    for (auto c : conditions) out.push_back(static_cast<std::int32_t>(c));
    return out;
}

}  // namespace

void VtkRecorder::begin(const simulation::RunSetup& setup) {
    const auto& sc = *setup.scenario;
    every_ = sc.output.vtk_every;
    eci_ = sc.output.vtk_frame == scenario::VtkFrame::eci;
    const auto n = static_cast<std::int32_t>(setup.satellite_count);
    if (sc.radiation.enabled) {
        recovery_ = sc.radiation.recovery;
        recovery_.spare_satellites = std::min(recovery_.spare_satellites, n);
    }
    initial_status_ = as_status(workloads::satellite_conditions({}, {}, n, recovery_, 0.0, 0.0));
    std::filesystem::create_directories(directory_);
    writer_.emplace(directory_, "formation");
    cluster_of_ = setup.cluster_of;
    if (!cluster_of_.empty()) {
        cluster_sizes_.assign(static_cast<std::size_t>(*std::max_element(cluster_of_.begin(), cluster_of_.end())) + 1, 0);
        for (auto c : cluster_of_) ++cluster_sizes_[static_cast<std::size_t>(c)];
        cluster_writer_.emplace(directory_, "constellation");
    }
}

void VtkRecorder::record(const simulation::Sample& sample) {
    if (sample.index % static_cast<std::size_t>(every_) != 0) return;
    const auto& snap = *sample.snapshot;
    const std::size_t n = snap.satellites_lvlh.size();
    positions_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        positions_[i] = eci_ ? snap.satellites_eci[i].position_m : snap.satellites_lvlh[i].position_m;
    }
    viz::SatelliteFrame frame;
    frame.time_s = snap.time_s;
    frame.positions_m = positions_;
    frame.status = initial_status_;
    frame.delta_v_m_s = sample.delta_v_m_s;
    frame.nearest_neighbour_m = sample.nearest_neighbour_m;
    frame.dose_rad = sample.dose_rad;
    // A constellation's satellites each in its own cluster chief's LVLH frame too (the frame's points
    // are cluster 0's LVLH or ECI): scripts/render --cluster N draws cluster N there.
    if (!cluster_of_.empty() && sample.aggregation && sample.aggregation->chief_velocity_eci_m_s.size() == cluster_sizes_.size()) {
        const auto& a = *sample.aggregation;
        cluster_lvlh_.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            const auto c = static_cast<std::size_t>(cluster_of_[i]);
            cluster_lvlh_[i] = physics::eci_to_lvlh({a.chief_eci_m[c], a.chief_velocity_eci_m_s[c]}, snap.satellites_eci[i]).position_m;
        }
        frame.cluster_lvlh_m = cluster_lvlh_;
    }
    writer_->write_frame(frame, viz::LinkFrameData{sample.topology, {}, cluster_of_});
    if (cluster_writer_) write_cluster_frame(sample);
}

void VtkRecorder::write_cluster_frame(const simulation::Sample& sample) {
    // Centroids from the positions the main frame just drew, so both series share one frame.
    centroids_.assign(cluster_sizes_.size(), Eigen::Vector3d::Zero());
    for (std::size_t i = 0; i < positions_.size(); ++i) centroids_[static_cast<std::size_t>(cluster_of_[i])] += positions_[i];
    for (std::size_t c = 0; c < centroids_.size(); ++c) centroids_[c] /= std::max(cluster_sizes_[c], 1);
    std::vector<viz::ClusterPair> pairs;
    if (sample.topology) pairs = viz::cluster_pairs(*sample.topology, cluster_of_);
    cluster_writer_->write_cluster_frame({sample.snapshot->time_s, centroids_, cluster_sizes_, pairs});
}

void VtkRecorder::end(const simulation::RunSummary& summary) {
    if (!writer_) return;
    // The training's link use per topology epoch (the epoch starting at the frame's sample), in
    // epoch order; empty without a workload.
    std::span<const workloads::LinkEpoch> epochs;
    if (summary.training) epochs = summary.training->link_epochs;
    std::span<const workloads::FaultEvent> events;
    std::span<const workloads::SpareSwap> swaps;
    std::span<const workloads::LinkOutage> outages;
    if (summary.radiation) {
        const auto& r = *summary.radiation;
        events = r.events;
        if (r.goodput) {
            swaps = r.goodput->swaps;
            outages = r.goodput->link_outages;
        }
    }
    if (epochs.empty() && events.empty() && swaps.empty()) return;
    const auto n = static_cast<std::int32_t>(initial_status_.size());
    std::vector<std::pair<std::int32_t, std::int32_t>> down;
    std::vector<viz::PvdSeriesWriter::LinkValue> used;
    for (std::size_t i = 0; i < writer_->frames_written(); ++i) {
        const double t1 = writer_->frame_time_s(i);
        const double t0 = i == 0 ? -1.0 : writer_->frame_time_s(i - 1);  // events at t = 0 count in frame 0
        const auto status =
            as_status(workloads::satellite_conditions(events, swaps, n, recovery_, t0, t1));
        down.clear();  // trial 0's terminal outages holding a link down at the frame's time
        for (const auto& o : outages)
            if (o.start_s <= t1 && t1 < o.end_s) down.emplace_back(o.source, o.target);
        used.clear();
        auto e = std::lower_bound(epochs.begin(), epochs.end(), t1,
                                  [](const workloads::LinkEpoch& x, double t) { return x.end_s <= t; });
        for (; e != epochs.end() && e->start_s <= t1; ++e) used.push_back({e->source, e->target, e->utilisation});
        std::sort(used.begin(), used.end(),
                  [](const auto& a, const auto& b) { return std::pair{a.source, a.target} < std::pair{b.source, b.target}; });
        if (status != initial_status_ || !down.empty() || !used.empty())
            writer_->rewrite_after_run(i, {status, down, used});
    }
}

}  // namespace skyfabric::output
