// `ground_stations:` (docs/scenario-reference.md): a serving workload's users on the ground, each
// station with its site, minimum elevation, link kind and cloud climate (docs/inference.md "Serving
// from the ground").
#include "scenario/section_readers.hpp"

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
    auto& seg = g.segment;
    seg.epoch_julian_date_days = physics::julian_date(sc.orbit.epoch);
    seg.seed = sc.seed;
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
        st.site.altitude_m = s.number("altitude_m", -500.0, 9000.0, 0.0, "m");
        st.min_elevation_rad = s.number("min_elevation_deg", 0.0, 89.0, 20.0, "deg") * deg;
        st.kind = s.choice("kind", links::ground_link_kind_names);
        st.users_share = s.number("users_share", 0.0, 1.0, 0.0);  // all 0: the users shared equally
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
            st.clouds.mean_cloudy_spell_s = s.number("mean_cloudy_spell_h", 0.1, 1000.0, 6.0, "h") * 3600.0;
            st.ka_band_rate_bps = s.number("ka_band_fallback_gbps", 0.0, 1e3, 0.0, "Gbit/s") * 1e9;
        }
        s.finish();
        seg.stations.push_back(st);
    }
    return g;
}

}  // namespace skyfabric::scenario::detail
