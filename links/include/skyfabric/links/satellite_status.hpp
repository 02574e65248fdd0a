#pragma once
// What a satellite is going through at an instant, as the fault model plays it
// (workloads::SatelliteCondition) and the VTK frames draw it (viz::SatelliteStatus, the
// `status` point data). Here because links is the library both of those see.
#include <skyfabric/physics/enum_names.hpp>

#include <cstdint>

namespace skyfabric::links {

enum class SatelliteStatus : std::int32_t { ok = 0, faulted = 1, rebooting = 2, spare = 3 };
// The VTK frames carry these names (field data status_names) and the renderer reads them there;
// its fallback for frames written without them (viz/paraview/skyrender/style.py) is checked
// against this table (tests/viz/pvd_writer_test.cpp).
inline constexpr auto satellite_status_names = physics::enum_names<SatelliteStatus>({
    {SatelliteStatus::ok, "ok"},
    {SatelliteStatus::faulted, "faulted"},
    {SatelliteStatus::rebooting, "rebooting"},
    {SatelliteStatus::spare, "spare"},
});

}  // namespace skyfabric::links
