#include <skyfabric/workloads/flow_solver.hpp>

#include <algorithm>
#include <mutex>
#include <stdexcept>

#include <skyfabric/workloads/idle_helpers.hpp>
#include <skyfabric/workloads/maxmin_core.hpp>
#include <skyfabric/workloads/spread_solver.hpp>

#include "flow_solver_cuda.hpp"

namespace skyfabric::workloads {

std::int32_t FlowProblem::add_flow(std::span<const std::int32_t> links, double bytes, double latency_s) {
    flow_links.insert(flow_links.end(), links.begin(), links.end());
    flow_offsets.push_back(static_cast<std::int32_t>(flow_links.size()));
    flow_bytes.push_back(bytes);
    flow_latency_s.push_back(latency_s);
    return flow_count() - 1;
}

void FlowProblem::clear() {
    capacity_Bps.clear();
    flow_offsets.assign(1, 0);
    flow_links.clear();
    flow_bytes.clear();
    flow_latency_s.clear();
}

std::vector<DrainResult> FlowSolver::drain_batch(std::span<const FlowProblem> problems) const {
    std::vector<DrainResult> out;
    drain_batch(problems, out);
    return out;
}

std::vector<double> FlowSolver::solve_rates(const FlowProblem& problem) const {
    return solve_rates_batch(std::span<const FlowProblem>(&problem, 1)).front();
}

DrainResult FlowSolver::drain(const FlowProblem& problem) const {
    std::vector<DrainResult> out;
    drain_batch(std::span<const FlowProblem>(&problem, 1), out);
    return std::move(out.front());
}

namespace {

void check(const FlowProblem& p) {
    if (p.flow_offsets.size() != p.flow_bytes.size() + 1 || p.flow_latency_s.size() != p.flow_bytes.size())
        throw std::invalid_argument("FlowProblem: inconsistent flow arrays");
    for (auto l : p.flow_links)
        if (l < 0 || l >= p.link_count()) throw std::invalid_argument("FlowProblem: link index out of range");
}

class CpuFlowSolver final : public FlowSolver {
public:
    using FlowSolver::drain_batch;
    Backend backend() const override { return Backend::cpu; }

    std::vector<std::vector<double>> solve_rates_batch(std::span<const FlowProblem> problems) const override {
        std::vector<std::vector<double>> out;
        out.reserve(problems.size());
        for (const auto& p : problems) {
            check(p);
            const auto f = static_cast<std::size_t>(p.flow_count());
            const auto l = static_cast<std::size_t>(p.link_count());
            std::vector<unsigned char> active(f), frozen(f), saturated(l);
            std::vector<double> rate(f), remaining(l);
            std::vector<int> count(l);
            for (std::size_t i = 0; i < f; ++i) active[i] = p.flow_bytes[i] > 0.0;
            core::maxmin_rates(p.link_count(), p.capacity_Bps.data(), p.flow_count(), p.flow_offsets.data(),
                               p.flow_links.data(), active.data(), rate.data(), remaining.data(),
                               count.data(), saturated.data(), frozen.data());
            out.push_back(std::move(rate));
        }
        return out;
    }

    void drain_batch(std::span<const FlowProblem> problems, std::vector<DrainResult>& out,
                     const std::atomic<bool>* stop, IdleHelpers* helpers) const override {
        // The engine calls this for every collective it solves, on every trial thread: scratch
        // per thread, grown and never shrunk, so a solve allocates nothing once warm.
        thread_local Scratch s;
        thread_local SpreadMaxMin spread;
        out.resize(problems.size());
        for (std::size_t i = 0; i < problems.size(); ++i) {
            const FlowProblem& p = problems[i];
            check(p);
            const auto f = static_cast<std::size_t>(p.flow_count());
            const auto l = static_cast<std::size_t>(p.link_count());
            DrainResult& r = out[i];
            r.finish_s.resize(f);
            // Spread only where enough helpers are idle now: with fewer, this thread is faster on
            // its own loop (the same bits either way).
            if (helpers && p.flow_count() >= spread_min_flows && helpers->idle_count() >= spread_min_idle_helpers) {
                r.makespan_s = spread.drain(p, r.finish_s.data(), *helpers, stop);
                throw_if_stopped(stop);
                continue;
            }
            s.size(f, l);
            r.makespan_s = core::drain_flows(p.link_count(), p.capacity_Bps.data(), p.flow_count(),
                                             p.flow_offsets.data(), p.flow_links.data(), p.flow_bytes.data(),
                                             p.flow_latency_s.data(), r.finish_s.data(), s.rate.data(),
                                             s.remaining.data(), s.active.data(), s.link_remaining.data(),
                                             s.count.data(), s.saturated.data(), s.frozen.data(), s.order.data(),
                                             [stop] { return stop_requested(stop); });
            throw_if_stopped(stop);  // a drain left part way, or the batch's next one not begun
        }
    }

private:
    struct Scratch {
        std::vector<unsigned char> active, frozen, saturated;
        std::vector<double> rate, remaining, link_remaining;
        std::vector<int> count, order;
        void size(std::size_t f, std::size_t l) {
            for (auto* v : {&active, &frozen}) if (v->size() < f) v->resize(f);
            for (auto* v : {&rate, &remaining}) if (v->size() < f) v->resize(f);
            if (order.size() < f) order.resize(f);
            if (saturated.size() < l) saturated.resize(l);
            if (link_remaining.size() < l) link_remaining.resize(l);
            if (count.size() < l) count.resize(l);
        }
    };
};

class CudaFlowSolver final : public FlowSolver {
public:
    using FlowSolver::drain_batch;
    Backend backend() const override { return Backend::cuda; }
    std::vector<std::vector<double>> solve_rates_batch(std::span<const FlowProblem> problems) const override {
        for (const auto& p : problems) check(p);
        if (problems.size() == 1 && spread_on_device(problems[0])) return {detail::cuda_spread_rates(problems[0])};
        return detail::cuda_solve_rates_batch(problems);
    }
    // Each problem of device_spread_min_flows or more spread over the device, the others in one
    // launch, a GPU thread each.
    void drain_batch(std::span<const FlowProblem> problems, std::vector<DrainResult>& out,
                     const std::atomic<bool>* stop, IdleHelpers*) const override {
        for (const auto& p : problems) check(p);
        throw_if_stopped(stop);
        if (std::none_of(problems.begin(), problems.end(), spread_on_device)) {
            detail::cuda_drain_batch(problems, out);
            return;
        }
        out.resize(problems.size());
        std::vector<FlowProblem> rest;
        std::vector<std::size_t> rest_at;
        for (std::size_t i = 0; i < problems.size(); ++i) {
            if (spread_on_device(problems[i])) {
                throw_if_stopped(stop);
                detail::cuda_spread_drain(problems[i], out[i]);
            } else {
                rest.push_back(problems[i]);
                rest_at.push_back(i);
            }
        }
        if (rest.empty()) return;
        std::vector<DrainResult> rest_out;
        detail::cuda_drain_batch(rest, rest_out);
        for (std::size_t j = 0; j < rest.size(); ++j) out[rest_at[j]] = std::move(rest_out[j]);
    }

private:
    static bool spread_on_device(const FlowProblem& p) { return p.flow_count() >= device_spread_min_flows; }
};

// Small batches on the CPU, large ones on the requested backend, resolved at the first large one.
class BatchSizedFlowSolver final : public FlowSolver {
public:
    using FlowSolver::drain_batch;
    BatchSizedFlowSolver(const FlowSolver& cpu, Backend requested) : cpu_(cpu), requested_(requested) {}
    Backend backend() const override { return large().backend(); }
    std::vector<std::vector<double>> solve_rates_batch(std::span<const FlowProblem> problems) const override {
        return pick(problems.size()).solve_rates_batch(problems);
    }
    void drain_batch(std::span<const FlowProblem> problems, std::vector<DrainResult>& out,
                     const std::atomic<bool>* stop, IdleHelpers* helpers) const override {
        if (problems.size() >= device_batch_min_problems) {
            large().drain_batch(problems, out, stop, helpers);
            return;
        }
        // A small batch: its problems of device_spread_min_flows or more on the device (spread),
        // each run of the others on the CPU.
        out.resize(problems.size());
        thread_local std::vector<DrainResult> part;
        for (std::size_t i = 0; i < problems.size();) {
            const bool device = problems[i].flow_count() >= device_spread_min_flows;
            std::size_t end = i + 1;
            while (end < problems.size() && (problems[end].flow_count() >= device_spread_min_flows) == device) ++end;
            if (i == 0 && end == problems.size()) {
                (device ? large() : cpu_).drain_batch(problems, out, stop, helpers);
                return;
            }
            (device ? large() : cpu_).drain_batch(problems.subspan(i, end - i), part, stop, helpers);
            for (std::size_t j = i; j < end; ++j) std::swap(out[j], part[j - i]);
            i = end;
        }
    }

private:
    const FlowSolver& pick(std::size_t problems) const {
        return problems < device_batch_min_problems ? cpu_ : large();
    }
    const FlowSolver& large() const {
        std::call_once(resolved_, [&] { large_ = make_flow_solver(requested_); });
        return *large_;
    }
    const FlowSolver& cpu_;
    Backend requested_;
    mutable std::once_flag resolved_;
    mutable std::unique_ptr<FlowSolver> large_;
};

}  // namespace

std::unique_ptr<FlowSolver> make_flow_solver(Backend requested) {
    if (resolve_backend(requested) == Backend::cuda) return std::make_unique<CudaFlowSolver>();
    return std::make_unique<CpuFlowSolver>();
}

DrainResult device_spread_drain(const FlowProblem& problem) {
    check(problem);
    (void)resolve_backend(Backend::cuda);  // a clear error without a device
    DrainResult out;
    detail::cuda_spread_drain(problem, out);
    return out;
}

const FlowSolver& batch_flow_solver(Backend requested) {
    static const CpuFlowSolver cpu;
    static const BatchSizedFlowSolver automatic(cpu, Backend::automatic), cuda(cpu, Backend::cuda);
    switch (requested) {
        case Backend::cpu: return cpu;
        case Backend::cuda: return cuda;
        case Backend::automatic: break;
    }
    return automatic;
}

}  // namespace skyfabric::workloads
