#pragma once
// A ground station's view of a satellite: elevation and range from an Earth-fixed site, the
// visibility windows (passes) of a propagated orbit above a minimum elevation, and the site's cloud
// cover as an outage process (docs/inference.md "Serving from the ground"; sources in
// docs/references.md "Ground segment"). Pure: no I/O.
#include <skyfabric/physics/geodetic.hpp>
#include <skyfabric/physics/orbit.hpp>

#include <Eigen/Core>

#include <array>
#include <cstdint>
#include <vector>

namespace skyfabric::physics {

struct LookAngle {
    double elevation_rad = 0.0;  // above the site's local horizon (the ellipsoid's tangent plane)
    double range_m = 0.0;        // slant range, site to satellite
};

// A site fixed on the rotating Earth: its ECEF position and local vertical (the ellipsoid normal).
class StationFrame {
public:
    explicit StationFrame(const Geodetic& site);
    // sin(elevation) = (r_sat − r_site) · up / |r_sat − r_site|, both ECEF.
    LookAngle look(const Eigen::Vector3d& satellite_ecef_m) const;
    const Eigen::Vector3d& position_ecef_m() const { return position_ecef_m_; }
    const Eigen::Vector3d& up() const { return up_; }

private:
    Eigen::Vector3d position_ecef_m_;
    Eigen::Vector3d up_;
};

// An orbit sampled on a uniform grid (the run's output steps): states at start_s + k·step_s.
// Between samples the position is the cubic Hermite interpolant of the two end states' positions and
// velocities: its error is about step⁴ n⁴ r / 384 (0.3 mm at 10 s, 0.4 m at 60 s in LEO).
struct SampledOrbit {
    double start_s = 0.0;
    double step_s = 1.0;
    std::vector<CartesianState> states_eci;
    double end_s() const { return states_eci.empty() ? start_s : start_s + step_s * static_cast<double>(states_eci.size() - 1); }
    // t is clamped to [start_s, end_s()]; needs at least one state.
    Eigen::Vector3d position_eci_m(double t_s) const;
};

// The site's look angle at a satellite on `orbit` at time t_s after the epoch (ECI → ECEF by the
// Greenwich sidereal angle, time.hpp).
LookAngle look_angle(const StationFrame& site, const SampledOrbit& orbit, double epoch_julian_date_days, double t_s);

struct VisibilityWindow {
    double rise_s = 0.0;              // elevation crosses min_elevation upward (or the orbit's start)
    double set_s = 0.0;               // downward (or the orbit's end)
    double max_elevation_rad = 0.0;   // highest elevation on the scan grid within the window
};

// The intervals in which the satellite is at or above min_elevation_rad, over the sampled orbit's span:
// elevation scanned every scan_step_s (at most the orbit's step) and each crossing bisected on the
// interpolated orbit to 1e-4 s. A pass shorter than the scan step that rises and sets between two scan
// points is missed (a graze below min_elevation + a few hundredths of a degree at 2 s in LEO).
std::vector<VisibilityWindow> visibility_windows(const StationFrame& site, double min_elevation_rad,
                                                 const SampledOrbit& orbit, double epoch_julian_date_days,
                                                 double scan_step_s = 2.0);

// A site's contact with an orbit day by day over a year (`skyfabric season`): the mean orbit, its node,
// perigee and mean anomaly moving at their J2 secular rates (orbit.hpp), sampled every step_s of each
// day (Keplerian states), its passes found as above on a scan_step_s grid. Day d covers
// [d, d + 1) days after start_julian_date; a pass across midnight counts in both days, split.
struct DailyContact {
    int day = 0;
    double contact_s = 0.0;
    int passes = 0;
};
std::vector<DailyContact> daily_contact(const KeplerianElements& mean, double j2, double start_julian_date_days, int days,
                                        const StationFrame& site, double min_elevation_rad, double step_s = 30.0,
                                        double scan_step_s = 10.0);

// A site's cloud cover, as a two-state (clear, cloudy) alternating process with exponentially
// distributed spells: a cloudy spell lasts mean_cloudy_spell_s on average; a clear spell beginning in
// calendar month m lasts mean_cloudy_spell_s · p_m / (1 − p_m), so the long-run clear fraction of that
// month is p_m = cloud_free_fraction[m]. p = 1: never cloudy; p = 0: always cloudy.
struct CloudClimate {
    std::array<double, 12> cloud_free_fraction{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};  // January first
    double mean_cloudy_spell_s = 6.0 * 3600.0;
    bool operator==(const CloudClimate&) const = default;
};

struct TimeInterval {
    double start_s = 0.0;
    double end_s = 0.0;
};

// Calendar month (1..12, Gregorian) of a Julian date (Meeus, Astronomical Algorithms, ch. 7).
int calendar_month(double julian_date_days);

// The cloudy intervals over [start_s, end_s), in order: the first state is clear with the start month's
// p, then spells alternate, each length a counter-based exponential draw of (seed, stream, spell index)
// (random.hpp), so a site's weather does not depend on the other sites or on the order they are drawn.
std::vector<TimeInterval> cloudy_intervals(const CloudClimate& climate, double epoch_julian_date_days, double start_s,
                                           double end_s, std::uint64_t seed, std::uint64_t stream);

}  // namespace skyfabric::physics
