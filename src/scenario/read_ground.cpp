// `ground_stations:` (docs/scenario-reference.md): a serving workload's users on the ground, each
// station with its site, minimum elevation, link kind and cloud climate (docs/inference.md "Serving
// from the ground").
#include "scenario/section_readers.hpp"

#include <algorithm>
#include <set>

namespace skyfabric::scenario::detail {

GroundConfig read_ground_stations(Section& top, const Scenario& sc) {
    GroundConfig g;
    if (!top.has("ground_stations")) {
        top.refuse_empty("ground_stations", "a list of ground stations");
        return g;
    }
    if (!sc.inference.enabled) top.fail("ground_stations", "needs a serving workload (workload.kind: inference)");
    if (sc.fabric) top.fail("ground_stations", "needs an orbit; a synthetic topology has no ground below it");
    g.enabled = true;
    auto& seg = g.segment;  // its epoch and seed are the orbit's and the scenario's (resolve)
    const auto items = top.sequence("ground_stations");
    if (items.empty()) top.fail("ground_stations", "expected at least one station");
    std::set<std::string> names;
    for (std::size_t i = 0; i < items.size(); ++i) {
        Section s = top.item(items[i], "ground_stations[" + std::to_string(i) + "]");
        workloads::GroundStation st;
        st.name = s.text("name");
        if (st.name.empty()) s.fail("name", "must not be empty");
        if (!names.insert(st.name).second) s.fail("name", "'" + st.name + "' names another station already");
        st.site.latitude_rad = s.number("latitude_deg", -90.0, 90.0, {}, "deg") * deg;
        st.site.longitude_rad = s.number("longitude_deg", -180.0, 180.0, {}, "deg") * deg;
        st.site.altitude_m = s.number("altitude_m", -500.0, 9000.0, st.site.altitude_m, "m");
        st.min_elevation_rad = s.number("min_elevation_deg", 0.0, 89.0, st.min_elevation_rad / deg, "deg") * deg;
        st.kind = s.choice("kind", links::ground_link_kind_names);
        st.users_share = s.number("users_share", 0.0, 1.0, st.users_share);  // all 0: the users shared equally
        if (st.kind == links::GroundLinkKind::ka_band) {
            st.ka_band_rate_bps = s.number("rate_gbps", 1e-6, 1e3, {}, "Gbit/s") * 1e9;
            for (const char* key : {"aperture_m", "cloud_free", "mean_cloudy_spell_h", "ka_band_fallback_gbps"})
                if (s.has(key)) s.fail(key, "belongs to an optical station; a ka_band station has rate_gbps only");
        } else {
            auto& o = st.optical;
            o.ground_aperture_m = s.number("aperture_m", 0.01, 20.0, {}, "m");
            o.max_rate_bps = s.number("rate_gbps", 1e-3, 1e4, o.max_rate_bps / 1e9, "Gbit/s") * 1e9;
            o.space_aperture_m = s.number("space_aperture_m", 0.01, 2.0, o.space_aperture_m, "m");
            o.tx_power_w = s.number("tx_power_w", 1e-3, 1e3, o.tx_power_w, "W");
            o.zenith_attenuation_db = s.number("zenith_attenuation_db", 0.0, 30.0, o.zenith_attenuation_db, "dB");
            o.scintillation_margin_db = s.number("scintillation_margin_db", 0.0, 30.0, o.scintillation_margin_db, "dB");
            o.other_losses_db = s.number("other_losses_db", 0.0, 30.0, o.other_losses_db, "dB");
            o.photons_per_bit = s.number("photons_per_bit", 1.0, 1e6, o.photons_per_bit);
            s.refuse_empty("cloud_free", "a cloud-free fraction in [0, 1], or a list of 12 (January first)");
            if (!s.has("cloud_free")) s.fail("cloud_free", "is required for an optical station: a fraction in [0, 1], or a list of 12 (January first)");
            if (s.is_scalar("cloud_free")) {
                st.clouds.cloud_free_fraction.fill(s.number("cloud_free", 0.0, 1.0));
            } else {
                const auto months = s.numbers("cloud_free", 12);
                for (std::size_t m = 0; m < 12; ++m) {
                    if (!(months[m] >= 0.0 && months[m] <= 1.0))
                        s.fail("cloud_free", "month " + std::to_string(m + 1) + " is " + std::to_string(months[m]) + "; expected a fraction in [0, 1]");
                    st.clouds.cloud_free_fraction[m] = months[m];
                }
            }
            st.clouds.mean_cloudy_spell_s = s.number("mean_cloudy_spell_h", 0.1, 1000.0, st.clouds.mean_cloudy_spell_s / 3600.0, "h") * 3600.0;
            st.ka_band_rate_bps = s.number("ka_band_fallback_gbps", 0.0, 1e3, st.ka_band_rate_bps / 1e9, "Gbit/s") * 1e9;
        }
        s.finish();
        seg.stations.push_back(st);
    }
    return g;
}

std::int32_t datacentre_index(const GroundConfig& ground, const std::string& site) {
    const auto& dcs = ground.segment.datacentres;
    for (std::size_t d = 0; d < dcs.size(); ++d)
        if (dcs[d].name == site) return static_cast<std::int32_t>(d);
    return -1;
}

void check_site_names(Section& top, const Scenario& sc) {
    const auto check = [&](const std::string& role, const std::string& name) {
        if (name == "orbit" || datacentre_index(sc.ground, name) >= 0) return;
        Section role_section = workload_section(top, true).section("inference").section("engines").section(role);
        std::string names;
        for (const auto& dc : sc.ground.segment.datacentres) names += (names.empty() ? "" : ", ") + dc.name;
        role_section.fail("site", "'" + name + "' is neither orbit nor a ground data centre (" +
                                      (names.empty() ? std::string("ground_datacentres lists none") : "ground_datacentres: " + names) + ")");
    };
    check("prefill", sc.inference.prefill_site);
    check("decode", sc.inference.decode_site);
    // The data centres reach each other only through orbit, and a cache handed over inside one is not modelled.
    if (datacentre_index(sc.ground, sc.inference.prefill_site) >= 0 && datacentre_index(sc.ground, sc.inference.decode_site) >= 0)
        workload_section(top, true).section("inference").section("engines").section("decode").fail(
            "site", "the prefill role is on the ground too; place one of the two roles in orbit (a hand-over of KV caches between "
                    "or inside ground data centres is not modelled)");
}

GroundConfig read_ground_datacentres(Section& top, const Scenario& sc) {
    GroundConfig ground = sc.ground;
    if (!top.has("ground_datacentres")) {
        top.refuse_empty("ground_datacentres", "a list of ground data centres");
    } else {
        if (!sc.ground.enabled)
            top.fail("ground_datacentres", "needs ground_stations: a data centre reaches orbit through a ground station's link");
        const auto items = top.sequence("ground_datacentres");
        if (items.empty()) top.fail("ground_datacentres", "expected at least one data centre");
        std::set<std::string> names;
        const auto& stations = sc.ground.segment.stations;
        for (std::size_t i = 0; i < items.size(); ++i) {
            Section s = top.item(items[i], "ground_datacentres[" + std::to_string(i) + "]");
            workloads::GroundDatacentre dc;
            dc.name = s.text("name");
            if (dc.name.empty()) s.fail("name", "must not be empty");
            if (dc.name == "orbit") s.fail("name", "'orbit' is the serving roles' site in orbit; name the data centre otherwise");
            if (!names.insert(dc.name).second) s.fail("name", "'" + dc.name + "' names another data centre already");
            dc.site.latitude_rad = s.number("latitude_deg", -90.0, 90.0, {}, "deg") * deg;
            dc.site.longitude_rad = s.number("longitude_deg", -180.0, 180.0, {}, "deg") * deg;
            dc.site.altitude_m = s.number("altitude_m", -500.0, 9000.0, dc.site.altitude_m, "m");
            if (!s.has("accelerator")) s.fail("accelerator", "missing: the data centre's chips, one of tpu_v6e, h200, h20, custom");
            dc.accelerator = read_accelerator(s);
            dc.accelerators = s.integer("accelerators", 1, std::int64_t{1000000000}, {});
            const std::string station = s.text("station");
            const auto it = std::find_if(stations.begin(), stations.end(), [&](const auto& st) { return st.name == station; });
            if (it == stations.end()) s.fail("station", "'" + station + "' names no ground station (ground_stations)");
            dc.station = static_cast<std::int32_t>(it - stations.begin());
            dc.fibre_m = 1e3 * s.number("fibre_km", 0.0, 40000.0, {}, "km");
            dc.fibre_rate_bps = 1e9 * s.number("fibre_gbps", 1e-3, 1e6, dc.fibre_rate_bps / 1e9, "Gbit/s");
            s.finish();
            ground.segment.datacentres.push_back(dc);
        }
    }
    return ground;
}

namespace {

// Each satellite's cluster (one cluster without a constellation).
std::vector<std::int32_t> cluster_of_satellites(const Scenario& sc) {
    std::vector<std::int32_t> cluster_of;
    const auto sizes = cluster_sizes(sc);
    for (std::size_t c = 0; c < sizes.size(); ++c) cluster_of.insert(cluster_of.end(), sizes[c], static_cast<std::int32_t>(c));
    return cluster_of;
}

}  // namespace

ServingRoleRanges serving_role_ranges(const Scenario& sc) {
    const auto& in = sc.inference;
    const auto& e = in.serving.engines;
    const auto p = static_cast<std::size_t>(e.prefill.satellites_per_instance), d = static_cast<std::size_t>(e.decode.satellites_per_instance);
    ServingRoleRanges r;
    r.dedicated = (in.serving.routing == workloads::ServingRouting::prfaas || in.compare_routing)
                      ? static_cast<std::size_t>(in.serving.dedicated_prefill_instances) * p : 0;
    r.prefill_end = static_cast<std::size_t>(e.prefill.instances) * p;
    r.decode_end = r.prefill_end + static_cast<std::size_t>(e.decode.instances) * d;
    return r;
}

SiteChips site_accelerator(const Scenario& sc, std::span<const std::int32_t> nodes, std::size_t from, std::size_t to) {
    const auto& dcs = sc.ground.segment.datacentres;
    const auto satellites = static_cast<std::int32_t>(node_count(sc));
    const auto cluster_of = cluster_of_satellites(sc);
    // A data centre's chips, or its cluster's (a cluster that gives none holds the workload's); none when no site gives any.
    const auto declared = [&](std::int32_t node) -> std::optional<workloads::Accelerator> {
        if (node >= satellites) return dcs[static_cast<std::size_t>(node - satellites)].accelerator;
        if (!sc.constellation.enabled) return std::nullopt;
        return sc.constellation.clusters[static_cast<std::size_t>(cluster_of[static_cast<std::size_t>(node)])].accelerator;
    };
    SiteChips site;
    bool any = false;
    for (std::size_t k = from; k < to; ++k) any = any || declared(nodes[k]).has_value();
    if (!any) return site;
    for (std::size_t k = from; k < to; ++k) {
        const auto here = declared(nodes[k]).value_or(sc.inference.accelerator);
        if (!site.chips) {
            site.chips = here;
            site.first = k;
        } else if (*site.chips != here) {
            site.mixed = k;
            break;
        }
    }
    return site;
}

void check_site_accelerators(Section& top, const Scenario& read, const Scenario& sc, const std::vector<std::int32_t>& nodes) {
    const auto& e = read.inference.serving.engines;  // the roles' own chips as written
    const auto& dcs = sc.ground.segment.datacentres;
    const auto& placement = sc.ground.placement;
    const auto satellites = static_cast<std::int32_t>(node_count(sc));
    const auto cluster_of = cluster_of_satellites(sc);
    Section engines = workload_section(top, true).section("inference").section("engines");
    const auto site_name = [&](std::int32_t node) {
        return node >= satellites ? "ground data centre " + dcs[static_cast<std::size_t>(node - satellites)].name
                                  : "cluster " + std::to_string(sc.constellation.enabled ? cluster_of[static_cast<std::size_t>(node)] : 0);
    };
    // A role on sites of two kinds of chips is refused at `instances`; its own accelerator keys, when
    // given, must name its site's chips.
    const auto check = [&](Section role, const std::string& key, const std::optional<workloads::Accelerator>& own, std::size_t from, std::size_t to) {
        const SiteChips site = site_accelerator(sc, nodes, from, to);
        if (!site.chips) return;
        if (site.mixed != SiteChips::none) {
            const auto here = site_accelerator(sc, nodes, site.mixed, site.mixed + 1).chips.value_or(sc.inference.accelerator);
            role.fail("instances", "its instances stand on " + site_name(nodes[site.first]) + " (" + site.chips->name + ") and on " +
                                       site_name(nodes[site.mixed]) + " (" + here.name + "); place a role's instances on chips of one kind");
        }
        if (own && *own != *site.chips)
            role.fail(key, "gives " + own->name + " chips, but its instances stand where the chips are " + site.chips->name +
                               " (the site's accelerator); leave the role's accelerator keys out");
    };
    // A role's accelerator keys: the first given is the one a contradiction is reported at.
    const auto key_of = [](Section& role) {
        for (const char* key : {"accelerator", "peak_tflops", "hbm_gb", "hbm_bandwidth_gbs"})
            if (role.has(key)) return key;
        return "accelerator";
    };
    const ServingRoleRanges r = serving_role_ranges(sc);
    Section prefill = engines.section("prefill");
    if (r.dedicated > 0) {
        check(prefill, "dedicated", e.dedicated_prefill_accelerator, 0, r.dedicated);
        if (r.dedicated < r.prefill_end) check(prefill, key_of(prefill), e.prefill.accelerator, r.dedicated, r.prefill_end);
    } else {
        check(prefill, key_of(prefill), e.prefill.accelerator, 0, r.prefill_end);
    }
    Section decode = engines.section("decode");
    check(decode, key_of(decode), e.decode.accelerator, r.prefill_end, r.decode_end);
    // A data centre holds the chips of the instances placed on it.
    for (std::size_t k = 0; k < dcs.size(); ++k) {
        std::int64_t chips = 0;
        if (placement.prefill_datacentre == static_cast<std::int32_t>(k)) chips += std::int64_t{e.prefill.instances} * e.prefill.satellites_per_instance * e.chips_per_satellite;
        if (placement.decode_datacentre == static_cast<std::int32_t>(k)) chips += std::int64_t{e.decode.instances} * e.decode.satellites_per_instance * e.chips_per_satellite;
        if (chips > dcs[k].accelerators) {
            Section dc = top.item(top.sequence("ground_datacentres")[k], "ground_datacentres[" + std::to_string(k) + "]");
            dc.fail("accelerators", "holds " + std::to_string(dcs[k].accelerators) + " chips; the serving instances placed here need " +
                                        std::to_string(chips) + " (instances x satellites_per_instance x engines.chips_per_satellite)");
        }
    }
}

}  // namespace skyfabric::scenario::detail
