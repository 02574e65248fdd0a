#pragma once
// Radiation environment along the orbit: trapped protons (South Atlantic Anomaly), galactic
// cosmic rays behind the geomagnetic cutoff, optional solar particle events, and the total
// ionising dose rate behind aluminium shielding. Figures: REFERENCES.md "Radiation"
// (Suncatcher paper §2.3/§4.3, SPENVIS AP8-min/AE8-max shielding table).
//
// Model (all pieces documented at their functions below):
//   dose_rate = K_trapped · s(d) · f_SAA(lat, lon, year) · a(h)      trapped protons
//             + D_gcr · g(P_c)                                        cosmic-ray background
//             + Σ_active SPE (F − 1) · D_gcr · s(d) · q(P_c)           solar particle events
// with s(d) the shielding table relative to the reference thickness, a(h) an exponential
// altitude scaling, P_c the Störmer vertical cutoff rigidity of a tilted dipole. K_trapped is
// not a constant typed in here: make_radiation_model() computes it so that the average of the
// dose rate over a representative orbit (default: circular 650 km sun-synchronous, averaged
// over the orbit and over all ground-track longitudes) equals the target annual dose
// (default 150 rad(Si)/yr behind 10 mm Al, REFERENCES.md).
#include <skyfabric/physics/geodetic.hpp>

#include <Eigen/Core>

#include <vector>

namespace skyfabric::physics {

// 67 MeV protons deposit 1 rad(Si) per ≈ 7.9e6 protons/cm² (REFERENCES.md, paper's conversion).
// Used to express a dose rate as an equivalent proton flux: phi = 7.9e6 · dose_rate.
inline constexpr double protons_per_cm2_per_rad = 7.9e6;
inline constexpr double seconds_per_year_radiation = 365.25 * 86400.0;  // "per year" = Julian year
// IGRF reference radius for L-shells and cutoff rigidities.
inline constexpr double geomagnetic_reference_radius_m = 6371.2e3;

// Annual dose behind a spherical Al shield, rad(Si)/yr, versus thickness (mm Al). Default:
// SPENVIS AP8-min/AE8-max, 550 km, 95° (REFERENCES.md). Only ratios are used (the level comes
// from the calibration), so a table for another altitude with the same shape works as well.
struct ShieldingTable {
    std::vector<double> thickness_mm_al{2.0, 3.0, 5.0, 8.0, 10.0};
    std::vector<double> dose_rad_per_yr{2140.0, 960.0, 280.0, 128.0, 112.0};
};

// Log-linear interpolation: ln D linear in thickness between table points (locally
// exponential attenuation); outside the table the end segment is extended. Returns the table
// value exactly at a table point. Throws std::invalid_argument for < 2 points, unsorted
// thickness or non-positive doses.
double shielded_dose_rad_per_yr(const ShieldingTable& table, double thickness_mm_al);

// A solar particle event: between start_s and start_s + duration_s (time since the scenario
// epoch) the polar-cap particle flux is flux_factor times the quiet cosmic-ray flux.
struct SolarParticleEvent {
    double start_s = 0.0;
    double duration_s = 86400.0;
    double flux_factor = 100.0;
};

struct EnvironmentParameters {
    // Scenario epoch (Earth rotation, SAA drift). Default 2027-03-20T00:00Z, the scenarios' epoch.
    double epoch_julian_date_days = 2461484.5;

    // --- South Atlantic Anomaly (REFERENCES.md): Gaussian in geodetic lat/lon,
    // f = exp(-½[((lat - lat0)/σ_lat)² + ((lon - lon0)/σ_lon)²]), lon difference wrapped to ±180°.
    double saa_latitude_deg = -26.6;
    double saa_longitude_deg = -49.1;
    double saa_reference_year = 2025.0;             // year at which the centre above holds
    double saa_longitude_drift_deg_per_yr = -0.3;   // westward drift
    double saa_latitude_drift_deg_per_yr = 0.0;
    double saa_sigma_latitude_deg = 12.0;
    double saa_sigma_longitude_deg = 30.0;
    // in_saa flag: f >= threshold. exp(-2) = the 2σ ellipse, which at the defaults spans about
    // lat -50…-3°, lon -109…+11°: the REFERENCES.md box (lat -50…0, lon -90…+40) to ~20°.
    double saa_flag_threshold = 0.1353352832366127;

    // --- Altitude scaling of the trapped component: a(h) = exp((h - h_ref)/H).
    // H = 100 km / ln 2.5 ≈ 109 km reproduces REFERENCES.md's "expect 2–3× at 650 km" relative
    // to 550 km (midpoint 2.5×). AP8 inner-belt flux at the SAA grows roughly this way between
    // 400 and 800 km; it is an approximation, not a belt model.
    double reference_altitude_m = 650e3;
    double trapped_scale_height_m = 109135.0;

    // --- Geomagnetic cutoff: tilted centred dipole, north geomagnetic pole at 80.7°N, 72.7°W
    // (IGRF-13, epoch 2020: 80.65°N, 72.68°W). sin λ_m = r̂ · m̂, L = (r/R_ref)/cos²λ_m,
    // P_c = 14.9 / L² GV (Störmer vertical cutoff; REFERENCES.md).
    double dipole_pole_latitude_deg = 80.7;
    double dipole_pole_longitude_deg = -72.7;
    double stormer_constant_gv = 14.9;

    // --- Galactic cosmic rays: D_gcr · g(P_c), g = ((P0)/(P0 + P_c))^γ — the share of the
    // integral GCR spectrum (∝ (P0 + P)^-γ above rigidity P, derived approximation: γ ≈ 1.6,
    // P0 ≈ 1 GV for the modulated spectrum near solar minimum) that passes the cutoff; g = 1 in
    // the polar caps, ≈ 0.02 at the magnetic equator at 650 km. D_gcr: polar-cap GCR dose rate,
    // ~10 rad(Si)/yr (order of the interplanetary ~20 rad/yr less the Earth's shadow); it is not
    // reduced by the Al shielding table (GCR are too energetic for mm of Al to matter).
    double gcr_polar_dose_rate_rad_per_yr = 10.0;
    double gcr_rigidity_scale_gv = 1.0;
    double gcr_spectral_index = 1.6;

    // --- Solar particle events: during an event add (F - 1) · D_gcr · s(d) · q(P_c),
    // q = exp(-P_c / P_spe): SEP protons are soft (P_spe ≈ 1 GV), so only the polar caps see
    // them, and the Al shield attenuates them like trapped protons (s(d)).
    std::vector<SolarParticleEvent> solar_particle_events;
    double spe_rigidity_scale_gv = 1.0;

    // --- Shielding of this satellite and the calibration point.
    double shielding_mm_al = 10.0;
    ShieldingTable shielding_table;
    double reference_shielding_mm_al = 10.0;
    double target_dose_rad_per_yr = 150.0;    // orbit average at the reference orbit and shielding
    double reference_orbit_altitude_m = 650e3;  // circular reference orbit
    double reference_orbit_inclination_rad = -1.0;  // < 0: sun-synchronous at that altitude
    int calibration_samples_along_orbit = 360;
    int calibration_node_longitudes = 180;
};

// Parameters plus the constants derived from them (calibration, dipole axis). Build it once
// with make_radiation_model() and pass it to radiation_at() for every satellite and sample.
struct RadiationModel {
    EnvironmentParameters params;
    double trapped_peak_dose_rate_rad_s = 0.0;  // K_trapped: SAA centre, h_ref, reference shielding
    double gcr_polar_dose_rate_rad_s = 0.0;
    double shielding_factor = 1.0;              // s(d) = table(d) / table(d_ref)
    double reference_mean_dose_rate_rad_s = 0.0;  // target / year: the flux_relative unit
    double reference_orbit_mean_trapped_shape = 0.0;  // <f_SAA · a(h)> over the reference orbit
    double reference_orbit_mean_gcr_shape = 0.0;      // <g(P_c)> over the reference orbit
    Eigen::Vector3d dipole_axis_ecef = Eigen::Vector3d::UnitZ();
};

struct RadiationSample {
    // Environment relative to the reference orbit's mean: the dose rate this place would give
    // behind the reference shielding, divided by the target mean (1 = a 150 rad/yr average).
    double flux_relative = 0.0;
    // Dose rate behind this satellite's shielding as an equivalent 67 MeV proton flux
    // (protons_per_cm2_per_rad · dose_rate): event rate = σ · flux = dose_rate / (rad per event).
    double flux_equivalent_p_cm2_s = 0.0;
    double dose_rate_rad_s = 0.0;          // total, rad(Si)/s behind shielding_mm_al
    double trapped_dose_rate_rad_s = 0.0;
    double gcr_dose_rate_rad_s = 0.0;
    double spe_dose_rate_rad_s = 0.0;
    bool in_saa = false;
    double saa_shape = 0.0;                // f_SAA in [0, 1]
    Geodetic geodetic;
    double magnetic_latitude_rad = 0.0;
    double l_shell = 0.0;
    double cutoff_rigidity_gv = 0.0;
};

// Decimal year at elapsed_s after the epoch: 2000 + (JD - 2451545)/365.25.
double decimal_year(double epoch_julian_date_days, double elapsed_s);

// SAA shape f in [0, 1] at a geodetic latitude/longitude (rad) in decimal year `year`.
double saa_shape(const EnvironmentParameters& params, double latitude_rad, double longitude_rad, double year);

// Unit vector of the north geomagnetic pole (dipole axis) in ECEF.
Eigen::Vector3d dipole_axis_ecef(const EnvironmentParameters& params);

// Magnetic latitude, L-shell and Störmer vertical cutoff (GV) of an ECEF position.
struct GeomagneticCoordinates {
    double magnetic_latitude_rad = 0.0;
    double l_shell = 0.0;
    double cutoff_rigidity_gv = 0.0;
};
GeomagneticCoordinates geomagnetic_coordinates(const Eigen::Vector3d& position_ecef_m,
                                               const Eigen::Vector3d& dipole_axis_ecef, double stormer_constant_gv);

// Orbit averages of the trapped shape f_SAA · a(h) and the GCR shape g(P_c) over a circular
// orbit of the given altitude and inclination: uniform in argument of latitude (time, for a
// circular orbit) × uniform in the Earth-fixed longitude of the ascending node (all ground
// tracks; a sun-synchronous orbit sweeps them in about a day); inclination_rad < 0 means
// sun-synchronous at that altitude. Earth rotation during the orbit
// only relabels node longitudes, so it drops out of the average. Midpoint rule on
// samples_along × node_longitudes points (errors < 1e-3 relative at the defaults).
struct OrbitShapeAverage {
    double trapped_shape = 0.0;
    double gcr_shape = 0.0;
};
OrbitShapeAverage orbit_average_shapes(const EnvironmentParameters& params, double altitude_m, double inclination_rad,
                                       double year, int samples_along_orbit, int node_longitudes);

// Calibrate: K_trapped = (target - D_gcr <g>_ref) / <f_SAA a>_ref, the ref averages over the
// reference orbit (inclination < 0 → sun-synchronous at that altitude). Throws
// std::invalid_argument on bad parameters (GCR alone above the target, empty table, ...).
RadiationModel make_radiation_model(const EnvironmentParameters& params);

// Environment and dose rate at an ECI position, time_s after the epoch (quiet + SPEs).
RadiationSample radiation_at(const Eigen::Vector3d& position_eci_m, double time_s, const RadiationModel& model);

// Orbit-averaged dose rate (rad/s, no SPEs) of a circular orbit behind this model's shielding:
// K s(d) <f a> + D_gcr <g>. With the reference orbit it returns target / year (the check on
// the calibration); other orbits give the model's prediction there.
double orbit_average_dose_rate_rad_s(const RadiationModel& model, double altitude_m, double inclination_rad);

}  // namespace skyfabric::physics
