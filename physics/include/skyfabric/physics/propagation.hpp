#pragma once
// Formation propagation: the chief (reference) orbit plus every satellite, under one
// of four models. Streaming: advance_to() is called with non-decreasing times and
// fills a snapshot; nothing of the past is kept.
#include <skyfabric/physics/frames.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

namespace skyfabric::physics {

enum class RelativeMotionModel {
    hcw,                  // Hill-Clohessy-Wiltshire closed-form state transition matrix
    hcw_ode,              // the same linear equations integrated by Boost.Odeint
    schweighart_sedwick,  // J2-linearised relative motion (Schweighart & Sedwick 2002)
    nonlinear,            // every satellite in ECI: two-body + J2 (+ drag), adaptive high order
};

// Numerical trouble (NaN/inf state, step-size collapse); the message names satellite and time.
struct PropagationError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum class SolarActivity { low, moderate, high };

struct DragSettings {
    bool enabled = false;
    SolarActivity solar_activity = SolarActivity::moderate;
    double ballistic_coefficient_kg_m2 = 60.0;  // m / (Cd A)
    double dispersion = 0.05;                   // relative 1-sigma spread between satellites
    std::uint64_t seed = 42;                    // draws the per-satellite coefficients
};

struct StationKeepingSettings {
    bool enabled = false;
    double tolerance_m = 5.0;  // allowed distance from the reference relative orbit
};

struct PropagationSettings {
    RelativeMotionModel model = RelativeMotionModel::nonlinear;
    bool j2 = true;  // for nonlinear
    DragSettings drag;
    StationKeepingSettings station_keeping;
    double relative_tolerance = 1e-12;
    double absolute_tolerance = 1e-9;  // metres (and m/s) in the integrated variables
    double epoch_julian_date = 2461484.5;  // 2027-03-20T00:00Z; Sun direction, Earth rotation
};

struct FormationSnapshot {
    double time_s = 0.0;
    CartesianState chief_eci;
    std::vector<RelativeState> satellites_lvlh;
    std::vector<CartesianState> satellites_eci;
};

class FormationPropagator {
public:
    FormationPropagator(const CartesianState& chief_eci, std::span<const RelativeState> satellites_lvlh,
                        const PropagationSettings& settings);
    ~FormationPropagator();
    FormationPropagator(FormationPropagator&&) noexcept;
    FormationPropagator& operator=(FormationPropagator&&) noexcept;

    // Advance to time_s (seconds since epoch, >= the last call) and fill snapshot,
    // reusing its storage. Throws PropagationError on NaN/inf or step-size collapse.
    void advance_to(double time_s, FormationSnapshot& snapshot);

    std::size_t satellite_count() const;
    // Cumulative station-keeping delta-v per satellite so far (m/s).
    std::span<const double> station_keeping_delta_v_m_s() const;
    // Where station keeping holds satellite i, LVLH, at the last advance_to time: its initial relative
    // orbit made bounded under the full force model (along-track velocity trimmed numerically at
    // construction, then integrated beside it with the nominal ballistic coefficient).
    // Nonlinear model with station keeping enabled only (throws std::out_of_range otherwise).
    RelativeState station_keeping_reference_lvlh(std::size_t satellite) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace skyfabric::physics
