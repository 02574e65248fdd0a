#include <skyfabric/workloads/serving.hpp>

#include <skyfabric/workloads/backend.hpp>
#include <skyfabric/workloads/flow_network.hpp>
#include <skyfabric/workloads/network.hpp>
#include <skyfabric/workloads/training.hpp>

#include "instance_share.hpp"
#include "serving_records.hpp"
#include "shared_training.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <optional>
#include <queue>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace skyfabric::workloads {

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// The event-driven run: arrivals, prefills, KV shards as transfers on the flow network (flow_network.hpp)
// over the clock's topology, decode steps.
class Serving {
public:
    Serving(const ServingConfig& c, const Accelerator& a, TopologySource source, const RequestSink* sink,
            const std::atomic<bool>* stop)
        : c_(c), a_(a), clock_(std::move(source)), flows_(clock_, c.network_routing, c.cluster_of),
          generator_(c.requests, c.start_s), sink_(sink), stop_(stop), tally_(c.ttft_slo_s, c.tpot_slo_s, c.start_s, c.end_s) {
        const auto& e = c.engines;
        const std::int32_t prefill_nodes = e.prefill.instances * e.prefill.satellites_per_instance;
        const std::int32_t nodes_needed = prefill_nodes + e.decode.instances * e.decode.satellites_per_instance;
        physics::throw_problems("serving", check(c));
        if (!c.cluster_of.empty() && static_cast<std::int32_t>(c.cluster_of.size()) < clock_.topology().node_count)
            throw std::invalid_argument("serving: cluster_of must name every node's cluster");
        if (!c.cluster_of.empty() && c.egress_bin_s > 0.0 && c.end_s > c.start_s)
            egress_bits_.assign(static_cast<std::size_t>(std::ceil((c.end_s - c.start_s) / c.egress_bin_s)), 0.0);
        nodes_ = c.nodes;
        if (nodes_.empty())
            for (std::int32_t i = 0; i < nodes_needed; ++i) nodes_.push_back(i);
        if (static_cast<std::int32_t>(nodes_.size()) < nodes_needed || nodes_needed > clock_.topology().node_count)
            throw std::invalid_argument("serving: the instances need " + std::to_string(nodes_needed) + " satellites; the network has " +
                                        std::to_string(clock_.topology().node_count));
        prefill_free_s_.assign(static_cast<std::size_t>(e.prefill.instances), c.start_s);
        decode_.resize(static_cast<std::size_t>(e.decode.instances));
        prefill_chips_ = static_cast<std::int64_t>(e.prefill.satellites_per_instance) * e.chips_per_satellite;
        decode_chips_ = static_cast<std::int64_t>(e.decode.satellites_per_instance) * e.chips_per_satellite;
        capacity_tokens_ = e.max_tokens > 0 ? e.max_tokens : kv_capacity_tokens(c.model, decode_accelerator(c, a), decode_chips_);
        kv_per_token_ = kv_bytes_per_token(c.model);
        prefill_queue_.resize(static_cast<std::size_t>(e.prefill.instances));
        prefill_down_until_.assign(static_cast<std::size_t>(e.prefill.instances), -inf);
        decode_down_until_.assign(static_cast<std::size_t>(e.decode.instances), -inf);
        decode_generation_.assign(static_cast<std::size_t>(e.decode.instances), 0);
        // Which instance each node holds, and each instance's share series (its slowest satellite's).
        std::unordered_map<std::int32_t, std::int32_t> instance_of;  // node -> instance (prefill first)
        for (std::int32_t i = 0; i < nodes_needed; ++i) {
            const std::int32_t instance = i < prefill_nodes ? i / e.prefill.satellites_per_instance
                                                            : e.prefill.instances + (i - prefill_nodes) / e.decode.satellites_per_instance;
            instance_of.emplace(nodes_[static_cast<std::size_t>(i)], instance);
        }
        share_ = detail::instance_shares(c.throttle, std::span(nodes_).first(static_cast<std::size_t>(nodes_needed)), instance_of,
                                         e.prefill.instances + e.decode.instances);
        for (const auto& o : c.outages) {
            const auto it = instance_of.find(o.satellite);
            if (it == instance_of.end() || !(o.end_s > o.start_s) || !(o.end_s > c.start_s) || !(o.start_s < c.end_s)) continue;
            outages_.push_back(InstanceOutage{std::max(o.start_s, c.start_s), o.end_s, it->second});
        }
        std::stable_sort(outages_.begin(), outages_.end(),
                         [](const InstanceOutage& x, const InstanceOutage& y) { return x.start_s < y.start_s; });
        if (!c.training.rank_nodes.empty()) tenant_.emplace(c.training, clock_.topology().node_count, c.start_s);
        clock_.advance_to(c.start_s);
    }

    ServingResult run() {
        double now = c_.start_s;
        now_ = c_.start_s;
        Request next = next_request();
        for (std::uint64_t turn = 1;; ++turn) {
            if (turn % 256 == 0 && stop_requested(stop_)) {
                stopped_at_s_ = now;
                flows_.settle(now_);
                break;
            }
            const double t_drain = flows_.next_drain_s(now_);
            const double t_event = events_.empty() ? inf : events_.top().time_s;
            const double t_arrival = next.arrival_s;
            const double t_topology = flows_.next_change_s();
            const double t_outage = next_outage_ < outages_.size() ? outages_[next_outage_].start_s : inf;
            const double t_compute = tenant_ ? tenant_->compute_end_s() : inf;
            const double t = std::min({t_drain, t_event, t_arrival, t_topology, t_outage, t_compute});
            if (!(t < c_.end_s)) {
                account_gateways(now, c_.end_s - now);
                now_ = c_.end_s;
                flows_.settle(now_);
                break;
            }
            const double dt = t - now;
            account_gateways(now, dt);
            now = now_ = t;
            if (t_drain <= t) {
                drained(now);
                continue;
            }
            if (t_topology <= t) {
                flows_.change_topology(t);
                ++summary_.topology_epochs;
                distances_.clear();
                continue;
            }
            if (t_event <= t) {
                const Event ev = events_.top();
                events_.pop();
                handle(ev, now);
                continue;
            }
            // Work that ends at the instant of a crash is kept (events first).
            if (t_outage <= t) {
                crash(outages_[next_outage_++], now);
                continue;
            }
            if (t_compute <= t) {
                start_training_phase(now);
                continue;
            }
            arrive(next, now);
            next = next_request();
            // Full: every arrival before anything else happens is dropped, without a turn of the loop each
            // (a stream far above what the engines serve spends its time here). They change nothing but the
            // counts, so `now` stays: the next turn moves the shards over the whole interval. The rates hold
            // (not dirty), so the first drain is still t_drain; the arrival may have scheduled an event.
            if (held_ >= c_.max_queued_requests && flows_.rates_current()) {
                const double t_next_event = events_.empty() ? inf : events_.top().time_s;
                const double until = std::min({t_drain, t_next_event, t_topology, t_outage, t_compute, c_.end_s});
                for (std::uint64_t k = 1; next.arrival_s < until; ++k) {
                    if (k % 4096 == 0 && stop_requested(stop_)) break;
                    ++summary_.arrived;
                    ++summary_.dropped;
                    tally_.drop(next.arrival_s);
                    next = next_request();
                }
            }
        }
        return finish();
    }

private:
    enum class EventKind : std::uint8_t { prefill_done = 0, shard_arrived = 1, decode_step = 2, training_flow_landed = 3 };
    static constexpr std::int64_t training_flow = -1;  // the tag of the training job's transfers (a KV shard's: its request)
    struct Event {
        double time_s;
        std::int64_t order;  // ties: in the order scheduled
        EventKind kind;
        std::int64_t subject;  // request, or decode instance
        std::int32_t generation;  // the subject's when scheduled: a crash since makes the event stale
        bool operator>(const Event& o) const { return time_s != o.time_s ? time_s > o.time_s : order > o.order; }
    };
    // An instance down over [start_s, end_s): a satellite of it crashed.
    struct InstanceOutage {
        double start_s, end_s;
        std::int32_t instance;  // prefill instances first, then decode
    };
    struct DecodeInstance {
        std::vector<std::int64_t> running;
        std::deque<std::int64_t> waiting;
        std::int64_t reserved_tokens = 0;   // prompt + output of the running sequences
        double context_tokens = 0.0;        // KV tokens of the running sequences
        std::int64_t assigned_tokens = 0;   // prompt + output of every request routed here and not done
        bool stepping = false;
    };

    Request next_request() {
        if (c_.trace.empty() && c_.requests.rate_per_s > 0.0) return generator_.next();
        if (trace_next_ < c_.trace.size()) return c_.trace[trace_next_++];
        Request none;
        none.arrival_s = inf;
        return none;
    }

    void push(double t, EventKind kind, std::int64_t subject, std::int32_t generation) {
        events_.push(Event{t, order_++, kind, subject, generation});
    }

    // The KV caches whose last byte has left their prefill satellite land a path latency later, in the
    // order they started; the shared training job's transfers count towards its phase.
    void drained(double now) {
        done_.clear();
        flows_.drain(now, done_);
        for (const auto& d : done_) {
            if (d.tag == training_flow) {
                tenant_->add_bytes_sent(d.bytes);
                push(now + d.latency_s, EventKind::training_flow_landed, training_flow, 0);
            } else {
                push(now + d.latency_s, EventKind::shard_arrived, d.tag, generation_[static_cast<std::size_t>(d.tag)]);
            }
        }
    }

    // The gateway layer's traffic over [from, from + dt): the KV caches' rate on gateway links at the last
    // solve (rates hold till the next).
    void account_gateways(double from, double dt) {
        const double gateway_bps_ = flows_.border_bps();
        if (!(dt > 0.0) || !(gateway_bps_ > 0.0)) return;
        gateway_bits_ += gateway_bps_ * dt;
        summary_.gateway_egress_peak_bps = std::max(summary_.gateway_egress_peak_bps, gateway_bps_);
        if (!(c_.egress_bin_s > 0.0)) return;
        for (double t = from, end = from + dt; t < end;) {
            const auto bin = static_cast<std::size_t>(std::max(0.0, std::floor((t - c_.start_s) / c_.egress_bin_s)));
            if (bin >= egress_bits_.size()) break;
            const double bin_end = std::min(end, c_.start_s + static_cast<double>(bin + 1) * c_.egress_bin_s);
            egress_bits_[bin] += gateway_bps_ * (bin_end - t);
            if (!(bin_end > t)) break;  // no progress at the rounding limit
            t = bin_end;
        }
    }

    std::int32_t prefill_node(std::int32_t instance, std::int32_t k) const {
        return nodes_[static_cast<std::size_t>(instance * c_.engines.prefill.satellites_per_instance + k)];
    }
    std::int32_t decode_node(std::int32_t instance, std::int32_t k) const {
        const auto& e = c_.engines;
        return nodes_[static_cast<std::size_t>(e.prefill.instances * e.prefill.satellites_per_instance +
                                               instance * e.decode.satellites_per_instance + k)];
    }

    // Latency from a prefill instance's first satellite to every node, per topology epoch.
    const std::vector<double>& distances_from(std::int32_t prefill_instance) {
        auto it = distances_.find(prefill_instance);
        if (it == distances_.end())
            it = distances_.emplace(prefill_instance, latency_distances(clock_.network(), prefill_node(prefill_instance, 0))).first;
        return it->second;
    }

    bool prefill_up(std::int32_t p, double now) const { return prefill_down_until_[static_cast<std::size_t>(p)] <= now; }
    bool decode_up(std::int32_t d, double now) const { return decode_down_until_[static_cast<std::size_t>(d)] <= now; }

    // When `work_s` of full-speed compute started at start_s ends on `instance` (prefill first, then
    // decode), at its share of each throttle sample: the work stretches by 1/share.
    double work_done_s(std::int32_t instance, double start_s, double work_s) const {
        if (share_.empty()) return start_s + work_s;
        return detail::throttled_work_end_s(share_[static_cast<std::size_t>(instance)], c_.throttle, start_s, work_s);
    }

    // The decode instance for a request prefilled on p: the least loaded (tokens assigned) of the live ones,
    // then the nearest to the prefill, then the lowest index; -1 when none is up.
    std::int32_t pick_decode(std::int32_t p, double now) {
        const auto& distance = distances_from(p);
        std::int32_t d = -1;
        for (std::int32_t i = 0; i < c_.engines.decode.instances; ++i) {
            if (!decode_up(i, now)) continue;
            if (d < 0) {
                d = i;
                continue;
            }
            const auto& a = decode_[static_cast<std::size_t>(i)];
            const auto& b = decode_[static_cast<std::size_t>(d)];
            const double da = distance[static_cast<std::size_t>(decode_node(i, 0))];
            const double db = distance[static_cast<std::size_t>(decode_node(d, 0))];
            if (a.assigned_tokens < b.assigned_tokens || (a.assigned_tokens == b.assigned_tokens && da < db)) d = i;
        }
        return d;
    }

    static std::int64_t tokens_needed(const RequestRecord& rec) { return rec.request.prompt_tokens + rec.request.output_tokens; }

    // A request arriving while max_queued_requests are held is dropped: counted, no record. Otherwise it
    // takes the window's next slot (slots count the records, so they skip the dropped requests' ids).
    void arrive(const Request& r, double now) {
        ++summary_.arrived;
        if (held_ >= c_.max_queued_requests) {
            ++summary_.dropped;
            tally_.drop(r.arrival_s);
            return;
        }
        if (sink_) hand_over_final();
        RequestRecord rec;
        rec.request = r;
        const auto slot = static_cast<std::int64_t>(slots_++);
        generation_.push_back(0);
        if (tokens_needed(rec) > capacity_tokens_) {
            rec.status = RequestStatus::unservable;
            records_.push_back(rec);
            return;
        }
        records_.push_back(rec);
        summary_.peak_queued_requests = std::max(summary_.peak_queued_requests, ++held_);
        if (c_.routing == ServingRouting::prfaas && r.uncached_tokens() > c_.threshold_tokens) ++summary_.prefill_routed_dedicated;
        if (!assign(slot, now)) lose(slot);
    }

    // Queues the request for a prefill, then its decode: the eligible live prefill instance free first (FCFS
    // queue per instance; PrfaaS's group, or any prefill instance when the whole group is down), the decode
    // instance by pick_decode. A request whose decode instance crashed recomputes its generated tokens' KV
    // too. False, and nothing changed, when no prefill or no decode instance is up.
    bool assign(std::int64_t id, double now) {
        auto& rec = records_[static_cast<std::size_t>(id)];
        const Request& r = rec.request;
        std::int32_t first = 0, last = c_.engines.prefill.instances;
        if (c_.routing == ServingRouting::prfaas) {
            if (r.uncached_tokens() > c_.threshold_tokens) last = c_.dedicated_prefill_instances;
            else first = c_.dedicated_prefill_instances;
        }
        const auto free_first = [&](std::int32_t from, std::int32_t to) {
            std::int32_t p = -1;
            for (std::int32_t i = from; i < to; ++i)
                if (prefill_up(i, now) && (p < 0 || prefill_free_s_[static_cast<std::size_t>(i)] < prefill_free_s_[static_cast<std::size_t>(p)])) p = i;
            return p;
        };
        std::int32_t p = free_first(first, last);
        if (p < 0) p = free_first(0, c_.engines.prefill.instances);
        if (p < 0) return false;
        const std::int32_t d = pick_decode(p, now);
        if (d < 0) return false;
        rec.prefill_instance = p;
        rec.prefill_start_s = std::max(now, prefill_free_s_[static_cast<std::size_t>(p)]);
        const std::int64_t tokens = r.uncached_tokens() + rec.tokens_generated;
        rec.prefill_end_s = work_done_s(p, rec.prefill_start_s, prefill_time_s(c_.model, prefill_accelerator(c_, p, a_), prefill_chips_, c_.engines.mfu, tokens));
        prefill_free_s_[static_cast<std::size_t>(p)] = rec.prefill_end_s;
        prefill_queue_[static_cast<std::size_t>(p)].push_back(id);
        rec.decode_instance = d;
        decode_[static_cast<std::size_t>(d)].assigned_tokens += tokens_needed(rec);
        rec.kv_bytes = kv_per_token_ * static_cast<double>(r.prompt_tokens + rec.tokens_generated);
        push(rec.prefill_end_s, EventKind::prefill_done, id, generation_[static_cast<std::size_t>(id)]);
        return true;
    }

    // Takes the request off every instance and transfer: its pending events become stale.
    void detach(std::int64_t id) {
        auto& rec = records_[static_cast<std::size_t>(id)];
        ++generation_[static_cast<std::size_t>(id)];
        if (rec.prefill_instance >= 0) {
            auto& q = prefill_queue_[static_cast<std::size_t>(rec.prefill_instance)];
            if (const auto it = std::find(q.begin(), q.end(), id); it != q.end()) q.erase(it);
        }
        if (shards_left_.erase(id) > 0) flows_.cancel(now_, id);
        if (rec.decode_instance >= 0) decode_[static_cast<std::size_t>(rec.decode_instance)].assigned_tokens -= tokens_needed(rec);
        rec.decode_instance = -1;
    }

    void lose(std::int64_t id) {
        detach(id);
        records_[static_cast<std::size_t>(id)].status = RequestStatus::lost;
        --held_;
    }

    void count_requeue(RequestRecord& rec) {
        if (rec.requeues++ == 0) ++summary_.requeued_requests;
    }

    // A request whose work was on a crashed instance is prefilled again elsewhere (lost when nowhere is up).
    void requeue_prefill(std::int64_t id, double now) {
        detach(id);
        if (assign(id, now)) count_requeue(records_[static_cast<std::size_t>(id)]);
        else lose(id);
    }

    // A satellite of an instance goes down: the instance is down until the last of its outages ends; if it was
    // up, what it held moves (docs/inference.md "Faults and power").
    void crash(const InstanceOutage& o, double now) {
        const std::int32_t prefills = c_.engines.prefill.instances;
        const bool prefill = o.instance < prefills;
        const std::int32_t i = prefill ? o.instance : o.instance - prefills;
        double& until = prefill ? prefill_down_until_[static_cast<std::size_t>(i)] : decode_down_until_[static_cast<std::size_t>(i)];
        const bool was_up = until <= now;
        const double new_until = std::max(until, o.end_s);
        summary_.instance_down_s += std::min(c_.end_s, new_until) - (was_up ? now : std::min(c_.end_s, until));
        until = new_until;
        if (!was_up) return;
        ++summary_.instance_crashes;
        if (prefill) prefill_crashed(i, now);
        else decode_crashed(i, now);
    }

    // Its queue (the request in service and those waiting) and the caches still leaving its satellites are lost:
    // each is prefilled again, in arrival order. A cache whose last bits have left is on the wire and arrives.
    void prefill_crashed(std::int32_t p, double now) {
        prefill_free_s_[static_cast<std::size_t>(p)] = prefill_down_until_[static_cast<std::size_t>(p)];
        std::vector<std::int64_t> moved(prefill_queue_[static_cast<std::size_t>(p)].begin(), prefill_queue_[static_cast<std::size_t>(p)].end());
        flows_.for_each_in_flight([&](std::int64_t request) {
            if (request != training_flow && records_[static_cast<std::size_t>(request)].prefill_instance == p) moved.push_back(request);
        });
        std::sort(moved.begin(), moved.end());
        moved.erase(std::unique(moved.begin(), moved.end()), moved.end());
        for (const std::int64_t id : moved) requeue_prefill(id, now);
    }

    // Its sequences' KV caches are lost: they are prefilled again (prompt and the tokens generated so far).
    // Caches on their way to it are sent again, from their prefill instance, to another decode instance;
    // requests still in a prefill queue only get another decode instance (nothing of theirs was lost).
    void decode_crashed(std::int32_t d, double now) {
        auto& inst = decode_[static_cast<std::size_t>(d)];
        ++decode_generation_[static_cast<std::size_t>(d)];  // its step in progress is stale
        std::vector<std::int64_t> held(inst.running.begin(), inst.running.end());
        held.insert(held.end(), inst.waiting.begin(), inst.waiting.end());
        inst.running.clear();
        inst.waiting.clear();
        inst.reserved_tokens = 0;
        inst.context_tokens = 0.0;
        inst.stepping = false;
        std::sort(held.begin(), held.end());
        for (const std::int64_t id : held) requeue_prefill(id, now);
        std::vector<std::int64_t> incoming;
        for (const auto& [id, left] : shards_left_)
            if (records_[static_cast<std::size_t>(id)].decode_instance == d) incoming.push_back(id);
        std::sort(incoming.begin(), incoming.end());
        for (const std::int64_t id : incoming) {
            auto& rec = records_[static_cast<std::size_t>(id)];
            const std::int32_t p = rec.prefill_instance;
            if (!prefill_up(p, now)) {  // its source crashed after sending it: the cache is nowhere now
                requeue_prefill(id, now);
                continue;
            }
            detach(id);
            const std::int32_t to = pick_decode(p, now);
            if (to < 0) {
                lose(id);
                continue;
            }
            count_requeue(rec);
            rec.decode_instance = to;
            decode_[static_cast<std::size_t>(to)].assigned_tokens += tokens_needed(rec);
            start_transfer(id);
        }
        std::vector<std::int64_t> queued;
        for (const auto& q : prefill_queue_)
            for (const std::int64_t id : q)
                if (records_[static_cast<std::size_t>(id)].decode_instance == d) queued.push_back(id);
        std::sort(queued.begin(), queued.end());
        for (const std::int64_t id : queued) {
            auto& rec = records_[static_cast<std::size_t>(id)];
            const std::int32_t to = pick_decode(rec.prefill_instance, now);
            if (to < 0) {
                lose(id);
                continue;
            }
            inst.assigned_tokens -= tokens_needed(rec);
            rec.decode_instance = to;
            decode_[static_cast<std::size_t>(to)].assigned_tokens += tokens_needed(rec);
        }
    }

    void handle(const Event& ev, double now) {
        if (ev.kind == EventKind::training_flow_landed) {
            if (--training_flows_left_ == 0) start_training_phase(now);
            return;
        }
        const bool current = ev.kind == EventKind::decode_step
                                 ? ev.generation == decode_generation_[static_cast<std::size_t>(ev.subject)]
                                 : generation_.holds(static_cast<std::size_t>(ev.subject)) &&  // handed over: final
                                       ev.generation == generation_[static_cast<std::size_t>(ev.subject)];
        if (!current) return;
        switch (ev.kind) {
            case EventKind::prefill_done: prefill_done(ev.subject); break;
            case EventKind::shard_arrived: shard_arrived(ev.subject, now); break;
            case EventKind::decode_step: step_done(static_cast<std::int32_t>(ev.subject), now); break;
            case EventKind::training_flow_landed: break;
        }
    }

    // The shared training job's compute ended, or its phase's transfers all landed: its next phase's
    // transfers start as flows (none: the step ended and the next one computes).
    void start_training_phase(double now) {
        const auto& transfers = tenant_->advance(now);
        training_flows_left_ = static_cast<std::int64_t>(transfers.size());
        for (const auto& t : transfers) flows_.start(now_, t.source, t.target, t.bytes, training_flow, false);
    }

    void prefill_done(std::int64_t id) {
        auto& q = prefill_queue_[static_cast<std::size_t>(records_[static_cast<std::size_t>(id)].prefill_instance)];
        q.erase(std::find(q.begin(), q.end(), id));
        start_transfer(id);
    }

    // The KV cache, split evenly over the prefill instance's satellites; shard k goes to decode satellite k mod size.
    void start_transfer(std::int64_t id) {
        auto& rec = records_[static_cast<std::size_t>(id)];
        const std::int32_t ps = c_.engines.prefill.satellites_per_instance, ds = c_.engines.decode.satellites_per_instance;
        shards_left_[id] = ps;
        for (std::int32_t k = 0; k < ps; ++k)
            flows_.start(now_, prefill_node(rec.prefill_instance, k), decode_node(rec.decode_instance, k % ds), rec.kv_bytes / ps, id);
    }

    void shard_arrived(std::int64_t id, double now) {
        auto it = shards_left_.find(id);
        if (--it->second > 0) return;
        shards_left_.erase(it);
        auto& rec = records_[static_cast<std::size_t>(id)];
        // The prefill's token reaches the user with the hand-over (docs/inference.md); a request resuming after
        // its decode instance crashed had it already.
        if (rec.tokens_generated == 0) {
            rec.first_token_s = now;
            rec.tokens_generated = 1;
            ++tokens_generated_;
        }
        kv_transfers_.push_back(now - rec.prefill_end_s);
        summary_.kv_bytes_moved += rec.kv_bytes;
        auto& inst = decode_[static_cast<std::size_t>(rec.decode_instance)];
        if (rec.tokens_generated >= rec.request.output_tokens) {
            complete(rec, inst, now);
            return;
        }
        inst.waiting.push_back(id);
        if (!inst.stepping) start_step(rec.decode_instance, now);
    }

    void complete(RequestRecord& rec, DecodeInstance& inst, double now) {
        rec.status = RequestStatus::completed;
        rec.finish_s = now;
        --held_;
        inst.assigned_tokens -= rec.request.prompt_tokens + rec.request.output_tokens;
    }

    // Continuous batching: admit waiting sequences FCFS while the batch and the KV capacity allow
    // (the head of the queue blocks the rest), then step the batch.
    void start_step(std::int32_t d, double now) {
        auto& inst = decode_[static_cast<std::size_t>(d)];
        while (!inst.waiting.empty() && static_cast<std::int32_t>(inst.running.size()) < c_.engines.max_batch) {
            const auto& r = records_[static_cast<std::size_t>(inst.waiting.front())];
            const std::int64_t need = r.request.prompt_tokens + r.request.output_tokens;
            if (inst.reserved_tokens + need > capacity_tokens_) break;
            inst.reserved_tokens += need;
            inst.context_tokens += static_cast<double>(r.request.prompt_tokens + r.tokens_generated);
            inst.running.push_back(inst.waiting.front());
            inst.waiting.pop_front();
        }
        inst.stepping = !inst.running.empty();
        if (!inst.stepping) return;
        const auto batch = static_cast<std::int64_t>(inst.running.size());
        push(work_done_s(c_.engines.prefill.instances + d, now,
                         decode_step_time_s(c_.model, decode_accelerator(c_, a_), decode_chips_, c_.engines.mfu, batch, inst.context_tokens)),
             EventKind::decode_step, d, decode_generation_[static_cast<std::size_t>(d)]);
        ++summary_.decode_steps;
    }

    void step_done(std::int32_t d, double now) {
        auto& inst = decode_[static_cast<std::size_t>(d)];
        std::erase_if(inst.running, [&](std::int64_t id) {
            auto& rec = records_[static_cast<std::size_t>(id)];
            ++rec.tokens_generated;
            ++tokens_generated_;
            inst.context_tokens += 1.0;
            if (rec.tokens_generated < rec.request.output_tokens) return false;
            inst.reserved_tokens -= rec.request.prompt_tokens + rec.request.output_tokens;
            inst.context_tokens -= static_cast<double>(rec.request.prompt_tokens + rec.tokens_generated);
            complete(rec, inst, now);
            return true;
        });
        if (inst.running.empty()) inst.context_tokens = 0.0;  // no drift from the running sums
        start_step(d, now);
    }

    // With a sink: the final records at the window's front leave it once they fill a block.
    void hand_over_final() {
        while (ready_ < records_.size() && records_.at(ready_).status != RequestStatus::unfinished) ++ready_;
        if (ready_ > 0 && ready_ >= sink_->block_records) hand_over(ready_);
    }

    // The first `count` records of the window are tallied and, with a sink, handed over and dropped.
    void hand_over(std::size_t count) {
        const auto rows = records_.front(count);
        for (const auto& r : rows) tally_.add(r);
        if (!sink_) return;
        if (count > 0) sink_->receive(rows);
        records_.pop_front(count);
        generation_.pop_front(count);
        ready_ = 0;
    }

    ServingResult finish() {
        hand_over(records_.size());  // the rest, unfinished ones included
        auto& s = summary_;
        const double span = c_.end_s - c_.start_s;
        tally_.fill(s);
        s.kv_transfer_s = detail::percentiles_of(kv_transfers_);
        if (span > 0.0) {
            s.requests_per_s = static_cast<double>(s.completed) / span;
            s.output_tokens_per_s = static_cast<double>(tokens_generated_) / span;
        }
        s.kv_capacity_tokens = capacity_tokens_;
        s.rate_solves = flows_.rate_solves();
        s.stalled_transfer_s = flows_.stalled_transfer_s();
        s.instance_throttled_s = detail::throttled_time_s(share_, c_.throttle, c_.start_s, c_.end_s);
        s.gateway_bytes = gateway_bits_ / bits_per_byte;
        if (span > 0.0) s.gateway_egress_mean_bps = gateway_bits_ / span;
        std::vector<double> egress = std::move(egress_bits_);
        for (std::size_t k = 0; k < egress.size(); ++k) {  // mean rate: the last bin ends at end_s
            const double width = std::min(c_.egress_bin_s, c_.end_s - c_.start_s - static_cast<double>(k) * c_.egress_bin_s);
            egress[k] = width > 0.0 ? egress[k] / width : 0.0;
        }
        return ServingResult{std::move(records_).release(),
                             s,
                             std::move(egress),
                             c_.egress_bin_s,
                             tenant_ ? tenant_->summary() : SharedTrainingSummary{},
                             !std::isnan(stopped_at_s_),
                             stopped_at_s_};
    }

    const ServingConfig& c_;
    const Accelerator& a_;
    NetworkClock clock_;
    FlowNetwork flows_;  // the KV caches and the training job's transfers on clock_'s network
    RequestGenerator generator_;
    std::size_t trace_next_ = 0;
    std::vector<std::int32_t> nodes_;
    std::int64_t prefill_chips_ = 1, decode_chips_ = 1, capacity_tokens_ = 0;
    double kv_per_token_ = 0.0;
    std::vector<double> prefill_free_s_;
    std::vector<std::deque<std::int64_t>> prefill_queue_;  // per prefill instance: requests assigned, not yet prefilled
    // Faults and power: each instance's outages in time order, when it is up again, and its share series.
    std::vector<InstanceOutage> outages_;
    std::size_t next_outage_ = 0;
    std::vector<double> prefill_down_until_, decode_down_until_;
    std::vector<std::vector<double>> share_;        // [instance][throttle sample]; empty: full speed
    detail::IdWindow<std::int32_t> generation_;     // per request in the window (serving_records.hpp)
    std::vector<std::int32_t> decode_generation_;   // per decode instance
    std::vector<DecodeInstance> decode_;
    detail::IdWindow<RequestRecord> records_;       // by slot: the admitted requests in arrival order
    std::size_t slots_ = 0;                         // records ever pushed
    std::int64_t held_ = 0;                         // admitted, not yet completed or lost (max_queued_requests)
    const RequestSink* sink_ = nullptr;
    const std::atomic<bool>* stop_ = nullptr;  // a user's stop (simulate_serving)
    std::size_t ready_ = 0;  // final records at the window's front
    detail::RequestTally tally_;
    std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
    std::int64_t order_ = 0;
    std::vector<TransferDone> done_;  // drained's scratch
    double now_ = 0.0;                // the loop's time
    std::unordered_map<std::int64_t, std::int32_t> shards_left_;
    std::optional<detail::TrainingTenant> tenant_;
    std::int64_t training_flows_left_ = 0;  // the running phase's transfers not yet landed
    std::unordered_map<std::int32_t, std::vector<double>> distances_;
    std::vector<double> kv_transfers_;
    std::int64_t tokens_generated_ = 0;
    ServingSummary summary_;
    double stopped_at_s_ = std::numeric_limits<double>::quiet_NaN();  // simulate_serving's stop seen then
    double gateway_bits_ = 0.0;
    std::vector<double> egress_bits_;  // per egress bin
};

}  // namespace

ServingResult simulate_serving(const ServingConfig& config, const Accelerator& accelerator, TopologySource source,
                               const RequestSink& sink, const std::atomic<bool>* stop) {
    return Serving(config, accelerator, std::move(source), sink.receive ? &sink : nullptr, stop).run();
}

}  // namespace skyfabric::workloads
