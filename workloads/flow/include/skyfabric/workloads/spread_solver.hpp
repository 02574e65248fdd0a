#pragma once
// One large max-min problem spread over CPU threads (maxmin_spread.hpp's steps on IdleHelpers):
// the rates and drain times of maxmin_rates / drain_flows on one thread, to the bit, whatever the
// number of threads that help. Pays above a measured size (spread_min_flows, flow_solver.hpp);
// below it the steps' barriers cost more than they save.

#include <atomic>
#include <cstdint>
#include <vector>

#include <skyfabric/workloads/flow_solver.hpp>
#include <skyfabric/workloads/maxmin_spread.hpp>

namespace skyfabric::workloads {

class IdleHelpers;

// Scratch for spread solves, grown and never shrunk; one per thread that solves.
class SpreadMaxMin {
public:
    // Max-min rates of p's flows that active marks (maxmin_rates' arguments; weight may be null),
    // on this thread and the helpers idle at each step.
    void rates(const FlowProblem& p, const unsigned char* active, double* rate, IdleHelpers& helpers,
               const std::int32_t* weight = nullptr);
    // p's flows drained as drain_flows does (finish_s[p.flow_count()]); returns the makespan. Polls
    // stop before each solve (the caller throws Interrupted).
    double drain(const FlowProblem& p, double* finish_s, IdleHelpers& helpers, const std::atomic<bool>* stop);

private:
    void build_index(const FlowProblem& p, IdleHelpers& helpers);
    void solve(const FlowProblem& p, const unsigned char* active, double* rate, IdleHelpers& helpers,
               const std::int32_t* weight);
    LinkFlows link_flows_;
    std::vector<double> link_remaining_, rate_, left_;
    std::vector<int> share_count_, order_, counts_, live_flows_, live_, slice_place_;
    std::vector<unsigned char> saturated_, frozen_, active_;
};

}  // namespace skyfabric::workloads
