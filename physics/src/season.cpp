#include <skyfabric/physics/season.hpp>

#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/illumination.hpp>

#include <cmath>

namespace skyfabric::physics {

namespace {

// Orbit-level energy balance at utilisation u for array output samples `array_w` (each dt_s long).
bool sustainable(const PowerParameters& p, const std::vector<double>& array_w, double dt_s, int links, double u) {
    const double load = load_power_w(p.loads, u, links);
    double surplus_j = 0.0, deficit_j = 0.0;
    for (const double a : array_w) {
        if (a >= load) surplus_j += (a - load) * dt_s;
        else deficit_j += (load - a) * dt_s;
    }
    const Battery& b = p.battery;
    const bool refilled = surplus_j * b.charge_efficiency * b.discharge_efficiency >= deficit_j;
    const bool fits = deficit_j / b.discharge_efficiency <= b.capacity_wh * 3600.0 * (1.0 - b.min_state_of_charge);
    return refilled && fits;
}

}  // namespace

std::vector<SeasonDay> eclipse_season(const KeplerianElements& chief_mean, double epoch_jd, double j2,
                                      const PowerParameters& power, const SeasonOptions& o) {
    const double a = chief_mean.semi_major_axis_m, e = chief_mean.eccentricity, inc = chief_mean.inclination_rad;
    const J2SecularRates rates = j2_secular_rates(a, e, inc, j2);
    const double period = 2.0 * pi / rates.arg_latitude_rad_s();
    const double dt = period / o.samples_per_orbit;
    std::vector<SeasonDay> out;
    std::vector<double> array_w(static_cast<std::size_t>(o.samples_per_orbit));
    for (int d = 0; d < o.days; ++d) {
        const double t0 = d * seconds_per_day;
        SeasonDay day;
        day.day = d;
        day.julian_date = epoch_jd + d;
        day.period_s = period;
        const Eigen::Vector3d sun = sun_position_eci_m(day.julian_date);
        const double au = sun.norm() / astronomical_unit_m;
        KeplerianElements m = chief_mean;
        m.raan_rad += rates.raan_rad_s * t0;
        m.arg_perigee_rad += rates.arg_perigee_rad_s * t0;
        const double m0 = mean_anomaly_from_true_rad(chief_mean.true_anomaly_rad, e) + rates.mean_anomaly_rad_s * t0;
        for (int k = 0; k < o.samples_per_orbit; ++k) {
            m.true_anomaly_rad = true_anomaly_from_mean_rad(m0 + 2.0 * pi * k / o.samples_per_orbit, e);
            const CartesianState s = keplerian_to_cartesian(m, earth_mu_m3_s2);
            if (k == 0) day.beta_rad = beta_angle_rad(s.position_m, s.velocity_m_s, sun);
            const double f = shadow_fraction(s.position_m, sun, ShadowModel::conical);
            day.shadow_s += f > 0.0 ? dt : 0.0;
            day.umbra_s += f >= 1.0 ? dt : 0.0;
            array_w[static_cast<std::size_t>(k)] = solar_power_w(power.array, au, f, std::sin(day.beta_rad), t0 / seconds_per_julian_year);
            day.generated_wh += array_w[static_cast<std::size_t>(k)] * dt / 3600.0;
        }
        day.load_full_wh = load_power_w(power.loads, 1.0, o.active_links) * period / 3600.0;
        // Bisection on the utilisation (sustainability is monotonic in it).
        if (sustainable(power, array_w, dt, o.active_links, 1.0)) {
            day.sustainable_compute = 1.0;
        } else if (sustainable(power, array_w, dt, o.active_links, 0.0)) {
            double lo = 0.0, hi = 1.0;
            for (int it = 0; it < 40; ++it) {
                const double mid = 0.5 * (lo + hi);
                (sustainable(power, array_w, dt, o.active_links, mid) ? lo : hi) = mid;
            }
            day.sustainable_compute = lo;
        }
        out.push_back(day);
    }
    return out;
}

}  // namespace skyfabric::physics
