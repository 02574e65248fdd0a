#pragma once
// FormationPropagator's state, shared by propagation.cpp (the four models, set-up, advance) and
// station_keeping.cpp (the reference orbits and the controller).
#include "dop853.hpp"
#include "force_model.hpp"
#include "worker_pool.hpp"

#include <skyfabric/physics/propagation.hpp>

#include <boost/numeric/odeint.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

namespace skyfabric::physics {
namespace detail {

namespace odeint = boost::numeric::odeint;
using State = std::vector<double>;

// Threads are only worth starting for large formations.
constexpr std::size_t parallel_threshold = 512;

// Linear relative dynamics (HCW): x'' = 2n y' + 3n^2 x, y'' = -2n x', z'' = -n^2 z.
struct HcwSystem {
    double n;
    void operator()(const State& x, State& dxdt, double) const {
        for (std::size_t k = 0; k < x.size(); k += 6) {
            dxdt[k] = x[k + 3];
            dxdt[k + 1] = x[k + 4];
            dxdt[k + 2] = x[k + 5];
            dxdt[k + 3] = 2.0 * n * x[k + 4] + 3.0 * n * n * x[k];
            dxdt[k + 4] = -2.0 * n * x[k + 3];
            dxdt[k + 5] = -n * n * x[k + 2];
        }
    }
};

using Dopri5 = odeint::runge_kutta_dopri5<State>;
using DenseDopri5 = odeint::result_of::make_dense_output<Dopri5>::type;

}  // namespace detail

struct FormationPropagator::Impl {
    PropagationSettings settings;
    detail::ForceModel force;
    CartesianState chief0;
    std::vector<RelativeState> initial;
    double last_time = 0.0;
    bool started = false;

    // Linear models: mean motion and Schweighart-Sedwick c (c = 1 for HCW).
    double n = 0.0;
    double ss_c = 1.0;
    // Schweighart-Sedwick chief: circular, radius r0, argument of latitude u0 + n c t, node raan0 + raan_rate t.
    double r0 = 0.0, inclination = 0.0, raan0 = 0.0, u0 = 0.0, raan_rate = 0.0;

    std::vector<detail::Block> blocks;
    std::unique_ptr<detail::WorkerPool> pool;  // started at the first parallel call, joined with the propagator
    std::unique_ptr<detail::DenseDopri5> dense;
    // Nonlinear model with drag: integral of |a_drag,i - a_drag,chief| per satellite since t = 0 (m/s).
    std::vector<double> differential_drag_delta_v;
    detail::State rel;

    // Station keeping (nonlinear model). Each satellite is held to a reference satellite ("ghost")
    // integrated beside it with the nominal ballistic coefficient; see calibrate_reference_orbits().
    std::vector<detail::Block> ghosts;                // same partition as blocks
    std::vector<RelativeState> ghost_initial;  // LVLH initial states of the reference orbits
    std::vector<RelativeState> reference_now;  // reference LVLH states at the last advance_to time
    std::vector<double> delta_v;              // cumulative, per satellite
    std::vector<double> acquisition_delta_v;  // the part spent at the first control call
    double steady_since_s = 0.0;              // time of the first control call
    // One satellite's controller (station_keeping.cpp).
    struct SatelliteControl {
        enum class Mode { acquire, observe, burn_planned, transfer };
        Mode mode = Mode::acquire;
        // Since the last impulse (window_start_s): least-squares sums of the secular drift rate v against
        // time tau; theta = the radial oscillation's phase at the last call.
        double window_start_s = 0.0;
        int samples = 0;
        double sum_t = 0.0, sum_tt = 0.0, sum_v = 0.0, sum_tv = 0.0;
        double theta = 0.0;
        double previous_z = 0.0;  // e_z at the last call
        double second_burn_time_s = 0.0, second_burn_m_s = 0.0;  // the eccentricity pair's second half (> 0: due)
        double accel_m_s2 = 0.0;  // secular along-track acceleration of the error, filtered over orbits
        bool have_accel = false;
        double arrival_time_s = 0.0;  // Mode::transfer
        void observe_from(double t);
    };
    std::vector<SatelliteControl> control;
    double reference_n = 0.0, reference_c = 1.0, transfer_time_s = 0.0;

    // Mean rate of the chief's argument of latitude, from a least-squares line through u(t) over one
    // orbit of its own propagation (same force model). Short-period J2 terms (period T/2) average out;
    // this is the mean motion the relative orbits actually follow, which differs from sqrt(mu/r0^3)
    // by ~1e-3 for an osculating-circular start (mean and osculating a differ by O(J2 R^2/a)).
    double measured_mean_argument_of_latitude_rate();

    CartesianState ss_chief(double t) const;

    // Blocks for satellites with LVLH initial states `states`; `dispersed` draws per-satellite B.
    std::vector<detail::Block> make_blocks(const std::vector<RelativeState>& states, bool dispersed) const;

    void setup_nonlinear() { blocks = make_blocks(initial, true); }

    // Reference orbits: the satellites' initial relative states, made bounded under the full force model
    // (two-body + J2 + drag at the nominal B, which the chief shares). The closed-form HCW/SS orbit of the
    // initial state is not bounded there: osculating J2 terms in the initial state give along-track drifts
    // of ~10 m per orbit per 500 m of offset and metre-level periodic terms, which a 5 m dead band would
    // chase at ~100 m/s per year. So the drift is measured and trimmed numerically: over two orbits, fit
    // y(t) = a + D t + (periodic terms at the in-plane and twice the orbital rate, with linear amplitude
    // drift), then vy0 += D/3 (HCW: a velocity offset dvy drifts -3 dvy). Two passes.
    void calibrate_reference_orbits();

    // work(i) for i in [0, count) on the pool (see thread_count()). Each i touches only its own block and
    // its own satellites' entries, so results do not depend on the number of threads.
    std::size_t thread_count() const {
        if (settings.threads == 1) return 1;
        if (settings.threads == 0 && initial.size() < detail::parallel_threshold) return 1;
        const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
        return settings.threads == 0 ? cores : settings.threads;
    }

    template <class F>
    void parallel_for(std::size_t count, F&& work) {
        const std::size_t threads = std::min(count, thread_count());
        if (threads <= 1) {
            for (std::size_t i = 0; i < count; ++i) work(i);
            return;
        }
        if (!pool) pool = std::make_unique<detail::WorkerPool>(thread_count() - 1);
        pool->run(count, std::function<void(std::size_t)>(std::ref(work)));
    }

    // The controller (station_keeping.cpp; docs/station-keeping.md).
    void station_keep(detail::Block& b, detail::Block& g, double t);

    void advance(double t, FormationSnapshot& snap);
};

}  // namespace skyfabric::physics
