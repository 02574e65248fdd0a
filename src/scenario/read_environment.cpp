// power and radiation: the environment a run's satellites fly through.
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

PowerConfig read_power(Section s, bool present) {
    PowerConfig c;
    c.enabled = s.boolean("enabled", present);
    s.choice("preset", {"suncatcher_class"}, "suncatcher_class");
    auto& p = c.parameters;
    auto& a = p.array;
    a.area_m2 = s.number("array_area_m2", 0.0, 1e4, a.area_m2, "m^2");
    a.efficiency = s.number("array_efficiency", 0.0, 1.0, a.efficiency);
    a.degradation_per_year = s.number("array_degradation_per_year", 0.0, 0.5, a.degradation_per_year);
    a.years_in_orbit = s.number("array_years_in_orbit", 0.0, 50.0, a.years_in_orbit, "years");
    a.attitude = s.choice("array_attitude", physics::array_attitude_names, a.attitude);
    auto& b = p.battery;
    b.capacity_wh = s.number("battery_capacity_wh", 0.0, 1e7, b.capacity_wh, "Wh");
    b.charge_efficiency = s.number("battery_charge_efficiency", 0.01, 1.0, b.charge_efficiency);
    b.discharge_efficiency = s.number("battery_discharge_efficiency", 0.01, 1.0, b.discharge_efficiency);
    b.min_state_of_charge = s.number("battery_min_state_of_charge", 0.0, 1.0, b.min_state_of_charge);
    b.initial_state_of_charge = s.number("battery_initial_state_of_charge", 0.0, 1.0, b.initial_state_of_charge);
    auto& l = p.loads;
    // l.accelerators: the workload's chips per satellite, set by resolve.
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

void read_recovery(Section& s, workloads::RecoveryConfig& c) {
    if (s.is_scalar("checkpoint_interval") && s.text("checkpoint_interval") == "auto") {
        c.checkpoint_interval_s = 0.0;
    } else {
        c.checkpoint_interval_s = s.number("checkpoint_interval", 1.0, 1e8, c.checkpoint_interval_s, "s (or auto)");
    }
    c.checkpoint_cost_s = s.number("checkpoint_cost_s", 0.0, 1e6, c.checkpoint_cost_s, "s");
    c.checkpoint_mode = s.choice("checkpoint_mode", workloads::checkpoint_mode_names, c.checkpoint_mode);
    c.snapshot_bytes_per_rank = s.number("snapshot_gb_per_rank", 0.0, 1e6, c.snapshot_bytes_per_rank / 1e9, "GB") * 1e9;
    c.snapshot_bandwidth_Bps = s.number("snapshot_bandwidth_gbs", 0.0, 1e6, c.snapshot_bandwidth_Bps / 1e9, "GB/s") * 1e9;
    if (c.checkpoint_mode == workloads::CheckpointMode::blocking)
        for (const char* key : {"snapshot_gb_per_rank", "snapshot_bandwidth_gbs"})
            if (s.has(key)) s.fail(key, "applies to checkpoint_mode: async only (a blocking checkpoint stalls for checkpoint_cost_s)");
    c.restart_s = s.number("restart_s", 0.0, 1e6, c.restart_s, "s");
    c.reboot_s = s.number("reboot_s", 0.0, 1e7, c.reboot_s, "s");
    c.spare_satellites = static_cast<std::int32_t>(s.integer("spare_satellites", 0, max_satellites, c.spare_satellites));
}

// One cause of a `faults.causes` list: {name, per_gpu_day, effect, manual_s}.
workloads::OperationalCause read_cause(Section c) {
    workloads::OperationalCause cause;
    cause.name = c.text("name");
    cause.rate_per_gpu_s = c.number("per_gpu_day", 0.0, 1e3, {}, "1/GPU-day") / physics::seconds_per_day;
    cause.effect = c.choice("effect", workloads::operational_effect_names, cause.effect);
    cause.manual_s = c.number("manual_s", 0.0, 1e7, cause.manual_s, "s");
    if (cause.effect != workloads::OperationalEffect::manual && c.has("manual_s"))
        c.fail("manual_s", "applies to effect: manual only");
    c.finish();
    return cause;
}

FaultsConfig read_faults(Section s, bool present) {
    FaultsConfig f;
    f.enabled = s.boolean("enabled", present);
    f.preset = s.choice("preset", {"none", "llama3_405b", "b200_504"}, f.preset);
    auto& o = f.operational;
    if (f.preset != "none") o = workloads::operational_preset(f.preset);
    // A table given replaces the preset's (sequence refuses a key given empty).
    if (const auto items = s.sequence("causes"); !items.empty()) {
        o.causes.clear();
        for (std::size_t i = 0; i < items.size(); ++i)
            o.causes.push_back(read_cause(s.item(items[i], s.path() + ".causes[" + std::to_string(i) + "]")));
    }
    // 0: the workload's chips per rank (parallelism.tensor), set by resolve.
    o.gpus_per_rank = static_cast<std::int32_t>(s.integer("gpus_per_rank", 0, 4096, 0));
    o.hot_ranks = static_cast<std::int32_t>(s.integer("hot_ranks", 0, max_satellites, o.hot_ranks));
    o.hot_share = s.number("hot_share", 0.0, 1.0, o.hot_share);
    o.retry_success_probability = s.number("retry_success_probability", 0.0, 1.0, o.retry_success_probability);
    o.retry_attempts = static_cast<std::int32_t>(s.integer("retry_attempts", 0, 10000, o.retry_attempts));
    o.retry_interval_s = s.number("retry_interval_s", 0.0, 1e7, o.retry_interval_s, "s");
    o.manual_recovery_s = s.number("manual_recovery_s", 0.0, 1e7, o.manual_recovery_s, "s");
    f.rate_scale = s.number("rate_scale", 0.0, 1e6, f.rate_scale);
    // The causes kept as written: resolve applies rate_scale into operational.causes.
    f.causes = std::move(o.causes);
    o.causes.clear();
    // Beside radiation these keys are radiation's (refused here then: check_across_sections).
    read_recovery(s, f.recovery);
    f.trials = static_cast<std::int32_t>(s.integer("trials", 1, 100000, f.trials));
    f.threads = static_cast<std::int32_t>(s.integer("threads", 0, 1024, f.threads));
    s.finish();
    // After every key is read, so that a key given wrong is named first.
    if (f.enabled && f.causes.empty()) s.fail("preset", "gives no causes: name a preset (llama3_405b, b200_504) or list causes");
    if (f.enabled) {
        auto checked = o;  // gpus_per_rank 0 is resolved later, from the workload; a scale >= 0 keeps a rate valid
        checked.causes = f.causes;
        checked.gpus_per_rank = std::max(1, checked.gpus_per_rank);
        fail_on_problems(s, workloads::check(checked), operational_keys);
    }
    return f;
}

RadiationConfig read_radiation(Section s, bool present) {
    RadiationConfig r;
    r.enabled = s.boolean("enabled", present);
    auto& e = r.environment;  // its epoch is the orbit's (resolve)
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
    e.solar_protons = s.choice("solar_protons", {"off", "esp_psychic_95"}, e.solar_protons ? "esp_psychic_95" : "off") == "esp_psychic_95";
    const std::string device = s.choice("device", {"trillium_v6e"}, "trillium_v6e");
    r.faults.device = workloads::device_preset(device);
    // 0: the workload's chips per satellite (parallelism.tensor), else 1.
    r.faults.chips_per_satellite = static_cast<std::int32_t>(s.integer("chips_per_satellite", 0, 4096, 0));
    r.faults.sdc_detection_probability = s.number("sdc_detection_probability", 0.0, 1.0, r.faults.sdc_detection_probability);
    r.faults.link_outage_rate_per_s = s.number("link_outages_per_day", 0.0, 1e4, r.faults.link_outage_rate_per_s * physics::seconds_per_day, "1/day") / physics::seconds_per_day;
    // A constellation's gateway terminals (one per gateway satellite), apart from the ISL terminals.
    r.faults.gateway_outage_rate_per_s = s.number("gateway_outages_per_day", 0.0, 1e4, r.faults.gateway_outage_rate_per_s * physics::seconds_per_day, "1/day") / physics::seconds_per_day;
    r.faults.rate_scale = s.number("rate_scale", 0.0, 1e6, r.faults.rate_scale);
    r.recovery.link_outage_s = s.number("link_outage_s", 0.0, 1e7, r.recovery.link_outage_s, "s");
    r.threads = static_cast<std::int32_t>(s.integer("threads", 0, 1024, r.threads));
    read_recovery(s, r.recovery);
    r.trials = static_cast<std::int32_t>(s.integer("trials", 1, 100000, r.trials));
    s.finish();
    // The environment is checked as its model is built (check_scenario.cpp), the recovery settings
    // once the satellites are counted.
    if (r.enabled) fail_on_problems(s, workloads::check(r.faults), fault_model_keys);
    return r;
}

}  // namespace skyfabric::scenario::detail
