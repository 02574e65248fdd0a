#include "simulation/sample_statistics.hpp"

#include "simulation/simulation.hpp"

#include <skyfabric/physics/formation_metrics.hpp>
#include <skyfabric/physics/neighbours.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace skyfabric::simulation {

// Envelope, nearest neighbours, closest pair and the reference satellite's k nearest.
// One 1-nearest k-d tree query serves the nearest distances and the closest pair (physics'
// nearest_neighbour_distances_m and minimum_separation would build a tree each); the reference's
// k nearest are one O(N) pass. Asking the tree for k neighbours of every satellite instead cost
// ~10 % of a 10,000-satellite orbit.
void derive_metrics(const scenario::Scenario& sc, const physics::FormationSnapshot& snap, Sample& s) {
    const auto envelope = physics::formation_envelope(snap.satellites_lvlh);
    s.envelope_m[0] = envelope.max_abs_radial_m;
    s.envelope_m[1] = envelope.max_abs_along_track_m;
    s.envelope_m[2] = envelope.max_abs_cross_track_m;
    const std::size_t n = snap.satellites_lvlh.size();
    const int k = std::min<int>(sc.metrics.neighbour_count, static_cast<int>(n) - 1);
    s.nearest_neighbour_m.assign(n, std::numeric_limits<double>::quiet_NaN());
    s.reference_neighbours_m.clear();
    s.min_separation_m = std::numeric_limits<double>::quiet_NaN();
    if (k < 1) return;
    const auto positions = physics::positions_of(snap.satellites_lvlh);
    const auto nn = physics::k_nearest_neighbours(positions, 1);
    s.min_separation_m = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n; ++i) {
        const double d = nn.distance_m[i];
        s.nearest_neighbour_m[i] = d;
        if (d < s.min_separation_m) {
            const auto j = static_cast<std::size_t>(nn.index[i]);
            s.min_separation_m = d;
            s.min_separation_pair[0] = static_cast<std::int32_t>(std::min(i, j));
            s.min_separation_pair[1] = static_cast<std::int32_t>(std::max(i, j));
        }
    }
    s.reference_neighbours_m =
        physics::k_nearest_distances_m(positions, static_cast<std::size_t>(sc.metrics.reference_satellite), k);
}

void SampleStatistics::add(const Sample& s, double min_separation_alarm_m, RunSummary& m) {
    m.beta_angle_min_rad = std::min(m.beta_angle_min_rad, s.beta_angle_rad);
    m.beta_angle_max_rad = std::max(m.beta_angle_max_rad, s.beta_angle_rad);
    double shadow = 0.0;
    for (double f : s.shadow_fraction) shadow += f;
    if (shadow > 0.0) ++m.samples_in_shadow;
    shadow_sum_ += s.shadow_fraction.empty() ? 0.0 : shadow / static_cast<double>(s.shadow_fraction.size());
    for (double d : s.nearest_neighbour_m) {
        m.nearest_neighbour_min_m = std::min(m.nearest_neighbour_min_m, d);
        m.nearest_neighbour_max_m = std::max(m.nearest_neighbour_max_m, d);
    }
    for (double d : s.reference_neighbours_m) {
        m.reference_neighbours_min_m = std::min(m.reference_neighbours_min_m, d);
        m.reference_neighbours_max_m = std::max(m.reference_neighbours_max_m, d);
    }
    if (s.min_separation_m < m.min_separation_m) {
        m.min_separation_m = s.min_separation_m;
        m.min_separation_time_s = s.snapshot->time_s;
        m.min_separation_pair[0] = s.min_separation_pair[0];
        m.min_separation_pair[1] = s.min_separation_pair[1];
    }
    if (s.min_separation_m < min_separation_alarm_m) ++m.separation_alarms;
    for (int a = 0; a < 3; ++a) m.envelope_max_m[a] = std::max(m.envelope_max_m[a], s.envelope_m[a]);
    for (double e : s.model_error_m) m.model_error_max_m = std::max(m.model_error_max_m, e);
    if (s.topology) {
        const auto& t = s.link_metrics;
        if (t.link_count > 0) {
            m.link_capacity_min_bps = std::min(m.link_capacity_min_bps, t.capacity_min_bps);
            m.link_capacity_max_bps = std::max(m.link_capacity_max_bps, t.capacity_max_bps);
            capacity_sum_bps_ += t.capacity_mean_bps * t.link_count;
            link_samples_ += static_cast<std::size_t>(t.link_count);
        }
        // A link pointed but still within its re-acquisition time carries nothing (capacity 0): the
        // summary's minimum is then 0, so count those and give the minimum over the others too.
        for (const auto& link : s.topology->links) {
            if (link.acquiring) {
                ++m.link_samples_acquiring;
            } else {
                m.link_capacity_min_carrying_bps = std::min(m.link_capacity_min_carrying_bps, link.capacity_bps);
            }
        }
        m.bisection_capacity_min_bps = std::min(m.bisection_capacity_min_bps, t.bisection_capacity_bps);
        bisection_sum_bps_ += t.bisection_capacity_bps;
        degree_sum_ += t.links_per_satellite_mean;
        m.links_per_satellite_max = std::max(m.links_per_satellite_max, t.links_per_satellite_max);
        m.components_max = std::max(m.components_max, t.components);
        m.link_events += s.link_events.size();
    }
    if (s.aggregation) {
        const auto& a = *s.aggregation;
        const bool first = m.samples_written == 0;
        m.gateway_capacity_min_bps = std::min(m.gateway_capacity_min_bps, a.gateway_capacity_bps);
        gateway_capacity_sum_bps_ += a.gateway_capacity_bps;
        m.gateway_links_min = first ? a.gateway_links : std::min(m.gateway_links_min, a.gateway_links);
        m.gateway_links_max = std::max(m.gateway_links_max, a.gateway_links);
        m.gateway_blocked_max = std::max(m.gateway_blocked_max, a.blocked);
        m.oversubscription_min = std::min(m.oversubscription_min, a.oversubscription_max);
        m.oversubscription_max = std::max(m.oversubscription_max, a.oversubscription_max);
        oversubscription_sum_ += a.oversubscription_max;
    }
}

void SampleStatistics::finish(RunSummary& m, bool links, bool constellation) const {
    if (m.samples_written > 0) m.shadow_fraction_mean = shadow_sum_ / static_cast<double>(m.samples_written);
    if (!std::isfinite(m.beta_angle_min_rad)) m.beta_angle_min_rad = m.beta_angle_max_rad = 0.0;
    if (links && m.samples_written > 0) {
        const double samples = static_cast<double>(m.samples_written);
        m.link_capacity_mean_bps = link_samples_ ? capacity_sum_bps_ / static_cast<double>(link_samples_) : 0.0;
        m.link_samples = static_cast<std::int64_t>(link_samples_);
        m.bisection_capacity_mean_bps = bisection_sum_bps_ / samples;
        m.links_per_satellite_mean = degree_sum_ / samples;
    }
    if (!std::isfinite(m.link_capacity_min_bps)) m.link_capacity_min_bps = 0.0;
    if (!std::isfinite(m.link_capacity_min_carrying_bps)) m.link_capacity_min_carrying_bps = 0.0;
    if (!std::isfinite(m.bisection_capacity_min_bps)) m.bisection_capacity_min_bps = 0.0;
    if (constellation && m.samples_written > 0) {
        m.gateway_capacity_mean_bps = gateway_capacity_sum_bps_ / static_cast<double>(m.samples_written);
        m.oversubscription_mean = oversubscription_sum_ / static_cast<double>(m.samples_written);
    }
    if (!std::isfinite(m.gateway_capacity_min_bps)) m.gateway_capacity_min_bps = 0.0;
}

// The output samples: every output_step_s from 0, and the run's end when it falls between two.
std::vector<double> sample_times(double duration_s, double output_step_s) {
    std::vector<double> times;
    const auto whole_steps = static_cast<std::size_t>(std::floor(duration_s / output_step_s + 1e-9));
    times.reserve(whole_steps + 2);
    for (std::size_t k = 0; k <= whole_steps; ++k) times.push_back(static_cast<double>(k) * output_step_s);
    if (duration_s - times.back() > 1e-9 * std::max(1.0, duration_s)) times.push_back(duration_s);
    return times;
}

}  // namespace skyfabric::simulation
