#include "scenario/scenario.hpp"

#include "scenario/yaml_reader.hpp"

#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/frames.hpp>
#include <skyfabric/physics/orbit.hpp>
#include <skyfabric/physics/random.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <regex>
#include <sstream>

namespace skyfabric::scenario {
namespace {

constexpr double deg = physics::pi / 180.0;
// Step and satellite counts past which a run cannot fit a workstation: refused up front.
constexpr double max_output_steps = 5.0e6;
constexpr std::int64_t max_satellites = 200000;
// Links of a synthetic fabric (fully_connected grows as p^2).
constexpr std::int64_t max_fabric_links = 10000000;
// Uncompressed output (HDF5 series and VTK frames) past which a run is refused unless
// its output is reduced: it would fill a workstation's disk.
constexpr double max_output_bytes = 200e9;
// Explicit LVLH states further out than this are not a formation (the chief's orbit is
// about 7,000 km in radius): refused rather than integrated into nonsense.
constexpr double max_explicit_offset_m = 1.0e7;
constexpr double max_explicit_velocity_m_s = 1.0e4;
// Input files are read whole: a scenario of 200,000 explicit satellites is about 16 MB, an
// edge list of max_fabric_links lines about 300 MB.
// Orbits (the chief's and every satellite's) must stay above this altitude: below it a
// satellite re-enters within hours (the propagator stops there too).
constexpr double min_perigee_altitude_m = 100e3;
// The highest apogee a scenario's chief orbit can have (altitude 50,000 km, e = 0.5): a
// satellite flying further out has left the formation.
constexpr double max_apogee_radius_m = 1.5 * (physics::earth_equatorial_radius_m + 50000e3);
// Training steps a run may simulate: each keeps a step record and its collectives (about
// 150 bytes) and costs a flow simulation; a model of a few parameters took ~1e10 steps in
// ten minutes of simulated time (std::bad_alloc).
constexpr double max_training_steps = 1e7;
// Memory for the dose-rate history of a run with radiation.
constexpr double max_dose_series_bytes = 8e9;
constexpr std::size_t max_scenario_bytes = 32u << 20;
// Clusters of a constellation: every gateway has a terminal for each other cluster, and the layer's
// pairs grow as clusters²; 64 clusters of 4 gateways are 8,064 pairs a sample.
constexpr std::size_t max_clusters = 64;
constexpr std::size_t max_edge_list_bytes = 512u << 20;

std::string format_count(double x) {
    std::ostringstream out;
    out.precision(3);
    out << x;
    return out.str();
}

physics::UtcEpoch parse_epoch(Section& section, const std::string& key, const std::string& text) {
    static const std::regex iso(R"((\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2}(?:\.\d+)?)Z?)");
    std::smatch m;
    if (!std::regex_match(text, m, iso)) {
        section.fail(key, "expected a UTC time like 2027-03-20T00:00:00Z, got '" + text + "'");
    }
    physics::UtcEpoch e;
    e.year = std::stoi(m[1]);
    e.month = std::stoi(m[2]);
    e.day = std::stoi(m[3]);
    e.hour = std::stoi(m[4]);
    e.minute = std::stoi(m[5]);
    e.second = std::stod(m[6]);
    static constexpr int days_in_month[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (e.year < 1950 || e.year > 2200 || e.month < 1 || e.month > 12 || e.day < 1 ||
        e.day > days_in_month[e.month - 1] || e.hour > 23 || e.minute > 59 || e.second >= 61.0) {
        section.fail(key, "not a valid calendar date and time between 1950 and 2200: '" + text + "'");
    }
    return e;
}

OrbitConfig read_orbit(Section s) {
    OrbitConfig o;
    s.refuse_empty("altitude_km", "a number in [150, 50000] km");
    s.refuse_empty("semi_major_axis_km", "a number in [6528, 56378] km");
    s.refuse_empty("ltan_h", "a number in [0, 24] h");
    s.refuse_empty("raan_deg", "a number in [0, 360] deg");
    const bool has_altitude = s.has("altitude_km");
    const bool has_sma = s.has("semi_major_axis_km");
    if (has_altitude == has_sma) {
        s.fail(has_sma ? "semi_major_axis_km" : "altitude_km",
               "give exactly one of altitude_km (above the equatorial radius) or semi_major_axis_km");
    }
    if (has_altitude) {
        o.semi_major_axis_m = physics::earth_equatorial_radius_m + 1e3 * s.number("altitude_km", 150.0, 50000.0, {}, "km");
        s.allow("semi_major_axis_km");
    } else {
        o.semi_major_axis_m = 1e3 * s.number("semi_major_axis_km", 6528.0, 56378.0, {}, "km");
        s.allow("altitude_km");
    }
    o.eccentricity = s.number("eccentricity", 0.0, 0.5, 0.0);
    const double perigee_altitude_m = o.semi_major_axis_m * (1.0 - o.eccentricity) - physics::earth_equatorial_radius_m;
    if (perigee_altitude_m < min_perigee_altitude_m) {
        const double max_e = 1.0 - (physics::earth_equatorial_radius_m + min_perigee_altitude_m) / o.semi_major_axis_m;
        s.fail("eccentricity", "the perigee is " + format_count(perigee_altitude_m / 1e3) +
                                   " km above the equator, below 100 km: the orbit re-enters (or meets the ground); "
                                   "at this semi-major axis the eccentricity must be at most " + format_count(std::max(0.0, max_e)));
    }
    o.sun_synchronous = s.boolean("sun_synchronous", false);
    if (o.sun_synchronous && s.has("inclination_deg")) {
        s.fail("inclination_deg", "sun_synchronous: true sets the inclination; remove inclination_deg or set sun_synchronous: false");
    }
    o.inclination_rad = deg * s.number("inclination_deg", 0.0, 180.0, o.sun_synchronous ? 0.0 : 51.6, "deg");
    if (o.sun_synchronous) {
        o.inclination_rad = physics::sun_synchronous_inclination_rad(o.semi_major_axis_m, o.eccentricity);
        if (!std::isfinite(o.inclination_rad)) {
            s.fail("altitude_km", "no sun-synchronous inclination exists for this orbit (too high)");
        }
    }
    if (s.has("ltan_h") && s.has("raan_deg")) s.fail("raan_deg", "give ltan_h or raan_deg, not both");
    if (s.has("ltan_h")) o.ltan_h = s.number("ltan_h", 0.0, 24.0, {}, "h");
    else s.allow("ltan_h");
    o.raan_rad = deg * s.number("raan_deg", 0.0, 360.0, 0.0, "deg");
    o.arg_perigee_rad = deg * s.number("arg_perigee_deg", 0.0, 360.0, 0.0, "deg");
    o.arg_latitude_rad = deg * s.number("arg_latitude_deg", 0.0, 360.0, 0.0, "deg");
    o.epoch_text = s.text("epoch_utc", o.epoch_text);
    o.epoch = parse_epoch(s, "epoch_utc", o.epoch_text);
    s.finish();
    return o;
}

FormationConfig read_formation(Section s) {
    FormationConfig f;
    const std::string layout = s.choice("layout", {"suncatcher_lattice", "hexagonal", "explicit"}, "suncatcher_lattice");
    f.layout = layout == "hexagonal" ? FormationLayout::hexagonal
             : layout == "explicit"  ? FormationLayout::explicit_states
                                     : FormationLayout::suncatcher_lattice;
    f.radius_m = s.number("radius_m", 1.0, 1.0e6, 1000.0, "m");
    f.radial_pitch_m = s.number("radial_pitch_m", 0.1, 1.0e5, 100.0, "m");
    f.along_track_pitch_m = s.number("along_track_pitch_m", 0.1, 1.0e5, 200.0, "m");
    f.pitch_m = s.number("pitch_m", 0.1, 1.0e5, 150.0, "m");
    f.out_of_plane_amplitude_m = s.number("out_of_plane_amplitude_m", 0.0, 1.0e5, 0.0, "m");
    if (s.has("j2_trim")) {
        s.fail("j2_trim", "was replaced by relative_orbits: schweighart_sedwick (the SS-trimmed ellipse); the default, "
                          "relative_orbits: auto, already keeps the formation bounded under J2");
    }
    const std::string orbits = s.choice("relative_orbits", {"auto", "j2_mean_elements", "hcw", "schweighart_sedwick"}, "auto");
    f.relative_orbits = orbits == "j2_mean_elements"      ? RelativeOrbits::j2_mean_elements
                      : orbits == "hcw"                   ? RelativeOrbits::hcw
                      : orbits == "schweighart_sedwick"   ? RelativeOrbits::schweighart_sedwick
                                                          : RelativeOrbits::automatic;
    const auto satellites = s.sequence("satellites");
    if (f.layout == FormationLayout::explicit_states) {
        if (satellites.empty()) s.fail("satellites", "layout: explicit needs a non-empty list of satellites");
        for (std::size_t i = 0; i < satellites.size(); ++i) {
            Section sat = s.item(satellites[i], s.path() + ".satellites[" + std::to_string(i) + "]");
            physics::RelativeState state;
            const auto p = sat.numbers("position_m", 3, "m");
            for (const double x : p) {
                if (std::abs(x) > max_explicit_offset_m) {
                    sat.fail("position_m", "each coordinate must lie within +-" + std::to_string(static_cast<long long>(max_explicit_offset_m)) +
                                               " m of the chief (LVLH), got " + std::to_string(x));
                }
            }
            state.position_m = {p[0], p[1], p[2]};
            state.velocity_m_s = Eigen::Vector3d::Constant(std::numeric_limits<double>::quiet_NaN());
            if (sat.has("velocity_m_s")) {
                const auto v = sat.numbers("velocity_m_s", 3, "m/s");
                for (const double x : v) {
                    if (std::abs(x) > max_explicit_velocity_m_s) {
                        sat.fail("velocity_m_s", "each component must lie within +-" +
                                                     std::to_string(static_cast<long long>(max_explicit_velocity_m_s)) +
                                                     " m/s relative to the chief, got " + std::to_string(x));
                    }
                }
                state.velocity_m_s = {v[0], v[1], v[2]};
            } else {
                sat.allow("velocity_m_s");  // NaN velocity marks "use the bounded-orbit velocity"
            }
            sat.finish();
            f.explicit_states.push_back(state);
        }
    } else if (!satellites.empty()) {
        s.fail("satellites", "a satellite list is only read with layout: explicit");
    }
    // The lattice generators loop over a grid and keep the points inside the ellipse:
    // estimate the count first so that an absurd radius / pitch ratio is refused before
    // it takes hours and all memory. (The exact count is checked again once generated.)
    if (f.layout != FormationLayout::explicit_states) {
        const double half = 0.5 * f.radius_m;
        const double estimate = f.layout == FormationLayout::hexagonal
                                    ? physics::pi * half * half / (f.pitch_m * f.pitch_m * std::sqrt(3.0) / 2.0)
                                    : physics::pi * half * f.radius_m / (f.radial_pitch_m * f.along_track_pitch_m);
        if (estimate > 1.2 * static_cast<double>(max_satellites) + 100.0) {
            s.fail("radius_m", "radius " + format_count(f.radius_m) + " m at this pitch gives about " + format_count(estimate) +
                                   " satellites; at most " + std::to_string(max_satellites) +
                                   " are supported (lower radius_m or raise the pitch)");
        }
    }
    s.finish();
    return f;
}

DynamicsConfig read_dynamics(Section s, std::uint64_t seed) {
    DynamicsConfig d;
    const std::string model = s.choice("model", {"hcw", "hcw_ode", "schweighart_sedwick", "nonlinear"}, "nonlinear");
    using M = physics::RelativeMotionModel;
    d.model = model == "hcw" ? M::hcw : model == "hcw_ode" ? M::hcw_ode : model == "schweighart_sedwick" ? M::schweighart_sedwick : M::nonlinear;
    d.j2 = s.boolean("j2", true);
    d.relative_tolerance = s.number("relative_tolerance", 1e-15, 1e-3, d.relative_tolerance);
    d.absolute_tolerance = s.number("absolute_tolerance_m", 1e-15, 1.0, d.absolute_tolerance, "m");
    d.compare_to_nonlinear = s.choice("compare_to", {"none", "nonlinear"}, "none") == "nonlinear";
    if (s.has("drag")) {
        Section drag = s.section("drag");
        d.drag.enabled = drag.boolean("enabled", true);
        const std::string activity = drag.choice("solar_activity", {"low", "moderate", "high"}, "moderate");
        physics::SolarActivity& a = d.drag.solar_activity;
        a = activity == "low" ? physics::SolarActivity::low
          : activity == "high" ? physics::SolarActivity::high
                               : physics::SolarActivity::moderate;
        // Explicit indices override the preset's (F10.7 observed range ~60-400 sfu; Ap 0-400). A daily
        // flux alone stands for a steady Sun: the 81-day mean then defaults to it.
        const bool daily_given = drag.has("f107_sfu");
        a.f107_daily_sfu = drag.number("f107_sfu", 50.0, 400.0, a.f107_daily_sfu, "sfu");
        a.f107_81day_mean_sfu = drag.number("f107_81day_sfu", 50.0, 400.0,
                                            daily_given ? a.f107_daily_sfu : a.f107_81day_mean_sfu, "sfu");
        a.ap = drag.number("ap", 0.0, 400.0, a.ap);
        d.drag.ballistic_coefficient_kg_m2 = drag.number("ballistic_coefficient_kg_m2", 1.0, 10000.0, 60.0, "kg/m^2");
        d.drag.dispersion = drag.number("dispersion", 0.0, 0.5, 0.05);
        drag.finish();
        if (d.drag.enabled && d.model != M::nonlinear) {
            s.fail("drag", "drag acts only in the nonlinear model; set dynamics.model: nonlinear or drag.enabled: false");
        }
    } else {
        s.allow("drag");
    }
    d.drag.seed = seed;
    s.finish();
    return d;
}

physics::StationKeepingSettings read_station_keeping(Section s) {
    physics::StationKeepingSettings k;
    k.enabled = s.boolean("enabled", false);
    k.tolerance_m = s.number("tolerance_m", 0.01, 1.0e4, 5.0, "m");
    s.finish();
    return k;
}

MetricsConfig read_metrics(Section s) {
    MetricsConfig m;
    m.min_separation_alarm_m = s.number("min_separation_alarm_m", 0.0, 1.0e6, 20.0, "m");
    m.neighbour_count = static_cast<int>(s.integer("neighbour_count", 1, 64, 8));
    m.reference_satellite = static_cast<int>(s.integer("reference_satellite", 0, max_satellites, 0));
    s.finish();
    return m;
}

// The optics of a terminal (its keys and the dwdm subsection), over `o`'s values as defaults.
void read_optics(Section& s, links::OpticalTerminalParameters& o) {
    o.aperture_m = s.number("aperture_m", 0.001, 10.0, o.aperture_m, "m");
    o.tx_power_w = s.number("tx_power_w", 1e-6, 1000.0, o.tx_power_w, "W");
    o.wavelength_m = 1e-9 * s.number("wavelength_nm", 400.0, 11000.0, 1e9 * o.wavelength_m, "nm");
    o.aperture_efficiency = s.number("aperture_efficiency", 0.01, 1.0, o.aperture_efficiency);
    o.other_losses_db = s.number("other_losses_db", 0.0, 100.0, o.other_losses_db, "dB");
    o.pointing_static_error_rad = 1e-6 * s.number("pointing_error_urad", 0.0, 1e4, 0.0, "urad");
    o.pointing_jitter_rad = 1e-6 * s.number("pointing_jitter_urad", 0.0, 1e4, 0.0, "urad");
    o.amplifier_noise_figure_db = s.number("noise_figure_db", 0.0, 30.0, o.amplifier_noise_figure_db, "dB");
    o.required_margin_db = s.number("required_margin_db", 0.0, 50.0, o.required_margin_db, "dB");
    o.spatial_channels_built = static_cast<int>(s.integer("spatial_channels", 1, 4096, 1));
    Section dwdm = s.section("dwdm");
    o.dwdm.grid_spacing_hz = 1e9 * dwdm.number("grid_ghz", 12.5, 1000.0, 100.0, "GHz");
    o.dwdm.band_hz = 1e12 * dwdm.number("band_thz", 0.01, 50.0, 4.8, "THz");
    o.dwdm.transceivers_fitted = static_cast<int>(dwdm.integer("channels", 1, 1024, 24));
    const std::string transceiver = dwdm.choice("transceiver", {"400zr", "800zr", "custom"}, "400zr");
    if (transceiver != "custom") o.transceiver = *links::transceiver_preset(transceiver);
    else o.transceiver.name = "custom";
    o.transceiver.rate_bps = 1e9 * dwdm.number("rate_gbps", 0.001, 1.0e5, o.transceiver.rate_bps / 1e9, "Gbit/s");
    o.transceiver.sensitivity_dbm = dwdm.number("sensitivity_dbm", -80.0, 30.0, o.transceiver.sensitivity_dbm, "dBm");
    o.transceiver.required_osnr_db = dwdm.number("required_osnr_db", 0.0, 60.0, o.transceiver.required_osnr_db, "dB");
    dwdm.finish();
}

LinksConfig read_links(Section s, bool present) {
    LinksConfig l;
    l.enabled = s.boolean("enabled", present);
    auto& t = l.topology;
    const std::string policy = s.choice("topology", {"nearest_k", "lattice", "max_capacity"}, "nearest_k");
    t.policy = *links::topology_policy_from_name(policy);
    t.terminals.terminals_per_satellite = static_cast<int>(s.integer("terminals_per_satellite", 1, 64, 8));
    t.neighbours_k = static_cast<int>(s.integer("neighbours_k", 0, 64, 0));
    t.terminals.max_range_m = s.number("max_range_m", 0.0, 1.0e8, 0.0, "m");
    t.terminals.reacquisition_time_s = s.number("reacquisition_time_s", 0.0, 3600.0, 1.0, "s");
    t.hysteresis_fraction = s.number("hysteresis_fraction", 0.0, 1.0, 0.1);
    read_optics(s, t.optics);
    s.finish();
    return l;
}

// constellation: clusters as a count spaced along-track (spacing_km), or a list of clusters.
ConstellationConfig read_constellation(Section s, bool present) {
    ConstellationConfig c;
    c.enabled = present;
    if (!present) return c;
    // The other keys first: a bad value there is named before a missing cluster count.
    Section g = s.section("gateways");
    auto& gw = c.gateways;
    gw.gateways_per_cluster = static_cast<std::int32_t>(g.integer("per_cluster", 1, 64, 4));
    gw.topology = *links::aggregation_topology_from_name(g.choice("topology", {"planar", "spread"}, "planar"));
    gw.grazing_altitude_m = 1e3 * g.number("grazing_altitude_km", 0.0, 1000.0, 100.0, "km");
    gw.optics.aperture_m = 0.3;
    gw.optics.tx_power_w = 10.0;
    read_optics(g, gw.optics);
    g.finish();
    std::vector<std::string> all;
    std::string listed;
    for (const auto a : workloads::cluster_algorithms) {
        all.emplace_back(workloads::to_string(a));
        listed += (listed.empty() ? "" : ", ") + all.back();
    }
    std::vector<std::string> names;
    if (!s.has("algorithms")) {
        s.refuse_empty("algorithms", listed + ", or a list of them");
        names = all;
    } else if (s.is_scalar("algorithms")) {
        names = {s.choice("algorithms", all)};
    } else {
        for (const auto& node : s.sequence("algorithms")) {
            const std::string name = node.IsScalar() ? node.as<std::string>() : std::string();
            if (!workloads::cluster_algorithm_from_name(name)) s.fail_at(node, s.path() + ".algorithms", "expected one of " + listed);
            if (std::find(names.begin(), names.end(), name) != names.end())
                s.fail_at(node, s.path() + ".algorithms", "lists " + name + " twice; each algorithm once (a set of " + listed + ")");
            names.push_back(name);
        }
        if (names.empty()) s.fail("algorithms", "list at least one of " + listed);
    }
    for (const auto& n : names) c.algorithms.push_back(*workloads::cluster_algorithm_from_name(n));
    c.inner_steps = static_cast<std::int32_t>(s.integer("inner_steps", 1, 1000000, 50));
    c.outer_bytes_per_element = s.number("outer_bytes_per_element", 0.125, 16.0, 4.0, "B");

    s.refuse_empty("clusters", "a number of clusters or a list of clusters");
    if (s.has("clusters") && !s.is_scalar("clusters")) {
        const auto items = s.sequence("clusters");
        if (items.size() < 2) s.fail("clusters", "a constellation needs at least 2 clusters");
        if (items.size() > max_clusters)
            s.fail("clusters", "lists " + std::to_string(items.size()) + " clusters; at most " + std::to_string(max_clusters) + " are supported");
        for (std::size_t k = 0; k < items.size(); ++k) {
            Section item = s.item(items[k], s.path() + ".clusters[" + std::to_string(k) + "]");
            ClusterConfig cluster;
            cluster.along_track_m = 1e3 * item.number("along_track_km", -40000.0, 40000.0, 0.0, "km");
            cluster.raan_offset_rad = deg * item.number("raan_deg", -180.0, 180.0, 0.0, "deg");
            if (item.has("radius_m")) cluster.radius_m = item.number("radius_m", 1.0, 1e6, {}, "m");
            item.finish();
            c.clusters.push_back(cluster);
        }
    } else {
        std::optional<double> spacing_m;
        s.refuse_empty("spacing_km", "a distance along-track, in km");
        if (s.has("spacing_km")) spacing_m = 1e3 * s.number("spacing_km", 0.001, 40000.0, {}, "km");
        const double raan_step_rad = deg * s.number("raan_step_deg", -180.0, 180.0, 0.0, "deg");
        const auto count = s.integer("clusters", 2, static_cast<std::int64_t>(max_clusters), {});
        if (!spacing_m) s.fail("spacing_km", "missing: with a count of clusters give their spacing along-track, in km");
        for (std::int64_t k = 0; k < count; ++k)
            c.clusters.push_back(ClusterConfig{*spacing_m * static_cast<double>(k), raan_step_rad * static_cast<double>(k), {}});
    }
    s.finish();
    return c;
}

// workload.accelerator and its overrides, shared by both kinds of workload.
workloads::Accelerator read_accelerator(Section& s) {
    const std::string name = s.choice("accelerator", {"tpu_v6e", "custom"}, "tpu_v6e");
    workloads::Accelerator a;
    if (name != "custom") a = workloads::accelerator_preset(name);
    else a.name = "custom";
    a.peak_flops = 1e12 * s.number("peak_tflops", 1e-3, 1e6, a.peak_flops / 1e12, "TFLOP/s");
    a.hbm_bytes = 1e9 * s.number("hbm_gb", 0.001, 1e6, a.hbm_bytes / 1e9, "GB");
    a.hbm_bandwidth_Bps = 1e9 * s.number("hbm_bandwidth_gbs", 1e-3, 1e7, a.hbm_bandwidth_Bps / 1e9, "GB/s");
    return a;
}

workloads::LengthDistribution read_lengths(Section s, workloads::LengthDistribution d) {
    d.kind = s.choice("distribution", {"fixed", "lognormal"}, "fixed") == "lognormal" ? workloads::LengthKind::lognormal
                                                                                      : workloads::LengthKind::fixed;
    d.mean_tokens = s.number("mean", 1.0, 1e8, d.mean_tokens, "tokens");
    d.sigma = s.number("sigma", 0.0, 10.0, d.kind == workloads::LengthKind::lognormal ? 1.0 : 0.0);
    if (d.kind == workloads::LengthKind::fixed && d.sigma != 0.0) s.fail("sigma", "applies to distribution: lognormal only");
    s.finish();
    return d;
}

workloads::EngineGroup read_engine_group(Section s) {
    workloads::EngineGroup g;
    g.instances = static_cast<std::int32_t>(s.integer("instances", 1, max_satellites, {}));
    g.satellites_per_instance = static_cast<std::int32_t>(s.integer("satellites_per_instance", 1, max_satellites, 1));
    s.finish();
    return g;
}

// workload.power_policy: what the compute does when the power section's battery or radiator limits it.
physics::PowerPolicy read_power_policy(Section& s) {
    const std::string policy = s.choice("power_policy", {"ignore", "throttle", "pause"}, "throttle");
    return policy == "ignore" ? physics::PowerPolicy::ignore
         : policy == "pause"  ? physics::PowerPolicy::pause
                              : physics::PowerPolicy::throttle;
}

// workload.kind: inference (docs/inference.md). `s` is the workload section.
InferenceConfig read_inference(Section s, const std::string& source_name, std::uint64_t seed) {
    InferenceConfig c;
    c.enabled = s.boolean("enabled", true);
    c.accelerator = read_accelerator(s);
    Section in = s.section("inference", true);
    auto& v = c.serving;
    {
        Section m = in.section("model", true);
        auto& model = v.model;
        model.parameters = m.number("parameters", 1.0, 1e15, {});
        model.active_parameters = m.number("active_parameters", 0.0, 1e15, 0.0);
        if (model.active_parameters > model.parameters) m.fail("active_parameters", "must not exceed parameters");
        model.bytes_per_parameter = m.number("bytes_per_parameter", 0.125, 16.0, model.bytes_per_parameter, "B");
        model.layers = static_cast<std::int32_t>(m.integer("layers", 1, 100000, {}));
        const std::string attention = m.choice("attention", {"dense", "hybrid", "mla"}, "dense");
        model.attention = attention == "mla"      ? workloads::AttentionKind::mla
                          : attention == "hybrid" ? workloads::AttentionKind::hybrid
                                                  : workloads::AttentionKind::dense;
        model.bytes_per_element = m.number("bytes_per_element", 0.125, 16.0, model.bytes_per_element, "B");
        if (model.attention == workloads::AttentionKind::mla) {
            model.kv_lora_rank = static_cast<std::int32_t>(m.integer("kv_lora_rank", 1, 1000000, model.kv_lora_rank));
            model.rope_dim = static_cast<std::int32_t>(m.integer("rope_dim", 0, 1000000, model.rope_dim));
        } else {
            model.kv_heads = static_cast<std::int32_t>(m.integer("kv_heads", 1, 100000, {}));
            model.head_dim = static_cast<std::int32_t>(m.integer("head_dim", 1, 100000, {}));
        }
        if (model.attention == workloads::AttentionKind::hybrid) {
            model.full_attention_layers = static_cast<std::int32_t>(m.integer("full_attention_layers", 1, model.layers, {}));
        }
        m.finish();
    }
    {
        Section a = in.section("arrivals", true);
        if (a.has("rate_per_s") == a.has("trace"))
            a.fail(a.has("trace") ? "trace" : "rate_per_s", "give either rate_per_s (Poisson arrivals) or trace (a CSV file), not both");
        v.requests.seed = static_cast<std::uint64_t>(a.integer("seed", 0, std::numeric_limits<std::int64_t>::max(),
                                                               static_cast<std::int64_t>(seed & 0x7fffffffffffffffull)));
        if (a.has("rate_per_s")) {
            v.requests.rate_per_s = a.number("rate_per_s", 1e-9, 1e6, {}, "1/s");
        } else {
            std::filesystem::path path = a.text("trace");
            if (path.is_relative()) path = std::filesystem::path(source_name).parent_path() / path;
            std::string text;
            try {
                text = read_input_file(path, max_edge_list_bytes, "request trace");
                v.trace = workloads::parse_request_trace_csv(text, path.string());
            } catch (const ScenarioError& e) {
                a.fail("trace", e.what());
            } catch (const workloads::RequestTraceError& e) {
                a.fail("trace", e.what());
            }
            if (v.trace.empty()) a.fail("trace", path.string() + ": no requests (only a header)");
            c.trace_file = path.string();
        }
        a.finish();
    }
    v.requests.prompt = read_lengths(in.section("prompt_tokens"), {workloads::LengthKind::fixed, 4096.0, 0.0});
    v.requests.output = read_lengths(in.section("output_tokens"), {workloads::LengthKind::fixed, 256.0, 0.0});
    v.requests.cached_prefix_fraction = in.number("cached_prefix_fraction", 0.0, 1.0, 0.0);
    if (!v.trace.empty() && in.has("prompt_tokens")) in.fail("prompt_tokens", "comes from the trace (arrivals.trace); leave it out");
    if (!v.trace.empty() && in.has("output_tokens")) in.fail("output_tokens", "comes from the trace (arrivals.trace); leave it out");
    if (!v.trace.empty() && in.has("cached_prefix_fraction"))
        in.fail("cached_prefix_fraction", "comes from the trace (its cached_tokens column); leave it out");
    {
        Section slo = in.section("slo");
        v.ttft_slo_s = slo.number("ttft_s", 1e-6, 1e6, v.ttft_slo_s, "s");
        v.tpot_slo_s = slo.number("tpot_s", 1e-6, 1e6, v.tpot_slo_s, "s");
        slo.finish();
    }
    {
        Section e = in.section("engines", true);
        v.engines.prefill = read_engine_group(e.section("prefill", true));
        v.engines.decode = read_engine_group(e.section("decode", true));
        v.engines.chips_per_satellite = static_cast<std::int32_t>(e.integer("chips_per_satellite", 1, 1024, 1));
        v.engines.mfu = e.number("mfu", 1e-4, 1.0, v.engines.mfu);
        v.engines.max_batch = static_cast<std::int32_t>(e.integer("max_batch", 1, 1000000, v.engines.max_batch));
        v.engines.max_tokens = e.integer("max_tokens", 0, std::numeric_limits<std::int64_t>::max() / 4, 0);
        e.finish();
    }
    const std::string routing = in.choice("routing", {"local", "prfaas"}, "local");
    v.routing = routing == "prfaas" ? workloads::ServingRouting::prfaas : workloads::ServingRouting::local;
    c.compare_routing = in.boolean("compare_routing", false);
    const bool dedicated = v.routing == workloads::ServingRouting::prfaas || c.compare_routing;
    if (dedicated) {
        v.threshold_tokens = in.integer("threshold_tokens", 0, std::numeric_limits<std::int32_t>::max(), {});
        v.dedicated_prefill_instances = static_cast<std::int32_t>(
            in.integer("dedicated_prefill_instances", 1, std::max(1, v.engines.prefill.instances - 1), 1));
        if (v.engines.prefill.instances < 2)
            in.section("engines").section("prefill").fail("instances", "prfaas needs at least 2 prefill instances: the dedicated "
                                                                      "group and at least one beside the decode instances");
    } else {
        for (const char* key : {"threshold_tokens", "dedicated_prefill_instances"})
            if (in.has(key)) in.fail(key, "applies to routing: prfaas (or compare_routing: true) only");
    }
    const std::string network = in.choice("network_routing", {"shortest_latency", "widest"}, "shortest_latency");
    v.network_routing = network == "widest" ? workloads::RoutingPolicy::widest : workloads::RoutingPolicy::shortest_latency;
    in.finish();
    // A training key beside kind: inference is a mistake, not an unknown key.
    for (const char* key : {"model_parameters", "active_parameters", "tokens_per_step", "parallelism", "moe", "mfu",
                            "all_reduce", "placement", "routing", "sync", "local_steps", "gradient_buckets",
                            "bytes_per_gradient_element", "paths_per_transfer", "per_message_overhead_us", "on_rank_loss",
                            "backend", "stragglers"})
        if (s.has(key)) s.fail(key, "is a training key; workload.kind is inference (its keys go under workload.inference)");
    c.power_policy = read_power_policy(s);
    s.allow("kind");
    s.finish();
    return c;
}

WorkloadConfig read_workload(Section s, bool present, std::uint64_t seed) {
    WorkloadConfig w;
    w.enabled = s.boolean("enabled", present);
    s.allow("kind");
    if (s.has("inference")) s.fail_first_leaf("inference", "is a serving key; it applies with workload.kind: inference only");
    w.accelerator = read_accelerator(s);
    auto& j = w.job;
    j.mfu = s.number("mfu", 1e-4, 1.0, j.mfu);
    j.parameters = s.number("model_parameters", 1.0, 1e15, j.parameters);
    j.active_parameters = s.number("active_parameters", 0.0, 1e15, 0.0);
    if (j.active_parameters > j.parameters) s.fail("active_parameters", "must not exceed model_parameters");
    j.tokens_per_step = s.number("tokens_per_step", 1.0, 1e12, j.tokens_per_step);
    j.bytes_per_gradient_element = s.number("bytes_per_gradient_element", 0.125, 16.0, j.bytes_per_gradient_element, "B");
    Section parallelism = s.section("parallelism");
    j.data_parallel = static_cast<std::int32_t>(parallelism.integer("data", 0, max_satellites, 0));
    j.tensor_parallel = static_cast<std::int32_t>(parallelism.integer("tensor", 1, 1024, 1));
    j.moe.expert_parallel = static_cast<std::int32_t>(parallelism.integer("expert", 1, max_satellites, 1));
    parallelism.finish();
    // A mixture of experts (absent: a dense model); docs/collectives.md "Mixture of experts".
    if (s.has("moe")) {
        Section moe = s.section("moe");
        auto& m = j.moe;
        m.experts_per_token = static_cast<std::int32_t>(moe.integer("experts_per_token", 1, 1024, m.experts_per_token));
        m.hidden_size = moe.number("hidden_size", 1.0, 1e7, m.hidden_size);
        m.bytes_per_activation = moe.number("bytes_per_activation", 0.125, 16.0, m.bytes_per_activation, "B");
        m.expert_parameters = moe.number("expert_parameters", 0.0, 1e15, 0.0);
        if (m.expert_parameters > j.parameters) moe.fail("expert_parameters", "must not exceed model_parameters");
        m.load_imbalance = moe.number("load_imbalance", 1.0, 1e3, m.load_imbalance);
        // Read last: a bad value of another key is named before the missing count of layers.
        m.layers = static_cast<std::int32_t>(moe.integer("layers", 1, 100000, {}));
        moe.finish();
    }
    j.gradient_buckets = static_cast<std::int32_t>(s.integer("gradient_buckets", 1, 4096, j.gradient_buckets));
    j.sync = s.choice("sync", {"every_step", "local_steps"}, "every_step") == "local_steps" ? workloads::SyncMode::local_steps
                                                                                         : workloads::SyncMode::every_step;
    j.local_steps = static_cast<std::int32_t>(s.integer("local_steps", 1, 100000, 1));
    auto& o = w.options;
    o.all_reduce = workloads::parse_algorithm(
        s.choice("all_reduce", {"ring", "double_binary_tree", "halving_doubling", "hierarchical_ring"}, "ring"));
    const std::string placement = s.choice("placement", {"topology_aware", "random", "identity"}, "topology_aware");
    o.placement = placement == "random" ? workloads::PlacementPolicy::random
                : placement == "identity" ? workloads::PlacementPolicy::identity
                                          : workloads::PlacementPolicy::topology_aware;
    // ucmp: weighted multipath, a transfer split over edge-disjoint shortest paths in proportion to
    // their capacity (eBGP UCMP); 4 paths unless paths_per_transfer says otherwise.
    const std::string routing = s.choice("routing", {"shortest_latency", "widest", "ucmp"}, "shortest_latency");
    o.flow.routing = routing == "widest" ? workloads::RoutingPolicy::widest : workloads::RoutingPolicy::shortest_latency;
    if (routing == "ucmp") o.flow.split = workloads::MultipathSplit::capacity;
    o.flow.paths_per_transfer = static_cast<std::int32_t>(s.integer("paths_per_transfer", 1, 16, routing == "ucmp" ? 4 : 1));
    o.flow.per_message_overhead_s = 1e-6 * s.number("per_message_overhead_us", 0.0, 1e7, 0.0, "us");
    o.seed = seed;
    if (s.has("stragglers")) {  // docs/scenario-reference.md "workload.stragglers"
        Section st = s.section("stragglers");
        o.stragglers.probability = st.number("probability", 0.0, 1.0, 0.0);
        o.stragglers.slowdown = st.number("slowdown", 1.0, 1000.0, 2.0);
        st.finish();
        o.stragglers.seed = physics::rng::derive_seed(seed, 0x5354524147ull);  // "STRAG"
    }
    w.backend = workloads::parse_backend(s.choice("backend", {"auto", "cpu", "cuda"}, "auto"));
    if (s.has("on_rank_loss")) {
        const std::string loss = s.choice("on_rank_loss", {"wait", "shrink", "spare"}, "wait");
        w.on_rank_loss = loss == "shrink" ? workloads::RankLossPolicy::shrink
                       : loss == "spare"  ? workloads::RankLossPolicy::spare
                                          : workloads::RankLossPolicy::wait;
    }
    w.power_policy = read_power_policy(s);
    s.finish();
    return w;
}

PowerConfig read_power(Section s, bool present, int chips_per_satellite) {
    PowerConfig c;
    c.enabled = s.boolean("enabled", present);
    s.choice("preset", {"suncatcher_class"}, "suncatcher_class");
    auto& p = c.parameters;
    auto& a = p.array;
    a.area_m2 = s.number("array_area_m2", 0.0, 1e4, a.area_m2, "m^2");
    a.efficiency = s.number("array_efficiency", 0.0, 1.0, a.efficiency);
    a.degradation_per_year = s.number("array_degradation_per_year", 0.0, 0.5, a.degradation_per_year);
    a.years_in_orbit = s.number("array_years_in_orbit", 0.0, 50.0, a.years_in_orbit, "years");
    a.attitude = s.choice("array_attitude", {"sun_pointing", "orbit_normal"}, "sun_pointing") == "orbit_normal"
                     ? physics::ArrayAttitude::orbit_normal
                     : physics::ArrayAttitude::sun_pointing;
    auto& b = p.battery;
    b.capacity_wh = s.number("battery_capacity_wh", 0.0, 1e7, b.capacity_wh, "Wh");
    b.charge_efficiency = s.number("battery_charge_efficiency", 0.01, 1.0, b.charge_efficiency);
    b.discharge_efficiency = s.number("battery_discharge_efficiency", 0.01, 1.0, b.discharge_efficiency);
    b.min_state_of_charge = s.number("battery_min_state_of_charge", 0.0, 1.0, b.min_state_of_charge);
    b.initial_state_of_charge = s.number("battery_initial_state_of_charge", 0.0, 1.0, b.initial_state_of_charge);
    auto& l = p.loads;
    l.accelerators = chips_per_satellite;
    l.accelerator_w = s.number("accelerator_w", 0.0, 1e5, l.accelerator_w, "W");
    l.host_w = s.number("host_w", 0.0, 1e5, l.host_w, "W");
    l.terminal_w = s.number("terminal_w", 0.0, 1e4, l.terminal_w, "W");
    l.housekeeping_w = s.number("housekeeping_w", 0.0, 1e5, l.housekeeping_w, "W");
    auto& r = p.radiator;
    r.area_m2 = s.number("radiator_area_m2", 1e-3, 1e4, r.area_m2, "m^2");
    r.emissivity = s.number("radiator_emissivity", 0.01, 1.0, r.emissivity);
    r.sink_temperature_k = s.number("sink_temperature_k", 0.0, 400.0, r.sink_temperature_k, "K");
    r.heat_capacity_j_k = s.number("heat_capacity_j_per_k", 1.0, 1e9, r.heat_capacity_j_k, "J/K");
    r.max_temperature_k = s.number("max_temperature_k", 200.0, 500.0, r.max_temperature_k, "K");
    r.initial_temperature_k = s.number("initial_temperature_k", 100.0, 500.0, r.initial_temperature_k, "K");
    if (r.initial_temperature_k > r.max_temperature_k) {
        s.fail("initial_temperature_k", "must not exceed max_temperature_k (" + format_count(r.max_temperature_k) + " K)");
    }
    s.finish();
    return c;
}

RadiationConfig read_radiation(Section s, bool present, const physics::UtcEpoch& epoch) {
    RadiationConfig r;
    r.enabled = s.boolean("enabled", present);
    auto& e = r.environment;
    e.epoch_julian_date_days = physics::julian_date(epoch);
    e.shielding_mm_al = s.number("shielding_mm_al", 0.5, 100.0, e.shielding_mm_al, "mm");
    e.target_dose_rad_per_yr = s.number("dose_at_650km_rad_per_yr", 0.0, 1e6, e.target_dose_rad_per_yr, "rad(Si)/yr");
    Section saa = s.section("saa");
    e.saa_latitude_deg = saa.number("latitude_deg", -90.0, 90.0, e.saa_latitude_deg, "deg");
    e.saa_longitude_deg = saa.number("longitude_deg", -180.0, 180.0, e.saa_longitude_deg, "deg");
    e.saa_reference_year = saa.number("reference_year", 1950.0, 2200.0, e.saa_reference_year);
    e.saa_longitude_drift_deg_per_yr = saa.number("drift_deg_per_yr", -10.0, 10.0, e.saa_longitude_drift_deg_per_yr, "deg/yr");
    e.saa_sigma_latitude_deg = saa.number("sigma_latitude_deg", 0.1, 90.0, e.saa_sigma_latitude_deg, "deg");
    e.saa_sigma_longitude_deg = saa.number("sigma_longitude_deg", 0.1, 180.0, e.saa_sigma_longitude_deg, "deg");
    saa.finish();
    const auto events = s.sequence("solar_particle_events");
    for (std::size_t i = 0; i < events.size(); ++i) {
        Section ev = s.item(events[i], s.path() + ".solar_particle_events[" + std::to_string(i) + "]");
        physics::SolarParticleEvent spe;
        spe.start_s = ev.number("start_s", 0.0, 1e10, {}, "s");
        spe.duration_s = ev.number("duration_s", 1.0, 1e8, spe.duration_s, "s");
        spe.flux_factor = ev.number("flux_factor", 0.0, 1e8, spe.flux_factor);
        ev.finish();
        e.solar_particle_events.push_back(spe);
    }
    // Long-term solar-proton dose (ESP-PSYCHIC 95 %, behind the local geomagnetic cutoff), off by default.
    e.solar_protons = s.choice("solar_protons", {"off", "esp_psychic_95"}, "off") == "esp_psychic_95";
    const std::string device = s.choice("device", {"trillium_v6e"}, "trillium_v6e");
    r.faults.device = workloads::device_preset(device);
    // 0: the workload's chips per satellite (parallelism.tensor), else 1.
    r.faults.chips_per_satellite = static_cast<std::int32_t>(s.integer("chips_per_satellite", 0, 4096, 0));
    r.faults.sdc_detection_probability = s.number("sdc_detection_probability", 0.0, 1.0, r.faults.sdc_detection_probability);
    r.faults.link_outage_rate_per_s = s.number("link_outages_per_day", 0.0, 1e4, 0.0, "1/day") / physics::seconds_per_day;
    // A constellation's gateway terminals (one per gateway satellite), apart from the ISL terminals.
    r.faults.gateway_outage_rate_per_s = s.number("gateway_outages_per_day", 0.0, 1e4, 0.0, "1/day") / physics::seconds_per_day;
    r.faults.rate_scale = s.number("rate_scale", 0.0, 1e6, 1.0);
    r.recovery.link_outage_s = s.number("link_outage_s", 0.0, 1e7, r.recovery.link_outage_s, "s");
    r.threads = static_cast<std::int32_t>(s.integer("threads", 0, 1024, 0));
    auto& c = r.recovery;
    if (s.is_scalar("checkpoint_interval") && s.text("checkpoint_interval") == "auto") {
        c.checkpoint_interval_s = 0.0;
    } else {
        c.checkpoint_interval_s = s.number("checkpoint_interval", 1.0, 1e8, 0.0, "s (or auto)");
    }
    c.checkpoint_cost_s = s.number("checkpoint_cost_s", 0.0, 1e6, c.checkpoint_cost_s, "s");
    // Daly's interval sqrt(2 delta M) needs a cost; the run failed only after the simulation.
    if (c.checkpoint_interval_s <= 0.0 && c.checkpoint_cost_s <= 0.0) {
        s.fail("checkpoint_cost_s", "must be > 0 with checkpoint_interval: auto (Daly's interval needs a cost); "
                                    "for free checkpoints give checkpoint_interval in seconds");
    }
    c.restart_s = s.number("restart_s", 0.0, 1e6, c.restart_s, "s");
    c.reboot_s = s.number("reboot_s", 0.0, 1e7, c.reboot_s, "s");
    c.spare_satellites = static_cast<std::int32_t>(s.integer("spare_satellites", 0, max_satellites, 0));
    r.trials = static_cast<std::int32_t>(s.integer("trials", 1, 100000, 1));
    s.finish();
    return r;
}

// `topology:` as a spec string ("ring:p=64,bw_gbps=400,latency_ns=500") or a mapping
// with the same keys plus `kind`; `file:` paths are relative to the scenario's folder.
std::optional<workloads::FabricSpec> read_fabric(Section& top, const std::string& source_name) {
    if (!top.has("topology")) {
        top.allow("topology");
        return std::nullopt;
    }
    workloads::FabricSpec spec;
    try {
        if (top.is_scalar("topology")) {
            spec = workloads::parse_fabric_spec(top.text("topology"));
        } else {
            Section t = top.section("topology");
            spec.kind = workloads::parse_fabric_kind(
                t.choice("kind", {"ring", "switch", "torus2d", "fully_connected", "file"}));
            spec.p = static_cast<std::int32_t>(t.integer("p", 0, max_satellites, 0));
            spec.x = static_cast<std::int32_t>(t.integer("x", 0, 100000, 0));
            spec.y = static_cast<std::int32_t>(t.integer("y", 0, 100000, 0));
            spec.bandwidth_bps = 1e9 * t.number("bw_gbps", 1e-6, 1e7, spec.bandwidth_bps / 1e9, "Gbit/s");
            spec.latency_s = 1e-9 * t.number("latency_ns", 0.0, 1e12, spec.latency_s * 1e9, "ns");
            spec.file_path = t.text("file", "");
            t.finish();
        }
        // Refuse fabrics too large to build before building them (ranks and links).
        std::int64_t ranks = 0, fabric_links = 0;
        switch (spec.kind) {
            case workloads::FabricKind::ring: ranks = spec.p; fabric_links = spec.p; break;
            case workloads::FabricKind::switch_star: ranks = spec.p; fabric_links = spec.p; break;
            case workloads::FabricKind::fully_connected:
                ranks = spec.p;
                fabric_links = static_cast<std::int64_t>(spec.p) * (spec.p - 1) / 2;
                break;
            case workloads::FabricKind::torus2d:
                ranks = static_cast<std::int64_t>(spec.x) * spec.y;
                fabric_links = 2 * ranks;
                break;
            case workloads::FabricKind::edge_list: break;
        }
        if (ranks > max_satellites || fabric_links > max_fabric_links) {
            top.fail("topology", "a " + std::string(workloads::to_string(spec.kind)) + " fabric of " + std::to_string(ranks) +
                                     " ranks and " + std::to_string(fabric_links) + " links is too large; at most " +
                                     std::to_string(max_satellites) + " ranks and " + std::to_string(max_fabric_links) +
                                     " links are supported");
        }
        if (spec.kind == workloads::FabricKind::edge_list) {
            std::filesystem::path path = spec.file_path;
            if (path.is_relative()) path = std::filesystem::path(source_name).parent_path() / path;
            try {
                spec.csv_text = read_input_file(path, max_edge_list_bytes, "edge-list file");
            } catch (const ScenarioError& e) {
                top.fail("topology", e.what());
            }
            spec.csv_name = path.string();
            const auto edges = workloads::parse_edge_list_csv(spec.csv_text, spec.csv_name);
            if (edges.node_count > max_satellites || static_cast<std::int64_t>(edges.links.size()) > max_fabric_links) {
                top.fail("topology", spec.csv_name + ": " + std::to_string(edges.node_count) + " nodes and " +
                                         std::to_string(edges.links.size()) + " links; at most " +
                                         std::to_string(max_satellites) + " nodes and " +
                                         std::to_string(max_fabric_links) + " links are supported");
            }
        }
        (void)workloads::make_fabric(spec);  // validates counts and the CSV now, with a location
    } catch (const workloads::FabricSpecError& e) {
        top.fail("topology", e.what());
    }
    return spec;
}

OutputConfig read_output(Section s) {
    OutputConfig o;
    o.hdf5 = s.boolean("hdf5", true);
    o.eci = s.boolean("eci", true);
    o.vtk = s.boolean("vtk", false);
    o.vtk_every = static_cast<int>(s.integer("vtk_every", 1, 1000000, 1));
    o.vtk_frame = s.choice("vtk_frame", {"lvlh", "eci"}, "lvlh") == "eci" ? VtkFrame::eci : VtkFrame::lvlh;
    o.compression_level = static_cast<int>(s.integer("compression_level", 0, 9, 1));
    o.trace = s.boolean("trace", false);
    o.trace_max_events = s.integer("trace_max_events", 1, 100000000, o.trace_max_events);
    if (s.has("trace_window_s")) {
        const auto window = s.numbers("trace_window_s", 2, "s");
        if (window[0] < 0 || window[1] <= window[0]) s.fail("trace_window_s", "expected [start, end] with 0 <= start < end");
        o.trace_window_start_s = window[0];
        o.trace_window_end_s = window[1];
    } else {
        s.allow("trace_window_s");
    }
    s.finish();
    return o;
}

// Refused above max_output_bytes (uncompressed: estimate_run's output_bytes), naming what to change.
void check_output_volume(Section& top, const Scenario& sc, std::size_t satellites) {
    const RunEstimate e = estimate_run(sc, satellites);
    if (e.output_bytes <= max_output_bytes) return;
    const std::string what = format_count(e.samples) + " output steps x " + std::to_string(satellites) + " satellites";
    top.fail("output_step_s",
             "the outputs would take about " + format_count(e.output_bytes / 1e9) + " GB (" + what + "); at most " +
                 format_count(max_output_bytes / 1e9) +
                 " GB are allowed: raise output_step_s, shorten the run, set output.eci: false, output.vtk: false "
                 "(or a larger output.vtk_every), or output.hdf5: false");
}

// A run estimated over the unconfirmed limits is refused (LoadOptions::refuse_large_runs), naming the
// key that makes it large: the formation when it has more satellites than the run has samples, else
// the run's length.
void check_run_size(Section& top, const Scenario& sc, std::size_t satellites) {
    const RunEstimate e = estimate_run(sc, satellites);
    if (e.memory_bytes <= unconfirmed_run_max_memory_bytes && e.cpu_s <= unconfirmed_run_max_cpu_s) return;
    const std::string estimate = "this run is large: " + std::to_string(satellites) + (sc.fabric ? " ranks" : " satellites") +
                                 " x " + format_count(e.samples) + " output samples take " + describe(e) +
                                 " (estimates). Runs over " + format_count(unconfirmed_run_max_memory_bytes / 1e9) +
                                 " GB of memory or " + format_count(unconfirmed_run_max_cpu_s / 3600.0) +
                                 " CPU-hour start only with --yes";
    if (sc.fabric) top.fail("topology", estimate + " (or use fewer ranks, or shorten the run)");
    if (static_cast<double>(satellites) > e.samples) {
        Section formation = top.section("formation");
        const bool lattice = sc.formation.layout != FormationLayout::explicit_states;
        formation.fail(lattice ? "radius_m" : "satellites",
                       estimate + (lattice ? " (or lower radius_m)" : " (or list fewer satellites)"));
    }
    top.fail(top.has("duration_s") ? "duration_s" : "duration_orbits",
             estimate + " (or shorten the run, or raise output_step_s)");
}

}  // namespace

Override parse_override(const std::string& argument) {
    const auto eq = argument.find('=');
    static const std::regex path_pattern(R"([A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*)");
    if (eq == std::string::npos || eq == 0 || !std::regex_match(argument.substr(0, eq), path_pattern)) {
        throw ScenarioError("--set " + argument + ": expected key.path=value, e.g. --set orbit.altitude_km=550");
    }
    return {argument.substr(0, eq), argument.substr(eq + 1)};
}

std::vector<Override> overrides_replacing_orbit(const std::string& yaml_text, const std::string& source_name,
                                                std::vector<std::string>& ignored) {
    check_document(yaml_text, source_name);
    YAML::Node loaded;
    try {
        loaded = YAML::Load(yaml_text);
    } catch (const YAML::Exception&) {
        return {};
    }
    const YAML::Node& root = loaded;
    if (!root.IsMap()) return {};
    std::vector<Override> out;
    auto drop = [&](const std::string& path) {
        out.push_back({path, "", true});
        ignored.push_back(path);
    };
    for (const char* key : {"orbit", "formation", "dynamics", "station_keeping", "metrics", "links", "radiation", "power"})
        if (root[key]) drop(key);
    if (root["duration_orbits"]) {
        out.push_back({"duration_s", "0"});
        ignored.push_back("duration_orbits");
    }
    // A missing key reads as an invalid node, which only operator bool may be asked.
    const auto map_at = [](const YAML::Node& node, const char* key) {
        return node && node.IsMap() && node[key] && node[key].IsMap() ? node[key] : YAML::Node();
    };
    if (map_at(map_at(root, "workload"), "parallelism")["data"]) drop("workload.parallelism.data");
    return out;
}

namespace {

void remove_key(YAML::Node root, const std::vector<std::string>& keys) {
    YAML::Node node = root;
    for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
        const YAML::Node& at = node;
        if (!at.IsMap() || !at[keys[i]]) return;
        node.reset(at[keys[i]]);
    }
    if (node.IsMap()) node.remove(keys.back());
}

void apply_override(YAML::Node root, const Override& o) {
    std::vector<std::string> keys;
    std::stringstream parts(o.path);
    for (std::string k; std::getline(parts, k, '.');) keys.push_back(k);
    if (o.remove) {
        remove_key(root, keys);
        return;
    }
    check_utf8(o.value, "--set " + o.path);
    check_document(o.value, "--set " + o.path);
    YAML::Node value;
    try {
        value = YAML::Load(o.value);
    } catch (const YAML::Exception& e) {
        throw ScenarioError("--set " + o.path + ": cannot parse value '" + o.value + "': " + e.msg);
    }
    YAML::Node node = root;
    for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
        YAML::Node child = node[keys[i]];
        if (child.IsDefined() && !child.IsNull() && !child.IsMap()) {
            throw ScenarioError("--set " + o.path + ": '" + keys[i] + "' is a value, not a section");
        }
        if (!child.IsDefined() || child.IsNull()) {
            node[keys[i]] = YAML::Node(YAML::NodeType::Map);
        }
        node.reset(node[keys[i]]);  // reset() re-points; operator= would overwrite the parent's content
    }
    node[keys.back()] = value;
    // Keys that replace each other: overriding one removes the file's other, so
    // `--set duration_s=86400` works on a file that says duration_orbits.
    static const std::vector<std::pair<std::string, std::string>> alternatives = {
        {"duration_s", "duration_orbits"},
        {"orbit.altitude_km", "orbit.semi_major_axis_km"},
        {"orbit.ltan_h", "orbit.raan_deg"},
    };
    for (const auto& [a, b] : alternatives) {
        const std::string* other = o.path == a ? &b : o.path == b ? &a : nullptr;
        if (!other) continue;
        const auto dot = other->rfind('.');
        YAML::Node parent = root;
        if (dot != std::string::npos) parent.reset(root[other->substr(0, dot)]);
        if (parent.IsMap()) parent.remove(dot == std::string::npos ? *other : other->substr(dot + 1));
    }
}

}  // namespace

namespace {

// The name is the default output folder (out/<name>) and a file name in sweeps: it
// must be one plain path component, so that no name can write outside out/.
void check_name(Section& top, const std::string& name) {
    if (name.size() > 128) top.fail("name", "must be at most 128 characters (it names the output folder out/<name>)");
    for (const char c : name) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '/' || c == '\\' || u < 0x20 || u == 0x7f) {
            top.fail("name", "must not contain '/', '\\' or control characters: it names the output folder out/<name>");
        }
    }
    if (name == "." || name == ".." || name.front() == '.' || name.front() == '-') {
        top.fail("name", "must not start with '.' or '-': it names the output folder out/<name>");
    }
}

// Where a satellite's initial state is refused: its explicit entry, else the lattice's radius.
[[noreturn]] void fail_satellite(Section& top, const Scenario& sc, std::size_t i, const std::string& message) {
    Section formation = top.section("formation");
    if (sc.formation.layout == FormationLayout::explicit_states) {
        const auto items = formation.sequence("satellites");
        Section sat = formation.item(items.at(i), formation.path() + ".satellites[" + std::to_string(i) + "]");
        sat.fail(sat.has("velocity_m_s") ? "velocity_m_s" : "position_m", message);
    }
    formation.fail("radius_m", "satellite " + std::to_string(i) + ": " + message);
}

// Every satellite's own orbit must be bound, stay above 100 km and within the largest orbit a
// scenario may give: an escaping or re-entering satellite is not a formation, and its dose (hence
// its fault events) would grow without bound. Returns the highest apogee altitude, m.
// What a constellation run supports, and what its algorithms need of the clusters.
void check_constellation(Section& top, const Scenario& sc, const std::vector<std::size_t>& sizes) {
    Section c = top.section("constellation");
    const auto& con = sc.constellation;
    if (sc.fabric) c.fail("clusters", "a constellation needs an orbit; a synthetic topology has none");
    if (!sc.links.enabled) c.fail("clusters", "a constellation needs a links section (the clusters' own fabrics)");
    if (sc.radiation.enabled) {
        Section radiation = top.section("radiation");
        if (sc.radiation.recovery.spare_satellites > 0)
            radiation.fail("spare_satellites", "hot spares in a constellation are not modelled yet (which cluster a spare "
                                               "serves, and how it joins that cluster's ring): give 0");
        const bool hierarchical = std::find(con.algorithms.begin(), con.algorithms.end(),
                                            workloads::ClusterAlgorithm::hierarchical) != con.algorithms.end();
        if (hierarchical && sc.workload.on_rank_loss == workloads::RankLossPolicy::shrink)
            top.section("workload").fail("on_rank_loss", "shrink with the hierarchical algorithm across clusters would leave "
                                                         "clusters of unequal size, which its all-reduce cannot split: use wait, "
                                                         "or drop hierarchical from constellation.algorithms");
    }
    const auto smallest = *std::min_element(sizes.begin(), sizes.end());
    if (static_cast<std::size_t>(con.gateways.gateways_per_cluster) > smallest) {
        Section g = c.section("gateways");
        g.fail("per_cluster", "a cluster has only " + std::to_string(smallest) + " satellites");
    }
    const bool equal = std::all_of(sizes.begin(), sizes.end(), [&](std::size_t n) { return n == sizes.front(); });
    for (auto a : con.algorithms)
        if (a != workloads::ClusterAlgorithm::ring && !equal)
            c.fail("algorithms", std::string(workloads::to_string(a)) + " needs clusters of equal size (give every cluster the same radius_m)");
    if (sc.workload.enabled) {
        const std::size_t all = std::accumulate(sizes.begin(), sizes.end(), std::size_t{0});
        if (sc.workload.job.data_parallel != 0 && static_cast<std::size_t>(sc.workload.job.data_parallel) != all) {
            Section parallelism = top.section("workload").section("parallelism");
            parallelism.fail("data", "a constellation trains on every satellite: give 0 (all " + std::to_string(all) + ")");
        }
        if (sc.workload.job.moe.layers > 0) top.section("workload").fail("moe", "is not supported with a constellation yet");
    }
}

double check_satellite_orbits(Section& top, const Scenario& sc, const std::vector<physics::RelativeState>& states) {
    const physics::CartesianState chief = initial_chief_state(sc);
    if (!chief.position_m.allFinite() || !chief.velocity_m_s.allFinite()) {
        Section orbit = top.section("orbit");
        orbit.fail(orbit.has("inclination_deg") ? "inclination_deg" : "eccentricity",
                   "the chief's initial state is not finite: the first-order mean-to-osculating map (Brouwer-Lyddane) "
                   "is singular at exactly 0 or 180 deg with e = 0 and at the critical inclination 63.43 deg; "
                   "move the inclination a little off it (or set dynamics.j2: false)");
    }
    const double mu = physics::earth_mu_m3_s2;
    const double min_radius_m = physics::earth_equatorial_radius_m + min_perigee_altitude_m;
    double max_apogee_m = 0.0;
    for (std::size_t i = 0; i < states.size(); ++i) {
        const physics::CartesianState x = physics::lvlh_to_eci(chief, states[i]);
        if (!x.position_m.allFinite() || !x.velocity_m_s.allFinite()) {
            top.section("formation").fail("relative_orbits",
                                          "satellite " + std::to_string(i) + "'s initial state is not finite: this relative-orbit "
                                          "set-up is singular for this chief orbit (inclination exactly 0 or 180 deg, or the critical 63.43 deg); "
                                          "try relative_orbits: hcw or an inclination off 0 and 180 deg");
        }
        const double r = x.position_m.norm();
        const double energy = 0.5 * x.velocity_m_s.squaredNorm() - mu / r;
        if (!(energy < 0.0)) {
            fail_satellite(top, sc, i, "this satellite escapes Earth's gravity (" + format_count(x.velocity_m_s.norm()) +
                                           " m/s at " + format_count(r / 1e3) + " km from the centre): it is no formation");
        }
        const double a = -mu / (2.0 * energy);
        const double h = x.position_m.cross(x.velocity_m_s).norm();
        const double e = std::sqrt(std::max(0.0, 1.0 - h * h / (mu * a)));
        if (a * (1.0 - e) < min_radius_m) {
            fail_satellite(top, sc, i, "this satellite's orbit has its perigee " +
                                           format_count((a * (1.0 - e) - physics::earth_equatorial_radius_m) / 1e3) +
                                           " km above the equator, below 100 km: it re-enters");
        }
        if (a * (1.0 + e) > max_apogee_radius_m) {
            fail_satellite(top, sc, i, "this satellite's orbit reaches " + format_count(a * (1.0 + e) / 1e3) +
                                           " km from the centre; it leaves the formation");
        }
        max_apogee_m = std::max(max_apogee_m, a * (1.0 + e) - physics::earth_equatorial_radius_m);
    }
    return max_apogee_m;
}

// The radiation model is calibrated before the run, and the fault events it implies are
// estimated from the orbit-average dose rate at the highest apogee (the trapped-proton term
// grows exponentially with altitude: a(h) = exp((h - 650 km) / 109 km), 2e17 at 5,000 km):
// what would not fit in memory is refused here, naming the key to change.
void check_radiation(Section& top, const Scenario& sc, std::size_t satellites, double max_apogee_altitude_m) {
    Section radiation = top.section("radiation");
    // The dose-rate history is kept in memory for the fault draw (and copied satellite-major
    // there), whatever the outputs: 16 bytes per output step and satellite.
    const double series_bytes = 16.0 * (std::floor(sc.duration_s / sc.output_step_s) + 1.0) * static_cast<double>(satellites);
    if (series_bytes > max_dose_series_bytes) {
        top.fail("output_step_s", "with radiation the dose-rate history takes about " + format_count(series_bytes / 1e9) +
                                      " GB of memory (16 bytes per output step and satellite); at most " +
                                      format_count(max_dose_series_bytes / 1e9) +
                                      " GB are allowed: raise output_step_s or shorten the run");
    }
    const auto& env = sc.radiation.environment;
    std::optional<physics::RadiationModel> model;
    try {
        model.emplace(physics::make_radiation_model(env));
    } catch (const std::invalid_argument&) {
        const double year = physics::decimal_year(env.epoch_julian_date_days, 0.0);
        const auto ref = physics::orbit_average_shapes(env, env.reference_orbit_altitude_m, env.reference_orbit_inclination_rad, year,
                                                       env.calibration_samples_along_orbit, env.calibration_node_longitudes);
        radiation.fail("dose_at_650km_rad_per_yr",
                       "must exceed the cosmic-ray background's share of the reference orbit's dose, " +
                           format_count(env.gcr_polar_dose_rate_rad_per_yr * ref.gcr_shape) +
                           " rad(Si)/yr (the rest is the trapped protons the model is calibrated to)");
    }
    double rate_rad_s = physics::orbit_average_dose_rate_rad_s(*model, max_apogee_altitude_m, sc.orbit.inclination_rad);
    for (const auto& spe : env.solar_particle_events) {
        const double overlap = std::max(0.0, std::min(sc.duration_s, spe.start_s + spe.duration_s) - std::max(0.0, spe.start_s));
        if (sc.duration_s > 0.0) {
            rate_rad_s += (spe.flux_factor - 1.0) * model->gcr_polar_dose_rate_rad_s * model->shielding_factor * overlap / sc.duration_s;
        }
    }
    double per_satellite_s = 0.0;
    for (const double x : workloads::fault_rates_per_s(rate_rad_s, sc.radiation.faults)) per_satellite_s += x;
    const double per_trial = per_satellite_s * static_cast<double>(satellites) * sc.duration_s;
    const double batch = std::min<double>(sc.radiation.trials, workloads::monte_carlo_batch_trials);
    if (std::isfinite(per_trial) && per_trial * batch <= workloads::max_fault_events_in_memory) return;
    const std::string estimate = "about " + format_count(per_trial) + " fault events per trial (" +
                                 format_count(rate_rad_s * physics::seconds_per_year_radiation) + " rad(Si)/yr at " +
                                 std::to_string(std::lround(max_apogee_altitude_m / 1e3)) + " km, " + std::to_string(satellites) +
                                 " satellites, " + format_count(sc.duration_s / physics::seconds_per_day) + " days)";
    const std::string limit = "; at most " + format_count(workloads::max_fault_events_in_memory) + " are held at once";
    if (std::isfinite(per_trial) && per_trial <= workloads::max_fault_events_in_memory) {
        radiation.fail("trials", estimate + " x " + format_count(batch) + " trials drawn together" + limit +
                                     ": lower radiation.trials to at most " +
                                     format_count(std::floor(workloads::max_fault_events_in_memory / std::max(1.0, per_trial))));
    }
    // The dose rate itself is out of bounds far from the reference orbit; else the run is too long.
    if (!(rate_rad_s * physics::seconds_per_year_radiation <= 1e3 * env.target_dose_rad_per_yr)) {
        Section orbit = top.section("orbit");
        orbit.fail(orbit.has("semi_major_axis_km") ? "semi_major_axis_km" : "altitude_km",
                   "with radiation, " + estimate + limit +
                       ": the trapped-proton model scales exponentially from 650 km and is meant for low Earth orbit; "
                       "lower the orbit or set radiation.enabled: false");
    }
    top.fail(top.has("duration_s") ? "duration_s" : "duration_orbits",
             "with radiation, " + estimate + limit + ": shorten the run or set radiation.enabled: false");
}

// Constraints between sections, checked once every section has been read.
void check_across_sections(Section& top, Scenario& sc, const LoadOptions& options) {
    // Ranks of the fabric, or satellites of the formation (set up once here).
    std::vector<physics::RelativeState> states;
    if (!sc.fabric) states = initial_formation(sc);
    const std::vector<std::size_t> sizes = sc.constellation.enabled ? cluster_sizes(sc) : std::vector<std::size_t>{};
    const std::size_t satellites = sc.fabric                  ? node_count(sc)
                                   : sc.constellation.enabled ? std::accumulate(sizes.begin(), sizes.end(), std::size_t{0})
                                                              : states.size();
    if (satellites > static_cast<std::size_t>(max_satellites)) {
        top.fail(sc.constellation.enabled ? "constellation" : "formation",
                 (sc.constellation.enabled ? "the constellation has " : "the formation has ") + std::to_string(satellites) +
                     " satellites; at most " + std::to_string(max_satellites) + " are supported");
    }
    if (sc.constellation.enabled) check_constellation(top, sc, sizes);
    if (sc.workload.enabled) {
        Section workload = top.section("workload");
        if (!sc.fabric && !sc.links.enabled) workload.fail("enabled", "a training workload needs links: add a links section");
        if (sc.workload.job.data_parallel == 0) sc.workload.job.data_parallel = static_cast<std::int32_t>(satellites);
        if (static_cast<std::size_t>(sc.workload.job.data_parallel) > satellites) {
            Section parallelism = workload.section("parallelism");
            parallelism.fail("data", "data-parallel ranks (" + std::to_string(sc.workload.job.data_parallel) +
                                         ") exceed the satellite count " + std::to_string(satellites));
        }
        if (sc.workload.job.data_parallel < 2) {
            Section parallelism = workload.section("parallelism");
            parallelism.fail("data", "needs at least 2 data-parallel ranks");
        }
        const auto& job = sc.workload.job;
        if (job.moe.expert_parallel > 1 && job.moe.layers == 0) {
            Section parallelism = workload.section("parallelism");
            parallelism.fail("expert", "expert parallelism needs a workload.moe section (a mixture-of-experts model)");
        }
        if (job.data_parallel % job.moe.expert_parallel != 0) {
            Section parallelism = workload.section("parallelism");
            parallelism.fail("expert", "expert groups of " + std::to_string(job.moe.expert_parallel) + " ranks must divide the " +
                                           std::to_string(job.data_parallel) + " data-parallel ranks");
        }
    }
    if (sc.inference.enabled) {
        Section workload = top.section("workload");
        if (!sc.fabric && !sc.links.enabled) workload.fail("kind", "a serving workload needs links: add a links section");
        if (!(sc.duration_s > 0.0))
            top.fail(top.has("duration_s") ? "duration_s" : "duration_orbits", "a serving workload needs a run of positive duration");
        // Serving plays the nominal trial's crashes (docs/inference.md "Faults and power"): no Monte Carlo, no spares.
        if (sc.radiation.enabled) {
            Section radiation = top.section("radiation");
            if (sc.radiation.trials > 1)
                radiation.fail("trials", "a serving workload plays one trial of the faults (the run's own); set trials: 1");
            if (sc.radiation.recovery.spare_satellites > 0)
                radiation.fail("spare_satellites", "hot spares are a training job's; a serving workload's instances are its satellites");
        }
        const auto& e = sc.inference.serving.engines;
        const std::int64_t needed = static_cast<std::int64_t>(e.prefill.instances) * e.prefill.satellites_per_instance +
                                    static_cast<std::int64_t>(e.decode.instances) * e.decode.satellites_per_instance;
        if (inference_nodes(sc).empty()) {
            Section engines = workload.section("inference").section("engines");
            engines.fail("prefill", "the instances need " + std::to_string(needed) + " satellites" +
                                        (sc.constellation.enabled ? " (dedicated prefill instances in cluster 0, the others in the last cluster, "
                                                                    "of " + std::to_string(sizes.front()) + " and " + std::to_string(sizes.back()) + ")"
                                                                  : "; there are " + std::to_string(satellites)));
        }
    }
    if (sc.workload.enabled) {
        // Every step computes for at least the job's compute time: an upper bound on the steps.
        const double compute_s = workloads::compute_time_per_step_s(sc.workload.job, sc.workload.accelerator);
        const double steps = compute_s > 0.0 ? sc.duration_s / compute_s : std::numeric_limits<double>::infinity();
        if (!(steps <= max_training_steps)) {
            const std::string what = "the training job computes " + format_count(compute_s) + " s per step, so the run could take up to " +
                                     format_count(steps) + " steps; at most " + format_count(max_training_steps) + " are simulated";
            Section workload = top.section("workload");
            if (compute_s < 1e-3) {
                workload.fail("model_parameters", what + ": raise model_parameters or tokens_per_step, or shorten the run");
            }
            top.fail(top.has("duration_s") ? "duration_s" : "duration_orbits", what + ": shorten the run");
        }
    }
    if (sc.radiation.enabled) {
        Section radiation = top.section("radiation");
        if (sc.fabric) radiation.fail("enabled", "radiation needs an orbit; a synthetic topology has none");
        if (static_cast<std::size_t>(sc.radiation.recovery.spare_satellites) >= satellites) {
            radiation.fail("spare_satellites", "must leave at least one working satellite of " + std::to_string(satellites));
        }
        // The rank-loss policy: given, or spare when there are spares, else wait.
        auto& recovery = sc.radiation.recovery;
        if (sc.workload.on_rank_loss) {
            recovery.on_rank_loss = *sc.workload.on_rank_loss;
            if (recovery.on_rank_loss == workloads::RankLossPolicy::spare && recovery.spare_satellites == 0) {
                Section workload = top.section("workload");
                workload.fail("on_rank_loss", "spare needs radiation.spare_satellites >= 1 (none are kept in reserve)");
            }
        } else {
            recovery.on_rank_loss = recovery.spare_satellites > 0 ? workloads::RankLossPolicy::spare
                                                                  : workloads::RankLossPolicy::wait;
        }
        if (!sc.constellation.enabled && sc.radiation.faults.gateway_outage_rate_per_s > 0.0)
            radiation.fail("gateway_outages_per_day", "needs a constellation: a single formation has no gateway terminals");
        auto& chips = sc.radiation.faults.chips_per_satellite;
        if (chips == 0) chips = sc.workload.enabled     ? sc.workload.job.tensor_parallel
                              : sc.inference.enabled ? sc.inference.serving.engines.chips_per_satellite
                                                     : 1;
    }
    double max_apogee_altitude_m = 0.0;
    if (!sc.fabric && satellites <= static_cast<std::size_t>(max_satellites)) {
        max_apogee_altitude_m = check_satellite_orbits(top, sc, states);
        for (std::size_t k = 1; k < cluster_count(sc); ++k) {
            const Scenario cluster = cluster_scenario(sc, k);
            max_apogee_altitude_m = std::max(max_apogee_altitude_m, check_satellite_orbits(top, cluster, initial_formation(cluster)));
        }
    }
    if (sc.radiation.enabled) check_radiation(top, sc, satellites, max_apogee_altitude_m);
    if (static_cast<std::size_t>(sc.metrics.reference_satellite) >= satellites) {
        Section metrics = top.section("metrics");
        metrics.fail("reference_satellite", "must be below the satellite count " + std::to_string(satellites));
    }
    check_output_volume(top, sc, satellites);
    if (options.refuse_large_runs) check_run_size(top, sc, satellites);
}

}  // namespace

Scenario load_scenario_text(const std::string& yaml_text, const std::string& source_name,
                            const std::vector<Override>& overrides, const LoadOptions& options) {
    SourceInfo source{source_name, {}};
    check_document(yaml_text, source_name);
    YAML::Node root;
    try {
        root = YAML::Load(yaml_text);
    } catch (const YAML::ParserException& e) {
        throw ScenarioError(source_name + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                            ": YAML syntax error: " + e.msg);
    } catch (const YAML::Exception& e) {
        const int line = e.mark.is_null() ? 0 : e.mark.line, column = e.mark.is_null() ? 0 : e.mark.column;
        throw ScenarioError(source_name + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1) +
                            ": cannot read YAML: " + e.msg);
    }
    if (!root.IsDefined() || root.IsNull()) throw ScenarioError(source_name + ":1:1: the scenario is empty; expected a mapping with name, orbit and formation");
    if (!root.IsMap()) throw ScenarioError(location(root, "(top level)", source) + "expected a mapping of keys to values at the top level");

    for (const auto& o : overrides) {
        apply_override(root, o);
        source.overridden_paths.insert(o.path);
    }

    Scenario sc;
    sc.source_file = source_name;
    if (overrides.empty()) {
        sc.yaml_text = yaml_text;
    } else {
        YAML::Emitter out;
        out << root;
        sc.yaml_text = std::string("# ") + source_name + " with --set overrides applied\n" + out.c_str() + "\n";
    }

    Section top(root, "", &source);
    sc.name = top.text("name");
    if (sc.name.empty()) top.fail("name", "must not be empty");
    check_name(top, sc.name);
    sc.seed = static_cast<std::uint64_t>(top.integer("seed", 0, std::numeric_limits<std::int64_t>::max(), 42));
    sc.fabric = read_fabric(top, source_name);
    const bool orbital = !sc.fabric;
    if (orbital || top.has("orbit")) sc.orbit = read_orbit(top.section("orbit", true));
    else top.allow("orbit");
    // Before the duration: one orbit (duration_orbits) is the nodal period under the dynamics' J2.
    sc.dynamics = read_dynamics(top.section("dynamics"), sc.seed);

    top.refuse_empty("duration_s", "a number of seconds");
    top.refuse_empty("duration_orbits", "a number of orbits");
    if (!orbital && !top.has("orbit") && top.has("duration_orbits")) {
        top.fail("duration_orbits", "needs an orbit; with a synthetic topology give duration_s");
    }
    if (top.has("duration_s") == top.has("duration_orbits")) {
        top.fail(top.has("duration_s") ? "duration_orbits" : "duration_s", "give exactly one of duration_s or duration_orbits");
    }
    if (top.has("duration_s")) {
        sc.duration_s = top.number("duration_s", 0.0, 10.0 * physics::seconds_per_julian_year, {}, "s");
        top.allow("duration_orbits");
    } else {
        sc.duration_s = orbit_period_s(sc) * top.number("duration_orbits", 0.0, 100000.0, {}, "orbits");
        top.allow("duration_s");
        if (sc.duration_s > 10.0 * physics::seconds_per_julian_year) {
            top.fail("duration_orbits", "gives " + format_count(sc.duration_s / physics::seconds_per_julian_year) +
                                            " years; at most 10 years are allowed");
        }
    }
    sc.output_step_s = top.number("output_step_s", 1e-3, 1e7, 10.0, "s");
    if (sc.duration_s / sc.output_step_s > max_output_steps) {
        top.fail("output_step_s", "duration / output_step_s gives " + std::to_string(static_cast<long long>(sc.duration_s / sc.output_step_s)) +
                                      " output steps; at most " + std::to_string(static_cast<long long>(max_output_steps)) +
                                      " are allowed (raise output_step_s or shorten the run)");
    }

    if (orbital || top.has("formation")) sc.formation = read_formation(top.section("formation", true));
    else top.allow("formation");
    sc.station_keeping = read_station_keeping(top.section("station_keeping"));
    sc.metrics = read_metrics(top.section("metrics"));
    sc.links = read_links(top.section("links"), top.has("links"));
    sc.constellation = read_constellation(top.section("constellation"), top.has("constellation"));
    if (top.section("workload").choice("kind", {"training", "inference"}, "training") == "inference")
        sc.inference = read_inference(top.section("workload"), source_name, sc.seed);
    else
        sc.workload = read_workload(top.section("workload"), top.has("workload"), sc.seed);
    sc.radiation = read_radiation(top.section("radiation"), top.has("radiation"), sc.orbit.epoch);
    sc.power = read_power(top.section("power"), top.has("power"),
                          sc.inference.enabled ? sc.inference.serving.engines.chips_per_satellite : sc.workload.job.tensor_parallel);
    if (sc.power.enabled && sc.fabric) top.fail("power", "needs an orbit; a synthetic topology has no Sun");
    sc.output = read_output(top.section("output"));
    top.allow("sweep");
    top.finish();

    check_across_sections(top, sc, options);
    return sc;
}

}  // namespace skyfabric::scenario

namespace skyfabric::scenario {

std::string read_scenario_file(const std::filesystem::path& file) {
    return read_input_file(file, max_scenario_bytes, "scenario file");
}

Scenario load_scenario_file(const std::filesystem::path& file, const std::vector<Override>& overrides,
                            const LoadOptions& options) {
    return load_scenario_text(read_scenario_file(file), file.string(), overrides, options);
}

std::vector<std::int32_t> inference_nodes(const Scenario& sc) {
    const auto& v = sc.inference.serving;
    const auto& e = v.engines;
    const std::int64_t dedicated = static_cast<std::int64_t>(v.dedicated_prefill_instances) * e.prefill.satellites_per_instance;
    const std::int64_t all = static_cast<std::int64_t>(e.prefill.instances) * e.prefill.satellites_per_instance +
                             static_cast<std::int64_t>(e.decode.instances) * e.decode.satellites_per_instance;
    const auto sizes = cluster_sizes(sc);
    std::vector<std::int32_t> nodes;
    if (!sc.constellation.enabled || dedicated == 0) {
        if (all > static_cast<std::int64_t>(node_count(sc))) return {};
        for (std::int32_t i = 0; i < all; ++i) nodes.push_back(i);
        return nodes;
    }
    // Dedicated prefill instances from cluster 0's first satellite, every other instance from the last cluster's.
    const auto last_first = static_cast<std::int32_t>(std::accumulate(sizes.begin(), sizes.end() - 1, std::size_t{0}));
    if (dedicated > static_cast<std::int64_t>(sizes.front()) || all - dedicated > static_cast<std::int64_t>(sizes.back())) return {};
    for (std::int32_t i = 0; i < dedicated; ++i) nodes.push_back(i);
    for (std::int32_t i = 0; i < all - dedicated; ++i) nodes.push_back(last_first + i);
    return nodes;
}

std::string describe(const RunEstimate& e) {
    const auto bytes = [](double b) { return b >= 1e9 ? format_count(b / 1e9) + " GB" : format_count(b / 1e6) + " MB"; };
    const std::string cpu = e.cpu_s >= 3600.0 ? format_count(e.cpu_s / 3600.0) + " CPU-hours"
                          : e.cpu_s >= 60.0   ? format_count(e.cpu_s / 60.0) + " CPU-minutes"
                                              : format_count(e.cpu_s) + " CPU-seconds";
    return "about " + bytes(e.memory_bytes) + " of memory, " + cpu + " and " + bytes(e.output_bytes) +
           " of output before compression";
}

RunEstimate estimate_run(const Scenario& sc, std::size_t satellites) {
    RunEstimate e;
    e.satellites = satellites;
    e.samples = std::floor(sc.duration_s / sc.output_step_s) + 1.0;
    const double n = static_cast<double>(satellites);
    const double satellite_samples = n * e.samples;
    const bool orbital = !sc.fabric;
    // Measured with /usr/bin/time on suncatcher-81 at 973 and 3,853 satellites over one to three
    // orbits, parts switched off one at a time (2-core VM): 40 MB for the program, 6 kB per satellite
    // for the propagator and the output buffers, and per satellite-sample what is kept for the run's
    // end (the links' topology timeline, the training's records, the dose-rate history and, with a
    // workload, the fabric timeline the trials replay, which grows with the trials). The outputs stream
    // to disk. CPU per satellite-sample: state, metrics and output; link topology; training; trials.
    double bytes = 0.0, seconds = 0.0;
    if (orbital) seconds += 2.6e-6;
    if (orbital && sc.links.enabled) bytes += 36.0, seconds += 5.4e-6;
    if (sc.workload.enabled) bytes += 22.0, seconds += 7.3e-6;
    if (sc.radiation.enabled) {
        const double doublings = std::log2(static_cast<double>(std::max(1, sc.radiation.trials)));
        bytes += sc.workload.enabled ? 26.0 + 12.0 * doublings : 16.0;
        seconds += (1.2 + 0.6 * doublings) * 1e-6;
    }
    e.memory_bytes = 40e6 + (orbital ? 6e3 * n : 0.0) + satellite_samples * bytes;
    e.cpu_s = satellite_samples * seconds;
    // Outputs per satellite-sample: the HDF5 series (LVLH state, nearest neighbour, ECI state, model
    // error, radiation, links) and the VTK frames (ASCII/XML points, velocities and link lines).
    double per_satellite = 0.0;
    if (sc.output.hdf5 && orbital) {
        per_satellite += 48.0 + 8.0;
        if (sc.output.eci) per_satellite += 48.0;
        if (sc.dynamics.compare_to_nonlinear) per_satellite += 8.0;
        if (sc.radiation.enabled) per_satellite += 16.0;
        if (sc.links.enabled) per_satellite += 0.5 * sc.links.topology.terminals.terminals_per_satellite * 40.0;
    }
    const double vtk_frames = sc.output.vtk && orbital ? std::floor(e.samples / sc.output.vtk_every + 1.0) : 0.0;
    e.output_bytes = satellite_samples * per_satellite + vtk_frames * n * 200.0;
    return e;
}

physics::KeplerianElements chief_mean_elements(const Scenario& sc) {
    physics::KeplerianElements e;
    e.semi_major_axis_m = sc.orbit.semi_major_axis_m;
    e.eccentricity = sc.orbit.eccentricity;
    e.inclination_rad = sc.orbit.inclination_rad;
    e.raan_rad = sc.orbit.ltan_h ? physics::raan_for_ltan_rad(*sc.orbit.ltan_h, physics::julian_date(sc.orbit.epoch))
                                 : sc.orbit.raan_rad;
    e.arg_perigee_rad = sc.orbit.arg_perigee_rad;
    e.true_anomaly_rad = sc.orbit.arg_latitude_rad - sc.orbit.arg_perigee_rad;
    return e;
}

double dynamics_j2(const Scenario& sc) {
    return sc.dynamics.model == physics::RelativeMotionModel::nonlinear && sc.dynamics.j2 ? physics::earth_j2 : 0.0;
}

double orbit_period_s(const Scenario& sc) {
    return physics::nodal_period_s(sc.orbit.semi_major_axis_m, sc.orbit.eccentricity, sc.orbit.inclination_rad, dynamics_j2(sc));
}

RelativeOrbits resolved_relative_orbits(const Scenario& sc) {
    if (sc.formation.relative_orbits != RelativeOrbits::automatic) return sc.formation.relative_orbits;
    switch (sc.dynamics.model) {
        case physics::RelativeMotionModel::nonlinear: return RelativeOrbits::j2_mean_elements;
        case physics::RelativeMotionModel::schweighart_sedwick: return RelativeOrbits::schweighart_sedwick;
        case physics::RelativeMotionModel::hcw:
        case physics::RelativeMotionModel::hcw_ode: return RelativeOrbits::hcw;
    }
    return RelativeOrbits::hcw;
}

const char* to_string(RelativeOrbits relative_orbits) {
    switch (relative_orbits) {
        case RelativeOrbits::automatic: return "auto";
        case RelativeOrbits::j2_mean_elements: return "j2_mean_elements";
        case RelativeOrbits::hcw: return "hcw";
        case RelativeOrbits::schweighart_sedwick: return "schweighart_sedwick";
    }
    return "unknown";
}

const char* to_string(physics::PowerPolicy policy) {
    switch (policy) {
        case physics::PowerPolicy::ignore: return "ignore";
        case physics::PowerPolicy::throttle: return "throttle";
        case physics::PowerPolicy::pause: return "pause";
    }
    return "unknown";
}

physics::CartesianState initial_chief_state(const Scenario& sc) {
    return physics::keplerian_to_cartesian(physics::mean_to_osculating(chief_mean_elements(sc), dynamics_j2(sc)),
                                           physics::earth_mu_m3_s2);
}

std::vector<physics::RelativeState> initial_formation(const Scenario& sc) {
    const double n = physics::mean_motion_rad_s(sc.orbit.semi_major_axis_m, physics::earth_mu_m3_s2);
    const RelativeOrbits design = resolved_relative_orbits(sc);
    physics::BoundedOrbitOptions options;
    options.out_of_plane_amplitude_m = sc.formation.out_of_plane_amplitude_m;
    options.j2_trim = design == RelativeOrbits::schweighart_sedwick;
    options.chief_semi_major_axis_m = sc.orbit.semi_major_axis_m;
    options.chief_inclination_rad = sc.orbit.inclination_rad;
    std::vector<physics::RelativeState> states;
    std::vector<bool> given;  // explicit states with a velocity are taken as they are
    switch (sc.formation.layout) {
        case FormationLayout::suncatcher_lattice:
            states = physics::suncatcher_lattice(sc.formation.radius_m, sc.formation.radial_pitch_m,
                                                 sc.formation.along_track_pitch_m, n, options);
            break;
        case FormationLayout::hexagonal:
            states = physics::hexagonal_lattice(sc.formation.radius_m, sc.formation.pitch_m, n, options);
            break;
        case FormationLayout::explicit_states:
            states = sc.formation.explicit_states;
            for (auto& s : states) {
                given.push_back(!s.velocity_m_s.hasNaN());
                if (!given.back()) s.velocity_m_s = physics::bounded_relative_velocity(s.position_m, n, options);
            }
            break;
    }
    if (design != RelativeOrbits::j2_mean_elements) return states;
    auto bounded = physics::j2_mean_element_formation(chief_mean_elements(sc), states, dynamics_j2(sc)).satellites_lvlh;
    for (std::size_t i = 0; i < given.size(); ++i) {
        if (given[i]) bounded[i] = states[i];
    }
    return bounded;
}

std::size_t cluster_count(const Scenario& sc) {
    return sc.constellation.enabled ? sc.constellation.clusters.size() : 1;
}

Scenario cluster_scenario(const Scenario& sc, std::size_t c) {
    Scenario out = sc;
    out.constellation = {};
    if (!sc.constellation.enabled) return out;
    const ClusterConfig& cluster = sc.constellation.clusters.at(c);
    // Along the orbit by arc length on the mean orbit; the node turned (LTAN with it when given).
    out.orbit.arg_latitude_rad += cluster.along_track_m / sc.orbit.semi_major_axis_m;
    out.orbit.raan_rad += cluster.raan_offset_rad;
    if (out.orbit.ltan_h) *out.orbit.ltan_h += cluster.raan_offset_rad * 12.0 / physics::pi;
    if (cluster.radius_m) out.formation.radius_m = *cluster.radius_m;
    // Each cluster's satellites draw their own drag coefficients.
    if (c > 0) out.dynamics.drag.seed = physics::rng::derive_seed(sc.dynamics.drag.seed, c);
    return out;
}

std::vector<std::size_t> cluster_sizes(const Scenario& sc) {
    // A cluster's count depends on its formation alone, not on its chief: set up each radius once.
    const std::size_t n0 = initial_formation(sc).size();
    std::vector<std::size_t> sizes;
    std::vector<std::pair<double, std::size_t>> by_radius;
    for (std::size_t c = 0; c < cluster_count(sc); ++c) {
        const auto& radius = sc.constellation.enabled ? sc.constellation.clusters[c].radius_m : std::optional<double>{};
        if (!radius || *radius == sc.formation.radius_m) {
            sizes.push_back(n0);
            continue;
        }
        auto it = std::find_if(by_radius.begin(), by_radius.end(), [&](const auto& e) { return e.first == *radius; });
        if (it == by_radius.end()) {
            by_radius.emplace_back(*radius, initial_formation(cluster_scenario(sc, c)).size());
            it = by_radius.end() - 1;
        }
        sizes.push_back(it->second);
    }
    return sizes;
}

std::size_t node_count(const Scenario& sc) {
    if (sc.fabric) return static_cast<std::size_t>(workloads::make_fabric(*sc.fabric).ranks);
    const auto sizes = cluster_sizes(sc);
    return std::accumulate(sizes.begin(), sizes.end(), std::size_t{0});
}

physics::PropagationSettings propagation_settings(const Scenario& sc) {
    physics::PropagationSettings p;
    p.model = sc.dynamics.model;
    p.j2 = sc.dynamics.j2;
    p.drag = sc.dynamics.drag;
    p.station_keeping = sc.station_keeping;
    p.relative_tolerance = sc.dynamics.relative_tolerance;
    p.absolute_tolerance = sc.dynamics.absolute_tolerance;
    p.epoch_julian_date = physics::julian_date(sc.orbit.epoch);
    p.threads = static_cast<unsigned>(sc.threads);
    return p;
}

std::int32_t monte_carlo_threads(const Scenario& sc) {
    const std::int32_t asked = sc.radiation.threads, cap = sc.threads;
    if (cap == 0) return asked;
    return asked == 0 ? cap : std::min(asked, cap);
}

std::string epoch_iso8601(const Scenario& sc) {
    const auto& e = sc.orbit.epoch;
    char text[48];
    const double whole = std::floor(e.second);
    std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d", e.year, e.month, e.day, e.hour, e.minute,
                  static_cast<int>(whole));
    std::string out = text;
    if (e.second > whole) {
        // Fractional seconds as given (microseconds at most), trailing zeros dropped.
        std::snprintf(text, sizeof text, "%.6f", e.second - whole);
        std::string fraction = text + 1;  // ".xxxxxx"
        while (fraction.back() == '0') fraction.pop_back();
        if (fraction != ".") out += fraction;
    }
    return out + "Z";
}

const char* to_string(physics::RelativeMotionModel model) {
    switch (model) {
        case physics::RelativeMotionModel::hcw: return "hcw";
        case physics::RelativeMotionModel::hcw_ode: return "hcw_ode";
        case physics::RelativeMotionModel::schweighart_sedwick: return "schweighart_sedwick";
        case physics::RelativeMotionModel::nonlinear: return "nonlinear";
    }
    return "unknown";
}

}  // namespace skyfabric::scenario
