#pragma once
// Power and heat of one satellite: solar array, battery, loads, radiator with a lumped thermal
// mass, and the compute the battery and the radiator allow. Pure functions over plain structs.
// Presets and their sources: docs/power.md.
#include <skyfabric/physics/enum_names.hpp>

namespace skyfabric::physics {

inline constexpr double solar_constant_w_m2 = 1361.0;     // at 1 AU (Kopp & Lean, GRL 38, 2011)
inline constexpr double stefan_boltzmann_w_m2_k4 = 5.670374419e-8;

enum class ArrayAttitude {
    sun_pointing,  // the array tracks the Sun: no cosine loss
    orbit_normal,  // fixed, facing along the orbit normal (a dawn-dusk orbit's Sun side): cos = |sin beta|
};
inline constexpr auto array_attitude_names = enum_names<ArrayAttitude>({
    {ArrayAttitude::sun_pointing, "sun_pointing"}, {ArrayAttitude::orbit_normal, "orbit_normal"}});

struct SolarArray {
    double area_m2 = 3.0;
    double efficiency = 0.28;               // cell efficiency x packing, beginning of life
    double degradation_per_year = 0.02;     // relative loss of output per year in orbit
    double years_in_orbit = 0.0;            // age at the scenario epoch
    ArrayAttitude attitude = ArrayAttitude::sun_pointing;
    bool operator==(const SolarArray&) const = default;
};

struct Battery {
    double capacity_wh = 1000.0;
    double charge_efficiency = 0.95;
    double discharge_efficiency = 0.95;
    double min_state_of_charge = 0.7;       // 1 - allowed depth of discharge
    double initial_state_of_charge = 1.0;
    bool operator==(const Battery&) const = default;
};

struct Loads {
    int accelerators = 1;                   // chips per satellite (workload.parallelism.tensor)
    double accelerator_w = 300.0;           // per chip at full utilisation
    double host_w = 150.0;
    double terminal_w = 20.0;               // per optical terminal with an active link
    double housekeeping_w = 100.0;          // avionics, attitude control, heaters, margin
    bool operator==(const Loads&) const = default;
};

struct Radiator {
    double area_m2 = 2.4;                   // radiating area (both faces of a 1.2 m^2 panel)
    double emissivity = 0.9;
    double sink_temperature_k = 185.5;      // effective sink: 633 W/m^2 net per panel at 20 C (docs/power.md)
    double heat_capacity_j_k = 2.0e5;       // lumped: bus, chips, cold plates
    double max_temperature_k = 328.15;      // the lumped node's limit (55 C)
    double initial_temperature_k = 293.15;
    bool operator==(const Radiator&) const = default;
};

struct PowerParameters {
    SolarArray array;
    Battery battery;
    Loads loads;
    Radiator radiator;
    bool operator==(const PowerParameters&) const = default;
};

// A Suncatcher-class satellite (numbers and sources in docs/power.md).
PowerParameters suncatcher_class_power();

// Array output (W): S (1 AU / r)^2 A eta (1 - degradation)^years cos(incidence) (1 - shadow).
double solar_power_w(const SolarArray& array, double sun_distance_au, double shadow_fraction, double sin_beta,
                     double elapsed_years);

// Load (W) at an accelerator utilisation u in [0, 1] with `links` active terminals.
double load_power_w(const Loads& loads, double utilisation, int links);

enum class PowerPolicy {
    ignore,    // compute runs as asked; the battery may run flat (then the satellite browns out)
    throttle,  // compute slowed to what keeps the battery above its limit and the node below its maximum
    pause,     // compute stops whenever it cannot run at full speed
};
inline constexpr auto power_policy_names = enum_names<PowerPolicy>({
    {PowerPolicy::ignore, "ignore"}, {PowerPolicy::throttle, "throttle"}, {PowerPolicy::pause, "pause"}});

struct PowerState {
    double battery_wh = 0.0;
    double temperature_k = 0.0;
};
PowerState initial_power_state(const PowerParameters& p);

// One interval of length dt_s at constant solar input, what the satellite did.
struct PowerStep {
    double utilisation = 0.0;     // accelerator utilisation allowed by the policy
    double load_w = 0.0;          // consumed (0 when browned out)
    double charge_w = 0.0;        // into the battery (after charge losses), negative: drawn out
    double shunted_w = 0.0;       // array output neither used nor storable (battery full)
    bool browned_out = false;     // not even the base loads could be powered (links and host off)
};

// Advances `state` over dt_s with solar_w available and `requested` utilisation, applying `policy`.
// Energy balance (exact): solar_w = load_w + shunted_w + (charge_w > 0 ? charge_w / eta_c : charge_w * eta_d)
// while not browned out. The thermal node integrates C dT/dt = load - eps sigma A (T^4 - T_sink^4).
PowerStep advance_power(const PowerParameters& p, PowerState& state, double solar_w, int links, double requested,
                        PowerPolicy policy, double dt_s);

}  // namespace skyfabric::physics
