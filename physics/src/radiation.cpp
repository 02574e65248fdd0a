#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/orbit.hpp>
#include <skyfabric/physics/radiation.hpp>
#include <skyfabric/physics/time.hpp>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace skyfabric::physics {

namespace {

constexpr double deg = pi / 180.0;

SettingsProblems table_problems(const ShieldingTable& t) {
    const auto problem = [](const char* message) { return SettingsProblems{{"shielding_table", message}}; };
    if (t.thickness_mm_al.size() < 2 || t.thickness_mm_al.size() != t.dose_rad_per_yr.size())
        return problem("needs >= 2 (thickness, dose) pairs of equal length");
    if (!(t.thickness_mm_al.front() > 0.0)) return problem("thicknesses must be positive");
    for (std::size_t i = 0; i < t.thickness_mm_al.size(); ++i) {
        if (!(t.dose_rad_per_yr[i] > 0.0)) return problem("doses must be positive");
        if (i > 0 && !(t.thickness_mm_al[i] > t.thickness_mm_al[i - 1])) return problem("thicknesses must increase strictly");
    }
    return {};
}

void check_table(const ShieldingTable& t) { throw_problems("shielding table", table_problems(t)); }

// Everything but the calibration, which needs these to hold before it can be computed.
SettingsProblems parameter_problems(const EnvironmentParameters& p) {
    SettingsProblems problems = table_problems(p.shielding_table);
    const auto positive = [&](const char* key, double x) {
        if (!(x > 0.0)) problems.push_back({key, "must be positive"});
    };
    positive("saa_sigma_latitude_deg", p.saa_sigma_latitude_deg);
    positive("saa_sigma_longitude_deg", p.saa_sigma_longitude_deg);
    positive("trapped_scale_height_m", p.trapped_scale_height_m);
    if (!(p.gcr_polar_dose_rate_rad_per_yr >= 0.0)) problems.push_back({"gcr_polar_dose_rate_rad_per_yr", "must be >= 0"});
    positive("gcr_rigidity_scale_gv", p.gcr_rigidity_scale_gv);
    positive("spe_rigidity_scale_gv", p.spe_rigidity_scale_gv);
    if (p.calibration_samples_along_orbit < 1) problems.push_back({"calibration_samples_along_orbit", "must be >= 1"});
    if (p.calibration_node_longitudes < 1) problems.push_back({"calibration_node_longitudes", "must be >= 1"});
    return problems;
}

OrbitShapeAverage reference_orbit_average(const EnvironmentParameters& p) {
    return orbit_average_shapes(p, p.reference_orbit_altitude_m, p.reference_orbit_inclination_rad,
                                decimal_year(p.epoch_julian_date_days, 0.0), p.calibration_samples_along_orbit,
                                p.calibration_node_longitudes);
}

// The trapped protons take what the cosmic-ray background leaves of the target: nothing left, no model
// (a target <= 0 included).
SettingsProblems calibration_problems(const EnvironmentParameters& p, const OrbitShapeAverage& avg) {
    const double trapped_mean = p.target_dose_rad_per_yr / seconds_per_year_radiation -
                                p.gcr_polar_dose_rate_rad_per_yr / seconds_per_year_radiation * avg.gcr_shape;
    if (trapped_mean > 0.0 && avg.trapped_shape > 0.0) return {};
    return {{"target_dose_rad_per_yr", "must exceed the cosmic-ray background's share of the reference orbit's dose, " +
                                           format_setting(p.gcr_polar_dose_rate_rad_per_yr * avg.gcr_shape) +
                                           " rad(Si)/yr (the rest is the trapped protons the model is calibrated to)"}};
}

}  // namespace

SettingsProblems check(const EnvironmentParameters& p) {
    SettingsProblems problems;
    (void)try_make_radiation_model(p, problems);
    return problems;
}

namespace {

// Wrap an angle difference (deg) to (-180, 180].
double wrap_deg(double x) {
    x = std::fmod(x + 180.0, 360.0);
    if (x <= 0.0) x += 360.0;
    return x - 180.0;
}

double altitude_factor(const EnvironmentParameters& p, double altitude_m) {
    return std::exp((altitude_m - p.reference_altitude_m) / p.trapped_scale_height_m);
}

double gcr_shape(const EnvironmentParameters& p, double cutoff_gv) {
    return std::pow(p.gcr_rigidity_scale_gv / (p.gcr_rigidity_scale_gv + cutoff_gv), p.gcr_spectral_index);
}

constexpr double proton_mass_mev = 938.272088;
constexpr double aluminium_density_g_cm3 = 2.699;
constexpr double mev_per_g_to_rad = 1.602176634e-8;  // 1 MeV/g = 1.602e-13 J/g = 1.602e-8 rad
constexpr double aluminium_z_over_a = 13.0 / 26.9815, aluminium_i_ev = 166.0;
constexpr double silicon_z_over_a = 14.0 / 28.0855, silicon_i_ev = 173.0;

// ESP-PSYCHIC, 1 AU, 95 %: integral fluence F(>E) (cm^-2) over the 7-year prediction period.
constexpr double esp_energy_mev[] = {5.0, 10.0, 20.0, 32.0, 50.0, 71.0, 100.0, 140.0, 200.0, 320.0, 500.0};
constexpr double esp_fluence_cm2[] = {1.867e11, 9.749e10, 4.248e10, 2.128e10, 9.915e9, 4.991e9,
                                      2.363e9,  1.087e9,  4.512e8,  1.279e8,  3.722e7};
constexpr double esp_period_yr = 7.0;
constexpr std::size_t esp_points = std::size(esp_energy_mev);

// ln F(>E) and its slope d ln F / d ln E (power law between points, the end slopes extended).
std::pair<double, double> esp_log_fluence(double energy_mev) {
    const double le = std::log(energy_mev);
    std::size_t i = 0;
    while (i + 2 < esp_points && energy_mev > esp_energy_mev[i + 1]) ++i;
    const double l0 = std::log(esp_energy_mev[i]), l1 = std::log(esp_energy_mev[i + 1]);
    const double f0 = std::log(esp_fluence_cm2[i]), f1 = std::log(esp_fluence_cm2[i + 1]);
    const double slope = (f1 - f0) / (l1 - l0);
    return {f0 + slope * (le - l0), slope};
}

// CSDA range in Al (g/cm²) on a ln E grid, by the trapezoid rule on 1/S from 1 MeV
// (R(1 MeV) ≈ 0.004 g/cm², below the thinnest shield of interest).
struct AluminiumRange {
    static constexpr double ln_e_min = 0.0, ln_e_max = 11.5;  // 1 MeV .. 99 GeV
    static constexpr int points = 2400;
    std::vector<double> range_g_cm2;
    AluminiumRange() : range_g_cm2(points) {
        const double h = (ln_e_max - ln_e_min) / (points - 1);
        // dR/d ln E = E / S(E)
        auto f = [](double ln_e) {
            const double e = std::exp(ln_e);
            return e / proton_stopping_power_mev_cm2_g(e, aluminium_z_over_a, aluminium_i_ev);
        };
        range_g_cm2[0] = 0.5 * f(ln_e_min);  // ~E/(2S) at 1 MeV (R ∝ E^1.8 at low energy)
        for (int i = 1; i < points; ++i)
            range_g_cm2[static_cast<std::size_t>(i)] =
                range_g_cm2[static_cast<std::size_t>(i - 1)] + 0.5 * h * (f(ln_e_min + (i - 1) * h) + f(ln_e_min + i * h));
    }
    double range(double e_mev) const {
        const double x = (std::log(e_mev) - ln_e_min) / (ln_e_max - ln_e_min) * (points - 1);
        if (x <= 0.0) return range_g_cm2.front() * std::pow(e_mev, 1.8);
        const auto i = std::min(static_cast<std::size_t>(x), range_g_cm2.size() - 2);
        const double u = x - static_cast<double>(i);
        return (1.0 - u) * range_g_cm2[i] + u * range_g_cm2[i + 1];
    }
    // Energy whose range is r (inverse of range(), by bisection on the monotone table).
    double energy(double r) const {
        if (r <= range_g_cm2.front()) return std::pow(r / range_g_cm2.front(), 1.0 / 1.8);
        const auto it = std::upper_bound(range_g_cm2.begin(), range_g_cm2.end(), r);
        if (it == range_g_cm2.end()) return std::exp(ln_e_max);
        const std::size_t i = static_cast<std::size_t>(it - range_g_cm2.begin()) - 1;
        const double u = (r - range_g_cm2[i]) / (range_g_cm2[i + 1] - range_g_cm2[i]);
        const double h = (ln_e_max - ln_e_min) / (points - 1);
        return std::exp(ln_e_min + (static_cast<double>(i) + u) * h);
    }
};
const AluminiumRange& aluminium_range() {
    static const AluminiumRange table;
    return table;
}

// Grid of the solar-proton dose table: ln E_min from 1 MeV to 20 GeV.
constexpr double sp_ln_e_min = 0.0, sp_ln_e_max = 9.9;
constexpr int sp_points = 100;

std::vector<double> solar_proton_table(double thickness_mm_al) {
    std::vector<double> t(sp_points);
    for (int i = 0; i < sp_points; ++i) {
        const double e = std::exp(sp_ln_e_min + (sp_ln_e_max - sp_ln_e_min) * i / (sp_points - 1));
        t[static_cast<std::size_t>(i)] = std::log(std::max(solar_proton_dose_rad_per_yr(thickness_mm_al, e), 1e-300));
    }
    return t;
}

double solar_proton_table_lookup(const std::vector<double>& t, double e_min_mev) {
    const double x = (std::log(std::max(e_min_mev, 1.0)) - sp_ln_e_min) / (sp_ln_e_max - sp_ln_e_min) * (sp_points - 1);
    if (x >= sp_points - 1) return 0.0;
    const auto i = static_cast<std::size_t>(x);
    const double u = x - static_cast<double>(i);
    return std::exp((1.0 - u) * t[i] + u * t[i + 1]);
}

}  // namespace

double proton_stopping_power_mev_cm2_g(double e, double z_over_a, double i_ev) {
    // -dE/dx = K (Z/A) / β² [½ ln(2 m_e c² β²γ² W_max / I²) − β²] (PDG "Passage of particles through matter").
    constexpr double k_mev_cm2_mol = 0.307075, me_mev = 0.51099895;
    const double gamma = 1.0 + e / proton_mass_mev;
    const double b2 = 1.0 - 1.0 / (gamma * gamma);
    const double bg2 = b2 * gamma * gamma;
    const double ratio = me_mev / proton_mass_mev;
    const double w_max = 2.0 * me_mev * bg2 / (1.0 + 2.0 * gamma * ratio + ratio * ratio);
    const double i_mev = i_ev * 1e-6;
    return k_mev_cm2_mol * z_over_a / b2 * (0.5 * std::log(2.0 * me_mev * bg2 * w_max / (i_mev * i_mev)) - b2);
}

double proton_energy_at_rigidity_mev(double p_gv) {
    const double m = proton_mass_mev * 1e-3;
    return (std::sqrt(p_gv * p_gv + m * m) - m) * 1e3;
}

double earth_shadow_transmission(double r) {
    const double s = std::min(1.0, earth_equatorial_radius_m / r);
    return 0.5 * (1.0 + std::sqrt(1.0 - s * s));
}

double solar_proton_dose_rad_per_yr(double thickness_mm_al, double min_energy_mev) {
    const AluminiumRange& al = aluminium_range();
    const double t = thickness_mm_al * 0.1 * aluminium_density_g_cm3;
    // Protons that get through: outside energy above E_t (range t) and above the requested minimum.
    const double e_lo = std::max({al.energy(t), min_energy_mev, 1.0});
    const double e_hi = 2.0e4;
    if (e_lo >= e_hi) return 0.0;
    // ∫ φ(E) S_Si(E_r) dE in ln E: φ E = −(d ln F/d ln E) F; midpoint rule on 2000 cells.
    const int n = 2000;
    const double a = std::log(e_lo), h = (std::log(e_hi) - a) / n;
    double sum = 0.0;
    for (int k = 0; k < n; ++k) {
        const double e = std::exp(a + (k + 0.5) * h);
        const auto [ln_f, slope] = esp_log_fluence(e);
        const double e_r = al.energy(al.range(e) - t);
        sum += -slope * std::exp(ln_f) * proton_stopping_power_mev_cm2_g(e_r, silicon_z_over_a, silicon_i_ev);
    }
    return sum * h * mev_per_g_to_rad / esp_period_yr;
}

double shielded_dose_rad_per_yr(const ShieldingTable& t, double d) {
    check_table(t);
    const auto& x = t.thickness_mm_al;
    const std::size_t n = x.size();
    std::size_t i = 0;  // segment [i, i+1]
    while (i + 2 < n && d > x[i + 1]) ++i;
    if (d == x[i + 1]) return t.dose_rad_per_yr[i + 1];
    if (d == x[i]) return t.dose_rad_per_yr[i];
    const double w = std::log(d / x[i]) / std::log(x[i + 1] / x[i]);
    return std::exp((1.0 - w) * std::log(t.dose_rad_per_yr[i]) + w * std::log(t.dose_rad_per_yr[i + 1]));
}

double decimal_year(double jd, double elapsed_s) {
    return 2000.0 + (jd + elapsed_s / seconds_per_day - 2451545.0) / 365.25;
}

double saa_shape(const EnvironmentParameters& p, double lat_rad, double lon_rad, double year) {
    const double dy = year - p.saa_reference_year;
    const double lat0 = p.saa_latitude_deg + p.saa_latitude_drift_deg_per_yr * dy;
    const double lon0 = p.saa_longitude_deg + p.saa_longitude_drift_deg_per_yr * dy;
    const double a = (lat_rad / deg - lat0) / p.saa_sigma_latitude_deg;
    const double b = wrap_deg(lon_rad / deg - lon0) / p.saa_sigma_longitude_deg;
    return std::exp(-0.5 * (a * a + b * b));
}

Eigen::Vector3d dipole_axis_ecef(const EnvironmentParameters& p) {
    const double la = p.dipole_pole_latitude_deg * deg;
    const double lo = p.dipole_pole_longitude_deg * deg;
    return {std::cos(la) * std::cos(lo), std::cos(la) * std::sin(lo), std::sin(la)};
}

GeomagneticCoordinates geomagnetic_coordinates(const Eigen::Vector3d& r, const Eigen::Vector3d& axis,
                                               double stormer_gv) {
    GeomagneticCoordinates g;
    const double rn = r.norm();
    if (!(rn > 0.0)) return g;
    const double s = std::clamp(r.dot(axis) / rn, -1.0, 1.0);
    g.magnetic_latitude_rad = std::asin(s);
    const double c2 = 1.0 - s * s;  // cos² λ_m
    const double rho = rn / geomagnetic_reference_radius_m;
    // L = rho / cos² λ_m; P_c = 14.9 / L² = 14.9 cos⁴ λ_m / rho² (finite at the pole: 0).
    g.l_shell = c2 > 0.0 ? rho / c2 : std::numeric_limits<double>::infinity();
    g.cutoff_rigidity_gv = stormer_gv * c2 * c2 / (rho * rho);
    return g;
}

OrbitShapeAverage orbit_average_shapes(const EnvironmentParameters& p, double altitude_m, double inclination_rad,
                                       double year, int along, int nodes) {
    if (along < 1 || nodes < 1) throw std::invalid_argument("orbit average needs >= 1 sample in each direction");
    const double radius = earth_equatorial_radius_m + altitude_m;
    const double inc = inclination_rad >= 0.0 ? inclination_rad : sun_synchronous_inclination_rad(radius, 0.0);
    const Eigen::Vector3d axis = dipole_axis_ecef(p);
    const double ci = std::cos(inc);
    const double si = std::sin(inc);
    double sum_trapped = 0.0;
    double sum_gcr = 0.0;
    for (int k = 0; k < nodes; ++k) {
        const double node = 2.0 * pi * (k + 0.5) / nodes;
        const double cn = std::cos(node);
        const double sn = std::sin(node);
        for (int j = 0; j < along; ++j) {
            const double u = 2.0 * pi * (j + 0.5) / along;
            // r = R_z(node) R_x(inc) (r cos u, r sin u, 0), directly in the Earth-fixed frame.
            const double xo = radius * std::cos(u);
            const double yo = radius * std::sin(u);
            const Eigen::Vector3d r(cn * xo - sn * ci * yo, sn * xo + cn * ci * yo, si * yo);
            const Geodetic g = ecef_to_geodetic(r);
            sum_trapped += saa_shape(p, g.latitude_rad, g.longitude_rad, year) * altitude_factor(p, g.altitude_m);
            sum_gcr += gcr_shape(p, geomagnetic_coordinates(r, axis, p.stormer_constant_gv).cutoff_rigidity_gv);
        }
    }
    const double n = static_cast<double>(along) * nodes;
    return {sum_trapped / n, sum_gcr / n};
}

RadiationModel make_radiation_model(const EnvironmentParameters& p) {
    SettingsProblems problems;
    std::optional<RadiationModel> m = try_make_radiation_model(p, problems);
    throw_problems("radiation model", problems);
    return std::move(*m);
}

std::optional<RadiationModel> try_make_radiation_model(const EnvironmentParameters& p, SettingsProblems& problems) {
    problems = parameter_problems(p);
    if (!problems.empty()) return std::nullopt;
    RadiationModel m;
    m.params = p;
    m.dipole_axis_ecef = dipole_axis_ecef(p);
    m.shielding_factor = shielded_dose_rad_per_yr(p.shielding_table, p.shielding_mm_al) /
                         shielded_dose_rad_per_yr(p.shielding_table, p.reference_shielding_mm_al);
    const OrbitShapeAverage avg = reference_orbit_average(p);
    problems = calibration_problems(p, avg);
    if (!problems.empty()) return std::nullopt;
    m.reference_orbit_mean_trapped_shape = avg.trapped_shape;
    m.reference_orbit_mean_gcr_shape = avg.gcr_shape;
    m.gcr_polar_dose_rate_rad_s = p.gcr_polar_dose_rate_rad_per_yr / seconds_per_year_radiation;
    m.reference_mean_dose_rate_rad_s = p.target_dose_rad_per_yr / seconds_per_year_radiation;
    const double trapped_mean = m.reference_mean_dose_rate_rad_s - m.gcr_polar_dose_rate_rad_s * avg.gcr_shape;
    m.trapped_peak_dose_rate_rad_s = trapped_mean / avg.trapped_shape;
    if (p.solar_protons) {
        m.solar_proton_ln_dose = solar_proton_table(p.shielding_mm_al);
        m.solar_proton_ln_dose_reference = solar_proton_table(p.reference_shielding_mm_al);
    }
    return m;
}

RadiationSample radiation_at(const Eigen::Vector3d& position_eci_m, double time_s, const RadiationModel& m) {
    const EnvironmentParameters& p = m.params;
    RadiationSample s;
    const Eigen::Vector3d r = eci_to_ecef(position_eci_m, greenwich_sidereal_angle_rad(p.epoch_julian_date_days, time_s));
    s.geodetic = ecef_to_geodetic(r);
    const GeomagneticCoordinates gm = geomagnetic_coordinates(r, m.dipole_axis_ecef, p.stormer_constant_gv);
    s.magnetic_latitude_rad = gm.magnetic_latitude_rad;
    s.l_shell = gm.l_shell;
    s.cutoff_rigidity_gv = gm.cutoff_rigidity_gv;

    s.saa_shape = saa_shape(p, s.geodetic.latitude_rad, s.geodetic.longitude_rad,
                            decimal_year(p.epoch_julian_date_days, time_s));
    s.in_saa = s.saa_shape >= p.saa_flag_threshold;
    const double trapped_ref = m.trapped_peak_dose_rate_rad_s * s.saa_shape * altitude_factor(p, s.geodetic.altitude_m);
    s.trapped_dose_rate_rad_s = trapped_ref * m.shielding_factor;
    s.gcr_dose_rate_rad_s = m.gcr_polar_dose_rate_rad_s * gcr_shape(p, gm.cutoff_rigidity_gv);
    double spe_ref = 0.0;
    for (const SolarParticleEvent& e : p.solar_particle_events) {
        if (time_s >= e.start_s && time_s < e.start_s + e.duration_s)
            spe_ref += (e.flux_factor - 1.0) * m.gcr_polar_dose_rate_rad_s *
                       std::exp(-gm.cutoff_rigidity_gv / p.spe_rigidity_scale_gv);
    }
    s.spe_dose_rate_rad_s = spe_ref * m.shielding_factor;
    if (!m.solar_proton_ln_dose.empty()) {
        // Long-term solar protons: those above the local cutoff energy, less the Earth's shadow.
        const double e_c = proton_energy_at_rigidity_mev(gm.cutoff_rigidity_gv);
        const double arrive = earth_shadow_transmission(r.norm()) / seconds_per_year_radiation;
        s.spe_dose_rate_rad_s += solar_proton_table_lookup(m.solar_proton_ln_dose, e_c) * arrive;
        spe_ref += solar_proton_table_lookup(m.solar_proton_ln_dose_reference, e_c) * arrive;
    }
    s.dose_rate_rad_s = s.trapped_dose_rate_rad_s + s.gcr_dose_rate_rad_s + s.spe_dose_rate_rad_s;
    s.flux_equivalent_p_cm2_s = protons_per_cm2_per_rad * s.dose_rate_rad_s;
    s.flux_relative = (trapped_ref + s.gcr_dose_rate_rad_s + spe_ref) / m.reference_mean_dose_rate_rad_s;
    return s;
}

double solar_proton_dose_rate_rad_s(const RadiationModel& m, const Eigen::Vector3d& r) {
    if (m.solar_proton_ln_dose.empty()) return 0.0;
    const GeomagneticCoordinates gm = geomagnetic_coordinates(r, m.dipole_axis_ecef, m.params.stormer_constant_gv);
    return solar_proton_table_lookup(m.solar_proton_ln_dose, proton_energy_at_rigidity_mev(gm.cutoff_rigidity_gv)) *
           earth_shadow_transmission(r.norm()) / seconds_per_year_radiation;
}

double orbit_average_dose_rate_rad_s(const RadiationModel& m, double altitude_m, double inclination_rad) {
    const EnvironmentParameters& p = m.params;
    const OrbitShapeAverage avg =
        orbit_average_shapes(p, altitude_m, inclination_rad, decimal_year(p.epoch_julian_date_days, 0.0),
                             p.calibration_samples_along_orbit, p.calibration_node_longitudes);
    double solar = 0.0;
    if (!m.solar_proton_ln_dose.empty()) {
        // Same grid as orbit_average_shapes: uniform in argument of latitude × node longitude.
        const double radius = earth_equatorial_radius_m + altitude_m;
        const double inc = inclination_rad >= 0.0 ? inclination_rad : sun_synchronous_inclination_rad(radius, 0.0);
        const int along = p.calibration_samples_along_orbit, nodes = p.calibration_node_longitudes;
        for (int k = 0; k < nodes; ++k) {
            const double node = 2.0 * pi * (k + 0.5) / nodes;
            for (int j = 0; j < along; ++j) {
                const double u = 2.0 * pi * (j + 0.5) / along;
                const double xo = radius * std::cos(u), yo = radius * std::sin(u);
                const Eigen::Vector3d r(std::cos(node) * xo - std::sin(node) * std::cos(inc) * yo,
                                        std::sin(node) * xo + std::cos(node) * std::cos(inc) * yo, std::sin(inc) * yo);
                solar += solar_proton_dose_rate_rad_s(m, r);
            }
        }
        solar /= static_cast<double>(along) * nodes;
    }
    return m.trapped_peak_dose_rate_rad_s * m.shielding_factor * avg.trapped_shape +
           m.gcr_polar_dose_rate_rad_s * avg.gcr_shape + solar;
}

}  // namespace skyfabric::physics
