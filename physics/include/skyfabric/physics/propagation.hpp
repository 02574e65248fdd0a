#pragma once
// Formation propagation: the chief (reference) orbit plus every satellite, under one
// of four models. Streaming: advance_to() is called with non-decreasing times and
// fills a snapshot; nothing of the past is kept.
#include <skyfabric/physics/enum_names.hpp>
#include <skyfabric/physics/frames.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

namespace skyfabric::physics {

// Implementation notes. Sources (physics/src/): propagation.cpp (set-up, the four models), force_model.hpp
// (two-body + J2 + drag), dop853.hpp (the integrator), block_storage.hpp (memory layout), snapshot_simd.hpp
// (LVLH/ECI output), worker_pool.hpp (threads), station_keeping.cpp (reference orbits, controller).
// - hcw: closed-form STM; chief on its two-body orbit (Kepler, f and g). n from the chief's a.
// - hcw_ode: the HCW equations for all satellites, Boost.Odeint dopri5 dense output.
// - schweighart_sedwick: SS closed form (cross-track differential-inclination forcing left out); chief on
//   the SS reference orbit: circular at r0 = |r_chief(0)|, argument of latitude rate n c, node rate
//   -(3/2) n J2 (R_E/r0)^2 cos i.
// - nonlinear: satellites in blocks of 128, each block with its own copy of the chief; a block's state is the chief's
//   ECI state plus each satellite's ECI offset from it (offset'' = a(r_c + d) - a(r_c)), so tolerances act on
//   metres of separation. Dormand-Prince 8(5,3) (DOP853, Hairer's error norm per satellite, the largest in
//   the block; steps <= 1000 s); output between steps: the chief from DOP853's 7th-order continuous
//   extension, the offsets by quintic Hermite. The loops over satellites are written for the compiler to
//   vectorise (build with SKYFABRIC_NATIVE_ARCH for AVX2/AVX-512). Measured at the default tolerances:
//   neighbour distances of the 81-satellite lattice agree with SciPy DOP853 (rtol = atol = 1e-12, absolute
//   ECI states) to 2.7e-5 m after one day; one day of 81 satellites sampled every 10 s takes ~6.5 ms (J2)
//   on one core (bench/propagation_bench). Blocks run on a persistent pool of threads
//   (PropagationSettings::threads; automatic: all cores from 512 satellites up), used only by advance_to
//   calls that have integration steps to take; results do not depend on the thread count. snapshot.chief_eci
//   is block 0's copy of the chief, and every satellite's LVLH/ECI state is its offset placed on that one
//   chief: the copies take different steps and drift apart, which, with each block's offsets on its own
//   copy, moved pairs across blocks by up to 1 cm in 7 days of J2 free fall (4.4-6.0 cm in issue 52's run)
//   against < 1 mm inside a block (issue 52; test NonlinearPropagation.PairsAcrossBlocksDriftNoMoreThanPairsInsideABlockOverAWeek).
// - Station keeping (nonlinear only): see station_keeping_reference_lvlh() and docs/station-keeping.md.
//   At the first advance_to call each satellite takes its reference orbit's velocity (the one-off
//   acquisition); then, about once per orbit, one along-track impulse gives back the drift that the
//   differential drag took (secular drift from the HCW invariants of the error, its rate of change fitted
//   over the orbit), fired at the phase where it also damps the error's radial oscillation; cross-track
//   and leftover radial oscillations get their own impulses past a threshold, and an error beyond 0.8
//   tolerance a two-impulse HCW transfer over a quarter orbit. Checked at every advance_to call (call at
//   least every few minutes).
//   Measured (81-satellite lattice, 650 km circular taken as osculating, moderate drag, 10 % B dispersion,
//   30 s calls, 5 m tolerance, 30 days; the test StationKeeping.SteadyDeltaV...): 0.137 m/s per
//   satellite-year, 1.01x the differential-drag minimum; worst deviation 2.8 m.
enum class RelativeMotionModel {
    hcw,                  // Hill-Clohessy-Wiltshire closed-form state transition matrix
    hcw_ode,              // the same linear equations integrated by Boost.Odeint
    schweighart_sedwick,  // J2-linearised relative motion (Schweighart & Sedwick 2002)
    nonlinear,            // every satellite in ECI: two-body + J2 (+ drag), adaptive high order
};
inline constexpr auto relative_motion_model_names = enum_names<RelativeMotionModel>({
    {RelativeMotionModel::hcw, "hcw"},
    {RelativeMotionModel::hcw_ode, "hcw_ode"},
    {RelativeMotionModel::schweighart_sedwick, "schweighart_sedwick"},
    {RelativeMotionModel::nonlinear, "nonlinear"},
});

// Numerical trouble (NaN/inf state, step-size collapse); the message names satellite and time.
struct PropagationError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Solar and geomagnetic activity driving the thermospheric density (atmosphere.hpp): the 10.7 cm
// solar radio flux (sfu = 1e-22 W m^-2 Hz^-1), daily and 81-day centred mean, and the daily Ap index.
// Presets (docs/environment-models.md): low 70/70/4, moderate 150/150/15, high 250/250/25, the values at
// which docs/references.md ("Independent checks") quotes NRLMSISE-00 densities at 650 km.
struct SolarActivity {
    double f107_daily_sfu = 150.0;
    double f107_81day_mean_sfu = 150.0;
    double ap = 15.0;
    static const SolarActivity low, moderate, high;
    bool operator==(const SolarActivity&) const = default;
};
inline constexpr SolarActivity SolarActivity::low{70.0, 70.0, 4.0};
inline constexpr SolarActivity SolarActivity::moderate{150.0, 150.0, 15.0};
inline constexpr SolarActivity SolarActivity::high{250.0, 250.0, 25.0};

struct DragSettings {
    bool enabled = false;
    SolarActivity solar_activity = SolarActivity::moderate;
    double ballistic_coefficient_kg_m2 = 60.0;  // m / (Cd A)
    double dispersion = 0.05;                   // relative 1-sigma spread between satellites
    std::uint64_t seed = 42;                    // draws the per-satellite coefficients
    bool operator==(const DragSettings&) const = default;
};

struct StationKeepingSettings {
    bool enabled = false;
    double tolerance_m = 5.0;  // allowed distance from the reference relative orbit
    // Corrections are made at advance_to calls: call at least every few minutes, or the controller
    // misses the phases it fires at and the satellites can leave the tolerance between calls.
    bool operator==(const StationKeepingSettings&) const = default;
};

struct PropagationSettings {
    RelativeMotionModel model = RelativeMotionModel::nonlinear;
    bool j2 = true;  // for nonlinear
    DragSettings drag;
    StationKeepingSettings station_keeping;
    // Defaults: every neighbour distance of the 81-satellite lattice within 2.7e-5 m of SciPy DOP853
    // at rtol 1e-12 over a day, the chief within 1.8 mm (tests/reference/check_against_scipy.py); the chief is
    // held to a third of these tolerances (its error moves every satellite's ECI state).
    double relative_tolerance = 1e-10;
    double absolute_tolerance = 1e-7;  // metres (and m/s) in the integrated variables
    double epoch_julian_date = 2461484.5;  // 2027-03-20T00:00Z; Sun direction, Earth rotation
    // Threads for the nonlinear model's blocks of 128 satellites: 0 = automatic (every core from 512
    // satellites up, else one), 1 = the calling thread only, n = at most n. Results do not depend on it.
    unsigned threads = 0;
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
    // The part of it spent at the first advance_to call to put each satellite on its reference orbit
    // (one-off acquisition); the rest is the steady holding cost, spent since
    // station_keeping_steady_since_s() (the first advance_to time).
    std::span<const double> station_keeping_acquisition_delta_v_m_s() const;
    double station_keeping_steady_since_s() const;
    // Nonlinear model with drag: integral over [0, last advance_to time] of |a_drag,i - a_drag,chief| per
    // satellite (m/s), the least delta-v that cancels the differential drag; zeros otherwise.
    std::span<const double> differential_drag_delta_v_m_s() const;
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
