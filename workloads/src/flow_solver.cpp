#include <skyfabric/workloads/flow_solver.hpp>

#include <stdexcept>

#include <skyfabric/workloads/maxmin_core.hpp>

#include "cuda_backend.hpp"

namespace skyfabric::workloads {

std::int32_t FlowProblem::add_flow(std::span<const std::int32_t> links, double bytes, double latency_s) {
    flow_links.insert(flow_links.end(), links.begin(), links.end());
    flow_offsets.push_back(static_cast<std::int32_t>(flow_links.size()));
    flow_bytes.push_back(bytes);
    flow_latency_s.push_back(latency_s);
    return flow_count() - 1;
}

std::vector<double> FlowSolver::solve_rates(const FlowProblem& problem) const {
    return solve_rates_batch(std::span<const FlowProblem>(&problem, 1)).front();
}

DrainResult FlowSolver::drain(const FlowProblem& problem) const {
    return drain_batch(std::span<const FlowProblem>(&problem, 1)).front();
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

    std::vector<DrainResult> drain_batch(std::span<const FlowProblem> problems) const override {
        std::vector<DrainResult> out;
        out.reserve(problems.size());
        for (const auto& p : problems) {
            check(p);
            const auto f = static_cast<std::size_t>(p.flow_count());
            const auto l = static_cast<std::size_t>(p.link_count());
            DrainResult r;
            r.finish_s.resize(f);
            std::vector<unsigned char> active(f), frozen(f), saturated(l);
            std::vector<double> rate(f), remaining(f), link_remaining(l);
            std::vector<int> count(l), order(f);
            r.makespan_s = core::drain_flows(p.link_count(), p.capacity_Bps.data(), p.flow_count(),
                                             p.flow_offsets.data(), p.flow_links.data(), p.flow_bytes.data(),
                                             p.flow_latency_s.data(), r.finish_s.data(), rate.data(),
                                             remaining.data(), active.data(), link_remaining.data(),
                                             count.data(), saturated.data(), frozen.data(), order.data());
            out.push_back(std::move(r));
        }
        return out;
    }
};

class CudaFlowSolver final : public FlowSolver {
public:
    Backend backend() const override { return Backend::cuda; }
    std::vector<std::vector<double>> solve_rates_batch(std::span<const FlowProblem> problems) const override {
        for (const auto& p : problems) check(p);
        return detail::cuda_solve_rates_batch(problems);
    }
    std::vector<DrainResult> drain_batch(std::span<const FlowProblem> problems) const override {
        for (const auto& p : problems) check(p);
        return detail::cuda_drain_batch(problems);
    }
};

}  // namespace

std::unique_ptr<FlowSolver> make_flow_solver(Backend requested) {
    if (resolve_backend(requested) == Backend::cuda) return std::make_unique<CudaFlowSolver>();
    return std::make_unique<CpuFlowSolver>();
}

}  // namespace skyfabric::workloads
