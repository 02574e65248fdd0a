#pragma once
// The nonlinear propagator's integrator: Dormand-Prince 8(5,3) (DOP853) over one block of satellites,
// with step-size control, DOP853's 7th-order continuous extension for the chief and quintic Hermite
// output for the offsets.
#include "block_storage.hpp"
#include "force_model.hpp"

#include <skyfabric/physics/propagation.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace skyfabric::physics::detail {

// Upper bound on one step (a sixth of the 650 km orbit): the error control, not this bound, sets the steps.
constexpr double max_step_s = 1000.0;
// The chief is held to a third of the tolerance of the offsets: its error moves every satellite's
// ECI state (at the default tolerances two-body energy then stays within 3e-11 of itself over a
// day, where equal weight gives 1.1e-10), and it costs no extra steps there.
constexpr double chief_error_weight = 3.0;
constexpr double min_step_s = 1e-6;
constexpr int max_rejections_in_a_row = 200;

[[noreturn]] inline void fail(const std::string& what, std::size_t satellite, double time_s) {
    std::ostringstream os;
    os.precision(10);
    os << "propagation failed: " << what << " (satellite " << satellite << ", t = " << time_s << " s)";
    throw PropagationError(os.str());
}

// Integrator: Dormand-Prince 8(5,3) (DOP853) with its own 7th-order continuous extension for output
// times inside a step. State of a block, structure of arrays: component c (x, y, z, vx, vy, vz) of
// entity e (0 = the chief's ECI state, 1.. = each satellite's ECI offset from it) at [c * stride + e],
// so the right-hand side and the stage sums run over contiguous arrays.
// DOP853 (Dormand & Prince; Hairer, Norsett & Wanner), coefficients as in SciPy's dop853_coefficients.py.
constexpr double dop_c[16] = {0.0, 0.05260015195876773, 0.0789002279381516, 0.1183503419072274, 0.2816496580927726, 0.3333333333333333, 0.25, 0.3076923076923077, 0.6512820512820513, 0.6, 0.8571428571428571, 1.0, 1.0, 0.1, 0.2, 0.7777777777777778};
constexpr double dop_a[16][16] = {
    {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.05260015195876773, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.0197250569845379, 0.0591751709536137, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.02958758547680685, 0.0, 0.08876275643042054, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.2413651341592667, 0.0, -0.8845494793282861, 0.924834003261792, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.037037037037037035, 0.0, 0.0, 0.17082860872947386, 0.12546768756682242, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.037109375, 0.0, 0.0, 0.17025221101954405, 0.06021653898045596, -0.017578125, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.03709200011850479, 0.0, 0.0, 0.17038392571223998, 0.10726203044637328, -0.015319437748624402, 0.008273789163814023, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.6241109587160757, 0.0, 0.0, -3.3608926294469414, -0.868219346841726, 27.59209969944671, 20.154067550477894, -43.48988418106996, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.47766253643826434, 0.0, 0.0, -2.4881146199716677, -0.590290826836843, 21.230051448181193, 15.279233632882423, -33.28821096898486, -0.020331201708508627, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {-0.9371424300859873, 0.0, 0.0, 5.186372428844064, 1.0914373489967295, -8.149787010746927, -18.52006565999696, 22.739487099350505, 2.4936055526796523, -3.0467644718982196, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {2.273310147516538, 0.0, 0.0, -10.53449546673725, -2.0008720582248625, -17.9589318631188, 27.94888452941996, -2.8589982771350235, -8.87285693353063, 12.360567175794303, 0.6433927460157636, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.054293734116568765, 0.0, 0.0, 0.0, 0.0, 4.450312892752409, 1.8915178993145003, -5.801203960010585, 0.3111643669578199, -0.1521609496625161, 0.20136540080403034, 0.04471061572777259, 0.0, 0.0, 0.0, 0.0},
    {0.056167502283047954, 0.0, 0.0, 0.0, 0.0, 0.0, 0.25350021021662483, -0.2462390374708025, -0.12419142326381637, 0.15329179827876568, 0.00820105229563469, 0.007567897660545699, -0.008298, 0.0, 0.0, 0.0},
    {0.03183464816350214, 0.0, 0.0, 0.0, 0.0, 0.028300909672366776, 0.053541988307438566, -0.05492374857139099, 0.0, 0.0, -0.00010834732869724932, 0.0003825710908356584, -0.00034046500868740456, 0.1413124436746325, 0.0, 0.0},
    {-0.42889630158379194, 0.0, 0.0, 0.0, 0.0, -4.697621415361164, 7.683421196062599, 4.06898981839711, 0.3567271874552811, 0.0, 0.0, 0.0, -0.0013990241651590145, 2.9475147891527724, -9.15095847217987, 0.0},
};
constexpr double dop_b[12] = {0.054293734116568765, 0.0, 0.0, 0.0, 0.0, 4.450312892752409, 1.8915178993145003, -5.801203960010585, 0.3111643669578199, -0.1521609496625161, 0.20136540080403034, 0.04471061572777259};
constexpr double dop_e3[13] = {-0.18980075407240762, 0.0, 0.0, 0.0, 0.0, 4.450312892752409, 1.8915178993145003, -5.801203960010585, -0.4226823213237919, -0.1521609496625161, 0.20136540080403034, 0.02265179219836082, 0.0};
constexpr double dop_e5[13] = {0.01312004499419488, 0.0, 0.0, 0.0, 0.0, -1.2251564463762044, -0.4957589496572502, 1.6643771824549864, -0.35032884874997366, 0.3341791187130175, 0.08192320648511571, -0.022355307863886294, 0.0};
constexpr double dop_d[4][16] = {
    {-8.428938276109013, 0.0, 0.0, 0.0, 0.0, 0.5667149535193777, -3.0689499459498917, 2.38466765651207, 2.117034582445028, -0.871391583777973, 2.2404374302607883, 0.6315787787694688, -0.08899033645133331, 18.148505520854727, -9.194632392478356, -4.436036387594894},
    {10.427508642579134, 0.0, 0.0, 0.0, 0.0, 242.28349177525817, 165.20045171727028, -374.5467547226902, -22.113666853125306, 7.733432668472264, -30.674084731089398, -9.332130526430229, 15.697238121770845, -31.139403219565178, -9.35292435884448, 35.81684148639408},
    {19.985053242002433, 0.0, 0.0, 0.0, 0.0, -387.0373087493518, -189.17813819516758, 527.8081592054236, -11.57390253995963, 6.8812326946963, -1.0006050966910838, 0.7777137798053443, -2.778205752353508, -60.19669523126412, 84.32040550667716, 11.99229113618279},
    {-25.69393346270375, 0.0, 0.0, 0.0, 0.0, -154.18974869023643, -231.5293791760455, 357.6391179106141, 93.40532418362432, -37.45832313645163, 104.0996495089623, 29.8402934266605, -43.53345659001114, 96.32455395918828, -39.17726167561544, -149.72683625798564},
};

inline double pow_neg_eighth(double x) { return 1.0 / std::sqrt(std::sqrt(std::sqrt(x))); }

// Quintic Hermite of n offsets in one component between two steps: position and velocity from the
// end points (p, v, a at 0 and 1) with the weights of the output time (h5 h1 h2 h3 h4 for the
// position, d5 d1 d2 d3 d4 for the velocity). A plain loop over restrict pointers, which the
// compiler vectorises for the target.
inline void hermite_offsets(const double* __restrict p0, const double* __restrict v0, const double* __restrict a0,
                     const double* __restrict p1, const double* __restrict v1, const double* __restrict a1,
                     double* __restrict op, double* __restrict ov, std::size_t n, const std::array<double, 10>& w) {
    const double h5 = w[0], h1 = w[1], h2 = w[2], h3 = w[3], h4 = w[4];
    const double d5 = w[5], d1 = w[6], d2 = w[7], d3 = w[8], d4 = w[9];
    for (std::size_t e = 0; e < n; ++e) {
        const double dp = p1[e] - p0[e];
        op[e] = p0[e] + ((((h5 * dp + h1 * v0[e]) + h2 * a0[e]) + h3 * a1[e]) + h4 * v1[e]);
        ov[e] = d5 * dp + d1 * v0[e] + d4 * v1[e] + d2 * a0[e] + d3 * a1[e];
    }
}

// One block: its state (layout: block_storage.hpp) and the DOP853 stepper that advances it.
struct Block : BlockLayout {
    std::vector<double> ballistic;
    AlignedDoubles y, y_old, stage, out;  // out: interpolated state at the last requested time
    AlignedDoubles k;                     // 16 stages of len
    double chief_dense[6][7] = {};             // the chief's continuous extension coefficients
    AlignedDoubles err_terms, zeros;
    // With drag: |a_drag,e - a_drag,chief| at each of the 13 stages (row s, entity e at [s * stride + e]),
    // and its integral since t = 0 by the step's own quadrature weights (m/s); drag_delta_v_old at t_old.
    AlignedDoubles drag_rate;
    std::vector<double> drag_delta_v, drag_delta_v_old;
    double t = 0.0, t_old = 0.0, h = 10.0, atol, rtol;
    bool fsal_pending = false;  // k[12] holds f(t, y); k[0..12] still the last accepted step's stages
    bool dense_ready = false;

    Block(double abs_tol, double rel_tol, std::size_t satellites)
        : BlockLayout(satellites), atol(abs_tol), rtol(rel_tol) {
        y.assign(len, 0.0);
        y_old = stage = out = err_terms = y;
        zeros.assign(2 * len, 0.0);
        k.assign(16 * len, 0.0);
        ballistic.assign(count + 1, 0.0);
        drag_rate.assign(13 * stride, 0.0);
        drag_delta_v.assign(count + 1, 0.0);
        drag_delta_v_old = drag_delta_v;
    }

    double* kk(int s) { return k.data() + static_cast<std::size_t>(s) * len; }

    // f = dy/dt of s into stage `row` of k (force_model.hpp), with drag also row `row` of drag_rate.
    void rhs(const ForceModel& f, double time, const double* __restrict s, int row) {
        block_derivative(f, *this, ballistic, time, s, kk(row),
                         f.drag ? drag_rate.data() + static_cast<std::size_t>(row) * stride : nullptr);
    }

    // A restart at time_s inside the last step (after an impulse) integrates [time_s, t] again: keep only
    // [t_old, time_s] of that step's drag integral, from the quadratic in time through the integrand at both
    // ends and the step's integral.
    void rewind_drag_difference(double time_s) {
        const double hs = t - t_old, x = (time_s - t_old) / hs;
        for (std::size_t e = 1; e <= count; ++e) {
            const double q0 = drag_rate[e], q1 = drag_rate[12 * stride + e];
            const double mean = (drag_delta_v[e] - drag_delta_v_old[e]) / hs;
            const double a = 6.0 * (mean - q0) - 2.0 * (q1 - q0), b = (q1 - q0) - a;
            drag_delta_v[e] = drag_delta_v_old[e] + hs * x * (q0 + x * (a / 2.0 + x * b / 3.0));
        }
        drag_delta_v_old = drag_delta_v;
    }

    void restart(const ForceModel& f, double time_s) {
        if (f.drag && fsal_pending && t_old <= time_s && time_s < t) rewind_drag_difference(time_s);
        t = t_old = time_s;
        rhs(f, t, y.data(), 0);
        fsal_pending = false;
        dense_ready = false;
    }

    // out = base + step sum_{j < J} coef[j] k[j], summed in registers (J and coef known at compile time).
    // Row s of the Butcher tableau, or the solution weights b for s = -1. The index, not a pointer
    // to the row, is the template argument: a pointer to a subobject is not a valid template
    // argument for every compiler (clang 14).
    static constexpr double tableau(int s, std::size_t j) { return s < 0 ? dop_b[j] : dop_a[s][j]; }
    template <int s, std::size_t... j>
    void combine_impl(const double* __restrict base, double step, double* __restrict o,
                      std::index_sequence<j...>) const {
        const double* __restrict kp = k.data();
        const std::size_t L = len;
        for (std::size_t i = 0; i < L; ++i) o[i] = base[i] + step * (0.0 + ... + (tableau(s, j) * kp[j * L + i]));
    }
    template <int s>
    void combine(const double* base, double step) {
        combine_impl<s>(base, step, stage.data(), std::make_index_sequence<s>{});
    }
    template <int... s>
    void stages(const ForceModel& f, std::integer_sequence<int, s...>) {
        ((combine<s>(y.data(), h), rhs(f, t + dop_c[s] * h, stage.data(), s)), ...);
    }
    template <int... s>
    void dense_stages(const ForceModel& f, double hs, std::integer_sequence<int, s...>) {
        ((combine<s>(y_old.data(), hs), rhs(f, t_old + dop_c[s] * hs, stage.data(), s)), ...);
    }
    // Squared scaled 5th- and 3rd-order error estimates per entry (restrict parameters: vectorised).
    template <std::size_t... j>
    static void error_terms_impl(const double* __restrict kp, std::size_t L, const double* __restrict yy,
                                 const double* __restrict yn, double* __restrict o5, double* __restrict o3,
                                 double at, double rt, std::index_sequence<j...>) {
        for (std::size_t i = 0; i < L; ++i) {
            const double sc = at + rt * std::max(std::abs(yy[i]), std::abs(yn[i]));
            const double e5 = (0.0 + ... + (dop_e5[j] * kp[j * L + i])) / sc;
            const double e3 = (0.0 + ... + (dop_e3[j] * kp[j * L + i])) / sc;
            o5[i] = e5 * e5;
            o3[i] = e3 * e3;
        }
    }
    void error_terms() {
        error_terms_impl(k.data(), len, y.data(), stage.data(), err_terms.data(), zeros.data() + len, atol, rtol,
                         std::make_index_sequence<13>{});
    }

    // A satellite below 100 km has re-entered: say so, rather than integrate on until the step
    // size collapses in the atmosphere or at the Earth's centre.
    void check_reentry() const {
        constexpr double reentry_radius_m = earth_equatorial_radius_m + 100e3;
        const Eigen::Vector3d chief = pos(y, 0);
        for (std::size_t e = 0; e <= count; ++e) {
            const Eigen::Vector3d r = e == 0 ? chief : Eigen::Vector3d(chief + pos(y, e));
            if (r.squaredNorm() < reentry_radius_m * reentry_radius_m) {
                fail("re-entry: altitude " + std::to_string((r.norm() - earth_equatorial_radius_m) / 1e3) +
                         " km, below 100 km (the orbit decayed into the atmosphere or meets the ground)",
                     e == 0 ? first : first + e - 1, t);
            }
        }
    }

    void advance(const ForceModel& f, double time_s) {
        int rejections = 0;
        bool rejected = false;
        while (t < time_s) {
            if (fsal_pending) {
                std::copy(kk(12), kk(12) + len, kk(0));
                if (f.drag) {
                    std::copy(drag_rate.begin() + 12 * static_cast<std::ptrdiff_t>(stride),
                              drag_rate.begin() + 13 * static_cast<std::ptrdiff_t>(stride), drag_rate.begin());
                }
                fsal_pending = false;
                dense_ready = false;
            }
            h = std::min(h, max_step_s);
            stages(f, std::integer_sequence<int, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11>{});
            combine_impl<-1>(y.data(), h, stage.data(), std::make_index_sequence<12>{});
            rhs(f, t + h, stage.data(), 12);
            // Error (Hairer's DOP853 norm, per entity): for each satellite (and the chief), with e5 and e3 the
            // 5th- and 3rd-order estimates scaled by atol + rtol max(|y|, |y_new|) over its 6 components,
            // h |e5|^2 / sqrt(6 (|e5|^2 + 0.01 |e3|^2)), the chief's times chief_error_weight; the largest
            // over the block.
            error_terms();
            double err = 0.0;
            {
                const double* t5 = err_terms.data();
                const double* t3 = zeros.data() + len;
                const std::size_t S = stride;
                for (std::size_t e = 0; e <= count; ++e) {
                    const double s5 = t5[e] + t5[S + e] + t5[2 * S + e] + t5[3 * S + e] + t5[4 * S + e] + t5[5 * S + e];
                    const double s3 = t3[e] + t3[S + e] + t3[2 * S + e] + t3[3 * S + e] + t3[4 * S + e] + t3[5 * S + e];
                    const double d2 = s5 + 0.01 * s3;
                    const double ee = (e == 0 ? chief_error_weight : 1.0) * (d2 != 0.0 ? s5 / std::sqrt(6.0 * d2) : 0.0);
                    err = ee > err || ee != ee ? ee : err;
                }
            }
            err *= h;
            if (!std::isfinite(err)) {
                const long long bad = std::max(first_bad(stage.data()), first_bad(kk(12)));
                fail("non-finite state", static_cast<std::size_t>(std::max(0LL, bad >= 0 ? bad : (long long)first)), t);
            }
            if (err <= 1.0) {
                double factor = err == 0.0 ? 10.0 : std::min(10.0, 0.9 * pow_neg_eighth(err));
                if (rejected) factor = std::min(1.0, factor);
                if (f.drag) accumulate_drag_difference(h);
                y_old.swap(y);
                y.swap(stage);
                t_old = t;
                t += h;
                h *= factor;
                fsal_pending = true;
                dense_ready = false;
                rejections = 0;
                rejected = false;
                check_reentry();
            } else {
                h *= std::max(0.2, 0.9 * pow_neg_eighth(err));
                rejected = true;
                if (++rejections > max_rejections_in_a_row || h < min_step_s) {
                    // Name the satellite whose error forced the step down (entity 0 is the chief's copy).
                    const double* t5 = err_terms.data();
                    const std::size_t S = stride;
                    auto error_of = [&](std::size_t e) {
                        return t5[e] + t5[S + e] + t5[2 * S + e] + t5[3 * S + e] + t5[4 * S + e] + t5[5 * S + e];
                    };
                    std::size_t worst = 1;
                    for (std::size_t e = 2; e <= count; ++e) {
                        if (!(error_of(e) <= error_of(worst))) worst = e;
                    }
                    fail("step size collapsed to " + std::to_string(h) + " s", first + worst - 1, t);
                }
            }
        }
        interpolate(f, time_s);
    }

    // drag_delta_v += the step's integral of |a_drag,e - a_drag,chief|, by DOP853's 8th-order weights.
    void accumulate_drag_difference(double step) {
        drag_delta_v_old = drag_delta_v;
        for (std::size_t e = 1; e <= count; ++e) {
            double sum = 0.0;
            for (std::size_t j = 0; j < 12; ++j) sum += dop_b[j] * drag_rate[j * stride + e];
            drag_delta_v[e] += step * sum;
        }
    }

    // The chief (6 components) between steps: DOP853's 7th-order continuous extension, whose three extra
    // stages need only the chief's own right-hand side.
    void prepare_chief_dense(const ForceModel& f) {
        const double hs = t - t_old;
        const std::size_t S = stride;
        const Eigen::Vector3d sun_unused = Eigen::Vector3d::UnitX();
        for (int s = 13; s < 16; ++s) {
            double st[6];
            for (std::size_t c = 0; c < 6; ++c) {
                double acc = 0.0;
                for (int j = 0; j < s; ++j) acc += dop_a[s][j] * k[static_cast<std::size_t>(j) * len + c * S];
                st[c] = y_old[c * S] + hs * acc;
            }
            const double ts = t_old + dop_c[s] * hs;
            const Eigen::Vector3d r(st[0], st[1], st[2]), v(st[3], st[4], st[5]);
            const Eigen::Vector3d sun =
                f.drag ? sun_direction_eci(f.epoch_julian_date + ts / seconds_per_day) : sun_unused;
            const Eigen::Vector3d a = acceleration(f, r, v, ballistic[0], sun);
            double* ks = kk(s);
            for (std::size_t c = 0; c < 3; ++c) {
                ks[c * S] = st[c + 3];
                ks[(c + 3) * S] = a[static_cast<Eigen::Index>(c)];
            }
        }
        for (std::size_t c = 0; c < 6; ++c) {
            const std::size_t i = c * S;
            const double dy = y[i] - y_old[i], k0 = k[i], k12 = k[12 * len + i];
            chief_dense[c][0] = dy;
            chief_dense[c][1] = hs * k0 - dy;
            chief_dense[c][2] = 2.0 * dy - hs * (k12 + k0);
            for (int r = 0; r < 4; ++r) {
                double acc = 0.0;
                for (int j = 0; j < 16; ++j) acc += dop_d[r][j] * k[static_cast<std::size_t>(j) * len + i];
                chief_dense[c][3 + r] = hs * acc;
            }
        }
        dense_ready = true;
    }

    // Output at time_s inside the last step: the chief from its 7th-order continuous extension, the
    // offsets by the quintic Hermite through position, velocity and acceleration at both ends (error
    // ~ h^6 |d^(6)| / 46080: ~1e-7 m on 1 km offsets for 100 s steps at 650 km, ~1e-4 m for 300 s).
    void interpolate(const ForceModel& f, double time_s) {
        if (time_s >= t || t <= t_old || !fsal_pending) {  // at the step's end, or restarted at t
            out = y;
            return;
        }
        if (!dense_ready) prepare_chief_dense(f);
        const double hs = t - t_old;
        const double x = (time_s - t_old) / hs, x1 = 1.0 - x;
        const std::size_t S = stride;
        const double s2 = x * x, s3 = s2 * x, s4 = s3 * x, s5 = s4 * x;
        const double h5 = 10.0 * s3 - 15.0 * s4 + 6.0 * s5;
        const double h1 = (x - 6.0 * s3 + 8.0 * s4 - 3.0 * s5) * hs;
        const double h2 = 0.5 * (s2 - 3.0 * s3 + 3.0 * s4 - s5) * hs * hs;
        const double h3 = 0.5 * (s3 - 2.0 * s4 + s5) * hs * hs;
        const double h4 = (-4.0 * s3 + 7.0 * s4 - 3.0 * s5) * hs;
        const double d5 = (30.0 * s2 - 60.0 * s3 + 30.0 * s4) / hs;
        const double d1 = 1.0 - 18.0 * s2 + 32.0 * s3 - 15.0 * s4;
        const double d2 = 0.5 * (2.0 * x - 9.0 * s2 + 12.0 * s3 - 5.0 * s4) * hs;
        const double d3 = 0.5 * (3.0 * s2 - 8.0 * s3 + 5.0 * s4) * hs;
        const double d4 = -12.0 * s2 + 28.0 * s3 - 15.0 * s4;
        for (std::size_t c = 0; c < 3; ++c) {
            // From entity 0, so the loop runs on whole cache lines; the chief's entry is replaced below.
            const std::size_t pc = c * S, vc = (c + 3) * S;
            hermite_offsets(y_old.data() + pc, y_old.data() + vc, k.data() + vc, y.data() + pc, y.data() + vc,
                            k.data() + 12 * len + vc, out.data() + pc, out.data() + vc, count + 1,
                            {h5, h1, h2, h3, h4, d5, d1, d2, d3, d4});
        }
        for (std::size_t c = 0; c < 6; ++c) {
            const double* F = chief_dense[c];
            const double p = (F[0] + x1 * (F[1] + x * (F[2] + x1 * (F[3] + x * (F[4] + x1 * (F[5] + x * F[6])))))) * x;
            out[c * S] = y_old[c * S] + p;
        }
    }
};

inline CartesianState chief_of(const Block& b) { return {b.pos(b.out, 0), b.vel(b.out, 0)}; }

}  // namespace skyfabric::physics::detail
