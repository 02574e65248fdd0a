#include "output/vtk_recorder.hpp"

namespace skyfabric::output {

void VtkRecorder::begin(const simulation::RunSetup& setup) {
    every_ = setup.scenario->output.vtk_every;
    eci_ = setup.scenario->output.vtk_frame == scenario::VtkFrame::eci;
    std::filesystem::create_directories(directory_);
    writer_.emplace(directory_, "formation");
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
    frame.delta_v_m_s = sample.delta_v_m_s;
    frame.nearest_neighbour_m = sample.nearest_neighbour_m;
    frame.dose_rad = sample.dose_rad;
    writer_->write_frame(frame, viz::LinkFrameData{sample.topology, {}});
}

}  // namespace skyfabric::output
