#include "output/result_writer.hpp"

#include "output/provenance.hpp"

#include <algorithm>
#include <map>
#include <memory>

namespace skyfabric::output {

struct ResultWriter::Series {
    std::optional<Hdf5Series> time_s, chief_position, chief_velocity;
    std::optional<Hdf5Series> position_lvlh, velocity_lvlh, position_eci, velocity_eci;
    std::optional<Hdf5Series> nearest_neighbour, reference_neighbours, min_separation, min_separation_pair, envelope;
    std::optional<Hdf5Series> model_error;
    std::optional<Hdf5Series> sun_direction, beta_angle, shadow_fraction;
    std::optional<Hdf5Series> solar_power, load_power, state_of_charge, temperature, compute_fraction;
    std::optional<Hdf5Series> link_offsets, link_source, link_target, link_distance, link_capacity, link_power, link_margin;
    std::optional<Hdf5Series> link_count, link_components, link_bisection, link_capacity_mean;
    std::optional<Hdf5Series> event_time, event_source, event_target, event_kind;
    std::optional<Hdf5Series> radiation_flux, dose_rate, dose;
    std::optional<Hdf5Series> link_class, gateway_links, gateway_blocked, gateway_capacity, oversubscription, cluster_chief;
    // Each group's own copy of the sample times, the coordinate of its `time_s` dimension: xarray
    // reads a group's own variables only, so without it `.sel(time_s=...)` failed in every group.
    std::map<std::string, std::unique_ptr<Hdf5Series>> group_times;  // by path
    std::vector<std::int32_t> cluster_of;  // empty: one cluster, every link intra-cluster
    std::int64_t links_written = 0;
    std::size_t samples_since_flush = 0;

    void flush_all() {
        for (auto* s : {&time_s, &chief_position, &chief_velocity, &position_lvlh, &velocity_lvlh, &position_eci,
                        &velocity_eci, &nearest_neighbour, &reference_neighbours, &min_separation,
                        &min_separation_pair, &envelope, &model_error, &sun_direction, &beta_angle, &shadow_fraction,
                        &solar_power, &load_power, &state_of_charge, &temperature, &compute_fraction, &link_offsets, &link_source, &link_target, &link_distance,
                        &link_capacity, &link_power, &link_margin, &link_count, &link_components, &link_bisection,
                        &link_capacity_mean, &event_time, &event_source, &event_target, &event_kind, &radiation_flux, &dose_rate, &dose,
                        &link_class, &gateway_links, &gateway_blocked, &gateway_capacity, &oversubscription, &cluster_chief}) {
            if (*s) (*s)->flush();
        }
        for (auto& [path, t] : group_times) t->flush();
    }
};

namespace {

// A time coordinate as CF tools look for one (cf-xarray's `.cf["time"]`, Panoply): `axis: T` and
// `standard_name: time` beside its unit `s` and the long_name that names what it counts from. The
// values stay float seconds (no `seconds since`), so that xarray keeps them to select by.
void mark_time_coordinate(Hdf5File& file, const std::string& path, const std::string& long_name) {
    file.set_attribute(path, "long_name", long_name);
    file.set_attribute(path, "standard_name", std::string("time"));
    file.set_attribute(path, "axis", std::string("T"));
}

const std::string time_long_name = "time since the scenario epoch (root attribute epoch_utc, UTC)";

// The columns of a group are one table of `count` rows: they share a dimension `name` (a netCDF
// dimension without coordinate values) on their only axis.
void index_dimension(Hdf5File& file, const std::string& group, const std::string& name, std::size_t count) {
    file.make_dimension(group + "/" + name, static_cast<hsize_t>(count));
    file.attach_dimension_to_group(group, group + "/" + name);
}

// One column of a record array, as a dataset of [count].
template <class Record, class Get>
void write_column(Hdf5File& file, const std::string& path, const std::vector<Record>& records, Get get,
                  const std::string& units) {
    using Value = decltype(get(records.front()));
    if constexpr (std::is_floating_point_v<Value>) {
        std::vector<double> column;
        column.reserve(records.size());
        for (const auto& r : records) column.push_back(static_cast<double>(get(r)));
        file.write_array(path, column, {static_cast<hsize_t>(column.size())}, units);
    } else {
        std::vector<std::int32_t> column;
        column.reserve(records.size());
        for (const auto& r : records) column.push_back(static_cast<std::int32_t>(get(r)));
        file.write_array(path, column, {static_cast<hsize_t>(column.size())}, units);
    }
}

// The constellation's algorithms side by side: one row each, in the scenario's order.
void write_constellation(Hdf5File& file, const std::vector<workloads::ClusterTrainingResult>& rows) {
    using R = workloads::ClusterTrainingResult;
    if (rows.empty()) return;
    const std::string g = "/constellation/algorithms/";
    write_column(file, g + "algorithm", rows, [](const R& r) { return static_cast<int>(r.algorithm); }, "1");
    file.set_enum_names(g + "algorithm", "algorithm_names", workloads::cluster_algorithm_names.numbered());
    write_column(file, g + "steps", rows, [](const R& r) { return r.steps; }, "1");
    write_column(file, g + "step_time_mean_s", rows, [](const R& r) { return r.step_time_mean_s; }, "s");
    write_column(file, g + "compute_per_step_s", rows, [](const R& r) { return r.compute_per_step_s; }, "s");
    write_column(file, g + "tokens_per_s", rows, [](const R& r) { return r.tokens_per_s; }, "1/s");
    write_column(file, g + "mfu", rows, [](const R& r) { return r.mfu; }, "1");
    write_column(file, g + "idle_fraction", rows, [](const R& r) { return r.idle_fraction; }, "1");
    write_column(file, g + "intra_cluster_bytes", rows, [](const R& r) { return r.intra_cluster_bytes; }, "B");
    write_column(file, g + "gateway_bytes", rows, [](const R& r) { return r.gateway_bytes; }, "B");
    write_column(file, g + "bytes_outside_own_clusters", rows, [](const R& r) { return r.bytes_outside_own_clusters; }, "B");
    write_column(file, g + "outer_rounds", rows, [](const R& r) { return r.outer_rounds; }, "1");
    write_column(file, g + "outer_sync_mean_s", rows, [](const R& r) { return r.outer_sync_mean_s; }, "s");
    write_column(file, g + "outer_wait_mean_s", rows, [](const R& r) { return r.outer_wait_mean_s; }, "s");
    write_column(file, g + "compute_throttled_s", rows, [](const R& r) { return r.compute_throttled_s; }, "s");
    write_column(file, g + "truncated", rows, [](const R& r) { return r.truncated ? 1 : 0; }, "1");
    index_dimension(file, "/constellation/algorithms", "row", rows.size());
    // DiLoCo's and NoLoCo's rounds, each replica's (`analyze` breaks a replica's time down from them).
    struct Round {
        workloads::ClusterAlgorithm algorithm;
        workloads::ReplicaRound round;
    };
    std::vector<Round> rounds;
    for (const auto& r : rows)
        for (const auto& round : r.rounds) rounds.push_back({r.algorithm, round});
    if (rounds.empty()) return;
    const std::string h = "/constellation/rounds/";
    write_column(file, h + "algorithm", rounds, [](const Round& r) { return static_cast<int>(r.algorithm); }, "1");
    file.set_enum_names(h + "algorithm", "algorithm_names", workloads::cluster_algorithm_names.numbered());
    write_column(file, h + "replica", rounds, [](const Round& r) { return r.round.replica; }, "1");
    write_column(file, h + "round", rounds, [](const Round& r) { return r.round.round; }, "1");
    write_column(file, h + "peer", rounds, [](const Round& r) { return r.round.peer; }, "1");
    write_column(file, h + "inner_steps", rounds, [](const Round& r) { return r.round.inner_steps; }, "1");
    write_column(file, h + "start_s", rounds, [](const Round& r) { return r.round.start_s; }, "s");
    write_column(file, h + "ready_s", rounds, [](const Round& r) { return r.round.ready_s; }, "s");
    write_column(file, h + "sync_start_s", rounds, [](const Round& r) { return r.round.sync_start_s; }, "s");
    write_column(file, h + "end_s", rounds, [](const Round& r) { return r.round.end_s; }, "s");
    index_dimension(file, "/constellation/rounds", "row", rounds.size());
}

// The gateway layer's egress per bin (a constellation's serving run): start and mean rate.
void write_gateway_egress(Hdf5File& file, const std::string& group, workloads::ServingRouting routing, double step_s,
                          const std::vector<double>& bps) {
    if (bps.empty()) return;
    std::vector<std::size_t> bins(bps.size());
    for (std::size_t k = 0; k < bins.size(); ++k) bins[k] = k;
    const std::string g = group + "/";
    write_column(file, g + "start_s", bins, [&](std::size_t k) { return static_cast<double>(k) * step_s; }, "s");
    write_column(file, g + "egress_bps", bins, [&](std::size_t k) { return bps[k]; }, "bit/s");
    file.set_attribute(group, "routing", workloads::to_string(routing));
    // The bins' start times are the group's time coordinate (its dimension `start_s`): CF tools find
    // the time axis, xarray selects by it (`.sel(start_s=600.0)`). Each value is the mean over its bin.
    mark_time_coordinate(file, g + "start_s", "start of each bin, " + time_long_name);
    file.set_attribute(group, "bin_s", step_s);
    file.set_attribute(g + "egress_bps", "cell_methods", std::string("start_s: mean"));
    file.make_coordinate(g + "start_s");
    file.attach_dimension_to_group(group, g + "start_s");
}

// Each request's journey through the ground segment (docs/output-format.md, "/inference/ground_requests").
void write_ground_requests(Hdf5File& file, const std::string& group, workloads::ServingRouting routing,
                           const std::vector<workloads::GroundJourney>& rows, const std::string& station_names) {
    if (rows.empty()) return;
    using J = workloads::GroundJourney;
    const std::string g = group + "/";
    std::vector<std::size_t> ids(rows.size());
    for (std::size_t k = 0; k < ids.size(); ++k) ids[k] = k;
    write_column(file, g + "id", ids, [](std::size_t k) { return static_cast<std::int32_t>(k); }, "1");
    write_column(file, g + "ground_arrival_s", rows, [](const J& r) { return r.ground_arrival_s; }, "s");
    write_column(file, g + "home_station", rows, [](const J& r) { return r.home_station; }, "1");
    write_column(file, g + "up_station", rows, [](const J& r) { return r.up_station; }, "1");
    write_column(file, g + "up_cluster", rows, [](const J& r) { return r.up_cluster; }, "1");
    write_column(file, g + "uplink_start_s", rows, [](const J& r) { return r.uplink_start_s; }, "s");
    write_column(file, g + "orbit_arrival_s", rows, [](const J& r) { return r.orbit_arrival_s; }, "s");
    write_column(file, g + "down_station", rows, [](const J& r) { return r.down_station; }, "1");
    write_column(file, g + "first_token_ground_s", rows, [](const J& r) { return r.first_token_ground_s; }, "s");
    write_column(file, g + "last_token_ground_s", rows, [](const J& r) { return r.last_token_ground_s; }, "s");
    write_column(file, g + "ttft_ground_s", rows, [](const J& r) { return r.ttft_ground_s(); }, "s");
    file.set_attribute(group, "routing", workloads::to_string(routing));
    file.set_attribute(group, "station_names", station_names);
}

void write_training(Hdf5File& file, const workloads::TrainingResult& t) {
    using workloads::CollectiveRecord;
    using workloads::LinkUtilisation;
    using workloads::StepRecord;
    const auto& st = t.steps;
    if (!st.empty()) {
        write_column(file, "/workload/steps/step", st, [](const StepRecord& r) { return r.step; }, "1");
        write_column(file, "/workload/steps/start_s", st, [](const StepRecord& r) { return r.start_s; }, "s");
        write_column(file, "/workload/steps/end_s", st, [](const StepRecord& r) { return r.end_s; }, "s");
        write_column(file, "/workload/steps/compute_s", st, [](const StepRecord& r) { return r.compute_s; }, "s");
        write_column(file, "/workload/steps/communication_s", st, [](const StepRecord& r) { return r.communication_s; }, "s");
        write_column(file, "/workload/steps/all_to_all_s", st, [](const StepRecord& r) { return r.all_to_all_s; }, "s");
        write_column(file, "/workload/steps/exposed_communication_s", st,
                     [](const StepRecord& r) { return r.exposed_communication_s; }, "s");
        write_column(file, "/workload/steps/synchronised", st, [](const StepRecord& r) { return r.synchronised ? 1 : 0; }, "1");
        write_column(file, "/workload/steps/status", st, [](const StepRecord& r) { return static_cast<int>(r.status); }, "1");
        file.set_enum_names("/workload/steps/status", "status_names", workloads::step_status_names.numbered());
        // The step index is the steps' coordinate.
        file.make_coordinate("/workload/steps/step");
        file.attach_dimension_to_group("/workload/steps", "/workload/steps/step");
    }
    const auto& co = t.collectives;
    if (!co.empty()) {
        write_column(file, "/workload/collectives/step", co, [](const CollectiveRecord& r) { return r.step; }, "1");
        write_column(file, "/workload/collectives/op", co, [](const CollectiveRecord& r) { return static_cast<int>(r.op); }, "1");
        write_column(file, "/workload/collectives/algorithm", co,
                     [](const CollectiveRecord& r) { return static_cast<int>(r.algorithm); }, "1");
        write_column(file, "/workload/collectives/bytes", co, [](const CollectiveRecord& r) { return r.bytes; }, "B");
        write_column(file, "/workload/collectives/start_s", co, [](const CollectiveRecord& r) { return r.start_s; }, "s");
        write_column(file, "/workload/collectives/end_s", co, [](const CollectiveRecord& r) { return r.end_s; }, "s");
        write_column(file, "/workload/collectives/alg_bw_B_s", co, [](const CollectiveRecord& r) { return r.alg_bw_Bps; }, "B/s");
        write_column(file, "/workload/collectives/bus_bw_B_s", co, [](const CollectiveRecord& r) { return r.bus_bw_Bps; }, "B/s");
        write_column(file, "/workload/collectives/stalled_s", co, [](const CollectiveRecord& r) { return r.stalled_s; }, "s");
        write_column(file, "/workload/collectives/lost_s", co, [](const CollectiveRecord& r) { return r.lost_s; }, "s");
        write_column(file, "/workload/collectives/completed", co, [](const CollectiveRecord& r) { return r.completed ? 1 : 0; }, "1");
        file.set_enum_names("/workload/collectives/op", "op_names", workloads::collective_op_names.numbered());
        file.set_enum_names("/workload/collectives/algorithm", "algorithm_names", workloads::algorithm_names.numbered());
        index_dimension(file, "/workload/collectives", "collective", co.size());
    }
    const auto& li = t.links;
    if (!li.empty()) {
        write_column(file, "/workload/link_utilisation/source", li, [](const LinkUtilisation& r) { return r.source; }, "1");
        write_column(file, "/workload/link_utilisation/target", li, [](const LinkUtilisation& r) { return r.target; }, "1");
        write_column(file, "/workload/link_utilisation/bytes", li, [](const LinkUtilisation& r) { return r.bytes; }, "B");
        write_column(file, "/workload/link_utilisation/capacity_bytes", li,
                     [](const LinkUtilisation& r) { return r.capacity_bytes; }, "B");
        write_column(file, "/workload/link_utilisation/utilisation", li,
                     [](const LinkUtilisation& r) { return r.utilisation; }, "1");
        index_dimension(file, "/workload/link_utilisation", "link", li.size());
    }
    // The per-epoch series the trace's link counters and the VTK frames draw from: recorded (and
    // so written) only with output.trace or output.vtk (docs/output-format.md).
    const auto& ep = t.link_epochs;
    if (!ep.empty()) {
        using workloads::LinkEpoch;
        write_column(file, "/workload/link_epochs/start_s", ep, [](const LinkEpoch& r) { return r.start_s; }, "s");
        write_column(file, "/workload/link_epochs/end_s", ep, [](const LinkEpoch& r) { return r.end_s; }, "s");
        write_column(file, "/workload/link_epochs/source", ep, [](const LinkEpoch& r) { return r.source; }, "1");
        write_column(file, "/workload/link_epochs/target", ep, [](const LinkEpoch& r) { return r.target; }, "1");
        write_column(file, "/workload/link_epochs/capacity_bps", ep, [](const LinkEpoch& r) { return r.capacity_bps; }, "bit/s");
        write_column(file, "/workload/link_epochs/utilisation", ep, [](const LinkEpoch& r) { return r.utilisation; }, "1");
        index_dimension(file, "/workload/link_epochs", "row", ep.size());
    }
}

void write_radiation_events(Hdf5File& file, const simulation::RadiationOutcome& r) {
    using workloads::FaultEvent;
    const auto& ev = r.events;
    if (ev.empty()) return;
    write_column(file, "/radiation/events/time_s", ev, [](const FaultEvent& e) { return e.time_s; }, "s");
    write_column(file, "/radiation/events/satellite", ev, [](const FaultEvent& e) { return e.satellite; }, "1");
    write_column(file, "/radiation/events/kind", ev, [](const FaultEvent& e) { return static_cast<int>(e.kind); }, "1");
    write_column(file, "/radiation/events/detected", ev, [](const FaultEvent& e) { return e.detected ? 1 : 0; }, "1");
    file.set_enum_names("/radiation/events/kind", "kind_names", workloads::fault_kind_names.numbered());
    // Operational faults beside radiation: each event's cause (-1: radiation's) and its hold.
    if (std::any_of(ev.begin(), ev.end(), [](const FaultEvent& e) { return e.cause >= 0; })) {
        write_column(file, "/radiation/events/cause", ev, [](const FaultEvent& e) { return static_cast<int>(e.cause); }, "1");
        write_column(file, "/radiation/events/hold_s", ev, [](const FaultEvent& e) { return static_cast<double>(e.hold_s); }, "s");
    }
    if (r.goodput) {
        std::vector<std::int32_t> effects;
        for (auto e : r.goodput->effects) effects.push_back(static_cast<std::int32_t>(e));
        file.write_array("/radiation/events/effect", effects, {static_cast<hsize_t>(effects.size())}, "1");
        file.set_enum_names("/radiation/events/effect", "effect_names", workloads::fault_effect_names.numbered());
    }
    index_dimension(file, "/radiation/events", "event", ev.size());
}

// The training job as played against trial 0's faults: what it was doing, interval by interval.
void write_job_timeline(Hdf5File& file, const simulation::RadiationOutcome& r) {
    using workloads::JobInterval;
    if (!r.goodput || r.goodput->timeline.empty()) return;
    const auto& tl = r.goodput->timeline;
    write_column(file, "/radiation/job_timeline/start_s", tl, [](const JobInterval& x) { return x.start_s; }, "s");
    write_column(file, "/radiation/job_timeline/end_s", tl, [](const JobInterval& x) { return x.end_s; }, "s");
    write_column(file, "/radiation/job_timeline/phase", tl,
                 [](const JobInterval& x) { return static_cast<int>(x.phase); }, "1");
    file.set_enum_names("/radiation/job_timeline/phase", "phase_names", workloads::job_phase_names.numbered());
    index_dimension(file, "/radiation/job_timeline", "interval", tl.size());
}

// Trial 0's terminal outages: which link, when.
void write_link_outages(Hdf5File& file, const simulation::RadiationOutcome& r) {
    using workloads::LinkOutage;
    if (!r.goodput || r.goodput->link_outages.empty()) return;
    const auto& lo = r.goodput->link_outages;
    write_column(file, "/radiation/link_outages/start_s", lo, [](const LinkOutage& x) { return x.start_s; }, "s");
    write_column(file, "/radiation/link_outages/end_s", lo, [](const LinkOutage& x) { return x.end_s; }, "s");
    write_column(file, "/radiation/link_outages/source", lo, [](const LinkOutage& x) { return x.source; }, "1");
    write_column(file, "/radiation/link_outages/target", lo, [](const LinkOutage& x) { return x.target; }, "1");
    index_dimension(file, "/radiation/link_outages", "outage", lo.size());
}

// Every Monte Carlo trial's outcome under `group`, one row per trial (trial order); a
// constellation's rows also say what the gateways lost and what replicas waited for.
void write_trial_rows(Hdf5File& file, const std::string& group, const std::vector<workloads::MonteCarloResult::Trial>& t,
                      bool constellation) {
    using Trial = workloads::MonteCarloResult::Trial;
    write_column(file, group + "/goodput", t, [](const Trial& x) { return x.goodput; }, "1");
    write_column(file, group + "/lost_faults_s", t, [](const Trial& x) { return x.lost_faults_s; }, "s");
    write_column(file, group + "/lost_restarts_s", t, [](const Trial& x) { return x.lost_restarts_s; }, "s");
    write_column(file, group + "/lost_checkpoints_s", t, [](const Trial& x) { return x.lost_checkpoints_s; }, "s");
    write_column(file, group + "/lost_fabric_s", t, [](const Trial& x) { return x.lost_fabric_s; }, "s");
    write_column(file, group + "/lost_shrunk_ring_s", t, [](const Trial& x) { return x.lost_shrink_s; }, "s");
    write_column(file, group + "/gained_fabric_s", t, [](const Trial& x) { return x.gained_fabric_s; }, "s");
    write_column(file, group + "/step_time_median_s", t, [](const Trial& x) { return x.step_time_median_s; }, "s");
    write_column(file, group + "/step_time_p99_s", t, [](const Trial& x) { return x.step_time_p99_s; }, "s");
    write_column(file, group + "/ranks_lost", t, [](const Trial& x) { return x.ranks_lost; }, "1");
    write_column(file, group + "/spare_swaps", t, [](const Trial& x) { return x.spare_swaps; }, "1");
    write_column(file, group + "/links_lost", t, [](const Trial& x) { return x.links_lost; }, "1");
    write_column(file, group + "/damaged_steps", t, [](const Trial& x) { return x.damaged_steps; }, "1");
    write_column(file, group + "/rollbacks", t, [](const Trial& x) { return x.rollbacks; }, "1");
    if (constellation) {
        write_column(file, group + "/lost_waiting_s", t, [](const Trial& x) { return x.lost_waiting_s; }, "s");
        write_column(file, group + "/gateway_links_lost", t, [](const Trial& x) { return x.gateway_links_lost; }, "1");
    }
    index_dimension(file, group, "trial", t.size());
}

void write_trials(Hdf5File& file, const simulation::RadiationOutcome& r) {
    if (r.monte_carlo && !r.monte_carlo->per_trial.empty())
        write_trial_rows(file, "/radiation/trials", r.monte_carlo->per_trial, false);
    // A constellation: one row per algorithm (the order of /constellation/algorithms), and each
    // algorithm's trials (the same draws) under its name.
    using G = workloads::ClusterGoodput;
    const auto& rows = r.constellation;
    if (rows.empty()) return;
    const std::string g = "/radiation/constellation/";
    write_column(file, g + "algorithm", rows, [](const G& a) { return static_cast<int>(a.algorithm); }, "1");
    file.set_enum_names(g + "algorithm", "algorithm_names", workloads::cluster_algorithm_names.numbered());
    write_column(file, g + "goodput_median", rows, [](const G& a) { return a.monte_carlo.goodput.median; }, "1");
    // Where the trials lie: two of their own values, of the kind the attribute `interval` names.
    write_column(file, g + "goodput_interval_low", rows, [](const G& a) { return a.monte_carlo.goodput.spread_low; }, "1");
    write_column(file, g + "goodput_interval_high", rows, [](const G& a) { return a.monte_carlo.goodput.spread_high; }, "1");
    file.set_attribute("/radiation/constellation", "interval",
                       std::string(workloads::spread_kind(static_cast<std::size_t>(rows.front().monte_carlo.trials))));
    write_column(file, g + "fault_free_goodput", rows, [](const G& a) { return a.fault_free_goodput; }, "1");
    write_column(file, g + "checkpoint_interval_s", rows, [](const G& a) { return a.monte_carlo.checkpoint_interval_s; }, "s");
    index_dimension(file, "/radiation/constellation", "row", rows.size());
    for (const auto& a : rows) write_trial_rows(file, g + std::string(workloads::to_string(a.algorithm)), a.monte_carlo.per_trial, true);
}

}  // namespace

ResultWriter::ResultWriter(std::filesystem::path path, Provenance provenance)
    : path_(std::move(path)), provenance_(std::move(provenance)) {}
ResultWriter::~ResultWriter() = default;

void ResultWriter::begin(const simulation::RunSetup& setup) {
    const auto& sc = *setup.scenario;
    compression_level_ = sc.output.compression_level;
    eci_ = sc.output.eci;
    ttft_slo_s_ = sc.inference.serving.ttft_slo_s;
    max_queued_requests_ = sc.inference.serving.max_queued_requests;
    tpot_slo_s_ = sc.inference.serving.tpot_slo_s;
    ground_station_names_.clear();
    for (std::size_t s = 0; s < sc.ground.segment.stations.size(); ++s)
        ground_station_names_ += (s ? ", " : "") + std::to_string(s) + ": " + sc.ground.segment.stations[s].name;
    file_ = std::make_unique<Hdf5File>(path_);
    write_provenance_attributes(*file_, provenance_);
    file_->set_attribute("scenario_name", sc.name);
    file_->set_attribute("seed", static_cast<std::uint64_t>(sc.seed));
    file_->set_attribute("dynamics_model", std::string(scenario::to_string(sc.dynamics.model)));
    file_->set_attribute("satellite_count", static_cast<std::int64_t>(setup.satellite_count));
    file_->set_attribute_bool("complete", false);
    if (setup.fabric) {
        // A synthetic fabric has no orbit: only the workload groups are written, at the end.
        file_->set_attribute("fabric", setup.fabric->description);
        file_->flush();
        return;
    }

    // One orbit as duration_orbits counts it (nodal period of the mean orbit), for plots' time axes.
    file_->set_attribute("orbit_period_s", scenario::orbit_period_s(sc));
    file_->set_attribute("epoch_utc", scenario::epoch_iso8601(sc));
    // What "ECI" and the times mean (docs/output-format.md; `skyfabric oem` labels the frame TOD).
    file_->set_attribute("eci_frame", std::string("Earth's mean equator and equinox of the epoch's date, precession "
                                                  "and nutation not modelled"));
    file_->set_attribute("time_scale", std::string("UTC, continuous (no leap second inside a run)"));
    file_->set_attribute("relative_orbits", std::string(scenario::to_string(scenario::resolved_relative_orbits(sc))));
    const hsize_t n = setup.satellite_count;
    const hsize_t k = static_cast<hsize_t>(std::min<std::size_t>(static_cast<std::size_t>(sc.metrics.neighbour_count), n > 0 ? n - 1 : 0));
    const int c = compression_level_;
    series_ = std::make_unique<Series>();
    auto& s = *series_;
    // Every axis is a netCDF dimension (docs/output-format.md): the time series' first axis is /time_s,
    // per-link and per-event series grow along dimensions of their own.
    struct Dimension {
        std::string path;
        hsize_t size;
    };
    const Dimension satellite{"/satellite", n}, xyz{"/xyz", 3};
    const std::string time = "/time_s";
    s.time_s.emplace(*file_, time, std::vector<hsize_t>{}, ElementType::float64, "s", c);
    file_->make_coordinate(time);
    // CF: a duration in SI seconds, not "seconds since": xarray then keeps floats to select by.
    mark_time_coordinate(*file_, time, time_long_name);
    file_->make_dimension(satellite.path, satellite.size);
    file_->make_dimension(xyz.path, xyz.size);
    // Filters by measurement (docs/output-format.md, "Compression"): the satellites' float64 states
    // (positions, velocities, distances, doses) deflate only 1.2-1.6:1 at ~50 MB/s, which was most of a
    // day's write time, so they are stored raw; everything else (link lists, events, flags, counts)
    // compresses 10-250:1 and keeps shuffle + deflate at the scenario's level.
    enum class Filter { deflate, raw };
    const auto series = [&](std::optional<Hdf5Series>& slot, const std::string& path, const std::string& first,
                            const std::vector<Dimension>& rest, ElementType type, const std::string& units,
                            Filter filter = Filter::deflate) {
        std::vector<hsize_t> tail;
        std::vector<std::string> dimensions{first};
        if (first == time) {
            const std::string group_time = path.substr(0, path.rfind('/')) + time;
            if (!s.group_times.count(group_time)) {
                s.group_times[group_time] =
                    std::make_unique<Hdf5Series>(*file_, group_time, std::vector<hsize_t>{}, ElementType::float64, "s", c);
                file_->make_coordinate(group_time);
                mark_time_coordinate(*file_, group_time, time_long_name);
            }
            dimensions.front() = group_time;
        }
        for (const auto& d : rest) tail.push_back(d.size), dimensions.push_back(d.path);
        slot.emplace(*file_, path, tail, type, units, filter == Filter::raw ? 0 : c);
        file_->attach_dimensions(path, dimensions);
    };
    const auto raw = Filter::raw;
    const auto f64 = ElementType::float64, i32 = ElementType::int32;
    series(s.chief_position, "/orbit/chief_position_eci_m", time, {xyz}, f64, "m");
    series(s.chief_velocity, "/orbit/chief_velocity_eci_m_s", time, {xyz}, f64, "m/s");
    series(s.position_lvlh, "/formation/position_lvlh_m", time, {satellite, xyz}, f64, "m", raw);
    series(s.velocity_lvlh, "/formation/velocity_lvlh_m_s", time, {satellite, xyz}, f64, "m/s", raw);
    if (eci_) {
        series(s.position_eci, "/formation/position_eci_m", time, {satellite, xyz}, f64, "m", raw);
        series(s.velocity_eci, "/formation/velocity_eci_m_s", time, {satellite, xyz}, f64, "m/s", raw);
    }
    const Dimension neighbour{"/formation/neighbour", k}, pair{"/formation/pair", 2};
    file_->make_dimension(neighbour.path, neighbour.size);
    file_->make_dimension(pair.path, pair.size);
    series(s.nearest_neighbour, "/formation/nearest_neighbour_m", time, {satellite}, f64, "m", raw);
    series(s.reference_neighbours, "/formation/reference_neighbours_m", time, {neighbour}, f64, "m");
    series(s.min_separation, "/formation/min_separation_m", time, {}, f64, "m");
    series(s.min_separation_pair, "/formation/min_separation_pair", time, {pair}, i32, "1");
    series(s.envelope, "/formation/envelope_m", time, {xyz}, f64, "m");
    series(s.sun_direction, "/sun/direction_eci", time, {xyz}, f64, "1");
    series(s.beta_angle, "/sun/beta_angle_rad", time, {}, f64, "rad");
    series(s.shadow_fraction, "/sun/shadow_fraction", time, {satellite}, f64, "1");
    if (sc.power.enabled) {
        series(s.solar_power, "/power/solar_w", time, {satellite}, f64, "W");
        series(s.load_power, "/power/load_w", time, {satellite}, f64, "W");
        series(s.state_of_charge, "/power/state_of_charge", time, {satellite}, f64, "1");
        series(s.temperature, "/power/temperature_k", time, {satellite}, f64, "K");
        series(s.compute_fraction, "/power/compute_fraction", time, {}, f64, "1");
    }
    if (sc.dynamics.compare_to_nonlinear) {
        series(s.model_error, "/dynamics/model_error_m", time, {satellite}, f64, "m", raw);
    }
    if (sc.links.enabled) {
        const std::string offset = "/links/offset", link = "/links/link", event = "/links/events/event";
        for (const auto& d : {offset, link, event}) file_->make_dimension(d, 0, /*unlimited=*/true);
        series(s.link_offsets, "/links/offsets", offset, {}, ElementType::int64, "1");
        series(s.link_source, "/links/source", link, {}, i32, "1");
        series(s.link_target, "/links/target", link, {}, i32, "1");
        series(s.link_distance, "/links/distance_m", link, {}, f64, "m", raw);
        series(s.link_capacity, "/links/capacity_bps", link, {}, f64, "bit/s");
        series(s.link_power, "/links/received_power_dbm", link, {}, f64, "dBm");
        series(s.link_margin, "/links/margin_db", link, {}, f64, "dB");
        series(s.link_count, "/links/link_count", time, {}, i32, "1");
        series(s.link_components, "/links/components", time, {}, i32, "1");
        series(s.link_bisection, "/links/bisection_capacity_bps", time, {}, f64, "bit/s");
        series(s.link_capacity_mean, "/links/capacity_mean_bps", time, {}, f64, "bit/s");
        series(s.event_time, "/links/events/time_s", event, {}, f64, "s");
        series(s.event_source, "/links/events/source", event, {}, i32, "1");
        series(s.event_target, "/links/events/target", event, {}, i32, "1");
        series(s.event_kind, "/links/events/kind", event, {}, ElementType::uint8, "1");
        file_->set_enum_names("/links/events/kind", "kind_names", links::link_event_kind_names.numbered());
        series(s.link_class, "/links/class", link, {}, ElementType::uint8, "1");
        file_->set_enum_names("/links/class", "class_names", links::link_class_names.numbered());
        const std::int64_t zero = 0;
        s.link_offsets->append(&zero);
    }
    if (!setup.cluster_of.empty()) {
        // A constellation: which cluster each satellite flies in, its gateways, and the aggregation layer.
        s.cluster_of = setup.cluster_of;
        const auto clusters = static_cast<hsize_t>(setup.gateway_nodes.size());
        const auto gateways = static_cast<hsize_t>(clusters > 0 ? setup.gateway_nodes.front().size() : 0);
        const Dimension cluster{"/constellation/cluster", clusters}, gateway{"/constellation/gateway", gateways};
        file_->make_dimension(cluster.path, cluster.size);
        file_->make_dimension(gateway.path, gateway.size);
        file_->write_array("/constellation/cluster_of", s.cluster_of, {n}, "1");
        file_->attach_dimensions("/constellation/cluster_of", {satellite.path});
        std::vector<std::int32_t> nodes;
        for (const auto& g : setup.gateway_nodes) nodes.insert(nodes.end(), g.begin(), g.end());
        file_->write_array("/constellation/gateway_nodes", nodes, {clusters, gateways}, "1");
        file_->attach_dimensions("/constellation/gateway_nodes", {cluster.path, gateway.path});
        series(s.gateway_links, "/constellation/gateway_links", time, {}, i32, "1");
        series(s.gateway_blocked, "/constellation/gateway_blocked", time, {}, i32, "1");
        series(s.gateway_capacity, "/constellation/gateway_capacity_bps", time, {}, f64, "bit/s");
        series(s.oversubscription, "/constellation/oversubscription", time, {cluster}, f64, "1");
        // Routes between clusters depend on the model (ties, UCMP's later paths): docs/routing.md.
        file_->set_attribute("/constellation", "routing_model", std::string(workloads::to_string(sc.constellation.routing_model.value())));
        file_->set_attribute("/constellation/oversubscription", "meaning",
                             "each cluster's bisection capacity over the capacity of its gateway links (inf: none up)");
        series(s.cluster_chief, "/constellation/chief_position_eci_m", time, {cluster, xyz}, f64, "m");
    }
    if (sc.radiation.enabled) {
        series(s.radiation_flux, "/radiation/flux", time, {}, f64, "1");
        series(s.dose_rate, "/radiation/dose_rate_rad_s", time, {satellite}, f64, "rad(Si)/s", raw);
        series(s.dose, "/radiation/dose_rad", time, {satellite}, f64, "rad(Si)", raw);
        file_->set_attribute("/radiation/flux", "meaning",
                             "mean over satellites of the dose rate relative to the reference orbit's average");
    }
    file_->set_attribute("/formation/reference_neighbours_m", "reference_satellite",
                         std::to_string(sc.metrics.reference_satellite));
    file_->flush();
}

void ResultWriter::record(const simulation::Sample& sample) {
    auto& s = *series_;
    const auto& snap = *sample.snapshot;
    const std::size_t n = snap.satellites_lvlh.size();
    s.time_s->append(&snap.time_s);
    for (auto& [path, t] : s.group_times) t->append(&snap.time_s);
    s.chief_position->append(snap.chief_eci.position_m.data());
    s.chief_velocity->append(snap.chief_eci.velocity_m_s.data());

    row_.resize(3 * n);
    auto write_vectors = [&](Hdf5Series& series, auto&& vector_of) {
        for (std::size_t i = 0; i < n; ++i) {
            const Eigen::Vector3d& v = vector_of(i);
            row_[3 * i] = v.x();
            row_[3 * i + 1] = v.y();
            row_[3 * i + 2] = v.z();
        }
        series.append(row_.data());
    };
    write_vectors(*s.position_lvlh, [&](std::size_t i) -> const Eigen::Vector3d& { return snap.satellites_lvlh[i].position_m; });
    write_vectors(*s.velocity_lvlh, [&](std::size_t i) -> const Eigen::Vector3d& { return snap.satellites_lvlh[i].velocity_m_s; });
    if (eci_) {
        write_vectors(*s.position_eci, [&](std::size_t i) -> const Eigen::Vector3d& { return snap.satellites_eci[i].position_m; });
        write_vectors(*s.velocity_eci, [&](std::size_t i) -> const Eigen::Vector3d& { return snap.satellites_eci[i].velocity_m_s; });
    }
    s.nearest_neighbour->append(sample.nearest_neighbour_m.data());
    s.reference_neighbours->append(sample.reference_neighbours_m.data());
    s.min_separation->append(&sample.min_separation_m);
    s.min_separation_pair->append(sample.min_separation_pair);
    s.envelope->append(sample.envelope_m);
    if (s.model_error) s.model_error->append(sample.model_error_m.data());
    s.sun_direction->append(sample.sun_direction_eci.data());
    s.beta_angle->append(&sample.beta_angle_rad);
    s.shadow_fraction->append(sample.shadow_fraction.data());
    if (s.solar_power) {
        s.solar_power->append(sample.solar_w.data());
        s.load_power->append(sample.load_w.data());
        s.state_of_charge->append(sample.state_of_charge.data());
        s.temperature->append(sample.temperature_k.data());
        s.compute_fraction->append(&sample.compute_fraction);
    }
    if (s.radiation_flux) {
        s.radiation_flux->append(&sample.flux_relative_mean);
        s.dose_rate->append(sample.dose_rate_rad_s.data());
        s.dose->append(sample.dose_rad.data());
    }
    if (s.link_offsets && sample.topology) {
        for (const auto& link : sample.topology->links) {
            s.link_source->append(&link.source);
            s.link_target->append(&link.target);
            s.link_distance->append(&link.distance_m);
            s.link_capacity->append(&link.capacity_bps);
            s.link_power->append(&link.received_power_dbm);
            s.link_margin->append(&link.margin_db);
            const bool between = !s.cluster_of.empty() && s.cluster_of[static_cast<std::size_t>(link.source)] !=
                                                              s.cluster_of[static_cast<std::size_t>(link.target)];
            const auto link_class = static_cast<std::uint8_t>(between ? links::LinkClass::gateway : links::LinkClass::intra_cluster);
            s.link_class->append(&link_class);
        }
        s.links_written += static_cast<std::int64_t>(sample.topology->links.size());
        s.link_offsets->append(&s.links_written);
        const auto& m = sample.link_metrics;
        const std::int32_t count = m.link_count, components = m.components;
        s.link_count->append(&count);
        s.link_components->append(&components);
        s.link_bisection->append(&m.bisection_capacity_bps);
        s.link_capacity_mean->append(&m.capacity_mean_bps);
        for (const auto& e : sample.link_events) {
            const auto kind = static_cast<std::uint8_t>(e.kind);
            s.event_time->append(&e.time_s);
            s.event_source->append(&e.source);
            s.event_target->append(&e.target);
            s.event_kind->append(&kind);
        }
    }

    if (s.gateway_links && sample.aggregation) {
        const auto& a = *sample.aggregation;
        s.gateway_links->append(&a.gateway_links);
        s.gateway_blocked->append(&a.blocked);
        s.gateway_capacity->append(&a.gateway_capacity_bps);
        s.oversubscription->append(a.oversubscription.data());
        row_.clear();
        for (const auto& c : a.chief_eci_m) row_.insert(row_.end(), {c.x(), c.y(), c.z()});
        s.cluster_chief->append(row_.data());
    }

    // Keep what was written readable if the process dies: flush about once a minute of work.
    if (++s.samples_since_flush >= 256) {
        s.flush_all();
        file_->flush();
        s.samples_since_flush = 0;
    }
}

void ResultWriter::requests(std::size_t run, workloads::ServingRouting routing,
                            std::span<const workloads::RequestRecord> rows) {
    if (!file_) return;
    if (request_tables_.size() <= run) request_tables_.resize(run + 1);
    auto& table = request_tables_[run];
    // The scenario's routing at /inference/requests; with compare_routing, the other at /inference/requests_<routing>.
    if (!table) {
        const std::string group = run == 0 ? "/inference/requests" : std::string("/inference/requests_") + workloads::to_string(routing);
        table = std::make_unique<RequestTable>(*file_, group, routing, compression_level_);
        // The objectives the SLO attainment counts against (inference.slo), for plots that mark them.
        file_->set_attribute(group, "ttft_slo_s", ttft_slo_s_);
        file_->set_attribute(group, "tpot_slo_s", tpot_slo_s_);
    }
    table->append(rows);
}

void ResultWriter::end(const simulation::RunSummary& summary) {
    if (!file_) return;
    if (series_) {
        series_->flush_all();
        const auto& dv = summary.station_keeping_delta_v_m_s;
        file_->write_array("/station_keeping/delta_v_m_s", dv, {static_cast<hsize_t>(dv.size())}, "m/s");
        const auto& acquisition = summary.station_keeping_acquisition_delta_v_m_s;
        file_->write_array("/station_keeping/acquisition_delta_v_m_s", acquisition,
                           {static_cast<hsize_t>(acquisition.size())}, "m/s");
        const auto& drag = summary.differential_drag_delta_v_m_s;
        file_->write_array("/station_keeping/differential_drag_delta_v_m_s", drag, {static_cast<hsize_t>(drag.size())},
                           "m/s");
        file_->attach_dimension_to_group("/station_keeping", "/satellite");
    }
    if (summary.training) write_training(*file_, *summary.training);
    write_constellation(*file_, summary.constellation);
    for (std::size_t k = 0; k < request_tables_.size(); ++k) {
        if (!request_tables_[k]) continue;
        request_tables_[k]->finish();
        // The requests dropped on arrival (the queue full: inference.max_queued_requests), which have no row.
        if (k < summary.inference.size()) {
            const std::string group = k == 0 ? "/inference/requests"
                                             : std::string("/inference/requests_") + workloads::to_string(summary.inference_routing[k]);
            file_->set_attribute(group, "dropped", summary.inference[k].summary.dropped);
            file_->set_attribute(group, "max_queued_requests", max_queued_requests_);
        }
    }
    request_tables_.clear();
    for (std::size_t k = 0; k < summary.inference.size(); ++k) {
        const auto routing = summary.inference_routing[k];
        write_gateway_egress(*file_,
                             k == 0 ? "/inference/gateway_egress" : std::string("/inference/gateway_egress_") + workloads::to_string(routing),
                             routing, summary.inference[k].gateway_egress_bin_s, summary.inference[k].gateway_egress_bps);
        if (k < summary.inference_ground_journeys.size())
            write_ground_requests(*file_,
                                  k == 0 ? "/inference/ground_requests" : std::string("/inference/ground_requests_") + workloads::to_string(routing),
                                  routing, summary.inference_ground_journeys[k], ground_station_names_);
    }
    if (summary.radiation) {
        write_radiation_events(*file_, *summary.radiation);
        write_job_timeline(*file_, *summary.radiation);
        write_link_outages(*file_, *summary.radiation);
        write_trials(*file_, *summary.radiation);
    }
    file_->set_attribute("simulated_s", summary.simulated_s);
    if (!summary.complete) file_->set_attribute("stop_reason", summary.stop_reason);
    file_->set_attribute_bool("complete", summary.complete);
    series_.reset();
    file_->flush();
    file_.reset();
}

}  // namespace skyfabric::output
