#include <skyfabric/physics/atmosphere.hpp>

#include <skyfabric/physics/constants.hpp>

#include <algorithm>
#include <array>
#include <cmath>

namespace skyfabric::physics {
namespace {

// Harris-Priester coefficients, mean solar activity (Montenbruck & Gill 2000, Table 3.8):
// height km, rho_min, rho_max in g/km^3 (= 1e-12 kg/m^3).
struct HpRow {
    double h_km, min, max;
};
constexpr std::array<HpRow, 50> hp_table{{
    {100, 497400.0, 497400.0}, {120, 24900.0, 24900.0}, {130, 8377.0, 8710.0}, {140, 3899.0, 4059.0},
    {150, 2122.0, 2215.0},     {160, 1263.0, 1344.0},   {170, 800.8, 875.8},    {180, 528.3, 601.0},
    {190, 361.7, 429.7},       {200, 255.7, 316.2},     {210, 183.9, 239.6},    {220, 134.1, 185.3},
    {230, 99.49, 145.5},       {240, 74.88, 115.7},     {250, 57.09, 93.08},    {260, 44.03, 75.55},
    {270, 34.30, 61.82},       {280, 26.97, 50.95},     {290, 21.39, 42.26},    {300, 17.08, 35.26},
    {320, 10.99, 25.11},       {340, 7.214, 18.19},     {360, 4.824, 13.37},    {380, 3.274, 9.955},
    {400, 2.249, 7.492},       {420, 1.558, 5.684},     {440, 1.091, 4.355},    {460, 0.7701, 3.362},
    {480, 0.5474, 2.612},      {500, 0.3916, 2.042},    {520, 0.2819, 1.605},   {540, 0.2042, 1.267},
    {560, 0.1488, 1.005},      {580, 0.1092, 0.7997},   {600, 0.08070, 0.6390}, {620, 0.06012, 0.5123},
    {640, 0.04519, 0.4121},    {660, 0.03430, 0.3325},  {680, 0.02632, 0.2691}, {700, 0.02043, 0.2185},
    {720, 0.01607, 0.1779},    {740, 0.01281, 0.1452},  {760, 0.01036, 0.1190}, {780, 0.008496, 0.09776},
    {800, 0.007069, 0.08059},  {840, 0.004680, 0.05741}, {880, 0.003200, 0.04210}, {920, 0.002210, 0.03130},
    {960, 0.001560, 0.02360},  {1000, 0.001150, 0.01810},
}};

constexpr double bulge_lag_rad = 30.0 * pi / 180.0;
// cos^n(psi/2) exponent n = 6 (polar orbits), applied as ((1 + cos psi)/2)^3.

// ln(rho_i+1 / rho_i) per table interval, so interpolation is one exp per profile.
struct HpLogs {
    std::array<double, hp_table.size() - 1> min{}, max{};
    HpLogs() {
        for (std::size_t i = 0; i + 1 < hp_table.size(); ++i) {
            min[i] = std::log(hp_table[i + 1].min / hp_table[i].min);
            max[i] = std::log(hp_table[i + 1].max / hp_table[i].max);
        }
    }
};
const HpLogs& hp_logs() {
    static const HpLogs logs;
    return logs;
}

std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

// Uniform in (0, 1]: top 53 bits, offset so log() never sees 0.
double to_unit(std::uint64_t bits) { return (static_cast<double>(bits >> 11) + 1.0) * 0x1.0p-53; }

}  // namespace

double atmospheric_density_kg_m3(const Eigen::Vector3d& r, const Eigen::Vector3d& sun, SolarActivity activity) {
    // Height above the ellipsoid, first order in flattening: R(phi) = a (1 - f sin^2 phi).
    const double rn = r.norm();
    const double sin_lat = r.z() / rn;
    const double h_km = (rn - earth_equatorial_radius_m * (1.0 - earth_flattening * sin_lat * sin_lat)) / 1000.0;
    if (h_km >= hp_table.back().h_km) return 0.0;
    const double hq = std::max(h_km, hp_table.front().h_km);
    // Interval [h_i, h_i+1) holding hq (the last one for hq = 1000 km).
    const auto above = std::upper_bound(hp_table.begin(), hp_table.end() - 1, hq,
                                        [](double h, const HpRow& row) { return h < row.h_km; });
    const std::size_t i = static_cast<std::size_t>(above - hp_table.begin()) - 1;
    const HpRow& lo = hp_table[i];
    const HpRow& hi = hp_table[i + 1];
    // Exponential interpolation: rho(h) = rho_i exp((h_i - h)/H), H = (h_i - h_i+1)/ln(rho_i+1/rho_i).
    const double u = (hq - lo.h_km) / (hi.h_km - lo.h_km);
    const double rho_min = lo.min * std::exp(u * hp_logs().min[i]) * 1e-12;
    const double rho_max = lo.max * std::exp(u * hp_logs().max[i]) * 1e-12;
    switch (activity) {
        case SolarActivity::low: return rho_min;
        case SolarActivity::high: return rho_max;
        case SolarActivity::moderate: break;
    }
    // Bulge apex: Sun rotated +30 deg about the pole; cos^n(psi/2) = ((1 + cos psi)/2)^(n/2).
    const double cl = std::cos(bulge_lag_rad);
    const double sl = std::sin(bulge_lag_rad);
    const Eigen::Vector3d apex(cl * sun.x() - sl * sun.y(), sl * sun.x() + cl * sun.y(), sun.z());
    const double cos_psi = r.dot(apex) / rn;
    const double half = std::max(0.0, 0.5 * (1.0 + cos_psi));
    const double bulge = half * half * half;
    return rho_min + (rho_max - rho_min) * bulge;
}

Eigen::Vector3d drag_acceleration_m_s2(const Eigen::Vector3d& r, const Eigen::Vector3d& v, double rho, double b) {
    const Eigen::Vector3d v_rel(v.x() + earth_rotation_rad_s * r.y(), v.y() - earth_rotation_rad_s * r.x(), v.z());
    return (-0.5 * rho * v_rel.norm() / b) * v_rel;
}

// Box-Muller: z = sqrt(-2 ln u1) cos(2 pi u2).
double counter_normal(std::uint64_t seed, std::uint64_t index) {
    const std::uint64_t key = splitmix64(seed ^ 0x5DEECE66DULL);
    const double u1 = to_unit(splitmix64(key + 2 * index));
    const double u2 = to_unit(splitmix64(key + 2 * index + 1));
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * pi * u2);
}

double satellite_ballistic_coefficient_kg_m2(const DragSettings& drag, std::uint64_t i) {
    const double factor = 1.0 + drag.dispersion * counter_normal(drag.seed, i);
    return drag.ballistic_coefficient_kg_m2 * std::max(factor, 0.2);
}

}  // namespace skyfabric::physics
