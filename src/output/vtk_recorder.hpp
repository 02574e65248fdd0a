#pragma once
// ParaView frames of a run: every output.vtk_every-th sample as DIR/vtk/formation_NNNNNN.vtp,
// indexed by DIR/vtk/formation.pvd (valid after every frame, so partial runs open). Satellites'
// `status` is written as known then (hot spares); radiation faults are drawn on the whole
// dose-rate history after the run, so end() rewrites the frames whose status they change.
// A constellation also gets DIR/vtk/constellation.pvd at the same instants: each cluster one
// point at its centroid, one line per pair of clusters joined by gateway links.
#include "simulation/simulation.hpp"

#include <skyfabric/viz/pvd_writer.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

namespace skyfabric::output {

class VtkRecorder final : public simulation::Recorder {
public:
    explicit VtkRecorder(std::filesystem::path directory) : directory_(std::move(directory)) {}
    void begin(const simulation::RunSetup& setup) override;
    void record(const simulation::Sample& sample) override;
    void end(const simulation::RunSummary& summary) override;

private:
    void write_cluster_frame(const simulation::Sample& sample);

    std::filesystem::path directory_;
    std::optional<viz::PvdSeriesWriter> writer_;
    int every_ = 1;
    bool eci_ = false;
    workloads::RecoveryConfig recovery_;  // radiation.recovery when radiation is on (its spares, reboot time)
    std::vector<Eigen::Vector3d> positions_;
    std::vector<std::int32_t> initial_status_;  // what record() writes: the first spares
    // A constellation (empty / none for one cluster).
    std::vector<std::int32_t> cluster_of_;
    std::vector<std::int32_t> cluster_sizes_;
    std::vector<Eigen::Vector3d> centroids_;
    std::vector<Eigen::Vector3d> cluster_lvlh_;  // each satellite in its own cluster chief's LVLH frame
    std::optional<viz::PvdSeriesWriter> cluster_writer_;
};

}  // namespace skyfabric::output
