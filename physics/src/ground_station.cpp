#include <skyfabric/physics/ground_station.hpp>

#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/random.hpp>
#include <skyfabric/physics/time.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace skyfabric::physics {

StationFrame::StationFrame(const Geodetic& site) : position_ecef_m_(geodetic_to_ecef(site)) {
    const double cl = std::cos(site.latitude_rad);
    up_ = Eigen::Vector3d(cl * std::cos(site.longitude_rad), cl * std::sin(site.longitude_rad), std::sin(site.latitude_rad));
}

LookAngle StationFrame::look(const Eigen::Vector3d& satellite_ecef_m) const {
    const Eigen::Vector3d d = satellite_ecef_m - position_ecef_m_;
    const double range = d.norm();
    return LookAngle{std::asin(std::clamp(d.dot(up_) / range, -1.0, 1.0)), range};
}

Eigen::Vector3d SampledOrbit::position_eci_m(double t_s) const {
    const std::size_t n = states_eci.size();
    if (n == 1) return states_eci.front().position_m;
    const double x = std::clamp((t_s - start_s) / step_s, 0.0, static_cast<double>(n - 1));
    const auto k = std::min(static_cast<std::size_t>(x), n - 2);
    const double s = x - static_cast<double>(k);
    const double s2 = s * s, s3 = s2 * s;
    const auto& a = states_eci[k];
    const auto& b = states_eci[k + 1];
    return (2 * s3 - 3 * s2 + 1) * a.position_m + (s3 - 2 * s2 + s) * step_s * a.velocity_m_s +
           (-2 * s3 + 3 * s2) * b.position_m + (s3 - s2) * step_s * b.velocity_m_s;
}

LookAngle look_angle(const StationFrame& site, const SampledOrbit& orbit, double epoch_julian_date_days, double t_s) {
    const double theta = greenwich_sidereal_angle_rad(epoch_julian_date_days, t_s);
    return site.look(eci_to_ecef(orbit.position_eci_m(t_s), theta));
}

std::vector<VisibilityWindow> visibility_windows(const StationFrame& site, double min_elevation_rad,
                                                 const SampledOrbit& orbit, double epoch_julian_date_days,
                                                 double scan_step_s) {
    std::vector<VisibilityWindow> windows;
    if (orbit.states_eci.empty()) return windows;
    const double t0 = orbit.start_s, t1 = orbit.end_s();
    const auto above = [&](double t) { return look_angle(site, orbit, epoch_julian_date_days, t).elevation_rad - min_elevation_rad; };
    // The crossing in (a, b), f(a) and f(b) of opposite signs: bisection to 1e-4 s.
    const auto crossing = [&](double a, double b, bool rising) {
        while (b - a > 1e-4) {
            const double m = 0.5 * (a + b);
            if ((above(m) >= 0.0) == rising) b = m;
            else a = m;
        }
        return 0.5 * (a + b);
    };
    const double step = std::min(scan_step_s, orbit.step_s);
    const auto n = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil((t1 - t0) / step)));
    double previous_t = t0, previous_f = above(t0);
    std::optional<VisibilityWindow> open;
    if (previous_f >= 0.0) open = VisibilityWindow{t0, t0, previous_f + min_elevation_rad};
    for (std::int64_t k = 1; k <= n; ++k) {
        const double t = k == n ? t1 : t0 + (t1 - t0) * static_cast<double>(k) / static_cast<double>(n);
        const double f = above(t);
        if (f >= 0.0 && !open) {
            open = VisibilityWindow{crossing(previous_t, t, true), 0.0, f + min_elevation_rad};
        } else if (f < 0.0 && open) {
            open->set_s = crossing(previous_t, t, false);
            windows.push_back(*open);
            open.reset();
        }
        if (open) open->max_elevation_rad = std::max(open->max_elevation_rad, f + min_elevation_rad);
        previous_t = t;
        previous_f = f;
    }
    if (open) {
        open->set_s = t1;
        windows.push_back(*open);
    }
    return windows;
}

std::vector<DailyContact> daily_contact(const KeplerianElements& mean, double j2, double start_julian_date_days, int days,
                                        const StationFrame& site, double min_elevation_rad, double step_s, double scan_step_s) {
    const auto rates = j2_secular_rates(mean.semi_major_axis_m, mean.eccentricity, mean.inclination_rad, j2);
    const double m0 = mean_anomaly_from_true_rad(mean.true_anomaly_rad, mean.eccentricity);
    const auto samples = static_cast<std::size_t>(std::ceil(seconds_per_day / step_s));
    std::vector<DailyContact> out;
    SampledOrbit orbit;
    orbit.step_s = seconds_per_day / static_cast<double>(samples);
    for (int d = 0; d < days; ++d) {
        orbit.states_eci.clear();
        for (std::size_t k = 0; k <= samples; ++k) {
            const double t = d * seconds_per_day + static_cast<double>(k) * orbit.step_s;
            KeplerianElements e = mean;
            e.raan_rad += rates.raan_rad_s * t;
            e.arg_perigee_rad += rates.arg_perigee_rad_s * t;
            e.true_anomaly_rad = true_anomaly_from_mean_rad(std::fmod(m0 + rates.mean_anomaly_rad_s * t, 2.0 * pi), mean.eccentricity);
            orbit.states_eci.push_back(keplerian_to_cartesian(e, earth_mu_m3_s2));
        }
        DailyContact c{d, 0.0, 0};
        for (const auto& w : visibility_windows(site, min_elevation_rad, orbit, start_julian_date_days + d, scan_step_s)) {
            c.contact_s += w.set_s - w.rise_s;
            ++c.passes;
        }
        out.push_back(c);
    }
    return out;
}

int calendar_month(double julian_date_days) {
    const double z = std::floor(julian_date_days + 0.5);
    double a = z;
    if (z >= 2299161.0) {
        const double alpha = std::floor((z - 1867216.25) / 36524.25);
        a = z + 1.0 + alpha - std::floor(alpha / 4.0);
    }
    const double b = a + 1524.0;
    const double c = std::floor((b - 122.1) / 365.25);
    const double d = std::floor(365.25 * c);
    const double e = std::floor((b - d) / 30.6001);
    return static_cast<int>(e < 14.0 ? e - 1.0 : e - 13.0);
}

std::vector<TimeInterval> cloudy_intervals(const CloudClimate& climate, double epoch_julian_date_days, double start_s,
                                           double end_s, std::uint64_t seed, std::uint64_t stream) {
    std::vector<TimeInterval> cloudy;
    const auto clear_fraction = [&](double t) {
        return climate.cloud_free_fraction[static_cast<std::size_t>(calendar_month(epoch_julian_date_days + t / seconds_per_day) - 1)];
    };
    std::uint64_t draw = 0;
    bool clear = rng::uniform01(seed, stream, draw++) <= clear_fraction(start_s);
    double t = start_s;
    while (t < end_s) {
        const double p = clear_fraction(t);
        double mean_s = climate.mean_cloudy_spell_s;
        if (clear) mean_s = p >= 1.0 ? std::numeric_limits<double>::infinity() : mean_s * p / (1.0 - p);
        const double length = std::isinf(mean_s) ? end_s - t : -mean_s * std::log(rng::uniform01(seed, stream, draw++));
        const double next = std::min(end_s, t + length);
        if (!clear && next > t) {
            if (!cloudy.empty() && cloudy.back().end_s >= t) cloudy.back().end_s = next;  // a zero-length clear spell
            else cloudy.push_back({t, next});
        }
        t = next;
        clear = !clear;
    }
    return cloudy;
}

}  // namespace skyfabric::physics
