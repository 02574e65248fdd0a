#include <skyfabric/workloads/ground_segment.hpp>

#include "serving_records.hpp"

#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/random.hpp>
#include <skyfabric/physics/time.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>

namespace skyfabric::workloads {

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double c_m_s = physics::speed_of_light_m_s;
constexpr std::uint64_t cloud_tag = 0x67726f756e64636cull;  // "groundcl": each site's clouds
constexpr std::uint64_t home_tag = 0x67726f756e64686full;   // "groundho": each request's home station

struct Piece {
    double start_s, end_s;
};

// [a, b) less the cloudy intervals (sorted), as clear and cloudy pieces in order.
void split_by_clouds(double a, double b, const std::vector<physics::TimeInterval>& cloudy,
                     std::vector<std::pair<Piece, bool>>& out) {
    out.clear();
    auto it = std::upper_bound(cloudy.begin(), cloudy.end(), a,
                               [](double t, const physics::TimeInterval& c) { return t < c.end_s; });
    double t = a;
    for (; it != cloudy.end() && it->start_s < b && t < b; ++it) {
        if (it->start_s > t) out.push_back({{t, it->start_s}, false});
        const double e = std::min(b, it->end_s);
        if (e > std::max(t, it->start_s)) out.push_back({{std::max(t, it->start_s), e}, true});
        t = e;
    }
    if (t < b) out.push_back({{t, b}, false});
}

}  // namespace

std::vector<StationTimeline> ground_timelines(const GroundSegmentConfig& config,
                                              std::span<const physics::SampledOrbit> cluster_orbits, double start_s,
                                              double end_s) {
    std::vector<StationTimeline> timelines;
    const double jd = config.epoch_julian_date_days;
    std::vector<std::pair<Piece, bool>> pieces;
    for (std::size_t s = 0; s < config.stations.size(); ++s) {
        const auto& station = config.stations[s];
        const physics::StationFrame frame(station.site);
        StationTimeline line;
        // Every cluster's passes, merged: the station sees some cluster throughout a merged window.
        std::vector<Piece> windows;
        for (const auto& orbit : cluster_orbits)
            for (const auto& w : physics::visibility_windows(frame, station.min_elevation_rad, orbit, jd))
                if (w.set_s > start_s && w.rise_s < end_s) windows.push_back({std::max(w.rise_s, start_s), std::min(w.set_s, end_s)});
        std::sort(windows.begin(), windows.end(), [](const Piece& a, const Piece& b) { return a.start_s < b.start_s; });
        std::vector<Piece> merged;
        for (const auto& w : windows) {
            if (!merged.empty() && w.start_s <= merged.back().end_s) merged.back().end_s = std::max(merged.back().end_s, w.end_s);
            else merged.push_back(w);
        }
        const bool optical = station.kind == links::GroundLinkKind::optical;
        const auto cloudy = optical ? physics::cloudy_intervals(station.clouds, jd, start_s, end_s,
                                                                physics::rng::derive_seed(config.seed, cloud_tag), s)
                                    : std::vector<physics::TimeInterval>{};
        for (const auto& w : merged) {
            ++line.passes;
            line.visible_s += w.end_s - w.start_s;
            std::int32_t previous_cluster = -1;
            for (double a = w.start_s; a < w.end_s; a += config.segment_s) {
                const double b = std::min(w.end_s, a + config.segment_s);
                // The cluster highest above the site at the segment's middle serves it (handover between clusters).
                const double mid = 0.5 * (a + b);
                physics::LookAngle best{-physics::pi, 0.0};
                std::int32_t cluster = 0;
                for (std::size_t c = 0; c < cluster_orbits.size(); ++c) {
                    const auto look = physics::look_angle(frame, cluster_orbits[c], jd, mid);
                    if (look.elevation_rad > best.elevation_rad) {
                        best = look;
                        cluster = static_cast<std::int32_t>(c);
                    }
                }
                if (previous_cluster >= 0 && cluster != previous_cluster) ++line.cluster_handovers;
                previous_cluster = cluster;
                const double optical_rate =
                    optical ? links::optical_ground_link(station.optical, best.range_m, best.elevation_rad).rate_bps : 0.0;
                split_by_clouds(a, b, cloudy, pieces);
                for (const auto& [piece, clouded] : pieces) {
                    const double length = piece.end_s - piece.start_s;
                    GroundContact contact{piece.start_s, piece.end_s, cluster, 0.0, best.range_m, false};
                    if (optical && !clouded) {
                        contact.rate_bps = optical_rate;
                        if (optical_rate > 0.0) line.optical_open_s += length;
                    } else {
                        if (clouded) line.cloudy_visible_s += length;
                        contact.rate_bps = station.ka_band_rate_bps;
                        contact.ka_band = true;
                        if (contact.rate_bps > 0.0) line.ka_band_open_s += length;
                    }
                    if (contact.rate_bps > 0.0) line.contacts.push_back(contact);
                }
            }
        }
        timelines.push_back(std::move(line));
    }
    return timelines;
}

TopologySource ground_fabric(TopologySource space, const GroundSegmentConfig& config, std::vector<StationTimeline> timelines,
                             std::vector<std::int32_t> cluster_terminal, std::int32_t satellites) {
    const std::int32_t nodes = ground_fabric_node_count(config, satellites);
    const std::int32_t first_station = satellites + static_cast<std::int32_t>(config.datacentres.size());
    const auto station_node = [first_station](std::size_t s) { return first_station + static_cast<std::int32_t>(s); };
    // The fibres, fixed; and the stations whose link a data centre uses, with the times their links change.
    std::vector<links::Link> fibres;
    std::vector<std::size_t> linked;
    std::vector<double> changes;
    for (std::size_t d = 0; d < config.datacentres.size(); ++d) {
        const auto& dc = config.datacentres[d];
        const auto s = static_cast<std::size_t>(dc.station);
        links::Link fibre;
        fibre.source = ground_datacentre_node(satellites, d);
        fibre.target = station_node(s);
        fibre.distance_m = dc.fibre_m;
        fibre.capacity_bps = dc.fibre_rate_bps;
        fibre.latency_s = dc.fibre_m / config.backhaul_speed_m_s;
        fibres.push_back(fibre);
        if (std::find(linked.begin(), linked.end(), s) != linked.end()) continue;
        linked.push_back(s);
        for (const auto& c : timelines[s].contacts) changes.insert(changes.end(), {c.start_s, c.end_s});
    }
    std::sort(changes.begin(), changes.end());
    changes.erase(std::unique(changes.begin(), changes.end()), changes.end());
    struct State {
        TopologySource space;
        links::Topology current, pending;
        bool started = false, has_pending = false;
        std::size_t next_change = 0;
        double last_s = -std::numeric_limits<double>::infinity();
    };
    auto state = std::make_shared<State>();
    state->space = std::move(space);
    return [=, timelines = std::move(timelines), cluster_terminal = std::move(cluster_terminal)](links::Topology& out) {
        auto& st = *state;
        double t;
        if (!st.started) {
            st.started = true;
            if (!st.space(st.current)) return false;
            st.has_pending = st.space(st.pending);
            t = st.current.time_s;
        } else {
            while (st.next_change < changes.size() && changes[st.next_change] <= st.last_s) ++st.next_change;
            const double t_space = st.has_pending ? st.pending.time_s : std::numeric_limits<double>::infinity();
            const double t_ground = st.next_change < changes.size() ? changes[st.next_change] : std::numeric_limits<double>::infinity();
            t = std::min(t_space, t_ground);
            if (!std::isfinite(t)) return false;
            if (t_space <= t) {
                st.current = std::move(st.pending);
                st.has_pending = st.space(st.pending);
            }
        }
        st.last_s = t;
        out.time_s = t;
        out.node_count = nodes;
        out.links = st.current.links;
        out.links.insert(out.links.end(), fibres.begin(), fibres.end());
        for (const std::size_t s : linked) {
            const auto& contacts = timelines[s].contacts;
            const auto it = std::upper_bound(contacts.begin(), contacts.end(), t, [](double x, const GroundContact& c) { return x < c.end_s; });
            if (it == contacts.end() || it->start_s > t) continue;
            links::Link up;
            up.source = cluster_terminal[static_cast<std::size_t>(it->cluster)];
            up.target = station_node(s);
            up.distance_m = it->range_m;
            up.capacity_bps = it->rate_bps;
            up.latency_s = it->range_m / c_m_s;
            out.links.push_back(up);
        }
        std::sort(out.links.begin(), out.links.end(),
                  [](const links::Link& a, const links::Link& b) { return a.source != b.source ? a.source < b.source : a.target < b.target; });
        return true;
    };
}

GroundSegment::GroundSegment(const GroundSegmentConfig& config, std::vector<StationTimeline> timelines,
                             std::span<const physics::SampledOrbit> cluster_orbits, std::vector<std::int32_t> prefill_cluster,
                             std::vector<std::int32_t> decode_cluster, double start_s, double end_s, GroundPlacement placement)
    : config_(config), timelines_(std::move(timelines)), orbits_(cluster_orbits), prefill_cluster_(std::move(prefill_cluster)),
      decode_cluster_(std::move(decode_cluster)), placement_(placement), start_s_(start_s), end_s_(end_s) {
    const std::size_t n = config_.stations.size();
    double total = 0.0;
    for (const auto& s : config_.stations) total += s.users_share;
    for (std::size_t s = 0; s < n; ++s) {
        const double share = total > 0.0 ? config_.stations[s].users_share / total : 1.0 / static_cast<double>(n);
        cumulative_share_.push_back((s ? cumulative_share_.back() : 0.0) + share);
    }
    link_free_s_.assign(n, -std::numeric_limits<double>::infinity());
    bytes_up_.assign(n, 0.0);
    bytes_down_.assign(n, 0.0);
    requests_up_.assign(n, 0);
    requests_down_.assign(n, 0);
}

std::int32_t GroundSegment::home_station(std::int64_t index) const {
    const double u = physics::rng::uniform01(physics::rng::derive_seed(config_.seed, home_tag), 0, static_cast<std::uint64_t>(index));
    for (std::size_t s = 0; s + 1 < cumulative_share_.size(); ++s)
        if (u <= cumulative_share_[s]) return static_cast<std::int32_t>(s);
    return static_cast<std::int32_t>(cumulative_share_.size() - 1);
}

GroundSegment::Open GroundSegment::next_open(std::size_t s, double t_s, double free_s) const {
    const double t = std::max(t_s, free_s);
    const auto& contacts = timelines_[s].contacts;
    const auto it = std::upper_bound(contacts.begin(), contacts.end(), t, [](double x, const GroundContact& c) { return x < c.end_s; });
    if (it == contacts.end()) return {};
    return Open{static_cast<std::size_t>(it - contacts.begin()), std::max(t, it->start_s), true};
}

double GroundSegment::backhaul_s(std::size_t a, std::size_t b) const {
    if (a == b) return 0.0;
    return backhaul_s(config_.stations[a].site, config_.stations[b].site);
}

double GroundSegment::backhaul_s(const physics::Geodetic& p, const physics::Geodetic& q) const {
    // Great circle on a sphere of the equatorial radius (haversine).
    const double h = std::pow(std::sin(0.5 * (q.latitude_rad - p.latitude_rad)), 2) +
                     std::cos(p.latitude_rad) * std::cos(q.latitude_rad) * std::pow(std::sin(0.5 * (q.longitude_rad - p.longitude_rad)), 2);
    return 2.0 * physics::earth_equatorial_radius_m * std::asin(std::min(1.0, std::sqrt(h))) / config_.backhaul_speed_m_s;
}

double GroundSegment::gateway_light_s(std::int32_t a, std::int32_t b, double t_s) const {
    if (a == b || a < 0 || b < 0) return 0.0;
    const auto& oa = orbits_[static_cast<std::size_t>(a)];
    const auto& ob = orbits_[static_cast<std::size_t>(b)];
    return (oa.position_eci_m(t_s) - ob.position_eci_m(t_s)).norm() / c_m_s;
}

std::vector<Request> GroundSegment::uplink(std::span<const Request> ground_requests) {
    const std::size_t n = config_.stations.size();
    std::vector<Request> trace;
    std::vector<GroundJourney> journeys;
    for (const auto& request : ground_requests) {
        ++ground_requests_;
        if (arrivals_in_section_.empty()) arrivals_in_section_.assign(serving_interval_sections, 0);
        ++arrivals_in_section_[detail::arrival_section(request.arrival_s, start_s_, end_s_)];
        const double t0 = request.arrival_s;
        const auto home = static_cast<std::size_t>(home_station(request.id));
        if (placement_.prefill_datacentre >= 0) {  // prefilled on the ground: the prompt goes to the data centre by the backhaul
            const auto& dc = config_.datacentres[static_cast<std::size_t>(placement_.prefill_datacentre)];
            GroundJourney j;
            j.ground_arrival_s = j.uplink_start_s = t0;
            j.home_station = static_cast<std::int32_t>(home);
            j.orbit_arrival_s = t0 + backhaul_s(config_.stations[home].site, dc.site);
            j.first_token_ground_s = j.last_token_ground_s = nan;
            if (j.orbit_arrival_s >= end_s_) continue;
            journeys.push_back(j);
            Request r = request;
            r.arrival_s = j.orbit_arrival_s;
            trace.push_back(r);
            continue;
        }
        bool open_now = false;
        std::size_t best_station = n;
        Open best_open;
        double best_done = std::numeric_limits<double>::infinity();
        for (std::size_t k = 0; k < n; ++k) {
            const std::size_t s = (home + k) % n;  // the home station first: it wins ties
            const double reach = t0 + backhaul_s(home, s);
            const Open open = next_open(s, reach, link_free_s_[s]);
            if (!open.found) continue;
            if (!open_now) open_now = next_open(s, t0, -std::numeric_limits<double>::infinity()).at_s == t0;
            const double bytes = static_cast<double>(request.prompt_tokens) * config_.bytes_per_token;
            const double done = open.at_s + 8.0 * bytes / timelines_[s].contacts[open.contact].rate_bps;
            if (done < best_done) {
                best_done = done;
                best_station = s;
                best_open = open;
            }
        }
        if (!open_now) ++waited_;
        if (best_station == n) continue;
        const auto& contact = timelines_[best_station].contacts[best_open.contact];
        const double orbit_arrival = best_done + contact.range_m / c_m_s;
        if (orbit_arrival >= end_s_) continue;
        link_free_s_[best_station] = best_done;
        ++requests_up_[best_station];
        bytes_up_[best_station] += static_cast<double>(request.prompt_tokens) * config_.bytes_per_token;
        GroundJourney j;
        j.ground_arrival_s = t0;
        j.home_station = static_cast<std::int32_t>(home);
        j.up_station = static_cast<std::int32_t>(best_station);
        j.up_cluster = contact.cluster;
        j.uplink_start_s = best_open.at_s;
        j.orbit_arrival_s = orbit_arrival;
        j.first_token_ground_s = j.last_token_ground_s = nan;
        journeys.push_back(j);
        Request r = request;
        r.arrival_s = orbit_arrival;
        trace.push_back(r);
    }
    // The serving run takes its arrivals in order: a request that waited at one station may reach orbit
    // after one that arrived later at another.
    std::vector<std::size_t> order(trace.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return trace[a].arrival_s < trace[b].arrival_s; });
    std::vector<Request> sorted;
    sorted.reserve(trace.size());
    journeys_.clear();
    journeys_.reserve(trace.size());
    trace_tokens_out_.clear();
    for (const auto k : order) {
        sorted.push_back(trace[k]);
        sorted.back().id = static_cast<std::int64_t>(journeys_.size());
        journeys_.push_back(journeys[k]);
        trace_tokens_out_.push_back(trace[k].output_tokens);
        uplink_wait_.push_back(journeys[k].uplink_start_s - journeys[k].ground_arrival_s);
    }
    return sorted;
}

void GroundSegment::downlink(std::span<const RequestRecord> records) {
    const std::size_t n = config_.stations.size();
    for (const auto& r : records) {
        auto& j = journeys_[static_cast<std::size_t>(r.request.id)];
        const auto home = static_cast<std::size_t>(j.home_station);
        // A cache between orbit and a data centre waits, from its prefill's end, for the data centre's station link.
        const std::int32_t ground_dc = placement_.prefill_datacentre >= 0 ? placement_.prefill_datacentre : placement_.decode_datacentre;
        if ((placement_.prefill_datacentre >= 0) != (placement_.decode_datacentre >= 0) && r.prefill_end_s < end_s_) {  // NaN: none
            ++kv_caches_crossing_;
            const auto s = static_cast<std::size_t>(config_.datacentres[static_cast<std::size_t>(ground_dc)].station);
            const Open open = next_open(s, r.prefill_end_s, -std::numeric_limits<double>::infinity());
            if (open.found && open.at_s < end_s_) kv_contact_wait_.push_back(open.at_s - r.prefill_end_s);
            else ++kv_no_contact_;
        }
        if (!std::isfinite(r.first_token_s)) continue;
        const std::int32_t prefill_cluster = r.prefill_instance >= 0 ? prefill_cluster_[static_cast<std::size_t>(r.prefill_instance)] : -1;
        const std::int32_t decode_cluster = r.decode_instance >= 0 ? decode_cluster_[static_cast<std::size_t>(r.decode_instance)] : -1;
        // The prompt's hops from the satellite overhead to its prefill instance's cluster (the serving run
        // starts at the satellite overhead), then the tokens' from the decode instance to the station's cluster.
        const double up_hops = gateway_light_s(j.up_cluster, prefill_cluster, j.orbit_arrival_s);
        // Through the station that delivers first (the home station on a tie): open link, light time, backhaul.
        const auto down = [&](double ready_s, double bytes, std::size_t& station, double& open_at) {
            double best = std::numeric_limits<double>::infinity();
            for (std::size_t k = 0; k < n; ++k) {
                const std::size_t s = (home + k) % n;
                const Open open = next_open(s, ready_s, -std::numeric_limits<double>::infinity());
                if (!open.found) continue;
                const auto& contact = timelines_[s].contacts[open.contact];
                const double at = std::max(open.at_s, ready_s + gateway_light_s(decode_cluster, contact.cluster, ready_s));
                const double delivered = at + 8.0 * bytes / contact.rate_bps + contact.range_m / c_m_s + backhaul_s(s, home);
                if (delivered < best) {
                    best = delivered;
                    station = s;
                    open_at = at;
                }
            }
            return best;
        };
        std::size_t station = n;
        double open_at = 0.0;
        // Decoded on the ground: the tokens go from the data centre to the user's station by the backhaul.
        const double terrestrial =
            placement_.decode_datacentre >= 0
                ? backhaul_s(config_.datacentres[static_cast<std::size_t>(placement_.decode_datacentre)].site, config_.stations[home].site)
                : 0.0;
        const double first = placement_.decode_datacentre >= 0 ? r.first_token_s + up_hops + terrestrial
                                                               : down(r.first_token_s + up_hops, config_.bytes_per_token, station, open_at);
        if (!(first < end_s_)) continue;
        j.first_token_ground_s = first;
        if (placement_.decode_datacentre < 0) {
            j.down_station = static_cast<std::int32_t>(station);
            if (j.down_station != j.up_station) ++station_handovers_;
            downlink_wait_.push_back(open_at - (r.first_token_s + up_hops));
        }
        ttft_.push_back(j.ttft_ground_s());
        const auto section = static_cast<std::uint8_t>(detail::arrival_section(j.ground_arrival_s, start_s_, end_s_));
        ttft_section_.push_back(section);
        if (r.status != RequestStatus::completed) continue;
        const double bytes = static_cast<double>(r.tokens_generated) * config_.bytes_per_token;
        const double last = placement_.decode_datacentre >= 0 ? r.finish_s + up_hops + terrestrial : down(r.finish_s + up_hops, bytes, station, open_at);
        if (!(last < end_s_)) continue;
        j.last_token_ground_s = last;
        if (placement_.decode_datacentre < 0) {
            ++requests_down_[station];
            bytes_down_[station] += bytes;
        }
        completion_.push_back(last - j.ground_arrival_s);
        const double tpot = r.tokens_generated > 1 ? (last - first) / static_cast<double>(r.tokens_generated - 1) : 0.0;
        ttft_tpot_.push_back({j.ttft_ground_s(), tpot, section});
    }
}

GroundServingSummary GroundSegment::summary(double ttft_slo_s, double tpot_slo_s) const {
    GroundServingSummary g;
    const double days = (end_s_ - start_s_) / physics::seconds_per_day;
    g.requests = ground_requests_;
    g.uplinked = static_cast<std::int64_t>(journeys_.size());
    g.waiting_on_ground = ground_requests_ - g.uplinked;
    g.waited = waited_;
    g.first_token_down = static_cast<std::int64_t>(ttft_.size());
    g.station_handovers = station_handovers_;
    const auto mean = [](const std::vector<double>& v) {
        return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    };
    g.uplink_wait_mean_s = mean(uplink_wait_);
    g.uplink_wait_max_s = uplink_wait_.empty() ? 0.0 : *std::max_element(uplink_wait_.begin(), uplink_wait_.end());
    g.downlink_wait_mean_s = mean(downlink_wait_);
    g.ttft_ground_mean_s = mean(ttft_);
    auto copy = uplink_wait_;
    g.uplink_wait_s = detail::percentiles_of(copy);
    copy = downlink_wait_;
    g.downlink_wait_s = detail::percentiles_of(copy);
    copy = ttft_;
    g.ttft_ground_s = detail::percentiles_of(copy);
    g.ttft_ground_ci95 = detail::percentile_intervals(g.ttft_ground_s, detail::section_percentiles(ttft_, ttft_section_));
    copy = completion_;
    g.completion_ground_s = detail::percentiles_of(copy);
    std::int64_t met = 0;
    std::vector<std::int64_t> met_in(serving_interval_sections, 0);
    for (const auto& d : ttft_tpot_) {
        const bool ok = d.ttft_s <= ttft_slo_s && d.tpot_s <= tpot_slo_s;
        met += ok;
        met_in[d.section] += ok;
    }
    g.slo_attainment_ground = ground_requests_ ? static_cast<double>(met) / static_cast<double>(ground_requests_) : 0.0;
    std::vector<double> attainment;
    for (std::size_t k = 0; k < arrivals_in_section_.size(); ++k)
        if (arrivals_in_section_[k] > 0) attainment.push_back(static_cast<double>(met_in[k]) / static_cast<double>(arrivals_in_section_[k]));
    g.slo_attainment_ground_ci95 = detail::attainment_interval(g.slo_attainment_ground, attainment);
    g.kv_crosses_ground_link = (placement_.prefill_datacentre >= 0) != (placement_.decode_datacentre >= 0);
    g.kv_caches_crossing = kv_caches_crossing_;
    g.kv_no_contact_before_end = kv_no_contact_;
    g.kv_waited_for_contact = std::count_if(kv_contact_wait_.begin(), kv_contact_wait_.end(), [](double w) { return w > 0.0; });
    g.kv_contact_wait_mean_s = mean(kv_contact_wait_);
    g.kv_contact_wait_max_s = kv_contact_wait_.empty() ? 0.0 : *std::max_element(kv_contact_wait_.begin(), kv_contact_wait_.end());
    copy = kv_contact_wait_;
    g.kv_contact_wait_s = detail::percentiles_of(copy);
    for (std::size_t s = 0; s < config_.stations.size(); ++s) {
        const auto& line = timelines_[s];
        GroundStationSummary st;
        st.name = config_.stations[s].name;
        st.passes = line.passes;
        st.contact_s = line.visible_s;
        st.optical_open_s = line.optical_open_s;
        st.ka_band_open_s = line.ka_band_open_s;
        st.cloudy_visible_s = line.cloudy_visible_s;
        st.cluster_handovers = line.cluster_handovers;
        st.requests_up = requests_up_[s];
        st.requests_down = requests_down_[s];
        st.bytes_up = bytes_up_[s];
        st.bytes_down = bytes_down_[s];
        if (days > 0.0) {
            st.passes_per_day = static_cast<double>(st.passes) / days;
            st.contact_min_per_day = st.contact_s / 60.0 / days;
            st.bytes_up_per_day = st.bytes_up / days;
            st.bytes_down_per_day = st.bytes_down / days;
        }
        g.stations.push_back(st);
    }
    return g;
}

}  // namespace skyfabric::workloads
