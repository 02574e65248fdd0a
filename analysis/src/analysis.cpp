#include <skyfabric/analysis/analysis.hpp>

#include <skyfabric/workloads/job.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace skyfabric::analysis {
namespace {

std::string format(const char* pattern, double a, double b = 0.0, double c = 0.0, double d = 0.0) {
    char text[512];
    std::snprintf(text, sizeof text, pattern, a, b, c, d);
    return text;
}

std::string number(double v) { return format("%.6g", v); }

double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Nearest rank, as summary.json's percentiles.
double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())));
    return v[std::min(v.size() - 1, rank > 0 ? rank - 1 : 0)];
}

double relative_residual(double parts, double total) {
    const double scale = std::max(std::fabs(total), 1e-300);
    return std::fabs(parts - total) / scale;
}

std::string link_name(const LinkUse& l) { return std::to_string(l.source) + "-" + std::to_string(l.target); }

// ---- breakdowns ----

// Each step split into compute at full speed, compute slowed (power, stragglers), exposed
// communication stalled on topology changes, exposed transfer; the parts partition end − start. The
// exposed transfer is split by collective kind, each taking the share of it that its time inside the
// step's exposed window [start + compute, end] is of that window (collectives run one after another);
// what no recorded collective covers is named as such.
Breakdown step_breakdown(const TrainingInput& t, double& exposed_share, double& slowed_share) {
    Breakdown b;
    b.total_name = "step time";
    double full = 0.0, throttled = 0.0, straggled = 0.0, stalled = 0.0, transfer = 0.0, total = 0.0;
    std::vector<std::pair<std::string, double>> by_collective;  // kind → exposed transfer, first-seen order
    double outside = 0.0;
    bool recorded = false;
    const double cause_sum = t.throttled_s + t.straggler_s;
    // Compute beyond full speed split between power and stragglers by the run's totals of each
    // (stragglers are always counted, so without a total it is power's).
    const double throttle_share = cause_sum > 0.0 ? t.throttled_s / cause_sum : 1.0;
    for (const auto& s : t.steps) {
        const double step = s.end_s - s.start_s;
        const double compute = std::min(s.compute_s, step);
        const double at_full = t.compute_full_speed_s > 0.0 ? std::min(compute, t.compute_full_speed_s) : compute;
        const double slowed = compute - at_full;
        const double exposed = step - compute;
        const double stall = std::clamp(s.stalled_s, 0.0, exposed);
        const double slowed_power = slowed * throttle_share;
        const double parts[] = {at_full, slowed_power, slowed - slowed_power, stall, exposed - stall};
        double sum = 0.0;
        for (double p : parts) sum += p;
        if (!s.collectives.empty()) {
            recorded = true;
            const double from = s.start_s + compute;
            double covered = 0.0;
            std::vector<double> overlap;
            for (const auto& c : s.collectives) {
                overlap.push_back(std::max(0.0, std::min(c.end_s, s.end_s) - std::max(c.start_s, from)));
                covered += overlap.back();
            }
            const double scale = covered > 0.0 ? parts[4] / std::max(covered, exposed) : 0.0;
            double given = 0.0;
            for (std::size_t k = 0; k < s.collectives.size(); ++k) {
                if (!(overlap[k] > 0.0)) continue;
                auto it = std::find_if(by_collective.begin(), by_collective.end(),
                                       [&](const auto& e) { return e.first == s.collectives[k].name; });
                if (it == by_collective.end()) it = by_collective.insert(by_collective.end(), {s.collectives[k].name, 0.0});
                it->second += overlap[k] * scale;
                given += overlap[k] * scale;
            }
            outside += parts[4] - given;
        } else {
            outside += parts[4];
        }
        b.max_relative_residual = std::max(b.max_relative_residual, relative_residual(sum, step));
        full += parts[0];
        throttled += parts[1];
        straggled += parts[2];
        stalled += parts[3];
        transfer += parts[4];
        total += step;
    }
    const double n = static_cast<double>(t.steps.size());
    b.subject = t.algorithm + " step (mean of " + std::to_string(t.steps.size()) + " steps, /workload/steps)";
    b.total_s = total / n;
    b.parts = {{"compute at full speed", full / n},
               {"compute slowed by power throttling", throttled / n},
               {"compute slowed by stragglers", straggled / n},
               {"exposed communication: stalled (topology changes, waiting for a path)", stalled / n}};
    if (!recorded) {
        b.parts.push_back({"exposed communication: transfer", transfer / n});
    } else {
        for (const auto& [name, seconds] : by_collective) b.parts.push_back({"exposed communication: transfer in " + name, seconds / n});
        b.parts.push_back({"exposed communication: transfer outside the recorded collectives (derived)", outside / n});
    }
    exposed_share = b.total_s > 0.0 ? (stalled + transfer) / total : 0.0;
    slowed_share = b.total_s > 0.0 ? (throttled + straggled) / total : 0.0;
    return b;
}

// A constellation algorithm's mean step from its table row: the parts the row gives, and the rest
// of the step named as what it is (exposed communication, derived).
Breakdown algorithm_breakdown(const AlgorithmRecord& a) {
    Breakdown b;
    b.subject = a.name + " step (mean over " + number(a.steps) + " steps, /constellation/algorithms)";
    b.total_name = "step time";
    b.total_s = a.step_time_mean_s;
    const double steps = std::max(a.steps, 1.0);
    const double throttled = a.compute_throttled_s / steps, straggled = a.straggler_s / steps;
    const double full = std::max(0.0, a.compute_per_step_s);
    const double wait = a.outer_rounds * a.outer_wait_mean_s / steps, sync = a.outer_rounds * a.outer_sync_mean_s / steps;
    b.parts = {{"compute at full speed", full},
               {"compute slowed by power throttling", throttled},
               {"compute slowed by stragglers", straggled},
               {"waiting for other replicas (outer barrier), per step", wait},
               {"outer sync, per step", sync}};
    double known = 0.0;
    for (const auto& p : b.parts) known += p.seconds;
    b.parts.push_back({"exposed communication (derived: step time minus the parts above)", b.total_s - known});
    b.max_relative_residual = relative_residual(b.parts_sum_s(), b.total_s);
    return b;
}

// Each replica of a replicated algorithm (DiLoCo, NoLoCo) over its rounds, in the order they first
// appear: where its time went, so that the replica that sets the pace (least waiting) and those that
// wait for it show side by side. Compute at full speed is its inner steps at the algorithm's compute
// per step; the rest of the inner steps (power throttling, stragglers, the in-cluster all-reduce) is
// derived; waiting and the outer sync are the round's own times.
std::vector<Breakdown> replica_breakdowns(const std::vector<ReplicaRoundRecord>& rounds, const std::vector<AlgorithmRecord>& algorithms) {
    struct Sums {
        double rounds = 0.0, steps = 0.0, total = 0.0, inner = 0.0, wait = 0.0, sync = 0.0, residual = 0.0;
    };
    std::vector<std::pair<std::pair<std::string, int>, Sums>> by;  // (algorithm, replica), first-seen order
    for (const auto& r : rounds) {
        auto it = std::find_if(by.begin(), by.end(), [&](const auto& e) { return e.first == std::make_pair(r.algorithm, r.replica); });
        if (it == by.end()) it = by.insert(by.end(), {{r.algorithm, r.replica}, Sums{}});
        Sums& s = it->second;
        s.rounds += 1.0;
        s.steps += r.inner_steps;
        const double total = r.end_s - r.start_s, inner = r.ready_s - r.start_s, wait = r.sync_start_s - r.ready_s,
                     sync = r.end_s - r.sync_start_s;
        s.total += total;
        s.inner += inner;
        s.wait += wait;
        s.sync += sync;
        s.residual = std::max(s.residual, relative_residual(inner + wait + sync, total));
    }
    std::vector<Breakdown> out;
    for (const auto& [key, s] : by) {
        double per_step = 0.0;
        for (const auto& a : algorithms)
            if (a.name == key.first) per_step = std::max(0.0, a.compute_per_step_s);
        const double full = std::min(s.inner, per_step * s.steps);
        Breakdown b;
        b.subject = key.first + " replica " + std::to_string(key.second) + " (cluster " + std::to_string(key.second) + ", " +
                    number(s.rounds) + " rounds, /constellation/rounds)";
        b.total_name = "run time";
        b.total_s = s.total;
        b.parts = {{"compute at full speed (inner steps x compute per step)", full},
                   {"rest of the inner steps (derived: throttling, stragglers, in-cluster all-reduce)", s.inner - full},
                   {"waiting for other replicas (outer barrier)", s.wait},
                   {"outer sync", s.sync}};
        b.max_relative_residual = std::max(s.residual, relative_residual(b.parts_sum_s(), b.total_s));
        out.push_back(std::move(b));
    }
    return out;
}

Breakdown fault_breakdown(const FaultInput& f) {
    Breakdown b;
    b.subject = f.algorithm + " job under faults (mean of " + std::to_string(f.trials) + " trials)";
    b.total_name = "run time";
    b.total_s = f.elapsed_s;
    b.parts = {{"useful steps (goodput x run time)", f.goodput * f.elapsed_s},
               {"lost to faults (rework, reboot waits, recomputes)", f.lost_faults_s},
               {"lost to restarts", f.lost_restarts_s},
               {"lost to checkpoints", f.lost_checkpoints_s},
               {"lost to the damaged fabric", f.lost_fabric_s},
               {"lost to a shrunk ring", f.lost_shrunk_s},
               {"waiting for replicas", f.lost_waiting_s},
               {"gained on the damaged fabric (smaller rings)", f.gained_fabric_s > 0.0 ? -f.gained_fabric_s : 0.0}};
    double known = 0.0;
    for (const auto& p : b.parts) known += p.seconds;
    b.parts.push_back({"unfinished last step (derived: run time minus the parts above)", b.total_s - known});
    b.max_relative_residual = relative_residual(b.parts_sum_s(), b.total_s);
    return b;
}

struct TtftSplit {
    double queue = 0.0, prefill = 0.0, kv = 0.0, ttft = 0.0;
};

TtftSplit split(const RequestRecord& r) {
    TtftSplit s;
    s.queue = r.prefill_start_s - r.arrival_s;
    s.prefill = r.prefill_end_s - r.prefill_start_s;
    s.kv = r.first_token_s - r.prefill_end_s;
    s.ttft = r.first_token_s - r.arrival_s;
    return s;
}

Breakdown ttft_breakdown(const std::string& subject, const std::vector<TtftSplit>& splits) {
    Breakdown b;
    b.subject = subject;
    b.total_name = "TTFT";
    TtftSplit sum;
    for (const auto& s : splits) {
        sum.queue += s.queue;
        sum.prefill += s.prefill;
        sum.kv += s.kv;
        sum.ttft += s.ttft;
        b.max_relative_residual = std::max(b.max_relative_residual, relative_residual(s.queue + s.prefill + s.kv, s.ttft));
    }
    const double n = std::max<double>(1.0, static_cast<double>(splits.size()));
    b.total_s = sum.ttft / n;
    b.parts = {{"queueing for a prefill instance", sum.queue / n}, {"prefill", sum.prefill / n}, {"KV transfer to the decode instance", sum.kv / n}};
    return b;
}

// ---- detectors ----

Recommendation step_recommendation(const std::string& algorithm, const std::string& key, const std::string& value,
                                   double expected_change, const std::string& expected, const std::string& why) {
    Recommendation r;
    r.key = key;
    r.value = value;
    r.metric = "step_time_mean_s";
    r.algorithm = algorithm;
    r.lower_is_better = true;
    r.expected_relative_change = expected_change;
    r.expected = expected;
    r.why = why;
    return r;
}

struct StepView {
    std::string algorithm;
    double step_s = 0.0;
    double exposed_share = 0.0;
    double compute_full_s = 0.0;
    double throttled_per_step_s = 0.0;
    double straggler_per_step_s = 0.0;
};

void detect_links(const Input& in, const StepView& v, std::vector<AntiPattern>& out) {
    if (in.links.empty() || v.step_s <= 0.0) return;
    std::vector<const LinkUse*> used;
    for (const auto& l : in.links)
        if (l.capacity_bytes > 0.0) used.push_back(&l);
    if (used.size() < 3) return;
    std::vector<double> capacity, utilisation, bytes;
    for (const auto* l : used) {
        capacity.push_back(l->capacity_bytes);
        utilisation.push_back(l->utilisation());
        bytes.push_back(l->bytes);
    }
    const double capacity_median = median(capacity), utilisation_median = median(utilisation), bytes_median = median(bytes);
    const auto hottest = *std::max_element(used.begin(), used.end(), [](auto* a, auto* b) { return a->utilisation() < b->utilisation(); });

    // Slow link: far less capacity than the median link, the same traffic, so far busier.
    bool slow_found = false;
    if (v.exposed_share >= exposed_min_share_for_links) {
        const LinkUse* slow = nullptr;
        for (const auto* l : used)
            if (l->capacity_bytes < slow_link_capacity_ratio * capacity_median && l->bytes >= 0.5 * bytes_median &&
                l->utilisation() > slow_link_utilisation_ratio * utilisation_median && (!slow || l->utilisation() > slow->utilisation()))
                slow = l;
        if (slow) {
            slow_found = true;
            AntiPattern a;
            a.id = "slow_link";
            a.title = "one slow link sets the pace of the collective";
            a.threshold = format("a link with < %.2g x the median link's capacity that carries >= half the median link's bytes at > %.3g x "
                                 "the median link's utilisation, while exposed communication is >= %.3g of the step",
                                 slow_link_capacity_ratio, slow_link_utilisation_ratio, exposed_min_share_for_links);
            const double ratio = slow->capacity_bytes / capacity_median;
            a.evidence = "link " + link_name(*slow) + format(": capacity %.3g of the median link's, utilisation %.3g vs median %.3g; "
                                                              "exposed communication %.3g of the step",
                                                              ratio, slow->utilisation(), utilisation_median, v.exposed_share);
            a.cause = "slow path: link " + link_name(*slow) + format(" has %.3g x the capacity of the others and every ring phase crossing it waits for it",
                                                                     ratio);
            a.impact = v.exposed_share * (1.0 - ratio);
            const double expected = -a.impact;
            const std::string words = format("step time -%.1f %% at most: the exposed communication falls toward what a median link gives "
                                             "(%.3g x of it is the slow link's)",
                                             100.0 * a.impact, 1.0 - ratio);
            if (in.settings.routing != "widest")
                a.recommendations.push_back(step_recommendation(v.algorithm, "workload.routing", "widest", expected, words,
                                                                "widest-path routing sends the traffic of link " + link_name(*slow) +
                                                                    " round it over links with full capacity"));
            if (in.settings.routing != "ucmp")
                a.recommendations.push_back(step_recommendation(v.algorithm, "workload.routing", "ucmp", expected, words,
                                                                "weighted multipath splits each transfer over edge-disjoint paths by their "
                                                                "bottleneck capacity, so little of it waits on link " +
                                                                    link_name(*slow)));
            out.push_back(a);
        }
    }

    // Routing imbalance: many links idle while the hottest is busy.
    if (!slow_found && v.exposed_share >= exposed_min_share_for_links && hottest->utilisation() >= imbalance_hot_utilisation) {
        std::size_t idle = 0;
        for (const auto* l : used)
            if (l->utilisation() < imbalance_idle_ratio * hottest->utilisation()) ++idle;
        const double idle_share = static_cast<double>(idle) / static_cast<double>(used.size());
        if (idle_share >= imbalance_idle_share && in.settings.routing != "ucmp") {
            AntiPattern a;
            a.id = "routing_imbalance";
            a.title = "links idle while others saturate";
            a.threshold = format(">= %.3g of the links below %.3g x the hottest link's utilisation, the hottest >= %.3g", imbalance_idle_share,
                                 imbalance_idle_ratio, imbalance_hot_utilisation);
            a.evidence = format("%.3g of %.0f links idle; hottest ", idle_share, static_cast<double>(used.size())) + link_name(*hottest) +
                         format(" at utilisation %.3g; exposed communication %.3g of the step", hottest->utilisation(), v.exposed_share);
            a.cause = "routing imbalance: the routes load a few links and leave others idle";
            a.impact = v.exposed_share * idle_share;
            a.recommendations.push_back(step_recommendation(
                v.algorithm, "workload.routing", "ucmp", -a.impact,
                format("step time -%.1f %% at most (the exposed communication's idle-link share)", 100.0 * a.impact),
                "weighted multipath spreads each transfer over edge-disjoint paths, using the idle links"));
            out.push_back(a);
        }
    }

    // Gateway oversubscription: gateway links far busier than the links inside clusters.
    std::vector<double> gateway, inside;
    for (const auto* l : used) (l->gateway ? gateway : inside).push_back(l->utilisation());
    if (!gateway.empty() && !inside.empty() && v.exposed_share >= 2 * exposed_min_share_for_links) {
        double g = 0.0, c = 0.0;
        for (double u : gateway) g += u;
        for (double u : inside) c += u;
        g /= static_cast<double>(gateway.size());
        c /= static_cast<double>(inside.size());
        if (c > 0.0 && g > gateway_utilisation_ratio * c) {
            AntiPattern a;
            a.id = "gateway_oversubscription";
            a.title = "gateway links oversubscribed";
            a.threshold = format("gateway links' mean utilisation > %.3g x the cluster links', exposed communication >= %.3g of the step",
                                 gateway_utilisation_ratio, 2 * exposed_min_share_for_links);
            a.evidence = format("gateway links %.3g vs cluster links %.3g mean utilisation; oversubscription (bisection : gateways) mean %.3g; "
                                "exposed communication %.3g of the step",
                                g, c, in.settings.oversubscription_mean, v.exposed_share);
            a.cause = "the gateway layer: traffic between clusters waits on too few gateway links";
            a.impact = v.exposed_share * (1.0 - c / g);
            const int gateways = std::min(64, std::max(1, in.settings.gateways_per_cluster) * 2);
            a.recommendations.push_back(step_recommendation(
                v.algorithm, "constellation.gateways.per_cluster", std::to_string(gateways), -0.5 * a.impact,
                format("step time -%.1f %% (half the gateway-bound share, as twice the gateway links halve their load)", 50.0 * a.impact),
                "more gateway satellites per cluster add gateway links between every pair of clusters"));
            out.push_back(a);
        }
    }
}

void detect_exposed(const Input& in, const StepView& v, std::vector<AntiPattern>& out) {
    if (v.exposed_share < exposed_communication_share) return;
    AntiPattern a;
    a.id = "exposed_communication";
    a.title = "exposed communication";
    a.threshold = format("communication not hidden by compute >= %.3g of the step", exposed_communication_share);
    a.evidence = format("%.3g of the mean step (%.4g s) is exposed communication", v.exposed_share, v.step_s);
    a.cause = "the step's collectives outlast its compute";
    a.impact = v.exposed_share;
    // A constellation that ran the other synchronous algorithm too (ring, hierarchical: the same updates,
    // exactly) measured its step on the same fabric: where it is faster, that is the change, first.
    const auto synchronous = [](const std::string& name) { return name == "ring" || name == "hierarchical"; };
    const AlgorithmRecord* mine = nullptr;
    const AlgorithmRecord* faster = nullptr;
    for (const auto& alg : in.algorithms)
        if (alg.name == v.algorithm) mine = &alg;
    for (const auto& alg : in.algorithms)
        if (mine && synchronous(mine->name) && synchronous(alg.name) && alg.name != mine->name && alg.steps > 0.0 &&
            alg.step_time_mean_s > 0.0 && alg.step_time_mean_s < mine->step_time_mean_s)
            faster = &alg;
    if (faster) {
        auto r = step_recommendation(
            mine->name, "constellation.algorithms", "[" + faster->name + "]", faster->step_time_mean_s / mine->step_time_mean_s - 1.0,
            format("step time %.4g -> %.4g s (", mine->step_time_mean_s, faster->step_time_mean_s) + faster->name +
                "'s, as this run measured it on the same fabric)",
            faster->name == "hierarchical"
                ? "hierarchical all-reduces inside each cluster first and sends one reduced shard per cluster over the gateways: the same "
                  "updates as ring with a cluster's worth fewer bytes on the aggregation layer"
                : "ring spreads the all-reduce over every link at once: here it beats the gateways' two-stage reduction");
        r.after_algorithm = faster->name;
        a.recommendations.push_back(r);
    } else {
        // Only without a measured alternative: on a latency-bound collective (many ranks, small buckets)
        // more buckets multiply its latency (constellation-4x81 at 1e6 tokens a step: x4 = 16 buckets made the
        // ring step 3.8 times longer, measured by --verify).
        const int buckets = std::min(4096, std::max(1, in.settings.gradient_buckets) * 4);
        a.recommendations.push_back(step_recommendation(
            v.algorithm, "workload.gradient_buckets", std::to_string(buckets), -0.25 * v.exposed_share,
            format("step time -%.1f %% (heuristic: a quarter of the exposed communication hidden behind the backward pass)",
                   25.0 * v.exposed_share),
            "smaller buckets start all-reducing earlier in the backward pass, so more of the communication overlaps compute"));
    }
    for (const auto& other : out)
        if (other.id == "slow_link" || other.id == "routing_imbalance" || other.id == "gateway_oversubscription") a.explained_by = other.id;
    out.push_back(a);
}

void detect_straggler(const Input& in, const StepView& v, std::vector<AntiPattern>& out) {
    if (v.step_s <= 0.0) return;
    const double throttled = v.throttled_per_step_s / v.step_s, straggled = v.straggler_per_step_s / v.step_s;
    if (throttled < straggler_share && straggled < straggler_share) return;
    AntiPattern a;
    a.id = "straggling_cluster";
    a.title = in.kind == RunKind::constellation ? "one straggling cluster sets the pace" : "straggling ranks set the pace";
    a.threshold = format("compute beyond full speed (power throttling or stragglers) >= %.3g of the step", straggler_share);
    a.impact = throttled + straggled;
    if (throttled >= straggled) {
        const ClusterPower* worst = nullptr;
        for (const auto& c : in.power.clusters)
            if (!worst || c.state_of_charge_min < worst->state_of_charge_min ||
                (c.state_of_charge_min == worst->state_of_charge_min && c.shadow_fraction_mean > worst->shadow_fraction_mean))
                worst = &c;
        const std::string who = in.kind == RunKind::constellation && worst ? "cluster " + std::to_string(worst->cluster) : "the formation";
        const bool eclipse = worst && worst->shadow_fraction_mean > 0.0;
        a.cause = (eclipse ? "eclipse throttling (power) in " : "power throttling in ") + who;
        a.evidence = format("%.4g s of compute beyond full speed per %.4g s step (%.3g of it)", v.throttled_per_step_s, v.step_s, throttled);
        if (worst)
            a.evidence += "; " + who + format(": %.3g of satellite-time in the Earth's shadow, battery down to %.3g (compute stops at %.3g)",
                                              worst->shadow_fraction_mean, worst->state_of_charge_min, in.power.min_state_of_charge);
        if (worst && in.power.enabled && worst->energy_deficit_max_wh > 0.0 && in.power.min_state_of_charge < 1.0) {
            // Usable energy (capacity × (1 − minimum charge) × discharge efficiency) that carries
            // the worst satellite through its longest deficit at full compute, with 10 % margin.
            const double needed_wh = 1.1 * worst->energy_deficit_max_wh /
                                     ((1.0 - in.power.min_state_of_charge) * std::max(0.01, in.power.discharge_efficiency));
            const double capacity = std::ceil(std::max(needed_wh, in.power.battery_capacity_wh) / 10.0) * 10.0;
            if (capacity > in.power.battery_capacity_wh) {
                a.recommendations.push_back(step_recommendation(
                    v.algorithm, "power.battery_capacity_wh", number(capacity), -throttled,
                    format("step time -%.1f %%: no compute throttled (the battery carries the worst satellite's %.4g Wh deficit at full compute)",
                           100.0 * throttled, worst->energy_deficit_max_wh),
                    "the throttled satellites run their chips slower when their battery reaches its minimum charge in eclipse; "
                    "a battery that covers the deficit keeps them at full speed, and every rank waits for them"));
            }
        }
    } else {
        a.cause = "stragglers (workload.stragglers: ranks computing slower at random steps)";
        a.evidence = format("%.4g s of compute added by stragglers per %.4g s step (%.3g of it)", v.straggler_per_step_s, v.step_s, straggled);
    }
    out.push_back(a);
}

void detect_checkpoint(const FaultInput& f, std::vector<AntiPattern>& out) {
    if (f.checkpoint_cost_s <= 0.0 || f.mtbi_long_term_s <= 0.0 || f.checkpoint_interval_s <= 0.0 || f.elapsed_s <= 0.0) return;
    const double daly = workloads::daly_interval_s(f.checkpoint_cost_s, f.mtbi_long_term_s);
    const double ratio = f.checkpoint_interval_s / daly;
    if (ratio >= 1.0 / checkpoint_ratio && ratio <= checkpoint_ratio) return;
    const double waste_now = workloads::checkpoint_waste_fraction(f.checkpoint_interval_s, f.checkpoint_cost_s, f.restart_s, f.mtbi_long_term_s);
    const double waste_daly = workloads::checkpoint_waste_fraction(daly, f.checkpoint_cost_s, f.restart_s, f.mtbi_long_term_s);
    const double gain = waste_now - waste_daly;
    if (gain < checkpoint_min_gain) return;
    AntiPattern a;
    a.id = "checkpoint_interval";
    a.title = "checkpoint interval off Daly's optimum";
    a.threshold = format("tau / tau_Daly outside [1/%.3g, %.3g] and the waste model's time lost falls by >= %.3g of the run at tau_Daly",
                         checkpoint_ratio, checkpoint_ratio, checkpoint_min_gain);
    a.evidence = format("tau = %.5g s, tau_Daly = %.5g s (delta = %.4g s checkpoint cost, M = %.5g s long-term mean time between interruptions)",
                        f.checkpoint_interval_s, daly, f.checkpoint_cost_s, f.mtbi_long_term_s) +
                 format("; checkpoints cost %.4g s of %.5g s (mean of trials); modelled waste %.3g at tau, %.3g at tau_Daly", f.lost_checkpoints_s,
                        f.elapsed_s, waste_now, waste_daly);
    a.cause = std::string(ratio < 1.0 ? "checkpoints too frequent" : "checkpoints too rare") + format(": %.3g x Daly's interval", ratio);
    a.impact = gain;
    Recommendation r;
    r.key = "radiation.checkpoint_interval";
    r.value = number(std::round(daly));
    r.metric = "goodput";
    r.algorithm = f.algorithm;
    r.lower_is_better = false;
    r.expected_relative_change = f.goodput > 0.0 ? gain / f.goodput : gain;
    r.expected = format("goodput +%.3g (absolute, from the waste model delta/tau + (tau + R)/M)", gain);
    r.why = "Daly's interval balances the checkpoints' cost against the work a rollback loses (Daly 2006: tau = sqrt(2 delta M) - delta "
            "to first order); the run's interruption rate sets M";
    a.recommendations.push_back(r);
    out.push_back(a);
}

// A synchronous algorithm (one fault rolls every rank back) losing mostly to rework and restarts,
// where a local-SGD algorithm of the same run (diloco, noloco: a fault rolls back its replica only)
// kept more: the one with the largest rollback loss is reported, with the best local-SGD algorithm.
void detect_rollbacks(const Input& in, std::vector<AntiPattern>& out) {
    const auto local = [](const FaultInput& f) { return f.algorithm == "diloco" || f.algorithm == "noloco"; };
    const FaultInput* best_local = nullptr;
    for (const auto& f : in.faults)
        if (local(f) && (!best_local || f.goodput > best_local->goodput)) best_local = &f;
    if (!best_local) return;
    const FaultInput* worst = nullptr;
    double worst_rollback = 0.0;
    for (const auto& f : in.faults) {
        if (local(f) || f.elapsed_s <= 0.0 || f.goodput <= 0.0 || best_local->goodput <= f.goodput) continue;
        const double rollback = f.lost_faults_s + f.lost_restarts_s;
        const double losses = rollback + f.lost_checkpoints_s + f.lost_fabric_s + f.lost_shrunk_s + f.lost_waiting_s;
        if (losses <= 0.0 || rollback < rollback_share_of_losses * losses || rollback < rollback_min_share_of_run * f.elapsed_s) continue;
        if (!worst || rollback > worst_rollback) {
            worst = &f;
            worst_rollback = rollback;
        }
    }
    if (!worst) return;
    const auto& f = *worst;
    const double losses = worst_rollback + f.lost_checkpoints_s + f.lost_fabric_s + f.lost_shrunk_s + f.lost_waiting_s;
    AntiPattern a;
    a.id = "rollback_losses";
    a.title = "losses dominated by rollbacks";
    a.threshold = format("a synchronous algorithm's rework + restarts >= %.3g of its losses to faults and >= %.3g of the run, while a "
                         "local-SGD algorithm of the run keeps a higher goodput",
                         rollback_share_of_losses, rollback_min_share_of_run);
    a.evidence = f.algorithm + format(": rework %.4g s + restarts %.4g s of %.4g s lost to faults in a %.5g s run", f.lost_faults_s,
                                      f.lost_restarts_s, losses, f.elapsed_s) +
                 format(" (mean of %.0f trials), goodput %.4g; ", static_cast<double>(f.trials), f.goodput) + best_local->algorithm +
                 format(" in the same run: goodput %.4g, rework + restarts %.4g s, waiting for replicas %.4g s", best_local->goodput,
                        best_local->lost_faults_s + best_local->lost_restarts_s, best_local->lost_waiting_s);
    a.cause = "rollbacks: one fault rolls every rank of " + f.algorithm + format(" back (%.3g of the run)", worst_rollback / f.elapsed_s);
    a.impact = worst_rollback / f.elapsed_s;
    Recommendation r;
    r.key = "constellation.algorithms";
    r.value = "[" + best_local->algorithm + "]";
    r.metric = "goodput";
    r.algorithm = f.algorithm;
    r.after_algorithm = best_local->algorithm;
    r.lower_is_better = false;
    r.expected_relative_change = (best_local->goodput - f.goodput) / f.goodput;
    r.expected = format("goodput %.4g -> %.4g (", f.goodput, best_local->goodput) + best_local->algorithm +
                 "'s, as this run measured it on the same faults; its effective tokens/s differ: docs/constellations.md)";
    r.why = "under local SGD a fault rolls back only its replica (a cluster), not every rank, and the others keep training; " +
            best_local->algorithm + " pays for it in outer-round waiting, which the measured goodput includes";
    a.recommendations.push_back(r);
    out.push_back(a);
}

void detect_serving(const Input& in, const std::vector<TtftSplit>& completed, std::vector<AntiPattern>& out) {
    const auto& s = in.serving;
    if (completed.empty() || s.ttft_slo_s <= 0.0) return;
    TtftSplit miss;
    std::size_t misses = 0;
    for (const auto& c : completed)
        if (c.ttft > s.ttft_slo_s) {
            ++misses;
            miss.queue += c.queue;
            miss.prefill += c.prefill;
            miss.kv += c.kv;
            miss.ttft += c.ttft;
        }
    const double share = static_cast<double>(misses) / static_cast<double>(completed.size());
    if (share < serving_min_misses || miss.ttft <= 0.0) return;
    AntiPattern a;
    a.impact = share;
    a.threshold = format(">= %.3g of completed requests over the TTFT objective; the part of their TTFT that dominates names the cause",
                         serving_min_misses);
    a.evidence = format("%.3g of completed requests miss TTFT <= %.4g s; of their TTFT: queueing %.3g, prefill %.3g", share, s.ttft_slo_s,
                        miss.queue / miss.ttft, miss.prefill / miss.ttft) +
                 format(", KV transfer %.3g", miss.kv / miss.ttft);
    Recommendation r;
    r.metric = "slo_attainment";
    r.algorithm = s.routing;
    r.lower_is_better = false;
    if (miss.kv >= miss.queue && miss.kv >= miss.prefill) {
        a.id = "serving_kv_transfer";
        a.title = "SLO misses caused by KV transfer, not queueing";
        a.cause = "KV transfer: the missed requests spent most of their TTFT moving the KV cache";
        if (s.network_routing != "widest") {
            r.key = "workload.inference.network_routing";
            r.value = "widest";
            r.expected_relative_change = 0.5 * share;
            r.expected = format("SLO attainment up by up to %.3g (half the missed requests)", 0.5 * share);
            r.why = "widest-path routing moves each KV shard over the path with the most capacity instead of the shortest";
            a.recommendations.push_back(r);
        }
    } else if (miss.queue >= miss.prefill) {
        a.id = "serving_queueing";
        a.title = "SLO misses caused by queueing for prefill";
        a.cause = "queueing: too few prefill instances for the arrivals";
        const int more = std::max(s.prefill_instances + 1, static_cast<int>(std::ceil(1.5 * s.prefill_instances)));
        r.key = "workload.inference.engines.prefill.instances";
        r.value = std::to_string(more);
        r.expected_relative_change = 0.5 * share;
        r.expected = format("SLO attainment up by up to %.3g (half the missed requests)", 0.5 * share);
        r.why = "more prefill instances serve the queue in parallel (each needs satellites: the scenario must still fit)";
        a.recommendations.push_back(r);
    } else {
        a.id = "serving_prefill";
        a.title = "SLO misses caused by long prefills";
        a.cause = "prefill: the missed requests' prompts take most of their TTFT to prefill";
        if (s.satellites_per_prefill_instance > 0) {
            r.key = "workload.inference.engines.prefill.satellites_per_instance";
            r.value = std::to_string(2 * s.satellites_per_prefill_instance);
            r.expected_relative_change = 0.5 * share;
            r.expected = format("SLO attainment up by up to %.3g (half the missed requests: prefills on twice the chips)", 0.5 * share);
            r.why = "a prefill instance on twice the satellites has twice the FLOP/s for each prompt (the scenario must still fit)";
            a.recommendations.push_back(r);
        }
    }
    out.push_back(a);
}

}  // namespace

double Breakdown::parts_sum_s() const {
    double sum = 0.0;
    for (const auto& p : parts) sum += p.seconds;
    return sum;
}

Analysis analyse(const Input& in) {
    Analysis out;
    out.kind = in.kind;
    std::vector<AntiPattern> found;

    // The step the link and straggler detectors judge: the step records when there are any (the
    // run's first algorithm), else the first algorithm of the table.
    StepView view;
    if (in.training && !in.training->steps.empty()) {
        double exposed = 0.0, slowed = 0.0;
        out.breakdowns.push_back(step_breakdown(*in.training, exposed, slowed));
        const auto& b = out.breakdowns.back();
        view.algorithm = in.training->algorithm;
        view.step_s = b.total_s;
        view.exposed_share = exposed;
        view.compute_full_s = b.parts[0].seconds;
        view.throttled_per_step_s = b.parts[1].seconds;
        view.straggler_per_step_s = b.parts[2].seconds;
    }
    for (const auto& a : in.algorithms) {
        if (a.steps <= 0.0 || a.step_time_mean_s <= 0.0) continue;
        out.breakdowns.push_back(algorithm_breakdown(a));
        if (view.step_s <= 0.0) {
            const auto& b = out.breakdowns.back();
            view.algorithm = a.name;
            view.step_s = b.total_s;
            view.exposed_share = std::max(0.0, b.parts.back().seconds) / b.total_s;
            view.throttled_per_step_s = b.parts[1].seconds;
            view.straggler_per_step_s = b.parts[2].seconds;
        }
    }
    for (auto& b : replica_breakdowns(in.rounds, in.algorithms)) out.breakdowns.push_back(std::move(b));
    for (const auto& f : in.faults) out.breakdowns.push_back(fault_breakdown(f));

    // Serving: TTFT = queueing + prefill + KV transfer for every completed request, in the mean and in the p99 tail.
    std::vector<TtftSplit> completed;
    for (const auto& r : in.serving.requests)
        if (r.status == 0 && std::isfinite(r.first_token_s) && std::isfinite(r.prefill_start_s)) completed.push_back(split(r));
    if (!completed.empty()) {
        out.breakdowns.push_back(ttft_breakdown("serving TTFT, " + in.serving.routing + " routing (mean of " + std::to_string(completed.size()) +
                                                    " completed requests)",
                                                completed));
        std::vector<double> ttft;
        for (const auto& c : completed) ttft.push_back(c.ttft);
        const double p99 = percentile(ttft, 0.99);
        std::vector<TtftSplit> tail;
        for (const auto& c : completed)
            if (c.ttft >= p99) tail.push_back(c);
        out.breakdowns.push_back(ttft_breakdown("serving TTFT tail, " + in.serving.routing + format(" routing (requests at or above the p99, %.4g s)", p99),
                                                tail));
    }

    // Hot spots: the busiest links, and the clusters in shadow.
    std::vector<const LinkUse*> links;
    for (const auto& l : in.links)
        if (l.capacity_bytes > 0.0) links.push_back(&l);
    std::sort(links.begin(), links.end(), [](auto* a, auto* b) { return a->utilisation() > b->utilisation(); });
    for (std::size_t i = 0; i < links.size() && i < 5; ++i)
        out.hot_spots.push_back({links[i]->gateway ? "gateway link" : "link", link_name(*links[i]), links[i]->utilisation(), "utilisation",
                                 format("%.4g GB carried over the run", links[i]->bytes / 1e9)});
    for (const auto& c : in.power.clusters)
        if (c.shadow_fraction_mean > 0.0 || c.state_of_charge_min < 1.0)
            out.hot_spots.push_back({"cluster", "cluster " + std::to_string(c.cluster), c.shadow_fraction_mean, "shadow fraction",
                                     format("battery down to %.3g", c.state_of_charge_min)});

    if (view.step_s > 0.0) {
        detect_links(in, view, found);
        detect_straggler(in, view, found);
        detect_exposed(in, view, found);
    }
    for (const auto& f : in.faults) detect_checkpoint(f, found);
    detect_rollbacks(in, found);
    detect_serving(in, completed, found);

    // Causes by impact first; a symptom that a cause explains after them.
    std::stable_sort(found.begin(), found.end(), [](const AntiPattern& a, const AntiPattern& b) {
        if (a.explained_by.empty() != b.explained_by.empty()) return a.explained_by.empty();
        return a.impact > b.impact;
    });
    out.anti_patterns = std::move(found);
    return out;
}

}  // namespace skyfabric::analysis
