#include <skyfabric/physics/season.hpp>

#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/propagation.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using namespace skyfabric::physics;

namespace {
const double a650 = earth_equatorial_radius_m + 650e3;
KeplerianElements dawn_dusk() {
    return {a650, 0.0, sun_synchronous_inclination_rad(a650, 0.0), raan_for_ltan_rad(6.0, PropagationSettings{}.epoch_julian_date),
            0.0, 0.0};
}
}  // namespace

TEST(EclipseSeason, DefaultOrbitMatchesTheAstropySeasonAndThePresetSustainsFullComputeAllYear) {
    // docs/references.md (astropy check): 89 eclipse days (about 8 Nov - 4 Feb from the March 2027 epoch), at most
    // 20.2 min of shadow per orbit (19.3 min umbra) around 22 Dec, |beta| >= 58.6 deg.
    const auto days = eclipse_season(dawn_dusk(), PropagationSettings{}.epoch_julian_date, earth_j2, suncatcher_class_power());
    ASSERT_EQ(days.size(), 365u);
    const auto eclipse_days = std::count_if(days.begin(), days.end(), [](const SeasonDay& d) { return d.shadow_s > 0.0; });
    EXPECT_NEAR(static_cast<double>(eclipse_days), 89.0, 3.0);
    const auto worst = std::max_element(days.begin(), days.end(), [](auto& x, auto& y) { return x.shadow_s < y.shadow_s; });
    EXPECT_NEAR(worst->shadow_s / 60.0, 20.2, 0.5);
    EXPECT_NEAR(worst->umbra_s / 60.0, 19.3, 0.5);
    EXPECT_NEAR(worst->day, 277.0, 4.0);  // 2027-03-20 + 277 d = 2027-12-22
    for (const auto& d : days) {
        EXPECT_GE(std::abs(d.beta_rad), 58.3 * pi / 180.0) << d.day;
        EXPECT_EQ(d.sustainable_compute, 1.0) << d.day;  // the preset is sized for the worst eclipse
    }
}

TEST(EclipseSeason, AnUndersizedBatteryLimitsComputeOnlyInTheSeasonToWhatItsUsableEnergyAllows) {
    PowerParameters p = suncatcher_class_power();
    p.battery.capacity_wh = 600.0;  // usable 180 Wh: less than the ~250 Wh a full-load eclipse draws
    const auto days = eclipse_season(dawn_dusk(), PropagationSettings{}.epoch_julian_date, earth_j2, p);
    const auto& worst = *std::min_element(days.begin(), days.end(), [](auto& x, auto& y) {
        return x.sustainable_compute < y.sustainable_compute;
    });
    EXPECT_GT(worst.shadow_s / 60.0, 19.5);  // the least compute falls near the longest shadows (December)
    for (const auto& d : days) {
        if (d.shadow_s == 0.0) {
            EXPECT_EQ(d.sustainable_compute, 1.0) << d.day;
        }
    }
    // By hand on the worst day: the shadow's draw at the sustainable load equals the usable energy,
    // (P_base + u P_chip) t_shadow / eta_d = C (1 - SOC_min), with t_shadow between umbra and penumbra.
    const double usable_j = 600.0 * 3600.0 * (1.0 - p.battery.min_state_of_charge);
    const double base = load_power_w(p.loads, 0.0, 8);
    auto u_for = [&](double t_shadow) {
        return (usable_j * p.battery.discharge_efficiency / t_shadow - base) / p.loads.accelerator_w;
    };
    EXPECT_LT(worst.sustainable_compute, 1.0);
    EXPECT_GT(worst.sustainable_compute, 0.0);
    EXPECT_GE(worst.sustainable_compute, u_for(worst.shadow_s) - 1e-6);
    EXPECT_LE(worst.sustainable_compute, u_for(worst.umbra_s) + 1e-6);
}
