// Recovery: the play of one trial's fault events against the training job (checkpoints,
// rollbacks, restarts, rank loss, the damaged fabric), and the analytic goodput it is checked against.
#include <skyfabric/workloads/faults.hpp>
#include <skyfabric/workloads/job.hpp>
#include <skyfabric/workloads/training.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include "fault_streams.hpp"

namespace skyfabric::workloads {

using detail::kind_index;

double checkpoint_stall_s(const RecoveryConfig& c) {
    if (c.checkpoint_mode == CheckpointMode::blocking) return c.checkpoint_cost_s;
    return c.snapshot_bandwidth_Bps > 0.0 ? c.snapshot_bytes_per_rank / c.snapshot_bandwidth_Bps : 0.0;
}

double resolve_checkpoint_interval_s(const RecoveryConfig& c) {
    if (c.checkpoint_interval_s > 0.0) return c.checkpoint_interval_s;
    if (!(c.mtbf_s > 0.0))
        throw std::invalid_argument("auto checkpoint interval needs mtbf_s > 0 (see interruption_mtbf_s)");
    // Daly's interval at what a checkpoint stops the job for: an async write's time costs a constant
    // W/M per failure (the rollback reaches W further back), which does not move the optimum.
    const double cost = checkpoint_stall_s(c);
    if (!(cost > 0.0)) throw std::invalid_argument("auto checkpoint interval needs a checkpoint cost > 0");
    return daly_interval_s(cost, c.mtbf_s);
}

namespace {

double wrapped_time(const StepDurations& s, double t) {
    if (s.period_s > 0.0) {
        t = std::fmod(t, s.period_s);
        if (t < 0.0) t += s.period_s;
    }
    return t;
}

// The index of the step under way at t: the last start <= t (0 when none is).
std::size_t step_index_at(const StepDurations& s, double t) {
    const auto it = std::upper_bound(s.start_s.begin(), s.start_s.end(), t);
    return it == s.start_s.begin() ? 0 : static_cast<std::size_t>(it - s.start_s.begin()) - 1;
}

void check_step_series(const StepDurations& s) {
    if (s.start_s.size() != s.duration_s.size())
        throw std::invalid_argument("step duration series: start_s and duration_s differ in length");
}

// step_duration_at_s for a trial's clock, which only moves forward: the index walks on from the
// last answer (a step or two), and falls back to the binary search after a jump or a wrap. Same
// index as step_index_at: the walk stops at the last start <= t.
class StepDurationCursor {
public:
    explicit StepDurationCursor(const StepDurations& s) : s_(s) { check_step_series(s); }
    double at(double t) {
        if (s_.start_s.empty()) return s_.nominal_s;
        t = wrapped_time(s_, t);
        const std::size_t n = s_.start_s.size();
        if (s_.start_s[i_] > t) {
            i_ = step_index_at(s_, t);
        } else {
            std::size_t walked = 0;
            while (i_ + 1 < n && s_.start_s[i_ + 1] <= t) {
                ++i_;
                if (++walked == 8) {
                    i_ = step_index_at(s_, t);
                    break;
                }
            }
        }
        return s_.duration_s[i_];
    }

private:
    const StepDurations& s_;
    std::size_t i_ = 0;
};

}  // namespace

double step_duration_at_s(const StepDurations& s, double t) {
    if (s.start_s.empty()) return s.nominal_s;
    check_step_series(s);
    return s.duration_s[step_index_at(s, wrapped_time(s, t))];
}

double expected_goodput_constant_rate(double w, double delta, double r, double m) {
    // Renewal argument: a segment of w work + δ checkpoint succeeds with prob e^{-(w+δ)/M}; each
    // failure costs E[s | s < w+δ] plus a restart that itself completes in M (e^{R/M} − 1) on
    // average; summing gives E[T_segment] = M e^{R/M} (e^{(w+δ)/M} − 1), goodput = w / E[T].
    return w / (m * std::exp(r / m) * std::expm1((w + delta) / m));
}

namespace {

// One trial's play (see simulate_training_with_faults in faults.hpp).
class Play {
public:
    Play(std::span<const FaultEvent> events, std::int32_t satellite_count, double duration_s, const StepDurations& steps,
         const RecoveryConfig& config, bool record_timeline, FabricModel* fabric, const std::atomic<bool>* stop)
        : events_(events), n_sat_(satellite_count), T_(duration_s), config_(config),
          record_(record_timeline), fabric_(fabric), stop_(stop), step_durations_(steps) {
        if (n_sat_ <= 0) throw std::invalid_argument("recovery: need satellite_count >= 1");
        if (!(duration_s > 0.0)) throw std::invalid_argument("recovery: duration_s must be > 0");
        physics::throw_problems("recovery", check(config, n_sat_));
        tau_ = resolve_checkpoint_interval_s(config);
        is_active_.assign(static_cast<std::size_t>(n_sat_), 0);
        for (std::int32_t s = 0; s < n_sat_; ++s) {
            if (starts_as_spare(config, s, n_sat_)) {
                spare_sats_.push_back(s);
            } else {
                rank_sat_.push_back(s);
                is_active_[static_cast<std::size_t>(s)] = 1;
            }
        }
        initial_ranks_ = initial_rank_count(config, n_sat_);
        if (initial_ranks_ % config.rank_multiple != 0)
            throw std::invalid_argument("recovery: rank_multiple must divide the initial ranks (satellites - spares)");
        res_.elapsed_s = T_;
        res_.checkpoint_interval_s = tau_;
        res_.effects.assign(events.size(), FaultEffect::after_end);
        down_until_.assign(static_cast<std::size_t>(n_sat_), -std::numeric_limits<double>::infinity());
    }

    GoodputResult run() {
        while (t_ < T_) {
            poll_stop();
            if (pending_.active && t_ >= pending_.done_s) commit_pending();
            if (since_ckpt_s_ > 0.0 && since_ckpt_s_ >= tau_ * (1.0 - 1e-12)) {
                checkpoint();
                continue;
            }
            const double extra = fabric_ ? fabric_extra_s() : 0.0;
            if (!std::isfinite(extra)) {
                stall();
                continue;
            }
            step(extra);
        }
        if (pending_.active) commit_pending();  // a write cut by the end: its work counts, as the tail's
        res_.useful_s = useful_committed_ + since_useful_s_;
        commit_fabric();
        res_.shrunk_s += since_shrunk_s_;
        res_.steps_completed = steps_committed_ + steps_since_;
        res_.corrupted_steps = corrupt_committed_ + corrupt_since_;
        res_.goodput = res_.useful_s / T_;
        res_.step_time_median_s = select_nearest_rank(step_times_, 0.5);
        res_.step_time_p99_s = select_nearest_rank(step_times_, 0.99);
        return std::move(res_);
    }

private:
    void log(double a, double b, JobPhase phase) {
        if (record_ && b > a) res_.timeline.push_back({a, b, phase});
    }
    // A user's stop, seen at every event and every turn of run(): a trial of 10^6 events (a high
    // radiation.rate_scale) ran for a minute between two polls of for_each_trial's.
    void poll_stop() const {
        if (stop_requested(stop_)) throw TrialsInterrupted();
    }
    const FaultEvent& next_event() {
        poll_stop();
        const FaultEvent& e = events_[i_];
        if (e.satellite < 0 || e.satellite >= n_sat_) throw std::invalid_argument("fault event satellite out of range");
        if (i_ > 0 && e.time_s < events_[i_ - 1].time_s) throw std::invalid_argument("fault events must be sorted by time");
        if (e.cause < 0) ++res_.events_by_kind[kind_index(e.kind)];
        else if (e.cause < max_operational_causes) ++res_.operational.events[static_cast<std::size_t>(e.cause)];
        else throw std::invalid_argument("fault event cause out of range");
        return e;
    }
    bool active(const FaultEvent& e) const { return is_active_[static_cast<std::size_t>(e.satellite)] != 0; }

    void take_down(std::int32_t sat, double until) {
        auto& d = down_until_[static_cast<std::size_t>(sat)];
        d = std::max(d, until);
        if (std::find(rebooting_.begin(), rebooting_.end(), sat) == rebooting_.end()) rebooting_.push_back(sat);
        ++damage_version_;
    }

    // An event that does not interrupt training.
    void passive(const FaultEvent& e) {
        if (fault_crashes(e.kind)) {
            take_down(e.satellite, e.time_s + config_.reboot_s);
            res_.effects[i_] = active(e) ? FaultEffect::rollback : FaultEffect::reboot;
        } else if (e.kind == FaultKind::link_outage) {
            res_.effects[i_] = FaultEffect::link_down;
            std::pair<std::int32_t, std::int32_t> link;
            if (fabric_ && config_.link_outage_s > 0.0 && fabric_->outage_link(e.satellite, e.time_s, e.mark, e.gateway, link)) {
                // Undetected for gateway_failover_s: the step's share routed to it is lost meanwhile.
                if (e.gateway && config_.gateway_failover_s > 0.0) {
                    fill_damage();
                    if (const FabricModel::LinkTraffic traffic = fabric_->link_traffic(t_, damage_, link); traffic.bytes > 0.0)
                        blackholes_.push_back({e.time_s, e.time_s + config_.gateway_failover_s, traffic.bytes, traffic.step_share});
                }
                outages_.push_back({e.time_s + config_.link_outage_s, link});
                if (record_) res_.link_outages.push_back({e.time_s, e.time_s + config_.link_outage_s, link.first, link.second});
                ++res_.links_lost;
                if (e.gateway) ++res_.gateway_links_lost;
                ++damage_version_;
            }
        } else {
            res_.effects[i_] = FaultEffect::none;
        }
    }

    // The ranks after `sat` left them (shrink) or was replaced; keeps rank_sat_ a set.
    void drop_rank(std::int32_t sat) {
        rank_sat_.erase(std::find(rank_sat_.begin(), rank_sat_.end(), sat));
        is_active_[static_cast<std::size_t>(sat)] = 0;
        dropped_.push_back(sat);
        ++damage_version_;
    }

    // Shrink: the highest-numbered ranks beyond a whole multiple of rank_multiple idle (they wait
    // with the dropped ones and rejoin at a checkpoint that can fill a group). Nothing to do while
    // no more than one multiple is left: those wait for their reboots.
    void idle_to_multiple() {
        const auto m = static_cast<std::size_t>(config_.rank_multiple);
        while (rank_sat_.size() % m != 0) {
            drop_rank(rank_sat_.back());
            ++res_.ranks_idled;
        }
    }

    // Recovery from an interrupt at t_fail; returns when training resumes (may exceed T).
    double recover(double t_fail, const FaultEvent& first) {
        double begin = t_fail;
        std::int32_t failed = fault_crashes(first.kind) ? first.satellite : -1;
        // An operational fault may hold the job (a person, a failed retry chain) before its restart.
        double held_until = first.hold_s > 0.0f ? t_fail + first.hold_s : t_fail;
        for (;;) {
            if (failed >= 0) take_down(failed, begin + config_.reboot_s);
            double ready = begin;
            if (held_until > ready) ready = held_until;
            if (config_.on_rank_loss == RankLossPolicy::shrink) {
                // Every rank that is down leaves the ring (at least rank_multiple stay: then they
                // wait); survivors beyond a whole multiple idle.
                const auto keep = static_cast<std::size_t>(config_.rank_multiple);
                for (std::size_t k = 0; k < rank_sat_.size();) {
                    const std::int32_t sat = rank_sat_[k];
                    if (down_until_[static_cast<std::size_t>(sat)] > begin && rank_sat_.size() > keep) {
                        drop_rank(sat);
                        continue;
                    }
                    ++k;
                }
                idle_to_multiple();
                for (const std::int32_t sat : rank_sat_) ready = std::max(ready, down_until_[static_cast<std::size_t>(sat)]);
            } else {
                for (std::int32_t& sat : rank_sat_) {
                    const auto s = static_cast<std::size_t>(sat);
                    if (down_until_[s] <= begin) continue;
                    double avail = down_until_[s];
                    if (config_.on_rank_loss == RankLossPolicy::spare) {
                        // Earliest-available spare of its group; swap if it is up before this satellite is.
                        std::size_t best = spare_sats_.size();
                        for (std::size_t k = 0; k < spare_sats_.size(); ++k)
                            if (same_group(spare_sats_[k], sat) &&
                                (best == spare_sats_.size() || down_until_[static_cast<std::size_t>(spare_sats_[k])] <
                                                                   down_until_[static_cast<std::size_t>(spare_sats_[best])]))
                                best = k;
                        if (best < spare_sats_.size() &&
                            down_until_[static_cast<std::size_t>(spare_sats_[best])] < down_until_[s]) {
                            const std::int32_t replacement = spare_sats_[best];
                            spare_sats_[best] = sat;
                            is_active_[s] = 0;
                            is_active_[static_cast<std::size_t>(replacement)] = 1;
                            res_.swaps.push_back({begin, sat, replacement});
                            sat = replacement;
                            ++res_.replacements;
                            ++damage_version_;
                            avail = std::max(begin, down_until_[static_cast<std::size_t>(replacement)]);
                        }
                    }
                    ready = std::max(ready, avail);
                }
            }
            const double restart_end = ready + config_.restart_s;
            bool again = false;
            while (i_ < events_.size() && events_[i_].time_s < std::min(restart_end, T_)) {
                const FaultEvent& e = next_event();
                if (active(e) && fault_interrupts(e.kind) && (e.time_s >= ready || fault_crashes(e.kind))) {
                    res_.effects[i_] = FaultEffect::rollback;
                    ++res_.rollbacks;
                    if (e.cause >= 0) ++res_.operational.interruptions[static_cast<std::size_t>(e.cause)];
                    if (fault_crashes(e.kind)) ++res_.ranks_lost;
                    res_.restart_total_s += std::max(0.0, e.time_s - ready);
                    if (e.hold_s > 0.0f) held_until = std::max(held_until, e.time_s + e.hold_s);
                    begin = e.time_s;
                    failed = fault_crashes(e.kind) ? e.satellite : -1;
                    ++i_;
                    again = true;
                    break;
                }
                passive(e);
                ++i_;
            }
            if (!again) {
                res_.restart_total_s += std::max(0.0, std::min(restart_end, T_) - ready);
                return restart_end;
            }
        }
    }

    // Interrupt at event i_ (a step, a checkpoint or a stall: cut): lose the partial phase and
    // the uncommitted work.
    void interrupt(JobPhase cut) {
        const FaultEvent& e = events_[i_];
        const std::size_t k = kind_index(e.kind);
        // An async write that completed before the fault is a checkpoint; one still in flight is lost
        // with the work before its snapshot: the rollback goes to the last completed checkpoint.
        if (pending_.active && e.time_s >= pending_.done_s) commit_pending();
        double lost_pending_s = 0.0;
        if (pending_.active) {
            lost_pending_s = pending_.ckpt_s + pending_.stall_s;
            kept_from_ = pending_.kept_from;
            pending_.active = false;
        }
        const double rework_before = res_.rework_s[k] + res_.stalled_s;
        log(t_, e.time_s, cut);
        for (std::size_t j = kept_from_; j < res_.timeline.size(); ++j)
            if (res_.timeline[j].phase == JobPhase::step || res_.timeline[j].phase == JobPhase::step_corrupted)
                res_.timeline[j].phase = JobPhase::step_rolled_back;
        res_.effects[i_] = FaultEffect::rollback;
        ++res_.rollbacks;
        if (fault_crashes(e.kind)) ++res_.ranks_lost;
        if (cut == JobPhase::stalled) res_.stalled_s += e.time_s - t_;
        else res_.rework_s[k] += e.time_s - t_;
        res_.rework_s[k] += since_ckpt_s_ + lost_pending_s;
        since_ckpt_s_ = since_useful_s_ = since_fabric_loss_s_ = since_fabric_gain_s_ = since_shrunk_s_ = 0.0;
        steps_since_ = corrupt_since_ = 0;
        ++i_;
        const int cause = e.cause;
        const double time_s = e.time_s;
        const double resume = recover(e.time_s, e);
        res_.recovery_s[k] += std::min(resume, T_) - time_s;
        if (cause >= 0) {
            const auto c = static_cast<std::size_t>(cause);
            ++res_.operational.interruptions[c];
            res_.operational.lost_s[c] += res_.rework_s[k] + res_.stalled_s - rework_before + std::min(resume, T_) - time_s;
        }
        log(e.time_s, std::min(resume, T_), JobPhase::recovery);
        kept_from_ = res_.timeline.size();
        t_ = resume;
    }

    // A step or checkpoint that would end after the run: the rest of the run is its tail.
    bool cut_by_end(double end) {
        if (end <= T_) return false;
        res_.tail_s += T_ - t_;
        log(t_, T_, JobPhase::unfinished);
        t_ = T_;
        return true;
    }

    // The events while the job stands still for a checkpoint (or its snapshot) until `end`: false when
    // one interrupts it or the run ends first (handled: the caller returns).
    bool checkpoint_holds_until(double end) {
        while (i_ < events_.size() && events_[i_].time_s < std::min(end, T_)) {
            const FaultEvent& e = next_event();
            if (active(e) && fault_interrupts(e.kind)) {
                interrupt(JobPhase::checkpoint_interrupted);
                return false;
            }
            passive(e);
            ++i_;
        }
        return !cut_by_end(end);
    }

    void checkpoint() {
        if (config_.checkpoint_mode == CheckpointMode::async) {
            snapshot();
            return;
        }
        const double end = t_ + config_.checkpoint_cost_s;
        if (!checkpoint_holds_until(end)) return;
        log(t_, end, JobPhase::checkpoint);
        kept_from_ = res_.timeline.size();
        ++res_.checkpoints;
        res_.checkpoint_s += config_.checkpoint_cost_s;
        useful_committed_ += since_useful_s_;
        commit_fabric();
        res_.shrunk_s += since_shrunk_s_;
        steps_committed_ += steps_since_;
        corrupt_committed_ += corrupt_since_;
        since_ckpt_s_ = since_useful_s_ = since_fabric_loss_s_ = since_fabric_gain_s_ = since_shrunk_s_ = 0.0;
        steps_since_ = corrupt_since_ = 0;
        t_ = end;
        // Rebooted satellites that left a shrunk ring rejoin it from this checkpoint (in whole
        // multiples of rank_multiple: the rest idle on).
        rejoin_up_ranks();
    }

    // Async: the job stops for the snapshot (and for a previous write still in flight: one write at
    // a time), then the write of checkpoint_cost_s runs beside training; the state since the last
    // completed checkpoint is pending until it completes (commit_pending).
    void snapshot() {
        double end = t_ + checkpoint_stall_s(config_);
        if (pending_.active) end = std::max(end, pending_.done_s);
        if (!checkpoint_holds_until(end)) return;
        log(t_, end, JobPhase::checkpoint);
        if (pending_.active) commit_pending();  // done by end
        pending_ = {true, since_ckpt_s_, since_useful_s_, since_fabric_loss_s_, since_fabric_gain_s_, since_shrunk_s_,
                    steps_since_, corrupt_since_, kept_from_, end - t_, end + config_.checkpoint_cost_s};
        kept_from_ = res_.timeline.size();
        since_ckpt_s_ = since_useful_s_ = since_fabric_loss_s_ = since_fabric_gain_s_ = since_shrunk_s_ = 0.0;
        steps_since_ = corrupt_since_ = 0;
        t_ = end;
        rejoin_up_ranks();
    }

    void commit_pending() {
        const Pending& p = pending_;
        ++res_.checkpoints;
        res_.checkpoint_s += p.stall_s;
        useful_committed_ += p.useful_s;
        res_.fabric_loss_s += p.fabric_loss_s;
        res_.fabric_gain_s += p.fabric_gain_s;
        res_.shrunk_s += p.shrunk_s;
        steps_committed_ += p.steps;
        corrupt_committed_ += p.corrupt;
        pending_.active = false;
    }

    void rejoin_up_ranks() {
        std::vector<std::int32_t> up;
        for (const std::int32_t sat : dropped_)
            if (down_until_[static_cast<std::size_t>(sat)] <= t_) up.push_back(sat);
        std::sort(up.begin(), up.end());
        const std::size_t m = static_cast<std::size_t>(config_.rank_multiple);
        const std::size_t admitted = (rank_sat_.size() + up.size()) / m * m - rank_sat_.size();
        for (std::size_t k = 0; k < admitted; ++k) {
            const std::int32_t sat = up[k];
            rank_sat_.insert(std::upper_bound(rank_sat_.begin(), rank_sat_.end(), sat), sat);
            is_active_[static_cast<std::size_t>(sat)] = 1;
            dropped_.erase(std::find(dropped_.begin(), dropped_.end(), sat));
            ++damage_version_;
        }
    }

    // Kept steps' fabric extras become the trial's (rolled-back ones are rework).
    void commit_fabric() {
        res_.fabric_loss_s += since_fabric_loss_s_;
        res_.fabric_gain_s += since_fabric_gain_s_;
    }

    // Repairs due by t_: outages over, reboots done.
    void expire_damage() {
        const auto before = outages_.size() + rebooting_.size();
        std::erase_if(outages_, [&](const auto& o) { return o.first <= t_; });
        std::erase_if(rebooting_, [&](std::int32_t s) { return down_until_[static_cast<std::size_t>(s)] <= t_; });
        if (outages_.size() + rebooting_.size() != before) ++damage_version_;
    }

    // The extra step time on the fabric as this trial has damaged it at t_ (0 when undamaged).
    double fabric_extra_s() {
        expire_damage();
        if (outages_.empty() && rebooting_.empty() && ranks_are_initial()) return 0.0;
        if (memo_version_ == damage_version_ && t_ >= memo_from_s_ && t_ < memo_until_s_) return memo_extra_s_;
        fill_damage();
        memo_extra_s_ = fabric_->extra_step_s(t_, damage_);
        memo_version_ = damage_version_;
        memo_from_s_ = t_;
        memo_until_s_ = fabric_->next_change_s(t_);
        return memo_extra_s_;
    }
    // damage_: the links down, the satellites rebooting and the ranks, as of now.
    void fill_damage() {
        FabricDamage& d = damage_;
        d.links_down.clear();
        for (const auto& o : outages_) d.links_down.push_back(o.second);
        std::sort(d.links_down.begin(), d.links_down.end());
        d.links_down.erase(std::unique(d.links_down.begin(), d.links_down.end()), d.links_down.end());
        d.satellites_down.assign(rebooting_.begin(), rebooting_.end());
        std::sort(d.satellites_down.begin(), d.satellites_down.end());
        d.ranks.assign(rank_sat_.begin(), rank_sat_.end());
        std::sort(d.ranks.begin(), d.ranks.end());
    }
    bool ranks_are_initial() const {
        if (static_cast<std::int32_t>(rank_sat_.size()) != initial_ranks_) return false;
        if (config_.spare_satellites == 0) return true;  // every satellite began with a rank
        for (const std::int32_t s : rank_sat_)
            if (starts_as_spare(config_, s, n_sat_)) return false;
        return true;  // initial_ranks_ distinct satellites, none a spare at first: the initial ones
    }
    bool same_group(std::int32_t a, std::int32_t b) const {
        return config_.spare_group_size <= 0 || a / config_.spare_group_size == b / config_.spare_group_size;
    }

    // The fabric cannot complete a step: wait for the next repair or topology change.
    void stall() {
        double until = fabric_->next_change_s(t_);
        for (const auto& o : outages_) until = std::min(until, o.first);
        for (const std::int32_t s : rebooting_) until = std::min(until, down_until_[static_cast<std::size_t>(s)]);
        const double end = std::min(until, T_);
        while (i_ < events_.size() && events_[i_].time_s < end) {
            const FaultEvent& e = next_event();
            if (active(e) && fault_interrupts(e.kind)) {
                interrupt(JobPhase::stalled);
                return;
            }
            if (active(e) && e.kind == FaultKind::sdc) res_.effects[i_] = FaultEffect::none;  // nothing computing
            else passive(e);
            ++i_;
        }
        res_.stalled_s += end - t_;
        log(t_, end, JobPhase::stalled);
        t_ = end;
    }

    void step(double extra) {
        const double free_s = step_durations_.at(t_);
        if (!(free_s > 0.0)) throw std::invalid_argument("step duration must be > 0");
        const double d = free_s + extra;
        double end = t_ + d;
        // Failover: no progress while a link the step's collectives cross has failed undetected (the
        // union of those windows from the step's start); what was sent into it is re-sent after.
        double stall = 0.0, frozen_until = t_;
        std::erase_if(blackholes_, [&](const Blackhole& b) { return b.detected_s <= t_; });
        std::size_t applied = 0;
        const auto apply_blackholes = [&] {
            for (; applied < blackholes_.size(); ++applied) {
                const Blackhole& b = blackholes_[applied];
                const double from = std::max(b.failed_s, frozen_until);
                if (b.detected_s <= from) continue;
                // Only the share of steps that cross it freeze (local SGD: its outer syncs), as the
                // damaged step's extra time is spread over a round.
                const double frozen = (b.detected_s - from) * b.step_share;
                stall += frozen;
                end += frozen;
                frozen_until = b.detected_s;
                // What the step sent into it over that window, at most the step's share of the link.
                res_.bytes_retried += b.bytes * b.step_share * std::min(1.0, (b.detected_s - from) / d);
            }
        };
        apply_blackholes();
        bool redo = false, corrupt = false;
        while (i_ < events_.size() && events_[i_].time_s < std::min(end, T_)) {
            const FaultEvent& e = next_event();
            if (active(e) && fault_interrupts(e.kind)) {
                interrupt(JobPhase::step_interrupted);
                return;
            }
            if (active(e) && e.kind == FaultKind::sdc) {
                res_.effects[i_] = e.detected ? FaultEffect::step_recomputed : FaultEffect::silent_corruption;
                (e.detected ? redo : corrupt) = true;
            } else {
                passive(e);
                apply_blackholes();
            }
            ++i_;
        }
        if (cut_by_end(end)) return;
        log(t_, end, redo ? JobPhase::step_recomputed : corrupt ? JobPhase::step_corrupted : JobPhase::step);
        t_ = end;
        step_times_.push_back(d + stall);
        res_.failover_stall_s += stall;
        const bool damaged = extra != 0.0 || stall > 0.0 || static_cast<std::int32_t>(rank_sat_.size()) != initial_ranks_;
        if (damaged) ++res_.damaged_steps;
        if (redo) {
            res_.sdc_recompute_s += d + stall;
            ++res_.recomputed_steps;
            return;
        }
        // Credit one undamaged step of the ranks that took part; the rest is the fabric's or the
        // missing ranks' (exact partition: d = useful + shrunk + extra; a negative extra is a gain).
        const double share = static_cast<double>(rank_sat_.size()) / static_cast<double>(initial_ranks_);
        const double useful = share == 1.0 ? free_s : free_s * share;
        since_ckpt_s_ += d + stall;
        since_useful_s_ += useful;
        since_shrunk_s_ += free_s - useful;
        (extra > 0.0 ? since_fabric_loss_s_ : since_fabric_gain_s_) += std::abs(extra);
        since_fabric_loss_s_ += stall;
        ++steps_since_;
        if (corrupt) ++corrupt_since_;
    }

    std::span<const FaultEvent> events_;
    std::int32_t n_sat_;
    double T_;
    const RecoveryConfig& config_;
    bool record_;
    FabricModel* fabric_;
    const std::atomic<bool>* stop_;
    double tau_ = 0.0;
    std::int32_t initial_ranks_ = 0;
    GoodputResult res_;

    std::vector<std::int32_t> rank_sat_;  // satellites holding ranks
    std::vector<std::int32_t> spare_sats_;
    std::vector<std::int32_t> dropped_;   // left a shrunk ring, rejoin after reboot
    std::vector<char> is_active_;
    std::vector<double> down_until_;
    std::vector<std::int32_t> rebooting_;  // satellites that may still be down
    std::vector<std::pair<double, std::pair<std::int32_t, std::int32_t>>> outages_;  // (end, link)
    // Gateway links failed and not yet detected, in failure order, with the bytes a step puts on each.
    struct Blackhole {
        double failed_s = 0.0, detected_s = 0.0, bytes = 0.0;
        double step_share = 1.0;  // FabricModel::LinkTraffic::step_share
    };
    std::vector<Blackhole> blackholes_;

    std::size_t i_ = 0;  // next event
    double t_ = 0.0;
    double since_ckpt_s_ = 0.0, since_useful_s_ = 0.0, since_shrunk_s_ = 0.0;
    double since_fabric_loss_s_ = 0.0, since_fabric_gain_s_ = 0.0;
    std::int64_t steps_since_ = 0, corrupt_since_ = 0, steps_committed_ = 0, corrupt_committed_ = 0;
    double useful_committed_ = 0.0;
    std::size_t kept_from_ = 0;  // timeline: steps since the last checkpoint start here
    // Async: the state snapshotted and being written (its work and stall), and when the write completes.
    struct Pending {
        bool active = false;
        double ckpt_s = 0.0, useful_s = 0.0, fabric_loss_s = 0.0, fabric_gain_s = 0.0, shrunk_s = 0.0;
        std::int64_t steps = 0, corrupt = 0;
        std::size_t kept_from = 0;
        double stall_s = 0.0, done_s = 0.0;
    } pending_;
    std::vector<double> step_times_;
    StepDurationCursor step_durations_;

    // The last fabric answer, valid while neither the damage nor the topology changes.
    FabricDamage damage_;
    std::uint64_t damage_version_ = 0, memo_version_ = ~std::uint64_t{0};
    double memo_from_s_ = 0.0, memo_until_s_ = 0.0, memo_extra_s_ = 0.0;
};

}  // namespace

GoodputResult simulate_training_with_faults(std::span<const FaultEvent> events, std::int32_t satellite_count,
                                            double duration_s, const StepDurations& steps,
                                            const RecoveryConfig& config, bool record_timeline, FabricModel* fabric,
                                            const std::atomic<bool>* stop) {
    return Play(events, satellite_count, duration_s, steps, config, record_timeline, fabric, stop).run();
}

std::vector<SatelliteCondition> satellite_conditions(std::span<const FaultEvent> events,
                                                     std::span<const SpareSwap> swaps, std::int32_t n,
                                                     const RecoveryConfig& config, double t0, double t1) {
    if (n < 0 || config.spare_satellites < 0 || config.spare_satellites > n)
        throw std::invalid_argument("need satellite_count >= spare_satellites >= 0");
    const double reboot_s = config.reboot_s;
    std::vector<SatelliteCondition> out(static_cast<std::size_t>(n), SatelliteCondition::ok);
    std::vector<char> spare(static_cast<std::size_t>(n), 0);
    for (std::int32_t s = 0; s < n; ++s) spare[static_cast<std::size_t>(s)] = starts_as_spare(config, s, n) ? 1 : 0;
    for (const SpareSwap& w : swaps) {
        if (w.time_s > t1) break;
        if (w.failed < 0 || w.failed >= n || w.spare < 0 || w.spare >= n) throw std::invalid_argument("spare swap satellite out of range");
        spare[static_cast<std::size_t>(w.failed)] = 1;
        spare[static_cast<std::size_t>(w.spare)] = 0;
    }
    std::vector<char> hit(static_cast<std::size_t>(n), 0), down(static_cast<std::size_t>(n), 0);
    // Only events after min(t0, t1 - reboot_s) can matter (sorted by time: a binary search, so a
    // run's frames cost their own window each, not the whole event list).
    const double from = std::min(t0, t1 - reboot_s);
    const auto first = std::upper_bound(events.begin(), events.end(), from,
                                        [](double t, const FaultEvent& e) { return t < e.time_s; });
    for (const FaultEvent& e : std::span<const FaultEvent>(first, events.end())) {
        if (e.time_s > t1) break;
        if (e.satellite < 0 || e.satellite >= n) throw std::invalid_argument("fault event satellite out of range");
        const auto s = static_cast<std::size_t>(e.satellite);
        if (fault_crashes(e.kind) && e.time_s + reboot_s > t1) down[s] = 1;
        if (e.time_s > t0) hit[s] = 1;
    }
    for (std::size_t s = 0; s < out.size(); ++s)
        out[s] = down[s] ? SatelliteCondition::rebooting
                 : hit[s] ? SatelliteCondition::faulted
                 : spare[s] ? SatelliteCondition::spare
                            : SatelliteCondition::ok;
    return out;
}

}  // namespace skyfabric::workloads
