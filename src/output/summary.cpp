#include "output/summary.hpp"

#include "output/output_folder.hpp"

#include "output/provenance.hpp"

#include <skyfabric/links/topology_policy.hpp>
#include <skyfabric/workloads/collectives.hpp>
#include <skyfabric/workloads/convergence.hpp>
#include <skyfabric/workloads/faults.hpp>
#include <skyfabric/workloads/input_text.hpp>
#include <skyfabric/workloads/synthetic_fabric.hpp>
#include <skyfabric/physics/constants.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <span>
#include <string>
#include <vector>

namespace skyfabric::output {

namespace {

using nlohmann::json;

json finite_or_null(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

// A figure over the trials at top level: the median, and where the trials lie (radiation.interval
// names the kind: two of the trials' own values, never interpolated).
void put_estimate(json& r, const std::string& name, const workloads::TrialStatistics& t) {
    r[name] = t.median;
    r[name + "_interval"] = {t.spread_low, t.spread_high};
}

json statistics_json(const workloads::TrialStatistics& t) {
    return json{{"mean", t.mean},
                {"median", t.median},
                {"stddev", t.stddev},
                {"mean_ci95", {t.mean_ci95_low, t.mean_ci95_high}},
                {"interval", {t.spread_low, t.spread_high}}};
}

// A constellation's fault trials, per algorithm: goodput over trials (median and the trials'
// interval of the kind radiation.interval names), the fault-free goodput and tokens/s kept, time lost by cause, what was lost.
nlohmann::json cluster_faults_json(const simulation::RunSummary& s) {
    using Trial = workloads::MonteCarloResult::Trial;
    json out = json::object();
    for (std::size_t i = 0; i < s.radiation->constellation.size(); ++i) {
        const auto& a = s.radiation->constellation[i];
        const auto& m = a.monte_carlo;
        const auto median = [&](auto field) {
            std::vector<double> v;
            for (const Trial& t : m.per_trial) v.push_back(static_cast<double>(field(t)));
            const auto st = workloads::trial_statistics(v);
            return json{{"median", st.median}, {"mean", st.mean}, {"interval", {st.spread_low, st.spread_high}}};
        };
        double tokens_per_s = 0.0;  // the fault-free run's, found by algorithm (one not played has no row here)
        for (const auto& c : s.constellation)
            if (c.algorithm == a.algorithm) tokens_per_s = c.tokens_per_s;
        out[std::string(workloads::to_string(a.algorithm))] = {
            {"trials", m.trials},
            {"checkpoint_interval_s", m.checkpoint_interval_s},
            {"goodput", statistics_json(m.goodput)},
            {"fault_free_goodput", a.fault_free_goodput},
            // The fault-free run's tokens/s times the goodput (median over trials).
            {"tokens_per_s_kept_median", tokens_per_s * m.goodput.median},
            {"lost_s",
             {{"faults", median([](const Trial& t) { return t.lost_faults_s; })},
              {"restarts", median([](const Trial& t) { return t.lost_restarts_s; })},
              {"checkpoints", median([](const Trial& t) { return t.lost_checkpoints_s; })},
              {"fabric", median([](const Trial& t) { return t.lost_fabric_s; })},
              {"shrunk_ring", median([](const Trial& t) { return t.lost_shrink_s; })},
              {"waiting_for_replicas", median([](const Trial& t) { return t.lost_waiting_s; })}}},
            {"ranks_lost", median([](const Trial& t) { return t.ranks_lost; })},
            {"spare_swaps", median([](const Trial& t) { return t.spare_swaps; })},
            {"links_lost", median([](const Trial& t) { return t.links_lost; })},
            {"gateway_links_lost", median([](const Trial& t) { return t.gateway_links_lost; })},
            // Gateway failover (constellation.gateways.failover_s): time stalled on failed links not yet
            // detected (within lost_s.fabric) and the bytes sent into them.
            {"failover_stall_s", median([](const Trial& t) { return t.failover_stall_s; })},
            {"bytes_retried", median([](const Trial& t) { return t.bytes_retried; })},
            {"outer_sync_p99_s", median([](const Trial& t) { return t.outer_sync_p99_s; })},
            {"damaged_steps_solved", a.fabric_evaluations},
        };
    }
    return out;
}

// Operational faults by cause: the expected count, the mean events and interruptions over the
// trials (trial 0's when there is no Monte Carlo), each cause's share of the interruptions, and the
// mean time it cost.
json causes_json(const workloads::OperationalFaults& o, std::span<const double> expected, const workloads::MonteCarloResult* m,
                 const workloads::GoodputResult* trial0) {
    json causes = json::object();
    double total = 0.0;
    for (std::size_t c = 0; c < o.causes.size(); ++c)
        total += m ? m->mean_interruptions_by_cause[c] : trial0 ? static_cast<double>(trial0->operational.interruptions[c]) : 0.0;
    for (std::size_t c = 0; c < o.causes.size(); ++c) {
        const double events = m ? m->mean_events_by_cause[c] : trial0 ? static_cast<double>(trial0->operational.events[c]) : 0.0;
        const double interruptions =
            m ? m->mean_interruptions_by_cause[c] : trial0 ? static_cast<double>(trial0->operational.interruptions[c]) : 0.0;
        const double lost = m ? m->mean_lost_by_cause_s[c] : trial0 ? trial0->operational.lost_s[c] : 0.0;
        causes[o.causes[c].name] = {{"index", c},  // the table's order (the object's keys are sorted)
                                    {"effect", workloads::operational_effect_names.name(o.causes[c].effect)},
                                    {"expected", c < expected.size() ? expected[c] : 0.0},
                                    {"events", events},
                                    {"interruptions", interruptions},
                                    {"share", total > 0.0 ? interruptions / total : 0.0},
                                    {"lost_s", lost}};
    }
    return causes;
}

// summary.json's radiation section: top-level figures are estimates over the trials (trial 0 alone
// when there is one); trial 0's own figures (the events and timeline result.h5 holds) under trial0.
json radiation_json(const scenario::Scenario& sc, const simulation::RunSummary& s) {
    const auto& r = *s.radiation;
    const double days = s.simulated_s / physics::seconds_per_day;
    json events_by_kind, expected_by_kind;
    std::array<std::int64_t, workloads::fault_kind_count> counts{};
    for (const auto& e : r.events) ++counts[static_cast<int>(e.kind)];
    for (int k = 0; k < workloads::fault_kind_count; ++k) {
        const char* name = workloads::fault_kind_name(static_cast<workloads::FaultKind>(k));
        events_by_kind[name] = counts[k];
        expected_by_kind[name] = r.expected_events[k];
    }
    json j = {
        {"shielding_mm_al", sc.radiation.environment.shielding_mm_al},
        {"dose_mean_rad", r.dose_mean_rad},
        {"dose_max_rad", r.dose_max_rad},
        {"dose_rate_mean_rad_per_yr", r.dose_rate_mean_rad_per_yr},
        {"annual_dose_rad_per_yr", r.annual_dose_rad_per_yr},
        {"expected_events_by_kind", expected_by_kind},
        {"mean_time_between_interruptions_s", finite_or_null(r.interruption_mtbf_s)},
        {"long_term_mean_time_between_interruptions_s", finite_or_null(r.long_term_interruption_mtbf_s)},
        {"rate_scale", sc.radiation.faults.rate_scale},
        {"on_rank_loss", workloads::rank_loss_policy_name(sc.radiation.recovery.on_rank_loss)},
        {"link_outage_s", sc.radiation.recovery.link_outage_s},
    };
    json trial0 = {{"events_by_kind", events_by_kind},
                   {"events_per_day", days > 0 ? json(static_cast<double>(r.events.size()) / days) : json(nullptr)}};
    const workloads::MonteCarloResult* m = r.monte_carlo ? &*r.monte_carlo : nullptr;
    // A constellation's trials are per algorithm (the same draws for each): their count is the same.
    const std::size_t trials = m ? static_cast<std::size_t>(m->trials)
                               : !r.constellation.empty() ? static_cast<std::size_t>(r.constellation.front().monte_carlo.trials)
                                                          : 1;
    j["trials"] = trials;
    j["interval"] = workloads::spread_kind(trials);
    // Trial 0 alone as the estimate when there is no Monte Carlo (radiation.trials: 1).
    const auto one = [](double x) { return workloads::trial_statistics(std::span<const double>(&x, 1)); };
    if (days > 0) put_estimate(j, "events_per_day", m ? m->events_per_day : one(static_cast<double>(r.events.size()) / days));
    if (r.goodput) {
        const auto& g = *r.goodput;
        j["checkpoint_interval_s"] = g.checkpoint_interval_s;
        j["checkpoint_interval_from"] = sc.radiation.recovery.checkpoint_interval_s > 0.0 ? "scenario" : "long_term_mtbf";
        trial0["goodput"] = g.goodput;
        trial0["rollbacks"] = g.rollbacks;
        trial0["corrupted_steps"] = g.corrupted_steps;
        trial0["recomputed_steps"] = g.recomputed_steps;
        trial0["checkpoints"] = g.checkpoints;
        trial0["ranks_lost"] = g.ranks_lost;
        trial0["spare_swaps"] = g.replacements;
        trial0["links_lost"] = g.links_lost;
        trial0["damaged_steps"] = g.damaged_steps;
        const std::vector<double> goodputs = m ? m->goodput_per_trial : std::vector<double>{g.goodput};
        put_estimate(j, "goodput", m ? m->goodput : one(g.goodput));
        if (days > 0) put_estimate(j, "interruptions_per_day", m ? m->interruptions_per_day : one(static_cast<double>(g.rollbacks) / days));
        // The same accounting without faults: completed steps over the run (1 but for the unfinished tail).
        // Goodput over it isolates what faults (and checkpoints against them) cost from the boundary step.
        if (s.training && s.simulated_s > 0.0) {
            const double fault_free = (s.training->summary.end_s - s.training->summary.start_s) / s.simulated_s;
            j["fault_free_goodput"] = fault_free;
            if (fault_free > 0.0) {
                std::vector<double> ratio;
                for (const double x : goodputs) ratio.push_back(x / fault_free);
                put_estimate(j, "goodput_vs_fault_free", workloads::trial_statistics(ratio));
            }
        }
        if (std::isfinite(r.interruption_mtbf_s) && r.interruption_mtbf_s > 0.0) {
            // Daly/Young's renewal formula: checkpoints and restarts only, interrupts at this run's mean rate
            // held constant. A model to compare with, not a bound (clustered SAA interrupts cost less).
            j["daly_young_constant_rate_goodput"] = workloads::expected_goodput_constant_rate(
                g.checkpoint_interval_s, sc.radiation.recovery.checkpoint_cost_s, sc.radiation.recovery.restart_s,
                r.interruption_mtbf_s);
        }
    }
    if (const auto& o = sc.radiation.faults.operational; o.enabled()) {
        // Operational faults beside the radiation ones (faults:): their causes, over the run's ranks.
        // A constellation: the first algorithm's trials when it plays the ranks together (ring,
        // hierarchical; DiLoCo's and NoLoCo's composed trials keep no counts by cause).
        const workloads::MonteCarloResult* by_cause = m;
        if (!by_cause && !r.constellation.empty() && r.constellation.front().monte_carlo.total_interruptions > 0.0)
            by_cause = &r.constellation.front().monte_carlo;
        j["operational"] = {{"preset", sc.faults.preset},
                            {"causes", causes_json(o, r.expected_operational, by_cause, r.goodput ? &*r.goodput : nullptr)}};
    }
    if (!r.constellation.empty()) {
        j["constellation"] = cluster_faults_json(s);
        j["constellation_wall_s"] = r.trials_wall_s;
    }
    if (!r.constellation_not_played.empty()) {
        json names = json::array();
        for (const auto a : r.constellation_not_played) names.push_back(std::string(workloads::to_string(a)));
        j["constellation_not_played"] = names;  // trained no step in the run: no trial to play
    }
    j["trial0"] = trial0;
    j["fabric"] = {{"coupled", r.fabric_note.empty()},
                   {"topologies", r.fabric_topologies},
                   {"keyframes", r.fabric_keyframes},
                   {"memory_bytes", r.fabric_memory_bytes},
                   {"damaged_steps_solved", r.fabric_evaluations}};
    if (!r.fabric_note.empty()) j["fabric"]["note"] = r.fabric_note;
    if (m) {
        auto per_trial = [&](auto field) {
            std::vector<double> v;
            for (const auto& t : m->per_trial) v.push_back(static_cast<double>(field(t)));
            return statistics_json(workloads::trial_statistics(v));
        };
        using Trial = workloads::MonteCarloResult::Trial;
        j["monte_carlo"] = {
            {"trials", m->trials},
            {"backend", workloads::to_string(m->backend)},
            {"threads", m->threads},
            {"wall_s", r.trials_wall_s},
            {"goodput", statistics_json(m->goodput)},
            {"interruptions_per_day", statistics_json(m->interruptions_per_day)},
            {"events_per_day", statistics_json(m->events_per_day)},
            // Every term is >= 0; a smaller re-formed ring's faster steps are a gain, apart.
            {"lost_s",
             {{"faults", per_trial([](const Trial& t) { return t.lost_faults_s; })},
              {"restarts", per_trial([](const Trial& t) { return t.lost_restarts_s; })},
              {"checkpoints", per_trial([](const Trial& t) { return t.lost_checkpoints_s; })},
              {"fabric", per_trial([](const Trial& t) { return t.lost_fabric_s; })},
              {"shrunk_ring", per_trial([](const Trial& t) { return t.lost_shrink_s; })}}},
            {"gained_s", {{"fabric", per_trial([](const Trial& t) { return t.gained_fabric_s; })}}},
            {"ranks_lost", per_trial([](const Trial& t) { return t.ranks_lost; })},
            {"spare_swaps", per_trial([](const Trial& t) { return t.spare_swaps; })},
            {"links_lost", per_trial([](const Trial& t) { return t.links_lost; })},
            {"damaged_steps", per_trial([](const Trial& t) { return t.damaged_steps; })},
            {"step_time_median_s", per_trial([](const Trial& t) { return t.step_time_median_s; })},
            {"step_time_p99_s", per_trial([](const Trial& t) { return t.step_time_p99_s; })}};
    }
    return j;
}

// A synthetic fabric's operational faults: the estimates over the trials at top level (as radiation's),
// the Poisson interval of the mean interruption rate, the causes, where the time went.
json operational_json(const scenario::Scenario& sc, const simulation::RunSummary& s) {
    const auto& r = *s.operational;
    const auto& f = sc.faults;
    const double days = s.simulated_s / physics::seconds_per_day;
    const workloads::MonteCarloResult* m = r.monte_carlo ? &*r.monte_carlo : nullptr;
    const workloads::GoodputResult& g = *r.goodput;
    const std::size_t trials = m ? static_cast<std::size_t>(m->trials) : 1;
    const auto one = [](double x) { return workloads::trial_statistics(std::span<const double>(&x, 1)); };
    double expected = 0.0;
    for (const double x : r.expected_by_cause) expected += x;
    json j = {
        {"preset", f.preset},
        {"ranks", r.ranks},
        {"gpus", static_cast<double>(r.ranks) * f.operational.gpus_per_rank},
        {"trials", trials},
        {"interval", workloads::spread_kind(trials)},
        {"checkpoint_mode", workloads::checkpoint_mode_names.name(f.recovery.checkpoint_mode)},
        {"checkpoint_interval_s", g.checkpoint_interval_s},
        {"checkpoint_interval_from", f.recovery.checkpoint_interval_s > 0.0 ? "scenario" : "mtbf"},
        {"checkpoint_stall_s", workloads::checkpoint_stall_s(f.recovery)},
        {"mean_time_between_interruptions_s", finite_or_null(r.interruption_mtbf_s)},
        {"on_rank_loss", workloads::rank_loss_policy_name(f.recovery.on_rank_loss)},
        {"fault_free_goodput", r.fault_free_goodput},
    };
    if (days > 0) {
        j["expected_events_per_day"] = expected / days;
        put_estimate(j, "interruptions_per_day", m ? m->interruptions_per_day : one(static_cast<double>(g.rollbacks) / days));
        // The mean rate's exact Poisson interval over every trial's days (Garwood).
        const auto [low, high] = workloads::poisson_rate_ci95(m ? m->total_interruptions : static_cast<double>(g.rollbacks),
                                                              static_cast<std::int32_t>(trials), days);
        j["interruptions_per_day_mean"] = m ? m->interruptions_per_day.mean : static_cast<double>(g.rollbacks) / days;
        j["interruptions_per_day_mean_ci95"] = {low, high};
    }
    put_estimate(j, "goodput", m ? m->goodput : one(g.goodput));
    std::vector<double> ratio;
    for (const double x : m ? m->goodput_per_trial : std::vector<double>{g.goodput})
        ratio.push_back(r.fault_free_goodput > 0.0 ? x / r.fault_free_goodput : 0.0);
    put_estimate(j, "goodput_vs_fault_free", workloads::trial_statistics(ratio));
    if (s.training) {
        const double tokens_per_s = s.training->summary.tokens_per_s;
        j["tokens_per_day"] = tokens_per_s * physics::seconds_per_day * (m ? m->goodput.median : g.goodput);
        j["tokens_per_day_fault_free"] = tokens_per_s * physics::seconds_per_day * r.fault_free_goodput;
    }
    j["causes"] = causes_json(f.operational, r.expected_by_cause, m, &g);
    // Where the time went, mean over the trials (s): every term >= 0.
    using Trial = workloads::MonteCarloResult::Trial;
    const auto mean = [&](auto field) {
        if (!m) return static_cast<double>(field(workloads::trial_summary(g)));
        double sum = 0.0;
        for (const Trial& t : m->per_trial) sum += static_cast<double>(field(t));
        return sum / static_cast<double>(m->per_trial.size());
    };
    j["lost_s"] = {{"faults", mean([](const Trial& t) { return t.lost_faults_s; })},
                   {"restarts", mean([](const Trial& t) { return t.lost_restarts_s; })},
                   {"checkpoints", mean([](const Trial& t) { return t.lost_checkpoints_s; })},
                   {"shrunk_ring", mean([](const Trial& t) { return t.lost_shrink_s; })}};
    j["trial0"] = {{"goodput", g.goodput},
                   {"rollbacks", g.rollbacks},
                   {"checkpoints", g.checkpoints},
                   {"events", r.events.size()}};
    return j;
}

}  // namespace

json percentiles_json(const workloads::Percentiles& p) { return {{"p50", p.p50}, {"p90", p.p90}, {"p99", p.p99}}; }

namespace {

// [low, high], or null where either bound is not a number (JSON has no NaN).
json interval_json(const workloads::Interval95& i) {
    if (!std::isfinite(i.low) || !std::isfinite(i.high)) return nullptr;
    return json::array({i.low, i.high});
}

json percentile_intervals_json(const workloads::PercentileIntervals& p) {
    return {{"p50", interval_json(p.p50)}, {"p90", interval_json(p.p90)}, {"p99", interval_json(p.p99)}};
}

// One routing's serving figures.
json serving_json(const workloads::ServingSummary& r, bool prfaas) {
    return {
        {"name", prfaas ? "PrfaaS" : "local PD"},
        {"arrived", r.arrived},
        {"completed", r.completed},
        {"unfinished", r.unfinished},
        {"unservable", r.unservable},
        {"lost", r.lost},
        {"dropped", r.dropped},
        {"dropped_fraction", r.arrived > 0 ? static_cast<double>(r.dropped) / static_cast<double>(r.arrived) : 0.0},
        {"peak_queued_requests", r.peak_queued_requests},
        {"requeued_requests", r.requeued_requests},
        {"instance_crashes", r.instance_crashes},
        {"instance_down_s", r.instance_down_s},
        {"instance_throttled_s", r.instance_throttled_s},
        {"requests_per_s", r.requests_per_s},
        {"output_tokens_per_s", r.output_tokens_per_s},
        {"ttft_s", percentiles_json(r.ttft_s)},
        {"tpot_s", percentiles_json(r.tpot_s)},
        {"slo_attainment", r.slo_attainment},
        // 95 % intervals by sectioning (docs/inference.md "Intervals"); null where the run cannot give one.
        {"ttft_s_ci95", percentile_intervals_json(r.ttft_ci95)},
        {"tpot_s_ci95", percentile_intervals_json(r.tpot_ci95)},
        {"slo_attainment_ci95", interval_json(r.slo_attainment_ci95)},
        {"interval_sections", r.interval_sections},
        {"kv_bytes_moved", r.kv_bytes_moved},
        {"kv_transfer_s", percentiles_json(r.kv_transfer_s)},
        {"stalled_transfer_s", r.stalled_transfer_s},
        {"gateway_bytes", r.gateway_bytes},
        {"gateway_egress_mean_bps", r.gateway_egress_mean_bps},
        {"gateway_egress_peak_bps", r.gateway_egress_peak_bps},
        {"prefill_routed_dedicated", r.prefill_routed_dedicated},
        {"decode_steps", r.decode_steps},
        {"topology_epochs", r.topology_epochs},
    };
}

json shared_training_json(const workloads::SharedTrainingSummary& t) {
    return {{"steps", t.steps},
            {"mean_step_s", t.mean_step_s},
            {"step_s", percentiles_json(t.step_s)},
            {"mean_collective_s", t.mean_collective_s},
            {"bytes_sent", t.bytes_sent}};
}

// The training job beside the serving one: its set-up and figures alone, then per routing both jobs'
// figures together and what each cost the other (docs/output-format.md, "inference.beside_training").
json beside_training_json(const scenario::Scenario& sc, const simulation::RunSummary& s) {
    const auto& w = sc.workload;
    const auto& alone = *s.training_without_serving;
    json routings = json::object();
    for (std::size_t k = 0; k < s.inference_beside_training.size(); ++k) {
        const auto& together = s.inference_beside_training[k];
        const auto& by_itself = s.inference[k].summary;
        routings[workloads::to_string(s.inference_routing[k])] = {
            {"serving", serving_json(together.summary, s.inference_routing[k] == workloads::ServingRouting::prfaas)},
            {"training", shared_training_json(together.training)},
            // Each job together over alone, on the same requests and fabric.
            {"training_step_slowdown", alone.mean_step_s > 0.0 ? together.training.mean_step_s / alone.mean_step_s - 1.0 : 0.0},
            {"ttft_p50_increase_s", together.summary.ttft_s.p50 - by_itself.ttft_s.p50},
            {"ttft_p99_increase_s", together.summary.ttft_s.p99 - by_itself.ttft_s.p99},
            {"kv_transfer_p99_increase_s", together.summary.kv_transfer_s.p99 - by_itself.kv_transfer_s.p99},
            {"slo_attainment_change", together.summary.slo_attainment - by_itself.slo_attainment},
        };
    }
    return {
        {"clusters", w.clusters},
        {"ranks", w.job.data_parallel},
        {"all_reduce", workloads::to_string(w.options.all_reduce)},
        {"gradient_bytes", workloads::gradient_bytes(w.job)},
        {"compute_s", workloads::compute_time_per_step_s(w.job, w.accelerator)},
        {"alone", shared_training_json(alone)},
        {"routings", routings},
    };
}

}  // namespace

// A routing's ground segment (docs/output-format.md, "inference.routings.*.ground").
json ground_json(const workloads::GroundServingSummary& g) {
    json stations = json::array();
    for (const auto& st : g.stations) {
        stations.push_back({
            {"name", st.name},
            {"passes", st.passes},
            {"passes_per_day", st.passes_per_day},
            {"contact_s", st.contact_s},
            {"contact_min_per_day", st.contact_min_per_day},
            {"optical_open_s", st.optical_open_s},
            {"ka_band_open_s", st.ka_band_open_s},
            {"cloudy_visible_s", st.cloudy_visible_s},
            {"cluster_handovers", st.cluster_handovers},
            {"requests_up", st.requests_up},
            {"requests_down", st.requests_down},
            {"bytes_up", st.bytes_up},
            {"bytes_down", st.bytes_down},
            {"bytes_up_per_day", st.bytes_up_per_day},
            {"bytes_down_per_day", st.bytes_down_per_day},
        });
    }
    json j = {
        {"requests", g.requests},
        {"uplinked", g.uplinked},
        {"waiting_on_ground", g.waiting_on_ground},
        {"waited", g.waited},
        {"first_token_down", g.first_token_down},
        {"station_handovers", g.station_handovers},
        {"uplink_wait_s", percentiles_json(g.uplink_wait_s)},
        {"uplink_wait_mean_s", g.uplink_wait_mean_s},
        {"uplink_wait_max_s", g.uplink_wait_max_s},
        {"downlink_wait_s", percentiles_json(g.downlink_wait_s)},
        {"downlink_wait_mean_s", g.downlink_wait_mean_s},
        {"ttft_s", percentiles_json(g.ttft_ground_s)},
        {"ttft_s_ci95", percentile_intervals_json(g.ttft_ground_ci95)},
        {"ttft_mean_s", g.ttft_ground_mean_s},
        {"completion_s", percentiles_json(g.completion_ground_s)},
        {"slo_attainment", g.slo_attainment_ground},
        {"slo_attainment_ci95", interval_json(g.slo_attainment_ground_ci95)},
        {"stations", stations},
    };
    if (g.kv_crosses_ground_link) {  // a role on a ground data centre: how long its KV caches waited for a contact
        j["kv_caches_crossing"] = g.kv_caches_crossing;
        j["kv_waited_for_contact"] = g.kv_waited_for_contact;
        j["kv_no_contact_before_end"] = g.kv_no_contact_before_end;
        j["kv_contact_wait_s"] = percentiles_json(g.kv_contact_wait_s);
        j["kv_contact_wait_mean_s"] = g.kv_contact_wait_mean_s;
        j["kv_contact_wait_max_s"] = g.kv_contact_wait_max_s;
    }
    return j;
}

// A serving workload: its set-up, then each routing's figures (docs/output-format.md, "inference").
json inference_json(const scenario::Scenario& sc, const simulation::RunSummary& s) {
    const auto& in = sc.inference;
    const auto& v = in.serving;
    json routings = json::object();
    for (std::size_t k = 0; k < s.inference.size(); ++k) {
        auto& r = routings[workloads::to_string(s.inference_routing[k])] =
            serving_json(s.inference[k].summary, s.inference_routing[k] == workloads::ServingRouting::prfaas);
        // The busiest output step's mean egress (what /inference/gateway_egress holds and the figure
        // draws), beside gateway_egress_peak_bps, the busiest single interval of the flow solver.
        const auto& bins = s.inference[k].gateway_egress_bps;
        r["gateway_egress_step_peak_bps"] = bins.empty() ? 0.0 : *std::max_element(bins.begin(), bins.end());
        if (k < s.inference_ground.size()) r["ground"] = ground_json(s.inference_ground[k]);
    }
    json j = {
        {"accelerator", in.accelerator.name},
        {"model_parameters", v.model.parameters},
        {"attention", workloads::to_string(v.model.attention)},
        {"kv_bytes_per_token", workloads::kv_bytes_per_token(v.model)},
        {"arrivals", in.trace_file.empty() ? json("poisson") : json(in.trace_file)},
        {"rate_per_s", in.trace_file.empty() ? json(v.requests.rate_per_s) : json(nullptr)},
        {"prefill_instances", v.engines.prefill.instances},
        {"decode_instances", v.engines.decode.instances},
        {"satellites_per_prefill_instance", v.engines.prefill.satellites_per_instance},
        {"satellites_per_decode_instance", v.engines.decode.satellites_per_instance},
        {"kv_capacity_tokens_per_decode_instance", s.inference.front().summary.kv_capacity_tokens},
        {"threshold_tokens", v.threshold_tokens},
        {"dedicated_prefill_instances", v.dedicated_prefill_instances},
        {"ttft_slo_s", v.ttft_slo_s},
        {"tpot_slo_s", v.tpot_slo_s},
        {"max_queued_requests", v.max_queued_requests},
        {"routing", workloads::to_string(s.inference_routing.front())},
        {"routings", routings},
    };
    // Mixed hardware (docs/inference.md): each role's chips, only where a role has its own.
    if (v.engines.prefill.accelerator) j["prefill_accelerator"] = v.engines.prefill.accelerator->name;
    if (v.engines.dedicated_prefill_accelerator) j["dedicated_prefill_accelerator"] = v.engines.dedicated_prefill_accelerator->name;
    if (v.engines.decode.accelerator) j["decode_accelerator"] = v.engines.decode.accelerator->name;
    if (s.training_without_serving) j["beside_training"] = beside_training_json(sc, s);
    return j;
}

nlohmann::json summary_json(const scenario::Scenario& sc, std::size_t satellite_count,
                            const simulation::RunSummary& s, const Provenance& provenance) {
    json j = provenance_json(provenance);  // skyfabric_version, git_commit, …
    j["scenario"] = sc.name;
    j["seed"] = sc.seed;
    j["complete"] = s.complete;
    if (!s.complete) j["stop_reason"] = s.stop_reason;
    j["satellites"] = satellite_count;
    j["dynamics_model"] = scenario::to_string(sc.dynamics.model);
    j["duration_s"] = sc.duration_s;
    j["simulated_s"] = s.simulated_s;
    j["samples"] = s.samples_written;
    j["simulation_wall_s"] = s.wall_s;  // run_to_directory adds wall_s, the files' writing included
    j["ranks"] = s.ranks;               // processes the run was shared among (mpirun)
    if (sc.fabric) j["fabric"] = workloads::fabric_description(*sc.fabric);
    if (!sc.fabric) j["formation"] = {
        {"nearest_neighbour_min_m", finite_or_null(s.nearest_neighbour_min_m)},
        {"nearest_neighbour_max_m", finite_or_null(s.nearest_neighbour_max_m)},
        {"reference_satellite", sc.metrics.reference_satellite},
        {"reference_neighbours_min_m", finite_or_null(s.reference_neighbours_min_m)},
        {"reference_neighbours_max_m", finite_or_null(s.reference_neighbours_max_m)},
        {"min_separation_m", finite_or_null(s.min_separation_m)},
        {"min_separation_time_s", s.min_separation_time_s},
        {"min_separation_pair", {s.min_separation_pair[0], s.min_separation_pair[1]}},
        {"min_separation_alarm_m", sc.metrics.min_separation_alarm_m},
        {"samples_below_alarm", s.separation_alarms},
        {"envelope_max_m", {s.envelope_max_m[0], s.envelope_max_m[1], s.envelope_max_m[2]}},
    };
    if (!sc.fabric) {
        constexpr double deg = 180.0 / physics::pi;
        j["sun"] = {{"beta_angle_min_deg", s.beta_angle_min_rad * deg},
                    {"beta_angle_max_deg", s.beta_angle_max_rad * deg},
                    {"shadow_fraction_mean", s.shadow_fraction_mean},
                    {"samples_in_shadow", s.samples_in_shadow}};
    }
    if (sc.power.enabled) {
        j["power"] = {{"policy", scenario::to_string(sc.inference.enabled ? sc.inference.power_policy : sc.workload.power_policy)},
                      {"state_of_charge_min", s.power_state_of_charge_min},
                      {"temperature_max_k", s.power_temperature_max_k},
                      {"energy_generated_kwh_per_satellite", s.power_generated_kwh},
                      {"energy_used_kwh_per_satellite", s.power_used_kwh},
                      {"energy_shunted_kwh_per_satellite", s.power_shunted_kwh},
                      {"compute_lost_s", s.power_compute_lost_s},
                      {"compute_lost_fraction", s.simulated_s > 0 ? s.power_compute_lost_s / s.simulated_s : 0.0},
                      {"samples_limited", s.power_samples_limited},
                      {"brownouts", s.power_brownouts}};
    }
    if (sc.dynamics.compare_to_nonlinear) j["dynamics"] = {{"model_error_max_m", s.model_error_max_m}};
    // Per-year figures are steady rates: the one-off acquisition is reported apart, and a rate is given only
    // for a window of at least a day (the drag and its differential vary over the orbit and the day).
    const auto& dv = s.station_keeping_delta_v_m_s;
    const auto& acquisition = s.station_keeping_acquisition_delta_v_m_s;
    const auto& drag = s.differential_drag_delta_v_m_s;
    const double satellites = static_cast<double>(dv.size());
    const double total = std::accumulate(dv.begin(), dv.end(), 0.0);
    const double acquisition_total = std::accumulate(acquisition.begin(), acquisition.end(), 0.0);
    const double drag_total = std::accumulate(drag.begin(), drag.end(), 0.0);
    const double window_s = s.simulated_s - s.station_keeping_steady_since_s;
    const bool rate_ok = window_s >= physics::seconds_per_day && !dv.empty();
    const double window_years = window_s / physics::seconds_per_julian_year;
    const bool drag_on = sc.dynamics.drag.enabled && sc.dynamics.model == physics::RelativeMotionModel::nonlinear;
    if (!sc.fabric) {
        json k = {
            {"enabled", sc.station_keeping.enabled},
            {"delta_v_total_m_s", total},
            {"delta_v_max_m_s", dv.empty() ? 0.0 : *std::max_element(dv.begin(), dv.end())},
        };
        if (sc.station_keeping.enabled) {
            k["acquisition_delta_v_total_m_s"] = acquisition_total;
            k["acquisition_delta_v_per_satellite_m_s"] = dv.empty() ? json(nullptr) : json(acquisition_total / satellites);
            k["steady_delta_v_total_m_s"] = total - acquisition_total;
            k["steady_window_s"] = window_s;
            k["deviation_max_m"] = s.station_keeping_deviation_max_m;
        }
        k["delta_v_per_satellite_per_year_m_s"] =
            rate_ok ? json((total - acquisition_total) / satellites / window_years) : json(nullptr);
        if (drag_on) {
            k["differential_drag_delta_v_total_m_s"] = drag_total;
            k["differential_drag_minimum_per_satellite_per_year_m_s"] =
                rate_ok ? json(drag_total / satellites / window_years) : json(nullptr);
        }
        j["station_keeping"] = k;
    }
    if (sc.links.enabled && !sc.fabric) {
        j["links"] = {
            {"topology", std::string(links::to_string(sc.links.topology.policy))},
            {"capacity_min_bps", s.link_capacity_min_bps},
            {"capacity_mean_bps", s.link_capacity_mean_bps},
            {"capacity_max_bps", s.link_capacity_max_bps},
            // Capacity 0 is a link re-acquiring (pointed, not yet carrying): how many link-samples
            // were, and the minimum over the others.
            {"link_samples", s.link_samples},
            {"link_samples_acquiring", s.link_samples_acquiring},
            {"capacity_min_carrying_bps", s.link_capacity_min_carrying_bps},
            {"bisection_capacity_min_bps", s.bisection_capacity_min_bps},
            {"bisection_capacity_mean_bps", s.bisection_capacity_mean_bps},
            {"links_per_satellite_mean", s.links_per_satellite_mean},
            {"links_per_satellite_max", s.links_per_satellite_max},
            {"components_max", s.components_max},
            {"events", s.link_events},
        };
    }
    if (sc.constellation.enabled) {
        const auto& c = sc.constellation;
        json algorithms = json::object();
        for (const auto& r : s.constellation) {
            algorithms[std::string(workloads::to_string(r.algorithm))] = {
                {"steps", r.steps},
                {"step_time_mean_s", r.step_time_mean_s},
                {"compute_per_step_s", r.compute_per_step_s},
                {"all_to_all_per_step_s", r.all_to_all_per_step_s},
                {"tokens_per_s", r.tokens_per_s},
                {"mfu", r.mfu},
                {"idle_fraction", r.idle_fraction},
                {"intra_cluster_bytes", r.intra_cluster_bytes},
                {"gateway_bytes", r.gateway_bytes},
                {"bytes_outside_own_clusters", r.bytes_outside_own_clusters},
                {"outer_rounds", r.outer_rounds},
                {"outer_sync_mean_s", r.outer_sync_mean_s},
                {"outer_wait_mean_s", r.outer_wait_mean_s},
                {"compute_throttled_s", r.compute_throttled_s},
                {"straggler_s", r.straggler_s},
                {"truncated", r.truncated},
            };
            // A model beside the measured figure: tokens/s at data-parallel's loss per token.
            // Under sync: local_steps ring and hierarchical are local SGD too, with a rank per replica.
            const bool rank_replicas = sc.workload.job.sync == workloads::SyncMode::local_steps &&
                                       (r.algorithm == workloads::ClusterAlgorithm::ring ||
                                        r.algorithm == workloads::ClusterAlgorithm::hierarchical);
            const auto efficiency =
                rank_replicas ? workloads::token_efficiency(workloads::ClusterAlgorithm::diloco, sc.workload.job.data_parallel,
                                                            sc.workload.job.local_steps, sc.workload.job.parameters)
                              : workloads::token_efficiency(r.algorithm, static_cast<int>(c.clusters.size()),
                                                            sc.workload.job.local_steps, sc.workload.job.parameters);
            auto& a = algorithms[std::string(workloads::to_string(r.algorithm))];
            if (efficiency.covered) {
                a["effective_tokens_per_s"] = r.tokens_per_s / efficiency.token_multiplier;
                a["token_multiplier"] = efficiency.token_multiplier;
                a["effective_bound"] = workloads::to_string(efficiency.bound);
                a["convergence_source"] = efficiency.source;
            } else {
                a["effective_tokens_per_s"] = nullptr;
                a["convergence_not_covered"] = efficiency.not_covered;
            }
        }
        j["constellation"] = {
            {"clusters", c.clusters.size()},
            {"gateways_per_cluster", c.gateways.gateways_per_cluster},
            {"aggregation_topology", std::string(links::to_string(c.gateways.topology))},
            {"routing", sc.workload.options.flow.split == workloads::MultipathSplit::capacity ? "ucmp" : "single path"},
            {"routing_model", workloads::to_string(c.routing_model.value())},
            {"local_steps", sc.workload.job.local_steps},
            {"inner_steps", sc.workload.job.local_steps},  // the old name of local_steps, kept one release
            {"expert_placement", sc.workload.experts_across_clusters ? "across_clusters" : "within_cluster"},
            {"gateway_failover_s", c.gateways.failover_s},
            {"gateway_links_min", s.gateway_links_min},
            {"gateway_links_max", s.gateway_links_max},
            {"gateway_blocked_max", s.gateway_blocked_max},
            {"gateway_capacity_min_bps", s.gateway_capacity_min_bps},
            {"gateway_capacity_mean_bps", s.gateway_capacity_mean_bps},
            {"oversubscription_min", finite_or_null(s.oversubscription_min)},
            {"oversubscription_mean", finite_or_null(s.oversubscription_mean)},
            {"oversubscription_max", finite_or_null(s.oversubscription_max)},
            {"algorithms", algorithms},
        };
        // The first algorithm listed under one name, so that a sweep over constellation.algorithms
        // compares them in one column each.
        if (!s.constellation.empty()) {
            json first = algorithms[std::string(workloads::to_string(s.constellation.front().algorithm))];
            first["algorithm"] = static_cast<int>(s.constellation.front().algorithm);
            j["constellation"]["first_algorithm"] = first;
        }
    }
    if (s.training) {
        const auto& t = s.training->summary;
        j["workload"] = {
            {"accelerator", sc.workload.accelerator.name},
            {"data_parallel", sc.workload.job.data_parallel},
            {"all_reduce", sc.constellation.enabled ? std::string(workloads::to_string(sc.constellation.algorithms.front()))
                                                    : workloads::to_string(sc.workload.options.all_reduce)},
            {"steps", t.steps},
            {"step_time_median_s", t.step_time_median_s},
            {"step_time_p99_s", t.step_time_p99_s},
            {"step_time_mean_s", t.step_time_mean_s},
            {"compute_per_step_s", t.compute_per_step_s},
            {"all_to_all_per_step_s", t.all_to_all_per_step_s},
            {"exposed_all_reduce_per_step_s", t.exposed_all_reduce_per_step_s},
            {"tokens_per_s", t.tokens_per_s},
            {"mfu", t.mfu},
            {"bus_bw_mean_B_s", t.bus_bw_mean_Bps},
            {"bus_bw_bound_B_s", t.bus_bw_bound_Bps},
            {"time_lost_to_topology_s", t.time_lost_s},
            {"stalled_s", t.stalled_s},
            {"straggler_steps", t.straggler_steps},
            {"straggler_s", t.straggler_s},
            {"replans", t.replans},
            {"flow_events", t.flow_events},
            {"truncated", t.truncated},
            {"stopped", t.stopped},
        };
    }
    if (!s.inference.empty()) j["inference"] = inference_json(sc, s);
    if (s.radiation) j["radiation"] = radiation_json(sc, s);
    if (s.operational) j["faults"] = operational_json(sc, s);
    return j;
}

namespace {

// Paths come from the OS as bytes and need not be UTF-8 (a folder named with a Latin-1 byte): every
// string and key is made valid UTF-8, each stray byte written as the text \xNN, so the file is
// always written (JSON allows only UTF-8).
nlohmann::json valid_utf8(const nlohmann::json& v) {
    if (v.is_string()) return workloads::utf8_escaped(v.get_ref<const std::string&>());
    if (v.is_array()) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& e : v) out.push_back(valid_utf8(e));
        return out;
    }
    if (v.is_object()) {
        nlohmann::json out = nlohmann::json::object();
        for (const auto& [key, e] : v.items()) out[workloads::utf8_escaped(key)] = valid_utf8(e);
        return out;
    }
    return v;
}

}  // namespace

void write_json_file(const std::filesystem::path& path, const nlohmann::json& value) {
    write_file_atomically(path, valid_utf8(value).dump(2) + "\n");
}

std::optional<nlohmann::json> read_json_file(const std::filesystem::path& path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    auto j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded()) return std::nullopt;
    return j;
}

}  // namespace skyfabric::output
