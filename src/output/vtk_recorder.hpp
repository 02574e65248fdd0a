#pragma once
// ParaView frames of a run: every output.vtk_every-th sample as DIR/vtk/formation_NNNNNN.vtp,
// indexed by DIR/vtk/formation.pvd (valid after every frame, so partial runs open).
#include "simulation/simulation.hpp"

#include <skyfabric/viz/pvd_writer.hpp>

#include <filesystem>
#include <optional>

namespace skyfabric::output {

class VtkRecorder final : public simulation::Recorder {
public:
    explicit VtkRecorder(std::filesystem::path directory) : directory_(std::move(directory)) {}
    void begin(const simulation::RunSetup& setup) override;
    void record(const simulation::Sample& sample) override;
    void end(const simulation::RunSummary&) override {}

private:
    std::filesystem::path directory_;
    std::optional<viz::PvdSeriesWriter> writer_;
    int every_ = 1;
    bool eci_ = false;
    std::vector<Eigen::Vector3d> positions_;
};

}  // namespace skyfabric::output
