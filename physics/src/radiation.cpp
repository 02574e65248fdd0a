#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/orbit.hpp>
#include <skyfabric/physics/radiation.hpp>
#include <skyfabric/physics/time.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace skyfabric::physics {

namespace {

constexpr double deg = pi / 180.0;

void check_table(const ShieldingTable& t) {
    if (t.thickness_mm_al.size() < 2 || t.thickness_mm_al.size() != t.dose_rad_per_yr.size())
        throw std::invalid_argument("shielding table needs >= 2 (thickness, dose) pairs of equal length");
    for (std::size_t i = 0; i < t.thickness_mm_al.size(); ++i) {
        if (!(t.dose_rad_per_yr[i] > 0.0)) throw std::invalid_argument("shielding table doses must be positive");
        if (i > 0 && !(t.thickness_mm_al[i] > t.thickness_mm_al[i - 1]))
            throw std::invalid_argument("shielding table thicknesses must increase strictly");
    }
}

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

}  // namespace

double shielded_dose_rad_per_yr(const ShieldingTable& t, double d) {
    check_table(t);
    const auto& x = t.thickness_mm_al;
    const std::size_t n = x.size();
    std::size_t i = 0;  // segment [i, i+1]
    while (i + 2 < n && d > x[i + 1]) ++i;
    if (d == x[i + 1]) return t.dose_rad_per_yr[i + 1];
    if (d == x[i]) return t.dose_rad_per_yr[i];
    const double w = (d - x[i]) / (x[i + 1] - x[i]);
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
    check_table(p.shielding_table);
    if (!(p.saa_sigma_latitude_deg > 0.0) || !(p.saa_sigma_longitude_deg > 0.0))
        throw std::invalid_argument("SAA widths must be positive");
    if (!(p.trapped_scale_height_m > 0.0)) throw std::invalid_argument("trapped_scale_height_m must be positive");
    if (!(p.target_dose_rad_per_yr > 0.0)) throw std::invalid_argument("target_dose_rad_per_yr must be positive");
    if (p.gcr_polar_dose_rate_rad_per_yr < 0.0) throw std::invalid_argument("GCR dose rate must be >= 0");
    if (!(p.gcr_rigidity_scale_gv > 0.0) || !(p.spe_rigidity_scale_gv > 0.0))
        throw std::invalid_argument("rigidity scales must be positive");
    RadiationModel m;
    m.params = p;
    m.dipole_axis_ecef = dipole_axis_ecef(p);
    m.shielding_factor = shielded_dose_rad_per_yr(p.shielding_table, p.shielding_mm_al) /
                         shielded_dose_rad_per_yr(p.shielding_table, p.reference_shielding_mm_al);
    const OrbitShapeAverage avg =
        orbit_average_shapes(p, p.reference_orbit_altitude_m, p.reference_orbit_inclination_rad,
                             decimal_year(p.epoch_julian_date_days, 0.0), p.calibration_samples_along_orbit,
                             p.calibration_node_longitudes);
    m.reference_orbit_mean_trapped_shape = avg.trapped_shape;
    m.reference_orbit_mean_gcr_shape = avg.gcr_shape;
    m.gcr_polar_dose_rate_rad_s = p.gcr_polar_dose_rate_rad_per_yr / seconds_per_year_radiation;
    m.reference_mean_dose_rate_rad_s = p.target_dose_rad_per_yr / seconds_per_year_radiation;
    const double trapped_mean = m.reference_mean_dose_rate_rad_s - m.gcr_polar_dose_rate_rad_s * avg.gcr_shape;
    if (!(trapped_mean > 0.0) || !(avg.trapped_shape > 0.0))
        throw std::invalid_argument("radiation calibration: the cosmic-ray background alone reaches the target dose (" +
                                    std::to_string(p.target_dose_rad_per_yr) + " rad/yr)");
    m.trapped_peak_dose_rate_rad_s = trapped_mean / avg.trapped_shape;
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
    s.dose_rate_rad_s = s.trapped_dose_rate_rad_s + s.gcr_dose_rate_rad_s + s.spe_dose_rate_rad_s;
    s.flux_equivalent_p_cm2_s = protons_per_cm2_per_rad * s.dose_rate_rad_s;
    s.flux_relative = (trapped_ref + s.gcr_dose_rate_rad_s + spe_ref) / m.reference_mean_dose_rate_rad_s;
    return s;
}

double orbit_average_dose_rate_rad_s(const RadiationModel& m, double altitude_m, double inclination_rad) {
    const EnvironmentParameters& p = m.params;
    const OrbitShapeAverage avg =
        orbit_average_shapes(p, altitude_m, inclination_rad, decimal_year(p.epoch_julian_date_days, 0.0),
                             p.calibration_samples_along_orbit, p.calibration_node_longitudes);
    return m.trapped_peak_dose_rate_rad_s * m.shielding_factor * avg.trapped_shape +
           m.gcr_polar_dose_rate_rad_s * avg.gcr_shape;
}

}  // namespace skyfabric::physics
