#pragma once
// Radiation environment along the orbit: trapped protons (South Atlantic Anomaly), galactic
// cosmic rays behind the geomagnetic cutoff, optional solar particle events, and the total
// ionising dose rate behind aluminium shielding. Figures: docs/references.md "Radiation"
// (Suncatcher paper §2.3/§4.3, AP8/AE8 + SHIELDOSE-2 shielding curves); sources and checks in
// docs/environment-models.md.
//
// Model (all pieces documented at their functions below):
//   dose_rate = K_trapped · s(d) · f_SAA(lat, lon, year) · a(h)      trapped protons
//             + D_gcr · g(P_c)                                        cosmic-ray background
//             + Σ_active SPE (F − 1) · D_gcr · s(d) · q(P_c)           solar particle events
//             + D_sp(d, E_c(P_c)) · shadow(r)                        solar protons, long-term mean (optional)
// with s(d) the shielding table relative to the reference thickness, a(h) an exponential
// altitude scaling, P_c the Störmer vertical cutoff rigidity of a tilted dipole. K_trapped is
// not a constant typed in here: make_radiation_model() computes it so that the average of the
// dose rate over a representative orbit (default: circular 650 km sun-synchronous, averaged
// over the orbit and over all ground-track longitudes) equals the target annual dose
// (default 150 rad(Si)/yr behind 10 mm Al, docs/references.md).
#include <skyfabric/physics/geodetic.hpp>
#include <skyfabric/physics/settings_problem.hpp>

#include <Eigen/Core>

#include <optional>
#include <vector>

namespace skyfabric::physics {

// 67 MeV protons deposit 1 rad(Si) per ≈ 7.9e6 protons/cm² (docs/references.md, paper's conversion).
// Used to express a dose rate as an equivalent proton flux: phi = 7.9e6 · dose_rate.
inline constexpr double protons_per_cm2_per_rad = 7.9e6;
inline constexpr double seconds_per_year_radiation = 365.25 * 86400.0;  // "per year" = Julian year
// IGRF reference radius for L-shells and cutoff rigidities.
inline constexpr double geomagnetic_reference_radius_m = 6371.2e3;

// Annual trapped-particle dose at the centre of a solid Al sphere, rad(Si)/yr, versus thickness
// (mm Al), AP8-MIN/AE8 + SHIELDOSE-2 (docs/environment-models.md "Shielding"):
//  * 1, 10, 50 mm: 3950, 97, 34 — this orbit (650 km SSO; docs/references.md "Independent checks");
//  * 2, 3, 5, 8 mm: the SPENVIS 4.6 SHIELDOSE-2 curve for 550 km, 95° (the old table, docs/references.md
//    "2 mm 2140 … 10 mm 112") as ratios to its 10 mm value, times 97: 19.12, 8.576, 2.500, 1.1432.
// Only ratios are used (the level comes from the calibration). Not a 650 km curve between and beyond the
// 650 km points: the 2-8 mm shape is 550 km's and past 50 mm a power law. The references hold no other
// 650 km figure, so the error there is not checked here; issue 52 reports this table at 1.31x an
// AP8/AE8 + SHIELDOSE-2 curve for 650 km at 2 mm and 1.56x at 100 mm (docs/environment-models.md).
// The default 10 mm is a table point and the calibration point: its dose does not depend on the shape.
struct ShieldingTable {
    std::vector<double> thickness_mm_al{1.0, 2.0, 3.0, 5.0, 8.0, 10.0, 50.0};
    std::vector<double> dose_rad_per_yr{3950.0, 1854.6, 831.9, 242.5, 110.9, 97.0, 34.0};
    bool operator==(const ShieldingTable&) const = default;
};

// Log-log interpolation: D a power of thickness between table points (behind a few mm the
// trapped-proton dose falls as a power of depth, the integral spectrum of the protons whose range
// exceeds it); outside the table the end segment's power law is extended (100 mm: 34 · 2^-0.651
// = 21.6). Returns the table value exactly at a table point. Throws std::invalid_argument for
// < 2 points, unsorted or non-positive thickness, or non-positive doses.
double shielded_dose_rad_per_yr(const ShieldingTable& table, double thickness_mm_al);

// --- Solar protons (long-term mean), the optional term D_sp above.
// Spectrum: ESP-PSYCHIC total fluence at 1 AU, 95 % confidence, for a 7-year prediction period with
// 3 years at solar maximum (SPENVIS 4.6.13, as published in tdloveless/me-radfx
// HW/HW_02_Solutions/P3A-Solar-particle-fluences.html), divided by 7: a mission-average year.
// Dose at the centre of a solid Al sphere of thickness t (the SHIELDOSE-2 geometry) in the
// continuous-slowing-down, straight-ahead approximation: D = ∫_{R(E) > t} φ(E) S_Si(E_r) dE with
// R_Al(E_r) = R_Al(E) − t, φ = −dF/dE, stopping powers from the Bethe formula (PDG; I_Al = 166 eV,
// I_Si = 173 eV). Geomagnetic shielding: protons below the kinetic energy of the local Störmer cutoff
// rigidity do not arrive; the Earth blocks (1 − cos θ_E)/2 of arrival directions (sin θ_E = R_E/r).
// Bethe stopping power, MeV cm²/g, of a proton of kinetic energy E (no shell or density correction:
// within a few % of NIST PSTAR from ~5 MeV to ~1 GeV).
double proton_stopping_power_mev_cm2_g(double energy_mev, double z_over_a, double mean_excitation_ev);
// Kinetic energy (MeV) of a proton of rigidity P (GV): √(P² + m²) − m, m = 0.938272 GeV.
double proton_energy_at_rigidity_mev(double rigidity_gv);
// Fraction of isotropic arrival directions not blocked by the Earth at geocentric radius r.
double earth_shadow_transmission(double radius_m);
// Mean annual solar-proton dose (rad(Si)/yr) behind thickness_mm_al, at 1 AU, from protons above
// min_energy_mev (0: all).
double solar_proton_dose_rad_per_yr(double thickness_mm_al, double min_energy_mev);

// A solar particle event: between start_s and start_s + duration_s (time since the scenario
// epoch) the polar-cap particle flux is flux_factor times the quiet cosmic-ray flux.
struct SolarParticleEvent {
    double start_s = 0.0;
    double duration_s = 86400.0;
    double flux_factor = 100.0;
    bool operator==(const SolarParticleEvent&) const = default;
};

struct EnvironmentParameters {
    // Scenario epoch (Earth rotation, SAA drift). Default 2027-03-20T00:00Z, the scenarios' epoch.
    double epoch_julian_date_days = 2461484.5;

    // --- South Atlantic Anomaly (docs/references.md): Gaussian in geodetic lat/lon,
    // f = exp(-½[((lat - lat0)/σ_lat)² + ((lon - lon0)/σ_lon)²]), lon difference wrapped to ±180°.
    double saa_latitude_deg = -26.6;
    double saa_longitude_deg = -49.1;
    double saa_reference_year = 2025.0;             // year at which the centre above holds
    double saa_longitude_drift_deg_per_yr = -0.3;   // westward drift
    double saa_latitude_drift_deg_per_yr = 0.0;
    double saa_sigma_latitude_deg = 12.0;
    double saa_sigma_longitude_deg = 30.0;
    // in_saa flag: f >= threshold. exp(-2) = the 2σ ellipse, which at the defaults spans about
    // lat -50…-3°, lon -109…+11°: the docs/references.md box (lat -50…0, lon -90…+40) to ~20°.
    double saa_flag_threshold = 0.1353352832366127;

    // --- Altitude scaling of the trapped component: a(h) = exp((h - h_ref)/H).
    // H = 100 km / ln 2.5 ≈ 109 km reproduces docs/references.md's "expect 2–3× at 650 km" relative
    // to 550 km (midpoint 2.5×). AP8 inner-belt flux at the SAA grows roughly this way between
    // 400 and 800 km; it is an approximation, not a belt model.
    double reference_altitude_m = 650e3;
    double trapped_scale_height_m = 109135.0;

    // --- Geomagnetic cutoff: tilted centred dipole, north geomagnetic pole at 80.7°N, 72.7°W
    // (IGRF-13, epoch 2020: 80.65°N, 72.68°W). sin λ_m = r̂ · m̂, L = (r/R_ref)/cos²λ_m,
    // P_c = 14.9 / L² GV (Störmer vertical cutoff; docs/references.md).
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

    // --- Solar protons as a long-term mean dose rate (solar_proton_dose_rad_per_yr above, behind the
    // local cutoff and Earth shadow). Off by default: the calibration target already stands for the
    // whole environment; on, it adds ≈ 61 rad(Si)/yr behind 10 mm Al on the 650 km SSO (orbit average).
    bool solar_protons = false;

    // --- Shielding of this satellite and the calibration point.
    double shielding_mm_al = 10.0;
    ShieldingTable shielding_table;
    double reference_shielding_mm_al = 10.0;
    double target_dose_rad_per_yr = 150.0;    // orbit average at the reference orbit and shielding
    double reference_orbit_altitude_m = 650e3;  // circular reference orbit
    double reference_orbit_inclination_rad = -1.0;  // < 0: sun-synchronous at that altitude
    int calibration_samples_along_orbit = 360;
    int calibration_node_longitudes = 180;
    bool operator==(const EnvironmentParameters&) const = default;
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
    // Solar protons (params.solar_protons): ln of the annual dose at 1 AU from protons above E, on a
    // uniform grid in ln E, behind this satellite's and behind the reference shielding.
    std::vector<double> solar_proton_ln_dose, solar_proton_ln_dose_reference;
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

// What make_radiation_model refuses, by field name: the shielding table, the SAA widths, the scale
// height and rigidity scales, the calibration's sample counts, and a target dose the cosmic-ray
// background alone reaches (that one costs an orbit average, as the calibration does).
SettingsProblems check(const EnvironmentParameters& params);

// Calibrate: K_trapped = (target - D_gcr <g>_ref) / <f_SAA a>_ref, the ref averages over the
// reference orbit (inclination < 0 → sun-synchronous at that altitude). Throws
// std::invalid_argument on what check() reports.
RadiationModel make_radiation_model(const EnvironmentParameters& params);
// The same without throwing: no model and `problems` filled with what check() reports (a caller
// that checks and then builds pays for one orbit average, not two).
std::optional<RadiationModel> try_make_radiation_model(const EnvironmentParameters& params, SettingsProblems& problems);

// Environment and dose rate at an ECI position, time_s after the epoch (quiet + SPEs).
RadiationSample radiation_at(const Eigen::Vector3d& position_eci_m, double time_s, const RadiationModel& model);

// Long-term solar-proton dose rate (rad/s) at an Earth-fixed position behind this model's shielding;
// 0 unless params.solar_protons.
double solar_proton_dose_rate_rad_s(const RadiationModel& model, const Eigen::Vector3d& position_ecef_m);

// Orbit-averaged dose rate (rad/s, no SPE windows) of a circular orbit behind this model's shielding:
// K s(d) <f a> + D_gcr <g> (+ the long-term solar-proton term when enabled). With the reference orbit
// and solar protons off it returns target / year (the check on the calibration); other orbits give
// the model's prediction there.
double orbit_average_dose_rate_rad_s(const RadiationModel& model, double altitude_m, double inclination_rad);

}  // namespace skyfabric::physics
