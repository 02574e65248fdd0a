#include <skyfabric/physics/power.hpp>

#include <gtest/gtest.h>

#include <cmath>

using namespace skyfabric::physics;

TEST(SolarPower, FollowsTheSolarConstantAreaEfficiencyAgeAndAttitude) {
    SolarArray a;
    a.area_m2 = 2.0;
    a.efficiency = 0.3;
    a.degradation_per_year = 0.02;
    EXPECT_NEAR(solar_power_w(a, 1.0, 0.0, 0.5, 0.0), 1361.0 * 2.0 * 0.3, 1e-9);
    EXPECT_NEAR(solar_power_w(a, 1.0, 0.25, 0.5, 0.0), 0.75 * 1361.0 * 2.0 * 0.3, 1e-9);  // penumbra
    EXPECT_EQ(solar_power_w(a, 1.0, 1.0, 0.5, 0.0), 0.0);                                  // umbra
    EXPECT_NEAR(solar_power_w(a, 1.0167, 0.0, 0.5, 0.0), 1361.0 * 2.0 * 0.3 / (1.0167 * 1.0167), 1e-9);  // aphelion
    EXPECT_NEAR(solar_power_w(a, 1.0, 0.0, 0.5, 5.0), 1361.0 * 2.0 * 0.3 * std::pow(0.98, 5), 1e-9);
    a.attitude = ArrayAttitude::orbit_normal;  // cos(incidence) = |sin beta|
    EXPECT_NEAR(solar_power_w(a, 1.0, 0.0, -0.5, 0.0), 0.5 * 1361.0 * 2.0 * 0.3, 1e-9);
}

TEST(PowerBalance, EnergyIsConservedOverAnOrbitWithAnEclipse) {
    // 98 min orbit, 20 min of umbra, full compute: what the array gave = loads + shunted + stored + losses.
    const PowerParameters p = suncatcher_class_power();
    PowerState s = initial_power_state(p);
    const double dt = 10.0, sunlit_w = solar_power_w(p.array, 1.0, 0.0, 1.0, 0.0);
    double solar_j = 0.0, load_j = 0.0, shunt_j = 0.0, loss_j = 0.0;
    const double start_wh = s.battery_wh;
    for (int k = 0; k < 588; ++k) {
        const double solar = (k >= 100 && k < 220) ? 0.0 : sunlit_w;
        const PowerStep step = advance_power(p, s, solar, 8, 1.0, PowerPolicy::ignore, dt);
        ASSERT_FALSE(step.browned_out);
        solar_j += solar * dt;
        load_j += step.load_w * dt;
        shunt_j += step.shunted_w * dt;
        loss_j += (step.charge_w > 0 ? step.charge_w * (1 / p.battery.charge_efficiency - 1)
                                     : -step.charge_w * (1 - p.battery.discharge_efficiency)) * dt;
    }
    const double stored_j = (s.battery_wh - start_wh) * 3600.0;
    EXPECT_NEAR(solar_j, load_j + shunt_j + stored_j + loss_j, 1e-6 * solar_j);
    // By hand: 20 min at the full load drawn through the discharge efficiency, then recharged in sunlight.
    const double full_w = load_power_w(p.loads, 1.0, 8);
    EXPECT_NEAR(full_w, 300.0 + 150.0 + 8 * 20.0 + 100.0, 1e-9);
    PowerState eclipse = initial_power_state(p);
    for (int k = 0; k < 120; ++k) advance_power(p, eclipse, 0.0, 8, 1.0, PowerPolicy::ignore, dt);
    EXPECT_NEAR(p.battery.capacity_wh - eclipse.battery_wh, full_w * 1200.0 / 3600.0 / p.battery.discharge_efficiency, 1e-6);
}

TEST(PowerPolicy, ThrottleSpendsOnlyTheReserveAboveTheLimitOnCompute) {
    // An undersized battery in a long shadow: throttled compute uses exactly the energy above the state-of-
    // charge limit that the base loads (host, terminals, housekeeping: always powered) leave, and stops
    // when the battery reaches the limit: compute_s * P_chips + P_base * t_limit = reserve * eta_d (to within
    // the one interval's base loads the reserve can no longer cover).
    PowerParameters p = suncatcher_class_power();
    p.battery.capacity_wh = 200.0;
    p.battery.min_state_of_charge = 0.5;
    PowerState s = initial_power_state(p);
    const double dt = 10.0, base = load_power_w(p.loads, 0.0, 8), chips = p.loads.accelerator_w;
    double compute_s = 0.0, t_limit = -1.0;
    for (int k = 0; k < 120; ++k) {  // 20 min of umbra
        const double before = s.battery_wh;
        const PowerStep step = advance_power(p, s, 0.0, 8, 1.0, PowerPolicy::throttle, dt);
        compute_s += step.utilisation * dt;
        if (step.utilisation > 0.0) {
            EXPECT_GE(s.battery_wh, 100.0 - 1e-9);  // compute never takes the battery below its limit
        } else if (t_limit < 0.0) {
            t_limit = k * dt;
            // It stopped because what is left above the limit no longer covers one interval's base loads.
            EXPECT_GE(before, 100.0 - 1e-9);
            EXPECT_LT((before - 100.0) * 3600.0 * p.battery.discharge_efficiency, base * dt);
        }
    }
    ASSERT_GT(t_limit, 0.0);
    EXPECT_NEAR(compute_s * chips + base * t_limit, 100.0 * 3600.0 * p.battery.discharge_efficiency, base * dt);
    EXPECT_GT(compute_s, 0.0);
    EXPECT_LE(compute_s, t_limit);
    // pause: the chips stop rather than run slower.
    PowerState q = initial_power_state(p);
    for (int k = 0; k < 120; ++k) {
        const PowerStep step = advance_power(p, q, 0.0, 8, 1.0, PowerPolicy::pause, dt);
        EXPECT_TRUE(step.utilisation == 0.0 || step.utilisation == 1.0);
    }
}

TEST(PowerPolicy, ThrottleHoldsTheThermalLimit) {
    // A radiator too small for the chips: the node warms to its limit and then compute is held to what
    // the radiator rejects there, eps sigma A (T_max^4 - T_sink^4) - base.
    PowerParameters p = suncatcher_class_power();
    p.radiator.area_m2 = 0.8;
    p.loads.accelerators = 4;
    PowerState s = initial_power_state(p);
    const double sun = 1e5;  // plenty of power: only heat limits
    double u = 1.0;
    for (int k = 0; k < 20000; ++k) u = advance_power(p, s, sun, 8, 1.0, PowerPolicy::throttle, 10.0).utilisation;
    EXPECT_LE(s.temperature_k, p.radiator.max_temperature_k + 1e-6);
    const auto& r = p.radiator;
    const double rejected = r.emissivity * stefan_boltzmann_w_m2_k4 * r.area_m2 *
                            (std::pow(r.max_temperature_k, 4) - std::pow(r.sink_temperature_k, 4));
    EXPECT_NEAR(u, (rejected - load_power_w(p.loads, 0.0, 8)) / (4 * p.loads.accelerator_w), 0.01);
    EXPECT_LT(u, 1.0);
}

TEST(Radiator, PresetRejectsStarcloudsFigureAt20C) {
    // Starcloud: ~633 W per m^2 of (two-faced) radiator panel, net, at 20 C (docs/references.md "Power and heat").
    const Radiator r = suncatcher_class_power().radiator;
    const double per_panel_m2 = 2.0 * r.emissivity * stefan_boltzmann_w_m2_k4 *
                                (std::pow(293.15, 4) - std::pow(r.sink_temperature_k, 4));
    EXPECT_NEAR(per_panel_m2, 633.0, 3.0);
}
