// Passes of a propagated orbit over a ground station against the closed form (docs/inference.md
// "Serving from the ground"), and the cloud process's long-run statistics.
#include <skyfabric/physics/ground_station.hpp>

#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/time.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace skyfabric::physics;

namespace {

// A circular equatorial orbit of radius r, sampled every step_s for duration_s from argument of latitude u0.
SampledOrbit equatorial_orbit(double r, double u0, double step_s, double duration_s) {
    SampledOrbit orbit;
    orbit.step_s = step_s;
    const double n = std::sqrt(earth_mu_m3_s2 / (r * r * r));
    for (double t = 0.0; t <= duration_s + 1e-9; t += step_s) {
        KeplerianElements e;
        e.semi_major_axis_m = r;
        e.true_anomaly_rad = u0 + n * t;
        orbit.states_eci.push_back(keplerian_to_cartesian(e, earth_mu_m3_s2));
    }
    return orbit;
}

}  // namespace

// An equatorial circular orbit at 650 km and a station on the equator at sea level (where the WGS-84
// normal is radial, so the spherical geometry is exact). The satellite and the station turn about the
// same axis, at n and at the Earth's rate ω; their central angle ψ(t) = (n − ω) t + u0 − θ0. The
// satellite is at or above elevation ε when cos ψ ≥ cos ψ_max, ψ_max = acos(R cos ε / r) − ε (the
// triangle centre–station–satellite). So pass k is centred at t_k = (2πk − u0 + θ0) / (n − ω) and lasts
// 2 ψ_max / (n − ω): 13.73 passes a day of 582.16 s each at ε = 10°.
TEST(GroundStationPasses, EquatorialOrbitOverAnEquatorialStationMatchesTheClosedFormWithinOneSecond) {
    const double R = earth_equatorial_radius_m, r = R + 650e3;
    const double epsilon = 10.0 * pi / 180.0;
    const double jd = julian_date({2027, 3, 20, 0, 0, 0.0});
    const double theta0 = greenwich_sidereal_angle_rad(jd);
    const double n = std::sqrt(earth_mu_m3_s2 / (r * r * r));
    const double relative = n - earth_rotation_rad_s;
    const double psi_max = std::acos(R * std::cos(epsilon) / r) - epsilon;
    const double u0 = theta0 - psi_max - 0.5;  // starts below the horizon, 0.5 rad before the first rise
    const auto orbit = equatorial_orbit(r, u0, 10.0, seconds_per_day);
    const StationFrame station(Geodetic{0.0, 0.0, 0.0});
    const auto windows = visibility_windows(station, epsilon, orbit, jd);

    std::vector<std::pair<double, double>> expected;
    for (int k = 0;; ++k) {
        const double centre = (2.0 * pi * k - u0 + theta0) / relative;
        const double rise = centre - psi_max / relative, set = centre + psi_max / relative;
        if (rise > seconds_per_day) break;
        expected.emplace_back(rise, std::min(set, seconds_per_day));
    }
    ASSERT_EQ(windows.size(), expected.size());
    EXPECT_EQ(windows.size(), 14u);
    double worst_s = 0.0;
    for (std::size_t k = 0; k < windows.size(); ++k) {
        worst_s = std::max({worst_s, std::abs(windows[k].rise_s - expected[k].first), std::abs(windows[k].set_s - expected[k].second)});
        EXPECT_NEAR(windows[k].rise_s, expected[k].first, 1.0) << "pass " << k;
        EXPECT_NEAR(windows[k].set_s, expected[k].second, 1.0) << "pass " << k;
        if (expected[k].second < seconds_per_day) {
            EXPECT_NEAR(windows[k].set_s - windows[k].rise_s, 2.0 * psi_max / relative, 1.0) << "pass " << k;
        }
    }
    std::printf("worst rise/set difference from the closed form: %.2e s over %zu passes\n", worst_s, windows.size());
    EXPECT_NEAR(2.0 * psi_max / relative, 582.16, 0.01);  // the figure quoted in docs/inference.md
}

// At a pass's centre the satellite is at the zenith: elevation 90°, range r − R.
TEST(GroundStationPasses, LookAngleAtTheZenithIsTheAltitude) {
    const double R = earth_equatorial_radius_m;
    const StationFrame station(Geodetic{0.0, 0.0, 0.0});
    const auto look = station.look(Eigen::Vector3d(R + 650e3, 0.0, 0.0));
    EXPECT_NEAR(look.elevation_rad, pi / 2, 1e-12);
    EXPECT_NEAR(look.range_m, 650e3, 1e-6);
}

// Meeus' calendar: 2000 Jan 1.5 is JD 2451545.0; 2027 Mar 20 0h, 2026 Dec 31 23:59.
TEST(CalendarMonth, FromJulianDate) {
    EXPECT_EQ(calendar_month(2451545.0), 1);
    EXPECT_EQ(calendar_month(julian_date({2027, 3, 20, 0, 0, 0.0})), 3);
    EXPECT_EQ(calendar_month(julian_date({2026, 12, 31, 23, 59, 0.0})), 12);
    EXPECT_EQ(calendar_month(julian_date({2027, 2, 28, 12, 0, 0.0})), 2);
}

// An alternating renewal process's long-run clear fraction is E[clear] / (E[clear] + E[cloudy]) = p, and
// its cloudy spells average their mean. Over 2,000 days of 6 h cloudy spells at p = 0.7 (about 2,400
// cloudy spells) the standard error of the fraction is about 0.01; 4 of them allowed.
TEST(CloudProcess, LongRunClearFractionAndSpellLengthAreTheClimate) {
    CloudClimate climate;
    climate.cloud_free_fraction.fill(0.7);
    climate.mean_cloudy_spell_s = 6.0 * 3600.0;
    const double span = 2000.0 * seconds_per_day;
    const auto cloudy = cloudy_intervals(climate, julian_date({2027, 1, 1, 0, 0, 0.0}), 0.0, span, 42, 1);
    double cloudy_s = 0.0;
    for (const auto& c : cloudy) cloudy_s += c.end_s - c.start_s;
    EXPECT_NEAR(1.0 - cloudy_s / span, 0.7, 0.04);
    EXPECT_NEAR(cloudy_s / static_cast<double>(cloudy.size()) / 3600.0, 6.0, 0.5);
    climate.cloud_free_fraction.fill(1.0);
    EXPECT_TRUE(cloudy_intervals(climate, 2451545.0, 0.0, span, 42, 1).empty());
    climate.cloud_free_fraction.fill(0.0);
    const auto always = cloudy_intervals(climate, 2451545.0, 0.0, span, 42, 1);
    ASSERT_EQ(always.size(), 1u);
    EXPECT_EQ(always[0].start_s, 0.0);
    EXPECT_EQ(always[0].end_s, span);
}

// A year's view, day by day: a two-body polar orbit (j2 = 0, so the plane stays put) over a station at
// the North Pole, where the Earth's rotation does not move the site and the WGS-84 normal is radial at the
// polar radius b. The satellite (argument of latitude n t) is over the pole at t_k = (π/2 + 2πk)/n and
// above ε while within ψ_max = acos(b cos ε / r) − ε of it: day d's contact is the overlap of
// [t_k ∓ ψ_max/n] with the day, summed over k (a pass across midnight split between the days).
TEST(GroundStationPasses, DailyContactOfAPolarOrbitOverThePoleIsTheClosedForm) {
    const double b = earth_equatorial_radius_m * (1.0 - earth_flattening), r = earth_equatorial_radius_m + 650e3;
    const double epsilon = 10.0 * pi / 180.0;
    const double n = std::sqrt(earth_mu_m3_s2 / (r * r * r));
    const double half_s = (std::acos(b * std::cos(epsilon) / r) - epsilon) / n;
    KeplerianElements mean;
    mean.semi_major_axis_m = r;
    mean.inclination_rad = pi / 2.0;
    const StationFrame pole(Geodetic{pi / 2.0, 0.0, 0.0});
    const auto days = daily_contact(mean, 0.0, julian_date({2027, 1, 1, 0, 0, 0.0}), 5, pole, epsilon);
    ASSERT_EQ(days.size(), 5u);
    for (const auto& day : days) {
        const double from = day.day * seconds_per_day, to = from + seconds_per_day;
        double expected = 0.0;
        int passes = 0;
        for (int k = 0; k < 100; ++k) {
            const double centre = (pi / 2.0 + 2.0 * pi * k) / n;
            const double overlap = std::min(to, centre + half_s) - std::max(from, centre - half_s);
            if (overlap > 0.0) {
                expected += overlap;
                ++passes;
            }
        }
        EXPECT_NEAR(day.contact_s, expected, 1.0) << "day " << day.day;
        EXPECT_EQ(day.passes, passes) << "day " << day.day;
    }
}
