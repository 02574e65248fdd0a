// orbit, formation, dynamics, station_keeping and metrics: each section's keys, defaults and checks.
#include "scenario/scenario.hpp"

#include "scenario/section_readers.hpp"
#include "scenario/yaml_reader.hpp"

#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/frames.hpp>
#include <skyfabric/physics/orbit.hpp>
#include <skyfabric/physics/random.hpp>
#include <skyfabric/workloads/input_text.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <regex>
#include <sstream>

namespace skyfabric::scenario::detail {

std::string format_count(double x) { return physics::format_setting(x); }

namespace {

physics::UtcEpoch parse_epoch(Section& section, const std::string& key, const std::string& text) {
    static const std::regex iso(R"((\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2}(?:\.\d+)?)Z?)");
    std::smatch m;
    if (!std::regex_match(text, m, iso)) {
        section.fail(key, "expected a UTC time like 2027-03-20T00:00:00Z, got " + workloads::quoted_input(text));
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
        section.fail(key, "not a valid calendar date and time between 1950 and 2200: " + workloads::quoted_input(text));
    }
    return e;
}

}  // namespace

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
    o.eccentricity = s.number("eccentricity", 0.0, 0.5, o.eccentricity);
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
    o.raan_rad = deg * s.number("raan_deg", 0.0, 360.0, o.raan_rad / deg, "deg");
    o.arg_perigee_rad = deg * s.number("arg_perigee_deg", 0.0, 360.0, o.arg_perigee_rad / deg, "deg");
    o.arg_latitude_rad = deg * s.number("arg_latitude_deg", 0.0, 360.0, o.arg_latitude_rad / deg, "deg");
    o.epoch_text = s.text("epoch_utc", o.epoch_text);
    o.epoch = parse_epoch(s, "epoch_utc", o.epoch_text);
    s.finish();
    return o;
}

FormationConfig read_formation(Section s) {
    FormationConfig f;
    f.layout = s.choice("layout", formation_layout_names, f.layout);
    f.radius_m = s.number("radius_m", 1.0, 1.0e6, f.radius_m, "m");
    f.radial_pitch_m = s.number("radial_pitch_m", 0.1, 1.0e5, f.radial_pitch_m, "m");
    f.along_track_pitch_m = s.number("along_track_pitch_m", 0.1, 1.0e5, f.along_track_pitch_m, "m");
    f.pitch_m = s.number("pitch_m", 0.1, 1.0e5, f.pitch_m, "m");
    f.out_of_plane_amplitude_m = s.number("out_of_plane_amplitude_m", 0.0, 1.0e5, f.out_of_plane_amplitude_m, "m");
    if (s.has("j2_trim")) {
        s.fail("j2_trim", "was replaced by relative_orbits: schweighart_sedwick (the SS-trimmed ellipse); the default, "
                          "relative_orbits: auto, already keeps the formation bounded under J2");
    }
    f.relative_orbits = s.choice("relative_orbits", relative_orbits_names, f.relative_orbits);
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
    check_lattice_size(s, f, f.radius_m);
    s.finish();
    return f;
}

// The lattice generators loop over a grid and keep the points inside the ellipse: estimate
// the count first so that an absurd radius / pitch ratio is refused before it takes hours
// and all memory. (The exact count is checked again once counted.)
void check_lattice_size(Section& s, const FormationConfig& f, double radius_m) {
    if (f.layout == FormationLayout::explicit_states) return;
    const double half = 0.5 * radius_m;
    const double estimate = f.layout == FormationLayout::hexagonal
                                ? physics::pi * half * half / (f.pitch_m * f.pitch_m * std::sqrt(3.0) / 2.0)
                                : physics::pi * half * radius_m / (f.radial_pitch_m * f.along_track_pitch_m);
    if (estimate > 1.2 * static_cast<double>(max_satellites) + 100.0) {
        s.fail("radius_m", "radius " + format_count(radius_m) + " m at this pitch gives about " + format_count(estimate) +
                               " satellites; at most " + std::to_string(max_satellites) +
                               " are supported (lower radius_m or raise the pitch)");
    }
}

DynamicsConfig read_dynamics(Section s) {
    DynamicsConfig d;
    d.model = s.choice("model", physics::relative_motion_model_names, d.model);
    d.j2 = s.boolean("j2", d.j2);
    d.relative_tolerance = s.number("relative_tolerance", 1e-15, 1e-3, d.relative_tolerance);
    d.absolute_tolerance = s.number("absolute_tolerance_m", 1e-15, 1.0, d.absolute_tolerance, "m");
    d.compare_to_nonlinear = s.choice("compare_to", {"none", "nonlinear"}, d.compare_to_nonlinear ? "nonlinear" : "none") == "nonlinear";
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
        d.drag.ballistic_coefficient_kg_m2 = drag.number("ballistic_coefficient_kg_m2", 1.0, 10000.0, d.drag.ballistic_coefficient_kg_m2, "kg/m^2");
        d.drag.dispersion = drag.number("dispersion", 0.0, 0.5, d.drag.dispersion);
        drag.finish();
        if (d.drag.enabled && d.model != physics::RelativeMotionModel::nonlinear) {
            s.fail("drag", "drag acts only in the nonlinear model; set dynamics.model: nonlinear or drag.enabled: false");
        }
    } else {
        s.allow("drag");
    }
    s.finish();
    return d;
}

physics::StationKeepingSettings read_station_keeping(Section s) {
    physics::StationKeepingSettings k;
    k.enabled = s.boolean("enabled", k.enabled);
    k.tolerance_m = s.number("tolerance_m", 0.01, 1.0e4, k.tolerance_m, "m");
    s.finish();
    return k;
}

MetricsConfig read_metrics(Section s) {
    MetricsConfig m;
    m.min_separation_alarm_m = s.number("min_separation_alarm_m", 0.0, 1.0e6, m.min_separation_alarm_m, "m");
    m.neighbour_count = static_cast<int>(s.integer("neighbour_count", 1, 64, m.neighbour_count));
    m.reference_satellite = static_cast<int>(s.integer("reference_satellite", 0, max_satellites, m.reference_satellite));
    s.finish();
    return m;
}

}  // namespace skyfabric::scenario::detail
