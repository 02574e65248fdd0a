#include <skyfabric/physics/propagation.hpp>

#include <skyfabric/physics/atmosphere.hpp>
#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/relative_motion.hpp>

#include <boost/numeric/odeint.hpp>

#include <Eigen/LU>

#include <algorithm>
#include <array>
#include <cmath>
#include <exception>
#include <sstream>
#include <thread>

namespace skyfabric::physics {
namespace {

namespace odeint = boost::numeric::odeint;
using State = std::vector<double>;

// Satellites per independently integrated block (each block carries its own copy of the chief).
// Fixed, so results do not depend on the number of threads.
constexpr std::size_t chunk_capacity = 128;
// Threads are only worth starting for large formations.
constexpr std::size_t parallel_threshold = 512;
// Upper bound on one step: keeps the quintic Hermite output interpolation well below 1e-6 m on offsets.
constexpr double max_step_s = 120.0;
constexpr double min_step_s = 1e-6;
constexpr int max_rejections_in_a_row = 200;

[[noreturn]] void fail(const std::string& what, std::size_t satellite, double time_s) {
    std::ostringstream os;
    os.precision(10);
    os << "propagation failed: " << what << " (satellite " << satellite << ", t = " << time_s << " s)";
    throw PropagationError(os.str());
}

struct ForceModel {
    bool j2 = true;
    bool drag = false;
    SolarActivity activity = SolarActivity::moderate;
    double epoch_julian_date = 0.0;
};

// Two-body + J2 (+ drag):
// a = -mu r / r^3 - (3/2) J2 mu R^2 / r^5 [x (1 - 5z^2/r^2), y (1 - 5z^2/r^2), z (3 - 5z^2/r^2)]
//     - 1/2 rho |v_rel| v_rel / B.
inline Eigen::Vector3d acceleration(const ForceModel& f, const Eigen::Vector3d& r, const Eigen::Vector3d& v,
                                    double ballistic, const Eigen::Vector3d& sun) {
    const double r2 = r.squaredNorm();
    const double r1 = std::sqrt(r2);
    Eigen::Vector3d a = (-earth_mu_m3_s2 / (r2 * r1)) * r;
    if (f.j2) {
        const double k = -1.5 * earth_j2 * earth_mu_m3_s2 * earth_equatorial_radius_m * earth_equatorial_radius_m /
                         (r2 * r2 * r1);
        const double z5 = 5.0 * r.z() * r.z() / r2;
        a.x() += k * r.x() * (1.0 - z5);
        a.y() += k * r.y() * (1.0 - z5);
        a.z() += k * r.z() * (3.0 - z5);
    }
    if (f.drag) {
        a += drag_acceleration_m_s2(r, v, atmospheric_density_kg_m3(r, sun, f.activity), ballistic);
    }
    return a;
}

// State of a block: [chief r, v (ECI)] then, per satellite, its offset from the chief [dr, dv] (ECI).
// Offsets are integrated directly (d'' = a(r_c + d) - a(r_c)) so the absolute tolerance acts on
// metres of separation, not on 7000 km of radius: neighbour distances keep sub-micrometre steps.
struct BlockSystem {
    const ForceModel* force;
    const double* ballistic;  // chief, then satellites
    std::size_t count;
    void operator()(const State& x, State& dxdt, double t) const {
        const Eigen::Map<const Eigen::Vector3d> rc(x.data());
        const Eigen::Map<const Eigen::Vector3d> vc(x.data() + 3);
        Eigen::Vector3d sun = Eigen::Vector3d::UnitX();
        if (force->drag) sun = sun_direction_eci(force->epoch_julian_date + t / seconds_per_day);
        const Eigen::Vector3d ac = acceleration(*force, rc, vc, ballistic[0], sun);
        Eigen::Map<Eigen::Vector3d>(dxdt.data()) = vc;
        Eigen::Map<Eigen::Vector3d>(dxdt.data() + 3) = ac;
        for (std::size_t k = 1; k <= count; ++k) {
            const Eigen::Map<const Eigen::Vector3d> dr(x.data() + 6 * k);
            const Eigen::Map<const Eigen::Vector3d> dv(x.data() + 6 * k + 3);
            Eigen::Map<Eigen::Vector3d>(dxdt.data() + 6 * k) = dv;
            Eigen::Map<Eigen::Vector3d>(dxdt.data() + 6 * k + 3) =
                acceleration(*force, rc + dr, vc + dv, ballistic[k], sun) - ac;
        }
    }
};

using Fehlberg78 = odeint::runge_kutta_fehlberg78<State>;
using Controlled78 = odeint::controlled_runge_kutta<Fehlberg78>;

// Quintic Hermite through position, velocity and acceleration at both ends of a step (s in [0, 1]):
// p(s) = H0 p0 + H1 h v0 + H2 h^2 a0 + H3 h^2 a1 + H4 h v1 + H5 p1; velocity = p'(s)/h.
// Error ~ h^6 p^(6)/46080: for h = 120 s, 1 km offsets, ~1e-8 m.
struct Hermite5 {
    double h0, h1, h2, h3, h4, h5, d0, d1, d2, d3, d4, d5;
    explicit Hermite5(double s) {
        const double s2 = s * s, s3 = s2 * s, s4 = s3 * s, s5 = s4 * s;
        h0 = 1.0 - 10.0 * s3 + 15.0 * s4 - 6.0 * s5;
        h1 = s - 6.0 * s3 + 8.0 * s4 - 3.0 * s5;
        h2 = 0.5 * (s2 - 3.0 * s3 + 3.0 * s4 - s5);
        h3 = 0.5 * (s3 - 2.0 * s4 + s5);
        h4 = -4.0 * s3 + 7.0 * s4 - 3.0 * s5;
        h5 = 10.0 * s3 - 15.0 * s4 + 6.0 * s5;
        d0 = -30.0 * s2 + 60.0 * s3 - 30.0 * s4;
        d1 = 1.0 - 18.0 * s2 + 32.0 * s3 - 15.0 * s4;
        d2 = 0.5 * (2.0 * s - 9.0 * s2 + 12.0 * s3 - 5.0 * s4);
        d3 = 0.5 * (3.0 * s2 - 8.0 * s3 + 5.0 * s4);
        d4 = -12.0 * s2 + 28.0 * s3 - 15.0 * s4;
        d5 = 30.0 * s2 - 60.0 * s3 + 30.0 * s4;
    }
};

struct Block {
    std::size_t first = 0;  // global index of the block's first satellite
    std::size_t count = 0;
    std::vector<double> ballistic;
    State x, dxdt, x_prev, dxdt_prev, out;  // out: interpolated state at the last requested time
    double t = 0.0, t_prev = 0.0, dt = 10.0;
    Controlled78 stepper;

    Block(double abs_tol, double rel_tol)
        : stepper(Controlled78::error_checker_type(abs_tol, rel_tol, 1.0, 1.0)) {}

    BlockSystem system(const ForceModel& f) const { return {&f, ballistic.data(), count}; }

    // Global index of the first satellite with a non-finite component (the chief counts as the
    // block's first satellite), or -1 when all are finite.
    long long first_bad(const State& s) const {
        for (std::size_t i = 0; i < s.size(); ++i) {
            if (!std::isfinite(s[i])) return static_cast<long long>(i < 6 ? first : first + i / 6 - 1);
        }
        return -1;
    }

    void restart(const ForceModel& f, double time_s) {
        t = t_prev = time_s;
        system(f)(x, dxdt, t);
        x_prev = x;
        dxdt_prev = dxdt;
    }

    void advance(const ForceModel& f, double time_s) {
        const BlockSystem sys = system(f);
        while (t < time_s) {
            x_prev = x;
            dxdt_prev = dxdt;
            t_prev = t;
            int rejections = 0;
            for (;;) {
                dt = std::min(dt, max_step_s);
                if (stepper.try_step(sys, x, dxdt, t, dt) == odeint::success) break;
                if (++rejections > max_rejections_in_a_row || dt < min_step_s) {
                    fail("step size collapsed to " + std::to_string(dt) + " s", first, t);
                }
            }
            sys(x, dxdt, t);
            const long long bad = std::max(first_bad(x), first_bad(dxdt));
            if (bad >= 0) fail("non-finite state", static_cast<std::size_t>(bad), t);
        }
        interpolate(time_s);
    }

    void interpolate(double time_s) {
        out.resize(x.size());
        const double h = t - t_prev;
        if (h <= 0.0) {
            out = x;
            return;
        }
        const Hermite5 w((time_s - t_prev) / h);
        for (std::size_t k = 0; k <= count; ++k) {
            for (std::size_t c = 0; c < 3; ++c) {
                const std::size_t p = 6 * k + c, v = p + 3;
                const double p0 = x_prev[p], v0 = dxdt_prev[p], a0 = dxdt_prev[v];
                const double p1 = x[p], v1 = dxdt[p], a1 = dxdt[v];
                out[p] = w.h0 * p0 + w.h1 * h * v0 + w.h2 * h * h * a0 + w.h3 * h * h * a1 + w.h4 * h * v1 + w.h5 * p1;
                out[v] = (w.d0 * p0 + w.d5 * p1) / h + w.d1 * v0 + w.d4 * v1 + (w.d2 * a0 + w.d3 * a1) * h;
            }
        }
    }
};

CartesianState chief_of(const State& s) {
    return {Eigen::Vector3d(s[0], s[1], s[2]), Eigen::Vector3d(s[3], s[4], s[5])};
}

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

}  // namespace

struct FormationPropagator::Impl {
    PropagationSettings settings;
    ForceModel force;
    CartesianState chief0;
    std::vector<RelativeState> initial;
    double last_time = 0.0;
    bool started = false;

    // Linear models: mean motion and Schweighart-Sedwick c (c = 1 for HCW).
    double n = 0.0;
    double ss_c = 1.0;
    // Schweighart-Sedwick chief: circular, radius r0, argument of latitude u0 + n c t, node raan0 + raan_rate t.
    double r0 = 0.0, inclination = 0.0, raan0 = 0.0, u0 = 0.0, raan_rate = 0.0;

    std::vector<Block> blocks;
    std::unique_ptr<DenseDopri5> dense;
    State rel;

    // Station keeping (nonlinear model). Each satellite is held to a reference satellite ("ghost")
    // integrated beside it with the nominal ballistic coefficient; see calibrate_reference_orbits().
    std::vector<Block> ghosts;                // same partition as blocks
    std::vector<RelativeState> ghost_initial;  // LVLH initial states of the reference orbits
    std::vector<RelativeState> reference_now;  // reference LVLH states at the last advance_to time
    std::vector<double> delta_v;
    std::vector<double> arrival_time;  // < 0: no transfer under way
    // Least-squares parabola e_y = a + b s + c s^2 (s = time since the last manoeuvre / orbit period)
    // through the along-track error: its curvature is the differential drag.
    struct AlongTrackFit {
        double since_s = 0.0;
        bool after_reversal = false;  // an along-track impulse started this arc
        std::array<double, 5> s_pow{};  // sum s^k, k = 0..4
        std::array<double, 3> e_pow{};  // sum e s^k, k = 0..2
        void reset(double t) { *this = {}; since_s = t; }
        void add(double s, double e) {
            double p = 1.0;
            for (int k = 0; k < 5; ++k, p *= s) {
                s_pow[k] += p;
                if (k < 3) e_pow[k] += e * p;
            }
        }
        Eigen::Vector3d solve() const {
            Eigen::Matrix3d m;
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c) m(r, c) = s_pow[r + c];
            return m.ldlt().solve(Eigen::Vector3d(e_pow[0], e_pow[1], e_pow[2]));
        }
    };
    std::vector<AlongTrackFit> along_fit;
    double reference_n = 0.0, reference_c = 1.0, transfer_time_s = 0.0;

    // Mean rate of the chief's argument of latitude, from a least-squares line through u(t) over one
    // orbit of its own propagation (same force model). Short-period J2 terms (period T/2) average out;
    // this is the mean motion the relative orbits actually follow, which differs from sqrt(mu/r0^3)
    // by ~1e-3 for an osculating-circular start (mean and osculating a differ by O(J2 R^2/a)).
    double measured_mean_argument_of_latitude_rate() {
        const double period = orbital_period_s(r0, earth_mu_m3_s2);
        Block chief(settings.absolute_tolerance, settings.relative_tolerance);
        chief.ballistic.assign(1, settings.drag.ballistic_coefficient_kg_m2);
        chief.x.assign(blocks.front().x.begin(), blocks.front().x.begin() + 6);
        chief.dxdt.resize(6);
        chief.restart(force, 0.0);
        constexpr int samples = 200;
        double sum_t = 0, sum_u = 0, sum_tt = 0, sum_tu = 0, u_prev = 0, turns = 0;
        for (int k = 0; k <= samples; ++k) {
            const double t = period * k / samples;
            chief.advance(force, t);
            const KeplerianElements el = cartesian_to_keplerian(chief_of(chief.out), earth_mu_m3_s2);
            const double u = std::fmod(el.arg_perigee_rad + el.true_anomaly_rad, 2.0 * pi);
            if (k > 0 && u < u_prev - pi) turns += 2.0 * pi;
            u_prev = u;
            sum_t += t;
            sum_u += u + turns;
            sum_tt += t * t;
            sum_tu += t * (u + turns);
        }
        const double m = samples + 1;
        return (m * sum_tu - sum_t * sum_u) / (m * sum_tt - sum_t * sum_t);
    }


    CartesianState ss_chief(double t) const {
        const double u = u0 + n * ss_c * t;
        const double om = raan0 + raan_rate * t;
        const double cu = std::cos(u), su = std::sin(u), co = std::cos(om), so = std::sin(om);
        const double ci = std::cos(inclination), si = std::sin(inclination);
        const Eigen::Vector3d r = r0 * Eigen::Vector3d(co * cu - so * su * ci, so * cu + co * su * ci, su * si);
        const Eigen::Vector3d dr_du = r0 * Eigen::Vector3d(-co * su - so * cu * ci, -so * su + co * cu * ci, cu * si);
        const Eigen::Vector3d dr_dom(-r.y(), r.x(), 0.0);
        return {r, n * ss_c * dr_du + raan_rate * dr_dom};
    }

    // Blocks for satellites with LVLH initial states `states`; `dispersed` draws per-satellite B.
    std::vector<Block> make_blocks(const std::vector<RelativeState>& states, bool dispersed) const {
        std::vector<Block> out;
        const std::size_t total = states.size();
        const double b_nominal = settings.drag.ballistic_coefficient_kg_m2;
        const Eigen::Matrix3d rot = lvlh_to_eci_rotation(chief0);
        const Eigen::Vector3d w = chief0.position_m.cross(chief0.velocity_m_s) / chief0.position_m.squaredNorm();
        for (std::size_t first = 0; first < std::max<std::size_t>(total, 1); first += chunk_capacity) {
            Block b(settings.absolute_tolerance, settings.relative_tolerance);
            b.first = first;
            b.count = std::min(chunk_capacity, total - first);
            b.ballistic.resize(b.count + 1, b_nominal);
            b.x.resize(6 * (b.count + 1));
            Eigen::Map<Eigen::Vector3d>(b.x.data()) = chief0.position_m;
            Eigen::Map<Eigen::Vector3d>(b.x.data() + 3) = chief0.velocity_m_s;
            for (std::size_t k = 0; k < b.count; ++k) {
                // Offsets of lvlh_to_eci(chief, s) minus the chief, formed without the 7e6 m round trip.
                const Eigen::Vector3d dr = rot * states[first + k].position_m;
                const Eigen::Vector3d dv = rot * states[first + k].velocity_m_s + w.cross(dr);
                Eigen::Map<Eigen::Vector3d>(b.x.data() + 6 * (k + 1)) = dr;
                Eigen::Map<Eigen::Vector3d>(b.x.data() + 6 * (k + 1) + 3) = dv;
                if (dispersed && settings.drag.enabled) {
                    b.ballistic[k + 1] = satellite_ballistic_coefficient_kg_m2(settings.drag, first + k);
                }
            }
            b.dxdt.resize(b.x.size());
            b.restart(force, 0.0);
            b.out = b.x;
            out.push_back(std::move(b));
        }
        return out;
    }

    void setup_nonlinear() { blocks = make_blocks(initial, true); }

    static void lvlh_of_block(const Block& b, std::vector<RelativeState>& out) {
        const CartesianState chief = chief_of(b.out);
        const Eigen::Matrix3d rot = lvlh_to_eci_rotation(chief);
        const Eigen::Vector3d w = chief.position_m.cross(chief.velocity_m_s) / chief.position_m.squaredNorm();
        for (std::size_t k = 0; k < b.count; ++k) {
            const Eigen::Map<const Eigen::Vector3d> dr(b.out.data() + 6 * (k + 1));
            const Eigen::Map<const Eigen::Vector3d> dv(b.out.data() + 6 * (k + 1) + 3);
            out[b.first + k] = {rot.transpose() * dr, rot.transpose() * (dv - w.cross(dr))};
        }
    }

    // Reference orbits: the satellites' initial relative states, made bounded under the full force model
    // (two-body + J2 + drag at the nominal B, which the chief shares). The closed-form HCW/SS orbit of the
    // initial state is not bounded there: osculating J2 terms in the initial state give along-track drifts
    // of ~10 m per orbit per 500 m of offset and metre-level periodic terms, which a 5 m dead band would
    // chase at ~100 m/s per year. So the drift is measured and trimmed numerically: over two orbits, fit
    // y(t) = a + D t + (periodic terms at the in-plane and twice the orbital rate, with linear amplitude
    // drift), then vy0 += D/3 (HCW: a velocity offset dvy drifts -3 dvy). Two passes.
    void calibrate_reference_orbits() {
        ghost_initial = initial;
        const double rate = measured_mean_argument_of_latitude_rate();
        const double w_plane = rate / reference_c * std::sqrt(2.0 - reference_c * reference_c);
        const double span = 2.0 * 2.0 * pi / rate;
        constexpr int samples = 160;
        std::vector<RelativeState> now(initial.size());
        for (int pass = 0; pass < 2; ++pass) {
            std::vector<Block> trial = make_blocks(ghost_initial, false);
            std::vector<Eigen::Matrix<double, 8, 8>> normal(initial.size(), Eigen::Matrix<double, 8, 8>::Zero());
            std::vector<Eigen::Matrix<double, 8, 1>> rhs(initial.size(), Eigen::Matrix<double, 8, 1>::Zero());
            parallel_for(trial.size(), [&](std::size_t j) {
                Block& b = trial[j];
                for (int k = 0; k <= samples; ++k) {
                    const double t = span * k / samples;
                    b.advance(force, t);
                    lvlh_of_block(b, now);
                    const double tn = t / span;  // scaled time keeps the normal matrix well conditioned
                    Eigen::Matrix<double, 8, 1> basis;
                    basis << 1.0, tn, std::cos(w_plane * t), std::sin(w_plane * t), tn * std::cos(w_plane * t),
                        tn * std::sin(w_plane * t), std::cos(2.0 * rate * t), std::sin(2.0 * rate * t);
                    for (std::size_t i = b.first; i < b.first + b.count; ++i) {
                        normal[i] += basis * basis.transpose();
                        rhs[i] += basis * now[i].position_m.y();
                    }
                }
            });
            for (std::size_t i = 0; i < initial.size(); ++i) {
                const double drift_m_s = normal[i].ldlt().solve(rhs[i])(1) / span;
                ghost_initial[i].velocity_m_s.y() += drift_m_s / 3.0;
            }
        }
        ghosts = make_blocks(ghost_initial, false);
    }

    // work(i) for i in [0, count), on all cores for large formations. Each i touches only its own
    // block and its own satellites' entries, so results do not depend on the number of threads.
    template <class F>
    void parallel_for(std::size_t count, F&& work) const {
        const std::size_t threads =
            initial.size() >= parallel_threshold
                ? std::min<std::size_t>(count, std::max(1u, std::thread::hardware_concurrency()))
                : 1;
        if (threads <= 1) {
            for (std::size_t i = 0; i < count; ++i) work(i);
            return;
        }
        std::vector<std::exception_ptr> errors(count);
        std::vector<std::thread> pool;
        for (std::size_t tid = 0; tid < threads; ++tid) {
            pool.emplace_back([&, tid] {
                for (std::size_t i = tid; i < count; i += threads) {
                    try {
                        work(i);
                    } catch (...) {
                        errors[i] = std::current_exception();
                    }
                }
            });
        }
        for (auto& th : pool) th.join();
        for (auto& e : errors) {
            if (e) std::rethrow_exception(e);
        }
    }

    // Dead-band control with two-impulse HCW targeting on the error e = rho - rho_ref (LVLH), whose
    // dynamics about the nearby reference are HCW to O(|e|/r, J2 |e|). When |e| > 0.8 tolerance (margin for
    // the motion between calls), the first impulse sets de/dt = -Phi_rv(tau)^-1 Phi_rr(tau) e so that e
    // reaches 0 after tau = a quarter orbit; at the first call after that the second impulse puts what is
    // left of e on a drift-free HCW ellipse.
    void station_keep(Block& b, Block& g, double t) {
        g.advance(force, t);
        lvlh_of_block(g, reference_now);
        const CartesianState chief = chief_of(b.out);
        const Eigen::Matrix3d rot = lvlh_to_eci_rotation(chief);
        const Eigen::Vector3d w = chief.position_m.cross(chief.velocity_m_s) / chief.position_m.squaredNorm();
        const Eigen::Matrix<double, 6, 6> phi = hcw_state_transition(reference_n, transfer_time_s);
        const Eigen::Matrix3d gain = phi.block<3, 3>(0, 3).inverse() * phi.block<3, 3>(0, 0);
        bool changed = false;
        for (std::size_t k = 0; k < b.count; ++k) {
            const std::size_t i = b.first + k;
            Eigen::Map<Eigen::Vector3d> dr(b.out.data() + 6 * (k + 1));
            Eigen::Map<Eigen::Vector3d> dv(b.out.data() + 6 * (k + 1) + 3);
            const Eigen::Vector3d e = rot.transpose() * dr - reference_now[i].position_m;
            const Eigen::Vector3d e_dot = rot.transpose() * (dv - w.cross(dr)) - reference_now[i].velocity_m_s;
            Eigen::Vector3d impulse = Eigen::Vector3d::Zero();
            const double tol = settings.station_keeping.tolerance_m;
            if (arrival_time[i] >= 0.0) {
                if (t < arrival_time[i]) continue;
                // Leave the residual error on a bounded HCW ellipse (e_y' = -2n e_x, e_x' = n e_y / 2)
                // rather than at rest, where a radial residual would drift -3 pi e_x per orbit.
                const Eigen::Vector3d bounded(0.5 * reference_n * e.y(), -2.0 * reference_n * e.x(), 0.0);
                impulse = bounded - e_dot;
                arrival_time[i] = -1.0;
                along_fit[i].reset(t);
            } else {
                AlongTrackFit& fit = along_fit[i];
                const double period = 2.0 * pi / reference_n;
                const double since = (t - fit.since_s) / period;
                fit.add(since, e.y());
                if (e.norm() <= 0.8 * tol) continue;
                // Right after a reversal the error still moves outwards a little (HCW: an along-track
                // impulse first moves the satellite the old way by ~0.5 dvy/n and radially by up to 4 dvy/n):
                // let it, unless it nears the tolerance itself.
                if (fit.after_reversal && since < 0.5 && e.norm() <= 0.9 * tol) continue;
                // Drag make-up: a differential drag f makes e_y a parabola, e_y'' = -g. When the error is
                // along-track and the parabola is known (fitted over >= 1 orbit), one along-track impulse
                // sets the drift rate v so that the apex lies at the far side of the dead band,
                // v = sign(g) sqrt(2|g| max(0, Y - sign(g) e_y)), Y = 0.6 tolerance (HCW: velocity change dvy
                // changes the drift rate by -3 dvy). Otherwise: the two-impulse transfer back to e = 0.
                bool reversed = false;
                if (since >= 1.0 && fit.s_pow[0] >= 10.0 && std::abs(e.y()) >= 0.8 * e.norm()) {
                    const Eigen::Vector3d abc = fit.solve();
                    const double curvature = -2.0 * abc(2) / (period * period);
                    const double rate_now = (abc(1) + 2.0 * abc(2) * since) / period;
                    const double sg = curvature >= 0.0 ? 1.0 : -1.0;
                    // At the near edge already (apex overshot): stop the outward drift there.
                    const double room = std::max(0.0, 0.6 * tol - sg * e.y());
                    // Only for a clearly parabolic arc (drag); a straight drift goes back by transfer.
                    if (std::abs(abc(2)) * since * since >= 0.25 * tol) {
                        const double rate_new = sg * std::sqrt(2.0 * std::abs(curvature) * room);
                        impulse.y() = -(rate_new - rate_now) / 3.0;
                        fit.reset(t);
                        fit.after_reversal = true;
                        reversed = true;
                    }
                }
                if (!reversed) {
                    impulse = -gain * e - e_dot;
                    arrival_time[i] = t + transfer_time_s;
                }
            }
            dv += rot * impulse;
            delta_v[i] += impulse.norm();
            changed = true;
        }
        if (changed) {
            b.x = b.out;
            b.restart(force, t);
        }
    }

    void advance(double t, FormationSnapshot& snap) {
        const std::size_t count = initial.size();
        snap.time_s = t;
        snap.satellites_lvlh.resize(count);
        snap.satellites_eci.resize(count);
        switch (settings.model) {
            case RelativeMotionModel::hcw:
            case RelativeMotionModel::schweighart_sedwick: {
                const bool ss = settings.model == RelativeMotionModel::schweighart_sedwick;
                snap.chief_eci = ss ? ss_chief(t) : kepler_propagate(chief0, earth_mu_m3_s2, t);
                for (std::size_t i = 0; i < count; ++i) {
                    snap.satellites_lvlh[i] = ss ? schweighart_sedwick_propagate(initial[i], n, ss_c, t)
                                                 : hcw_propagate(initial[i], n, t);
                }
                break;
            }
            case RelativeMotionModel::hcw_ode: {
                const HcwSystem sys{n};
                if (count > 0) {
                    int guard = 0;
                    while (dense->current_time() < t) {
                        dense->do_step(sys);
                        if (++guard > 10000000 || dense->current_time() - dense->previous_time() < min_step_s) {
                            fail("step size collapsed", 0, dense->current_time());
                        }
                    }
                    if (dense->current_time() == t) {
                        rel = dense->current_state();
                    } else {
                        dense->calc_state(t, rel);
                    }
                }
                for (std::size_t i = 0; i < count; ++i) {
                    auto& s = snap.satellites_lvlh[i];
                    s.position_m = Eigen::Vector3d(rel[6 * i], rel[6 * i + 1], rel[6 * i + 2]);
                    s.velocity_m_s = Eigen::Vector3d(rel[6 * i + 3], rel[6 * i + 4], rel[6 * i + 5]);
                    if (!s.position_m.allFinite() || !s.velocity_m_s.allFinite()) fail("non-finite state", i, t);
                }
                snap.chief_eci = kepler_propagate(chief0, earth_mu_m3_s2, t);
                break;
            }
            case RelativeMotionModel::nonlinear: {
                const bool keep = settings.station_keeping.enabled;
                parallel_for(blocks.size(), [&](std::size_t i) {
                    blocks[i].advance(force, t);
                    if (keep) station_keep(blocks[i], ghosts[i], t);
                });
                snap.chief_eci = chief_of(blocks.front().out);
                for (const Block& b : blocks) {
                    const CartesianState chief = chief_of(b.out);
                    const Eigen::Matrix3d rot = lvlh_to_eci_rotation(chief);
                    const Eigen::Vector3d w =
                        chief.position_m.cross(chief.velocity_m_s) / chief.position_m.squaredNorm();
                    for (std::size_t k = 0; k < b.count; ++k) {
                        const Eigen::Map<const Eigen::Vector3d> dr(b.out.data() + 6 * (k + 1));
                        const Eigen::Map<const Eigen::Vector3d> dv(b.out.data() + 6 * (k + 1) + 3);
                        auto& lv = snap.satellites_lvlh[b.first + k];
                        lv.position_m = rot.transpose() * dr;
                        lv.velocity_m_s = rot.transpose() * (dv - w.cross(dr));
                        auto& ec = snap.satellites_eci[b.first + k];
                        ec.position_m = chief.position_m + dr;
                        ec.velocity_m_s = chief.velocity_m_s + dv;
                    }
                }
                return;
            }
        }
        for (std::size_t i = 0; i < count; ++i) snap.satellites_eci[i] = lvlh_to_eci(snap.chief_eci, snap.satellites_lvlh[i]);
    }
};

FormationPropagator::FormationPropagator(const CartesianState& chief_eci, std::span<const RelativeState> satellites_lvlh,
                                         const PropagationSettings& settings)
    : impl_(std::make_unique<Impl>()) {
    Impl& m = *impl_;
    m.settings = settings;
    m.force = {settings.j2, settings.drag.enabled, settings.drag.solar_activity, settings.epoch_julian_date};
    m.chief0 = chief_eci;
    m.initial.assign(satellites_lvlh.begin(), satellites_lvlh.end());
    m.delta_v.assign(m.initial.size(), 0.0);
    m.arrival_time.assign(m.initial.size(), -1.0);
    m.along_fit.assign(m.initial.size(), {});

    const KeplerianElements el = cartesian_to_keplerian(chief_eci, earth_mu_m3_s2);
    m.r0 = chief_eci.position_m.norm();
    m.inclination = el.inclination_rad;
    m.raan0 = el.raan_rad;
    m.u0 = el.arg_perigee_rad + el.true_anomaly_rad;
    m.n = mean_motion_rad_s(el.semi_major_axis_m, earth_mu_m3_s2);

    switch (settings.model) {
        case RelativeMotionModel::hcw: break;
        case RelativeMotionModel::schweighart_sedwick: {
            // SS reference orbit: circular at r0; n = sqrt(mu/r0^3), argument of latitude rate n c,
            // node rate -(3/2) n J2 (R_E/r0)^2 cos i.
            m.n = mean_motion_rad_s(m.r0, earth_mu_m3_s2);
            m.ss_c = std::sqrt(1.0 + schweighart_sedwick_s(m.r0, m.inclination));
            const double q = earth_equatorial_radius_m / m.r0;
            m.raan_rate = -1.5 * m.n * earth_j2 * q * q * std::cos(m.inclination);
            break;
        }
        case RelativeMotionModel::hcw_ode: {
            m.rel.resize(6 * m.initial.size());
            for (std::size_t i = 0; i < m.initial.size(); ++i) {
                for (int c = 0; c < 3; ++c) {
                    m.rel[6 * i + c] = m.initial[i].position_m[c];
                    m.rel[6 * i + 3 + c] = m.initial[i].velocity_m_s[c];
                }
            }
            m.dense = std::make_unique<DenseDopri5>(
                odeint::make_dense_output(settings.absolute_tolerance, settings.relative_tolerance, Dopri5()));
            m.dense->initialize(m.rel, 0.0, 1.0);
            break;
        }
        case RelativeMotionModel::nonlinear: {
            m.setup_nonlinear();
            if (settings.station_keeping.enabled) {
                m.reference_c = settings.j2 ? std::sqrt(1.0 + schweighart_sedwick_s(m.r0, m.inclination)) : 1.0;
                m.reference_n = mean_motion_rad_s(m.r0, earth_mu_m3_s2);
                m.transfer_time_s = 0.25 * 2.0 * pi / m.reference_n;
                m.reference_now.resize(m.initial.size());
                m.calibrate_reference_orbits();
            }
            break;
        }
    }
}

FormationPropagator::~FormationPropagator() = default;
FormationPropagator::FormationPropagator(FormationPropagator&&) noexcept = default;
FormationPropagator& FormationPropagator::operator=(FormationPropagator&&) noexcept = default;

void FormationPropagator::advance_to(double time_s, FormationSnapshot& snapshot) {
    Impl& m = *impl_;
    if (m.started && time_s < m.last_time) {
        fail("advance_to called with a time earlier than the previous one", 0, time_s);
    }
    m.started = true;
    m.last_time = time_s;
    m.advance(time_s, snapshot);
}

std::size_t FormationPropagator::satellite_count() const { return impl_->initial.size(); }

std::span<const double> FormationPropagator::station_keeping_delta_v_m_s() const { return impl_->delta_v; }

RelativeState FormationPropagator::station_keeping_reference_lvlh(std::size_t satellite) const {
    return impl_->reference_now.at(satellite);
}

}  // namespace skyfabric::physics
