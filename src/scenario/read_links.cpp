// links and constellation: the optical terminals and how clusters are laid out and joined.
#include "scenario/scenario.hpp"

#include "scenario/section_readers.hpp"
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

namespace skyfabric::scenario::detail {

namespace {

std::string format_km(double metres) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%g km", metres / 1e3);
    return buf;
}

// The optics of a terminal (its keys and the dwdm subsection), over `o`'s values as defaults.
void read_optics(Section& s, links::OpticalTerminalParameters& o) {
    o.aperture_m = s.number("aperture_m", 0.001, 10.0, o.aperture_m, "m");
    o.tx_power_w = s.number("tx_power_w", 1e-6, 1000.0, o.tx_power_w, "W");
    o.wavelength_m = 1e-9 * s.number("wavelength_nm", 400.0, 11000.0, 1e9 * o.wavelength_m, "nm");
    o.aperture_efficiency = s.number("aperture_efficiency", 0.01, 1.0, o.aperture_efficiency);
    o.other_losses_db = s.number("other_losses_db", 0.0, 100.0, o.other_losses_db, "dB");
    o.pointing_static_error_rad = 1e-6 * s.number("pointing_error_urad", 0.0, 1e4, 1e6 * o.pointing_static_error_rad, "urad");
    o.pointing_jitter_rad = 1e-6 * s.number("pointing_jitter_urad", 0.0, 1e4, 1e6 * o.pointing_jitter_rad, "urad");
    o.amplifier_noise_figure_db = s.number("noise_figure_db", 0.0, 30.0, o.amplifier_noise_figure_db, "dB");
    o.required_margin_db = s.number("required_margin_db", 0.0, 50.0, o.required_margin_db, "dB");
    o.spatial_channels_built = static_cast<int>(s.integer("spatial_channels", 1, 4096, o.spatial_channels_built));
    Section dwdm = s.section("dwdm");
    o.dwdm.grid_spacing_hz = 1e9 * dwdm.number("grid_ghz", 12.5, 1000.0, o.dwdm.grid_spacing_hz / 1e9, "GHz");
    o.dwdm.band_hz = 1e12 * dwdm.number("band_thz", 0.01, 50.0, o.dwdm.band_hz / 1e12, "THz");
    o.dwdm.transceivers_fitted = static_cast<int>(dwdm.integer("channels", 1, 1024, o.dwdm.transceivers_fitted));
    const std::string transceiver = dwdm.choice("transceiver", {"400zr", "800zr", "custom"}, "400zr");
    if (transceiver != "custom") o.transceiver = *links::transceiver_preset(transceiver);
    else o.transceiver.name = "custom";
    o.transceiver.rate_bps = 1e9 * dwdm.number("rate_gbps", 0.001, 1.0e5, o.transceiver.rate_bps / 1e9, "Gbit/s");
    o.transceiver.sensitivity_dbm = dwdm.number("sensitivity_dbm", -80.0, 30.0, o.transceiver.sensitivity_dbm, "dBm");
    o.transceiver.required_osnr_db = dwdm.number("required_osnr_db", 0.0, 60.0, o.transceiver.required_osnr_db, "dB");
    dwdm.finish();
}

}  // namespace

LinksConfig read_links(Section s, bool present) {
    LinksConfig l;
    l.enabled = s.boolean("enabled", present);
    auto& t = l.topology;
    t.policy = s.choice("topology", links::topology_policy_names, t.policy);
    t.terminals.terminals_per_satellite = static_cast<int>(s.integer("terminals_per_satellite", 1, 64, t.terminals.terminals_per_satellite));
    t.neighbours_k = static_cast<int>(s.integer("neighbours_k", 0, 64, t.neighbours_k));
    t.terminals.max_range_m = s.number("max_range_m", 0.0, 1.0e8, t.terminals.max_range_m, "m");
    t.terminals.reacquisition_time_s = s.number("reacquisition_time_s", 0.0, 3600.0, t.terminals.reacquisition_time_s, "s");
    t.hysteresis_fraction = s.number("hysteresis_fraction", 0.0, 1.0, t.hysteresis_fraction);
    read_optics(s, t.optics);
    s.finish();
    return l;
}

// constellation: clusters as a count spaced along-track (spacing_km), or a list of clusters.
ConstellationConfig read_constellation(Section s, bool present, const FormationConfig& formation) {
    ConstellationConfig c;
    c.enabled = present;
    if (!present) return c;
    // The other keys first: a bad value there is named before a missing cluster count.
    Section g = s.section("gateways");
    auto& gw = c.gateways;
    gw.gateways_per_cluster = static_cast<std::int32_t>(g.integer("per_cluster", 1, 64, gw.gateways_per_cluster));
    gw.topology = g.choice("topology", links::aggregation_topology_names, gw.topology);
    gw.grazing_altitude_m = 1e3 * g.number("grazing_altitude_km", 0.0, 1000.0, gw.grazing_altitude_m / 1e3, "km");
    gw.failover_s = g.number("failover_s", 0.0, 3600.0, gw.failover_s, "s");
    read_optics(g, gw.optics);  // over the gateway terminal's defaults (links::gateway_terminal_optics)
    g.finish();
    const std::vector<std::string> all = workloads::cluster_algorithm_names.names();
    const std::string listed = workloads::cluster_algorithm_names.joined();
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
    // auto (left absent, for resolve to pick by the size), or a routing model by its name.
    std::vector<std::string> routing_models{"auto"};
    for (auto& name : workloads::routing_model_names.names()) routing_models.push_back(std::move(name));
    c.routing_model = workloads::routing_model_names.value(s.choice("routing_model", routing_models, "auto"));
    // One home for local SGD's settings, whatever its replica (workloads/job.hpp).
    const std::pair<const char*, const char*> moved[] = {{"inner_steps", "local_steps"}, {"outer_bytes_per_element", "outer_bytes_per_element"}};
    for (const auto& [old_key, new_key] : moved)
        if (s.has(old_key))
            s.fail(old_key, std::string("moved to workload.") + new_key + ": one setting for local SGD with any replica "
                            "(diloco's and noloco's clusters, or the ranks under workload.sync: local_steps)");

    s.refuse_empty("clusters", "a number of clusters or a list of clusters");
    if (s.has("clusters") && !s.is_scalar("clusters")) {
        const auto items = s.sequence("clusters");
        if (items.size() < 2) s.fail("clusters", "a constellation needs at least 2 clusters");
        if (items.size() > max_clusters)
            s.fail("clusters", "lists " + std::to_string(items.size()) + " clusters; at most " + std::to_string(max_clusters) + " are supported");
        for (std::size_t k = 0; k < items.size(); ++k) {
            Section item = s.item(items[k], s.path() + ".clusters[" + std::to_string(k) + "]");
            ClusterConfig cluster;
            cluster.along_track_m = 1e3 * item.number("along_track_km", -40000.0, 40000.0, cluster.along_track_m / 1e3, "km");
            cluster.raan_offset_rad = deg * item.number("raan_deg", -180.0, 180.0, cluster.raan_offset_rad / deg, "deg");
            if (item.has("radius_m")) {
                cluster.radius_m = item.number("radius_m", 1.0, 1e6, {}, "m");
                check_lattice_size(item, formation, *cluster.radius_m);  // its lattice is the formation's
            }
            cluster.accelerator = read_optional_accelerator(item, workloads::tpu_v6e());  // checked against the workload's later
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
            c.clusters.push_back(ClusterConfig{*spacing_m * static_cast<double>(k), raan_step_rad * static_cast<double>(k), {}, {}});
    }
    // Two clusters in one orbital plane whose lattices overlap along-track (at one place, or
    // closer than their radii) would run into each other's satellites: refused here, not met
    // as a separation alarm in the run. (An explicit layout's extent is its own; only a
    // shared place is refused then.)
    for (std::size_t i = 0; i < c.clusters.size(); ++i)
        for (std::size_t j = i + 1; j < c.clusters.size(); ++j) {
            const ClusterConfig& a = c.clusters[i];
            const ClusterConfig& b = c.clusters[j];
            if (a.raan_offset_rad != b.raan_offset_rad) continue;
            const double apart_m = std::fabs(a.along_track_m - b.along_track_m);
            const double reach_m = formation.layout == FormationLayout::explicit_states
                                       ? 0.0
                                       : a.radius_m.value_or(formation.radius_m) + b.radius_m.value_or(formation.radius_m);
            if (apart_m <= reach_m)
                s.fail(s.has("spacing_km") ? "spacing_km" : "clusters",
                       "clusters " + std::to_string(i) + " and " + std::to_string(j) + " are " + format_km(apart_m) +
                           " apart in one plane, within their radii (" + format_km(reach_m) +
                           "): their satellites would collide; space them further apart along-track or in RAAN");
        }
    s.finish();
    return c;
}

}  // namespace skyfabric::scenario::detail
