#include <skyfabric/physics/power.hpp>

#include <algorithm>
#include <cmath>

namespace skyfabric::physics {

PowerParameters suncatcher_class_power() { return PowerParameters{}; }  // the struct defaults are the preset

double solar_power_w(const SolarArray& a, double sun_distance_au, double shadow_fraction, double sin_beta,
                     double elapsed_years) {
    const double cos_incidence = a.attitude == ArrayAttitude::sun_pointing ? 1.0 : std::abs(sin_beta);
    const double age = a.years_in_orbit + elapsed_years;
    return solar_constant_w_m2 / (sun_distance_au * sun_distance_au) * a.area_m2 * a.efficiency *
           std::pow(1.0 - a.degradation_per_year, age) * cos_incidence * std::clamp(1.0 - shadow_fraction, 0.0, 1.0);
}

double load_power_w(const Loads& l, double utilisation, int links) {
    return l.accelerators * l.accelerator_w * utilisation + l.host_w + l.terminal_w * links + l.housekeeping_w;
}

PowerState initial_power_state(const PowerParameters& p) {
    return {p.battery.capacity_wh * p.battery.initial_state_of_charge, p.radiator.initial_temperature_k};
}

PowerStep advance_power(const PowerParameters& p, PowerState& s, double solar_w, int links, double requested,
                        PowerPolicy policy, double dt_s) {
    const Battery& b = p.battery;
    const Radiator& r = p.radiator;
    const double base_w = load_power_w(p.loads, 0.0, links);
    const double chips_w = load_power_w(p.loads, 1.0, links) - base_w;
    const double energy_j = s.battery_wh * 3600.0;
    const double radiated_w =
        r.emissivity * stefan_boltzmann_w_m2_k4 * r.area_m2 * (std::pow(s.temperature_k, 4) - std::pow(r.sink_temperature_k, 4));

    PowerStep out;
    double u = std::clamp(requested, 0.0, 1.0);
    if (policy != PowerPolicy::ignore && chips_w > 0.0) {
        // Largest load that keeps the battery at or above its limit at the end of the interval (only surplus
        // array power once it is there) and the thermal node at or below its maximum.
        const double reserve_j = energy_j - b.min_state_of_charge * b.capacity_wh * 3600.0;
        const double energy_limit_w = solar_w + std::max(0.0, reserve_j) * b.discharge_efficiency / dt_s;
        const double thermal_limit_w = r.heat_capacity_j_k * (r.max_temperature_k - s.temperature_k) / dt_s + radiated_w;
        const double allowed = std::clamp((std::min(energy_limit_w, thermal_limit_w) - base_w) / chips_w, 0.0, u);
        u = policy == PowerPolicy::pause && allowed < u ? 0.0 : allowed;
    }
    double load_w = base_w + chips_w * u;
    double net_w = solar_w - load_w;
    if (net_w < 0.0 && energy_j + net_w / b.discharge_efficiency * dt_s < 0.0) {
        // The battery runs flat: compute stops; if even the base loads exceed what is left, the satellite
        // browns out for the interval (host and terminals off) and the array recharges what it can.
        u = 0.0;
        load_w = base_w;
        net_w = solar_w - load_w;
        if (energy_j + net_w / b.discharge_efficiency * dt_s < 0.0) {
            out.browned_out = true;
            load_w = 0.0;
            net_w = solar_w;
        }
    }
    out.utilisation = u;
    out.load_w = load_w;
    if (net_w >= 0.0) {
        const double room_j = b.capacity_wh * 3600.0 - energy_j;
        out.charge_w = std::min(net_w * b.charge_efficiency, room_j / dt_s);
        out.shunted_w = net_w - out.charge_w / b.charge_efficiency;
    } else {
        out.charge_w = net_w / b.discharge_efficiency;
    }
    s.battery_wh = std::clamp(s.battery_wh + out.charge_w * dt_s / 3600.0, 0.0, b.capacity_wh);
    // Every watt the bus uses ends as heat in the lumped node (radiator edge-on to the Sun: no solar input).
    s.temperature_k += dt_s / r.heat_capacity_j_k * (load_w - radiated_w);
    return out;
}

}  // namespace skyfabric::physics
