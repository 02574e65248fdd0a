#include <skyfabric/physics/atmosphere.hpp>

#include <skyfabric/physics/constants.hpp>

#include <algorithm>
#include <array>
#include <cmath>

namespace skyfabric::physics {
namespace {

constexpr double deg_rad = pi / 180.0;
constexpr double boltzmann_j_k = 1.380649e-23;
constexpr double atomic_mass_kg = 1.66053906660e-27;
// Lower boundary of the diffusion profile and the Earth radius MSIS uses for geopotential height.
constexpr double z120_m = 120e3;
constexpr double geopotential_radius_m = 6356.766e3;
constexpr double g120_m_s2 = 9.80665 * (geopotential_radius_m / (geopotential_radius_m + z120_m)) *
                             (geopotential_radius_m / (geopotential_radius_m + z120_m));
// NRLMSISE-00 mean temperature gradient at 120 km (PTM(4) = 16.6728 K/km; Picone et al. 2002).
constexpr double dtdz120_k_m = 16.6728e-3;

// Species at 120 km: NRLMSISE-00 global mean (area-weighted over latitude and local time, doy 79,
// F10.7 = 150, Ap = 15; tests/reference/atmosphere/nrlmsise00_reference.txt), molar mass, thermal diffusion.
struct Species {
    double n120_m3, mass_amu, alpha;
};
constexpr std::array<Species, 6> species{{
    {3.556e17, 28.0134, 0.0},   // N2
    {4.371e16, 31.9988, 0.0},   // O2
    {9.526e16, 15.9994, 0.0},   // O
    {1.626e15, 39.948, 0.0},    // Ar
    {3.486e13, 4.002602, -0.38},  // He
    {3.208e12, 1.00794, -0.25},   // H
}};

std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

// Uniform in (0, 1]: top 53 bits, offset so log() never sees 0.
double to_unit(std::uint64_t bits) { return (static_cast<double>(bits >> 11) + 1.0) * 0x1.0p-53; }

}  // namespace

double exospheric_temperature_k(const SolarActivity& s, double lat, double decl, double hour_angle) {
    constexpr double r = 0.3, m = 2.2;
    const double tc = 379.0 + 3.24 * s.f107_81day_mean_sfu + 1.3 * (s.f107_daily_sfu - s.f107_81day_mean_sfu);
    const double eta = 0.5 * std::abs(lat - decl);
    const double theta = 0.5 * std::abs(lat + decl);
    double tau = hour_angle - 37.0 * deg_rad + 6.0 * deg_rad * std::sin(hour_angle + 43.0 * deg_rad);
    tau = std::remainder(tau, 2.0 * pi);  // (-pi, pi]: cos(tau/2) >= 0
    const double c = std::cos(0.5 * tau);
    const double sin_m = std::pow(std::sin(theta), m);
    const double cos_m = std::pow(std::cos(eta), m);
    const double tl = tc * (1.0 + r * sin_m + r * (cos_m - sin_m) * c * c * c);
    return tl + s.ap + 100.0 * (1.0 - std::exp(-0.08 * s.ap));
}

double thermosphere_density_kg_m3(double h_m, double t_inf, double f107_81day_mean_sfu) {
    // T_120 tracks the solar flux (NRLMSISE-00 global means); kept well under T_inf.
    const double t120 = std::min(std::clamp(369.0 + 0.3125 * (f107_81day_mean_sfu - 150.0), 250.0, 500.0),
                                 t_inf - 50.0);
    const double z = std::max(h_m, z120_m);
    const double xi = (z - z120_m) * (geopotential_radius_m + z120_m) / (geopotential_radius_m + z);
    const double s = dtdz120_k_m / (t_inf - t120);
    const double t = t_inf - (t_inf - t120) * std::exp(-s * xi);
    const double log_t_ratio = std::log(t120 / t);
    // n_i = n_i,120 (T_120/T)^(1 + alpha + gamma) exp(-s gamma xi), gamma = m g_120 / (s k T_inf).
    const double gamma_per_amu = atomic_mass_kg * g120_m_s2 / (s * boltzmann_j_k * t_inf);
    double rho = 0.0;
    for (const Species& sp : species) {
        const double gamma = sp.mass_amu * gamma_per_amu;
        rho += sp.n120_m3 * sp.mass_amu * std::exp((1.0 + sp.alpha + gamma) * log_t_ratio - s * gamma * xi);
    }
    return rho * atomic_mass_kg;
}

double atmospheric_density_kg_m3(const Eigen::Vector3d& r, const Eigen::Vector3d& sun, const SolarActivity& activity) {
    // Height above the ellipsoid, first order in flattening: R(phi) = a (1 - f sin^2 phi).
    const double rn = r.norm();
    const double sin_lat = r.z() / rn;
    const double h_m = rn - earth_equatorial_radius_m * (1.0 - earth_flattening * sin_lat * sin_lat);
    // Hour angle of the point from the Sun, about the pole: 0 at local noon, > 0 in the afternoon.
    const double hour_angle = std::atan2(sun.x() * r.y() - sun.y() * r.x(), sun.x() * r.x() + sun.y() * r.y());
    const double t_inf = exospheric_temperature_k(activity, std::asin(sin_lat), std::asin(std::clamp(sun.z(), -1.0, 1.0)),
                                                  hour_angle);
    return thermosphere_density_kg_m3(h_m, t_inf, activity.f107_81day_mean_sfu);
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
