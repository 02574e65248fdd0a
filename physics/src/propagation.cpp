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
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#if defined(__AVX2__)
#include <immintrin.h>
#endif
#include <mutex>
#include <new>
#include <utility>

namespace skyfabric::physics {
namespace {

namespace odeint = boost::numeric::odeint;
using State = std::vector<double>;

// Satellites per independently integrated block (each block carries its own copy of the chief).
// Fixed, so results do not depend on the number of threads.
constexpr std::size_t chunk_capacity = 128;
// Threads are only worth starting for large formations.
constexpr std::size_t parallel_threshold = 512;
// Upper bound on one step (a sixth of the 650 km orbit): the error control, not this bound, sets the steps.
constexpr double max_step_s = 1000.0;
// The chief is held to a third of the tolerance of the offsets: its error moves every satellite's
// ECI state (at the default tolerances two-body energy then stays within 3e-11 of itself over a
// day, where equal weight gives 1.1e-10), and it costs no extra steps there.
constexpr double chief_error_weight = 3.0;
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
void hermite_offsets(const double* __restrict p0, const double* __restrict v0, const double* __restrict a0,
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

#if defined(__AVX2__)
// Four satellites' 6 components (c[i] holds component i of satellites 0–3) stored as 6 contiguous
// doubles per satellite: a 4×4 transpose of components 0–3 and a 2×4 one of 4–5, 8 stores instead of 24.
inline void store_six_by_four(double* base, __m256d c0, __m256d c1, __m256d c2, __m256d c3, __m256d c4,
                              __m256d c5) {
    const __m256d t0 = _mm256_unpacklo_pd(c0, c1), t1 = _mm256_unpackhi_pd(c0, c1);
    const __m256d t2 = _mm256_unpacklo_pd(c2, c3), t3 = _mm256_unpackhi_pd(c2, c3);
    const __m256d u0 = _mm256_unpacklo_pd(c4, c5), u1 = _mm256_unpackhi_pd(c4, c5);
    _mm256_storeu_pd(base + 0, _mm256_permute2f128_pd(t0, t2, 0x20));
    _mm_storeu_pd(base + 4, _mm256_castpd256_pd128(u0));
    _mm256_storeu_pd(base + 6, _mm256_permute2f128_pd(t1, t3, 0x20));
    _mm_storeu_pd(base + 10, _mm256_castpd256_pd128(u1));
    _mm256_storeu_pd(base + 12, _mm256_permute2f128_pd(t0, t2, 0x31));
    _mm_storeu_pd(base + 16, _mm256_extractf128_pd(u0, 1));
    _mm256_storeu_pd(base + 18, _mm256_permute2f128_pd(t1, t3, 0x31));
    _mm_storeu_pd(base + 22, _mm256_extractf128_pd(u1, 1));
}
#endif

// n satellites' ECI offsets (SoA: dx dy dz dvx dvy dvz) to LVLH rot^T (dr, dv - w x dr) and ECI
// chief + offset, each written as 6 contiguous doubles (RelativeState / CartesianState). rot holds
// the LVLH axes' ECI components column by column (r00 r10 r20 r01 …). The compiler does not
// vectorise the 6-way interleaved stores, so with AVX2 four satellites go at a time by hand; the
// scalar loop does the rest (the same arithmetic).
void lvlh_and_eci(const double* __restrict px, const double* __restrict py, const double* __restrict pz,
                  const double* __restrict ux, const double* __restrict uy, const double* __restrict uz,
                  double* __restrict lv, double* __restrict ec, std::size_t n, const std::array<double, 9>& rot,
                  const std::array<double, 3>& w, const std::array<double, 3>& chief_r,
                  const std::array<double, 3>& chief_v) {
    const double r00 = rot[0], r10 = rot[1], r20 = rot[2], r01 = rot[3], r11 = rot[4], r21 = rot[5], r02 = rot[6],
                 r12 = rot[7], r22 = rot[8];
    const double wx = w[0], wy = w[1], wz = w[2];
    std::size_t k = 0;
#if defined(__AVX2__)
    const auto b = [](double v) { return _mm256_set1_pd(v); };
    const __m256d R00 = b(r00), R10 = b(r10), R20 = b(r20), R01 = b(r01), R11 = b(r11), R21 = b(r21), R02 = b(r02),
                  R12 = b(r12), R22 = b(r22), WX = b(wx), WY = b(wy), WZ = b(wz);
    const __m256d CX = b(chief_r[0]), CY = b(chief_r[1]), CZ = b(chief_r[2]), CVX = b(chief_v[0]),
                  CVY = b(chief_v[1]), CVZ = b(chief_v[2]);
    const auto mul = [](__m256d x, __m256d y) { return _mm256_mul_pd(x, y); };
    const auto add = [](__m256d x, __m256d y) { return _mm256_add_pd(x, y); };
    const auto sub = [](__m256d x, __m256d y) { return _mm256_sub_pd(x, y); };
    for (; k + 4 <= n; k += 4) {
        const __m256d dx = _mm256_loadu_pd(px + k), dy = _mm256_loadu_pd(py + k), dz = _mm256_loadu_pd(pz + k);
        const __m256d Ux = _mm256_loadu_pd(ux + k), Uy = _mm256_loadu_pd(uy + k), Uz = _mm256_loadu_pd(uz + k);
        const __m256d vx = sub(Ux, sub(mul(WY, dz), mul(WZ, dy)));
        const __m256d vy = sub(Uy, sub(mul(WZ, dx), mul(WX, dz)));
        const __m256d vz = sub(Uz, sub(mul(WX, dy), mul(WY, dx)));
        store_six_by_four(lv + 6 * k, add(add(mul(R00, dx), mul(R10, dy)), mul(R20, dz)),
                          add(add(mul(R01, dx), mul(R11, dy)), mul(R21, dz)),
                          add(add(mul(R02, dx), mul(R12, dy)), mul(R22, dz)),
                          add(add(mul(R00, vx), mul(R10, vy)), mul(R20, vz)),
                          add(add(mul(R01, vx), mul(R11, vy)), mul(R21, vz)),
                          add(add(mul(R02, vx), mul(R12, vy)), mul(R22, vz)));
        store_six_by_four(ec + 6 * k, add(CX, dx), add(CY, dy), add(CZ, dz), add(CVX, Ux), add(CVY, Uy),
                          add(CVZ, Uz));
    }
#endif
    for (; k < n; ++k) {
        const double dx = px[k], dy = py[k], dz = pz[k];
        const double vx = ux[k] - (wy * dz - wz * dy), vy = uy[k] - (wz * dx - wx * dz), vz = uz[k] - (wx * dy - wy * dx);
        lv[6 * k + 0] = r00 * dx + r10 * dy + r20 * dz;
        lv[6 * k + 1] = r01 * dx + r11 * dy + r21 * dz;
        lv[6 * k + 2] = r02 * dx + r12 * dy + r22 * dz;
        lv[6 * k + 3] = r00 * vx + r10 * vy + r20 * vz;
        lv[6 * k + 4] = r01 * vx + r11 * vy + r21 * vz;
        lv[6 * k + 5] = r02 * vx + r12 * vy + r22 * vz;
        ec[6 * k + 0] = chief_r[0] + dx;
        ec[6 * k + 1] = chief_r[1] + dy;
        ec[6 * k + 2] = chief_r[2] + dz;
        ec[6 * k + 3] = chief_v[0] + ux[k];
        ec[6 * k + 4] = chief_v[1] + uy[k];
        ec[6 * k + 5] = chief_v[2] + uz[k];
    }
}

// Two-body + J2 acceleration at chief + offset, minus the chief's acceleration, for n offsets (the
// same formula as acceleration()). Restrict parameters and -fno-math-errno (sqrt) let the compiler
// vectorise it for the target.
void offset_accelerations(const double* __restrict dx, const double* __restrict dy, const double* __restrict dz,
                          double* __restrict ax, double* __restrict ay, double* __restrict az, std::size_t n,
                          const std::array<double, 3>& chief_r, const std::array<double, 3>& chief_a, double kj2) {
    const double rcx = chief_r[0], rcy = chief_r[1], rcz = chief_r[2];
    const double acx = chief_a[0], acy = chief_a[1], acz = chief_a[2];
    for (std::size_t e = 0; e < n; ++e) {
        const double x = rcx + dx[e], yy = rcy + dy[e], z = rcz + dz[e];
        const double r2 = x * x + yy * yy + z * z;
        const double r1 = std::sqrt(r2);
        const double g = -earth_mu_m3_s2 / (r2 * r1);
        const double kk5 = kj2 / (r2 * r2 * r1);
        const double z5 = 5.0 * z * z / r2;
        ax[e] = (g * x + kk5 * x * (1.0 - z5)) - acx;
        ay[e] = (g * yy + kk5 * yy * (1.0 - z5)) - acy;
        az[e] = (g * z + kk5 * z * (3.0 - z5)) - acz;
    }
}

// Least-squares normal equations N x = b (8 × 8, symmetric positive definite).
// GCC 12 warns that an AVX-512 register in Eigen's LDLT may be used uninitialised (a known false
// positive in _mm512_extractf64x4_pd under -march=native); silenced here only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
Eigen::Matrix<double, 8, 1> solve_normal_equations(const Eigen::Matrix<double, 8, 8>& n,
                                                   const Eigen::Matrix<double, 8, 1>& b) {
    return n.ldlt().solve(b);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

// Storage aligned to 64 bytes, with every component row a multiple of 8 doubles long: the vector
// loops then load and store whole cache lines instead of splitting one access in two.
template <class T>
struct CacheLineAllocator {
    using value_type = T;
    static constexpr std::align_val_t alignment{64};
    CacheLineAllocator() = default;
    template <class U>
    CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}
    T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), alignment)); }
    void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, alignment); }
    template <class U>
    bool operator==(const CacheLineAllocator<U>&) const noexcept { return true; }
};
using AlignedDoubles = std::vector<double, CacheLineAllocator<double>>;

struct Block {
    std::size_t first = 0;  // global index of the block's first satellite
    std::size_t count = 0;
    std::size_t stride = 0;  // entries per component: count + 1, rounded up to whole cache lines
    std::size_t len = 0;     // 6 * stride
    std::vector<double> ballistic;
    AlignedDoubles y, y_old, stage, out;  // out: interpolated state at the last requested time
    AlignedDoubles k;                     // 16 stages of len
    double chief_dense[6][7] = {};             // the chief's continuous extension coefficients
    AlignedDoubles err_terms, zeros;
    double t = 0.0, t_old = 0.0, h = 10.0, atol, rtol;
    bool fsal_pending = false;  // k[12] holds f(t, y); k[0..12] still the last accepted step's stages
    bool dense_ready = false;

    Block(double abs_tol, double rel_tol, std::size_t satellites) : atol(abs_tol), rtol(rel_tol) {
        count = satellites;
        stride = (count + 1 + 7) & ~std::size_t{7};  // whole cache lines per component
        len = 6 * stride;
        y.assign(len, 0.0);
        y_old = stage = out = err_terms = y;
        zeros.assign(2 * len, 0.0);
        k.assign(16 * len, 0.0);
        ballistic.assign(count + 1, 0.0);
    }

    double* kk(int s) { return k.data() + static_cast<std::size_t>(s) * len; }
    Eigen::Vector3d pos(const AlignedDoubles& s, std::size_t e) const {
        return {s[e], s[stride + e], s[2 * stride + e]};
    }
    Eigen::Vector3d vel(const AlignedDoubles& s, std::size_t e) const {
        return {s[3 * stride + e], s[4 * stride + e], s[5 * stride + e]};
    }
    void set(AlignedDoubles& s, std::size_t e, const Eigen::Vector3d& r, const Eigen::Vector3d& v) const {
        for (std::size_t c = 0; c < 3; ++c) {
            s[c * stride + e] = r[static_cast<Eigen::Index>(c)];
            s[(c + 3) * stride + e] = v[static_cast<Eigen::Index>(c)];
        }
    }

    // f = dy/dt: velocities, then the chief's acceleration and each offset's a(r_c + d) - a(r_c).
    void rhs(const ForceModel& f, double time, const double* __restrict s, double* __restrict d) const {
        const std::size_t n = count + 1, S = stride;
        for (std::size_t c = 0; c < 3; ++c) std::copy(s + (c + 3) * S, s + (c + 3) * S + n, d + c * S);
        const Eigen::Vector3d rc(s[0], s[S], s[2 * S]), vc(s[3 * S], s[4 * S], s[5 * S]);
        Eigen::Vector3d sun = Eigen::Vector3d::UnitX();
        if (f.drag) sun = sun_direction_eci(f.epoch_julian_date + time / seconds_per_day);
        const Eigen::Vector3d ac = acceleration(f, rc, vc, ballistic[0], sun);
        d[3 * S] = ac.x();
        d[4 * S] = ac.y();
        d[5 * S] = ac.z();
        if (f.drag) {
            for (std::size_t e = 1; e < n; ++e) {
                const Eigen::Vector3d a =
                    acceleration(f, rc + pos_of(s, e), vc + Eigen::Vector3d(s[3 * S + e], s[4 * S + e], s[5 * S + e]),
                                 ballistic[e], sun) - ac;
                d[3 * S + e] = a.x();
                d[4 * S + e] = a.y();
                d[5 * S + e] = a.z();
            }
            return;
        }
        // Two-body + J2, vectorised over the satellites.
        const double kj2 = f.j2 ? -1.5 * earth_j2 * earth_mu_m3_s2 * earth_equatorial_radius_m *
                                      earth_equatorial_radius_m
                                : 0.0;
        offset_accelerations(s + 1, s + S + 1, s + 2 * S + 1, d + 3 * S + 1, d + 4 * S + 1, d + 5 * S + 1, n - 1,
                             {rc.x(), rc.y(), rc.z()}, {ac.x(), ac.y(), ac.z()}, kj2);
    }
    Eigen::Vector3d pos_of(const double* s, std::size_t e) const {
        return {s[e], s[stride + e], s[2 * stride + e]};
    }

    // Global index of the first satellite with a non-finite entry in s (the chief counts as the
    // block's first satellite), or -1.
    long long first_bad(const double* s) const {
        for (std::size_t c = 0; c < 6; ++c) {
            for (std::size_t e = 0; e <= count; ++e) {
                if (!std::isfinite(s[c * stride + e])) {
                    return static_cast<long long>(e == 0 ? first : first + e - 1);
                }
            }
        }
        return -1;
    }

    void restart(const ForceModel& f, double time_s) {
        t = t_old = time_s;
        rhs(f, t, y.data(), kk(0));
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
        ((combine<s>(y.data(), h), rhs(f, t + dop_c[s] * h, stage.data(), kk(s))), ...);
    }
    template <int... s>
    void dense_stages(const ForceModel& f, double hs, std::integer_sequence<int, s...>) {
        ((combine<s>(y_old.data(), hs), rhs(f, t_old + dop_c[s] * hs, stage.data(), kk(s))), ...);
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

    // Hairer's error norm of entity e (0: the chief's copy, weighted) from error_terms(), before the factor h.
    double entity_error(std::size_t e) const {
        const double* t5 = err_terms.data();
        const double* t3 = zeros.data() + len;
        const std::size_t S = stride;
        const double s5 = t5[e] + t5[S + e] + t5[2 * S + e] + t5[3 * S + e] + t5[4 * S + e] + t5[5 * S + e];
        const double s3 = t3[e] + t3[S + e] + t3[2 * S + e] + t3[3 * S + e] + t3[4 * S + e] + t3[5 * S + e];
        const double d2 = s5 + 0.01 * s3;
        return (e == 0 ? chief_error_weight : 1.0) * (d2 != 0.0 ? s5 / std::sqrt(6.0 * d2) : 0.0);
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
                fsal_pending = false;
                dense_ready = false;
            }
            h = std::min(h, max_step_s);
            stages(f, std::integer_sequence<int, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11>{});
            combine_impl<-1>(y.data(), h, stage.data(), std::make_index_sequence<12>{});
            rhs(f, t + h, stage.data(), kk(12));
            // Error (Hairer's DOP853 norm, per entity): for each satellite (and the chief), with e5 and e3 the
            // 5th- and 3rd-order estimates scaled by atol + rtol max(|y|, |y_new|) over its 6 components,
            // h |e5|^2 / sqrt(6 (|e5|^2 + 0.01 |e3|^2)), the chief's times chief_error_weight; the largest
            // over the block.
            error_terms();
            double err = 0.0;
            for (std::size_t e = 0; e <= count; ++e) {
                const double ee = entity_error(e);
                err = ee > err || ee != ee ? ee : err;
            }
            err *= h;
            if (!std::isfinite(err)) {
                const long long bad = std::max(first_bad(stage.data()), first_bad(kk(12)));
                fail("non-finite state", static_cast<std::size_t>(std::max(0LL, bad >= 0 ? bad : (long long)first)), t);
            }
            if (err <= 1.0) {
                double factor = err == 0.0 ? 10.0 : std::min(10.0, 0.9 * pow_neg_eighth(err));
                if (rejected) factor = std::min(1.0, factor);
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
                    std::size_t worst = 1;
                    for (std::size_t e = 1; e <= count; ++e) {
                        if (!(entity_error(e) <= entity_error(worst))) worst = e;
                    }
                    fail("step size collapsed to " + std::to_string(h) + " s", first + worst - 1, t);
                }
            }
        }
        interpolate(f, time_s);
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

CartesianState chief_of(const Block& b) { return {b.pos(b.out, 0), b.vel(b.out, 0)}; }

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

// Persistent worker threads: run(count, work) calls work(i) for every i in [0, count) on the workers and
// the calling thread, and returns when all are done (rethrowing the first exception by index).
class WorkerPool {
public:
    explicit WorkerPool(std::size_t workers) {
        for (std::size_t i = 0; i < workers; ++i) threads_.emplace_back([this] { loop(); });
    }
    ~WorkerPool() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        wake_.notify_all();
        for (auto& th : threads_) th.join();
    }
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    void run(std::size_t count, const std::function<void(std::size_t)>& work) {
        errors_.assign(count, nullptr);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            work_ = &work;
            count_ = count;
            next_.store(0);
            finished_ = 0;
            ++generation_;
        }
        wake_.notify_all();
        drain();
        {
            std::unique_lock<std::mutex> lock(mutex_);
            done_.wait(lock, [&] { return finished_ == threads_.size(); });
            work_ = nullptr;
        }
        for (auto& e : errors_) {
            if (e) std::rethrow_exception(e);
        }
    }

private:
    void drain() {
        for (std::size_t i = next_.fetch_add(1); i < count_; i = next_.fetch_add(1)) {
            try {
                (*work_)(i);
            } catch (...) {
                errors_[i] = std::current_exception();
            }
        }
    }
    void loop() {
        std::uint64_t seen = 0;
        for (;;) {
            {
                std::unique_lock<std::mutex> lock(mutex_);
                wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
                if (stop_) return;
                seen = generation_;
            }
            drain();
            {
                std::lock_guard<std::mutex> lock(mutex_);
                ++finished_;
            }
            done_.notify_all();
        }
    }

    std::vector<std::thread> threads_;
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    const std::function<void(std::size_t)>* work_ = nullptr;
    std::size_t count_ = 0;
    std::atomic<std::size_t> next_{0};
    std::size_t finished_ = 0;
    std::uint64_t generation_ = 0;
    bool stop_ = false;
    std::vector<std::exception_ptr> errors_;
};

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
    std::unique_ptr<WorkerPool> pool;  // started at the first parallel call, joined with the propagator
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
        Block chief(settings.absolute_tolerance, settings.relative_tolerance, 0);
        chief.ballistic.assign(1, settings.drag.ballistic_coefficient_kg_m2);
        chief.set(chief.y, 0, blocks.front().pos(blocks.front().y, 0), blocks.front().vel(blocks.front().y, 0));
        chief.restart(force, 0.0);
        constexpr int samples = 200;
        double sum_t = 0, sum_u = 0, sum_tt = 0, sum_tu = 0, u_prev = 0, turns = 0;
        for (int k = 0; k <= samples; ++k) {
            const double t = period * k / samples;
            chief.advance(force, t);
            const KeplerianElements el = cartesian_to_keplerian(chief_of(chief), earth_mu_m3_s2);
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
            Block b(settings.absolute_tolerance, settings.relative_tolerance, std::min(chunk_capacity, total - first));
            b.first = first;
            b.ballistic.assign(b.count + 1, b_nominal);
            b.set(b.y, 0, chief0.position_m, chief0.velocity_m_s);
            for (std::size_t k = 0; k < b.count; ++k) {
                // Offsets of lvlh_to_eci(chief, s) minus the chief, formed without the 7e6 m round trip.
                const Eigen::Vector3d dr = rot * states[first + k].position_m;
                const Eigen::Vector3d dv = rot * states[first + k].velocity_m_s + w.cross(dr);
                b.set(b.y, k + 1, dr, dv);
                if (dispersed && settings.drag.enabled) {
                    b.ballistic[k + 1] = satellite_ballistic_coefficient_kg_m2(settings.drag, first + k);
                }
            }
            b.restart(force, 0.0);
            b.out = b.y;
            out.push_back(std::move(b));
        }
        return out;
    }

    void setup_nonlinear() { blocks = make_blocks(initial, true); }

    // LVLH (rot^T dr, rot^T (dv - w x dr)) and ECI (chief + offset) of every satellite of b at b.out.
    static void write_snapshot(const Block& b, FormationSnapshot& snap) {
        static_assert(sizeof(RelativeState) == 6 * sizeof(double) && sizeof(CartesianState) == 6 * sizeof(double));
        const CartesianState chief = chief_of(b);
        const Eigen::Matrix3d rot = lvlh_to_eci_rotation(chief);
        const Eigen::Vector3d w = chief.position_m.cross(chief.velocity_m_s) / chief.position_m.squaredNorm();
        const std::size_t S = b.stride;
        const double* o = b.out.data() + 1;  // entity 0 is the chief
        lvlh_and_eci(o, o + S, o + 2 * S, o + 3 * S, o + 4 * S, o + 5 * S,
                     snap.satellites_lvlh[b.first].position_m.data(), snap.satellites_eci[b.first].position_m.data(),
                     b.count, {rot(0, 0), rot(1, 0), rot(2, 0), rot(0, 1), rot(1, 1), rot(2, 1), rot(0, 2), rot(1, 2), rot(2, 2)},
                     {w.x(), w.y(), w.z()}, {chief.position_m.x(), chief.position_m.y(), chief.position_m.z()},
                     {chief.velocity_m_s.x(), chief.velocity_m_s.y(), chief.velocity_m_s.z()});
    }

    static void lvlh_of_block(const Block& b, std::vector<RelativeState>& out) {
        const CartesianState chief = chief_of(b);
        const Eigen::Matrix3d rot = lvlh_to_eci_rotation(chief);
        const Eigen::Vector3d w = chief.position_m.cross(chief.velocity_m_s) / chief.position_m.squaredNorm();
        for (std::size_t k = 0; k < b.count; ++k) {
            const Eigen::Vector3d dr = b.pos(b.out, k + 1), dv = b.vel(b.out, k + 1);
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
                const double drift_m_s = solve_normal_equations(normal[i], rhs[i])(1) / span;
                ghost_initial[i].velocity_m_s.y() += drift_m_s / 3.0;
            }
        }
        ghosts = make_blocks(ghost_initial, false);
    }

    // work(i) for i in [0, count) on the pool (see thread_count()). Each i touches only its own block and
    // its own satellites' entries, so results do not depend on the number of threads.
    std::size_t thread_count() const {
        if (settings.threads == 1) return 1;
        if (settings.threads == 0 && initial.size() < parallel_threshold) return 1;
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
        if (!pool) pool = std::make_unique<WorkerPool>(thread_count() - 1);
        pool->run(count, std::function<void(std::size_t)>(std::ref(work)));
    }

    // Dead-band control with two-impulse HCW targeting on the error e = rho - rho_ref (LVLH), whose
    // dynamics about the nearby reference are HCW to O(|e|/r, J2 |e|). When |e| > 0.8 tolerance (margin for
    // the motion between calls), the first impulse sets de/dt = -Phi_rv(tau)^-1 Phi_rr(tau) e so that e
    // reaches 0 after tau = a quarter orbit; at the first call after that the second impulse puts what is
    // left of e on a drift-free HCW ellipse.
    void station_keep(Block& b, Block& g, double t) {
        g.advance(force, t);
        lvlh_of_block(g, reference_now);
        const CartesianState chief = chief_of(b);
        const Eigen::Matrix3d rot = lvlh_to_eci_rotation(chief);
        const Eigen::Vector3d w = chief.position_m.cross(chief.velocity_m_s) / chief.position_m.squaredNorm();
        const Eigen::Matrix<double, 6, 6> phi = hcw_state_transition(reference_n, transfer_time_s);
        const Eigen::Matrix3d gain = phi.block<3, 3>(0, 3).inverse() * phi.block<3, 3>(0, 0);
        bool changed = false;
        for (std::size_t k = 0; k < b.count; ++k) {
            const std::size_t i = b.first + k;
            const Eigen::Vector3d dr = b.pos(b.out, k + 1);
            Eigen::Vector3d dv = b.vel(b.out, k + 1);
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
            b.set(b.out, k + 1, dr, dv);
            delta_v[i] += impulse.norm();
            changed = true;
        }
        if (changed) {
            b.y = b.out;
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
                auto work = [&](std::size_t i) {
                    blocks[i].advance(force, t);
                    if (keep) station_keep(blocks[i], ghosts[i], t);
                };
                // Threads only when a block has steps to take: most 10 s calls only interpolate.
                bool stepping = false;
                for (const Block& b : blocks) stepping = stepping || b.t < t;
                if (keep) {
                    for (const Block& g : ghosts) stepping = stepping || g.t < t;
                }
                if (stepping) {
                    parallel_for(blocks.size(), work);
                } else {
                    for (std::size_t i = 0; i < blocks.size(); ++i) work(i);
                }
                snap.chief_eci = chief_of(blocks.front());
                for (const Block& b : blocks) write_snapshot(b, snap);
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
