#include "shared_training.hpp"

#include "serving_records.hpp"

#include <numeric>
#include <stdexcept>
#include <string>

namespace skyfabric::workloads::detail {

TrainingTenant::TrainingTenant(const SharedTraining& job, std::int32_t node_count, double start_s)
    : job_(job), step_start_s_(start_s), compute_end_s_(start_s + job.compute_s) {
    if (!(job.compute_s > 0.0)) throw std::invalid_argument("shared training: compute_s must be > 0");
    if (static_cast<std::int32_t>(job.rank_nodes.size()) != job.collective.ranks)
        throw std::invalid_argument("shared training: " + std::to_string(job.rank_nodes.size()) + " rank nodes for a collective of " +
                                    std::to_string(job.collective.ranks) + " ranks");
    for (const std::int32_t n : job.rank_nodes)
        if (n < 0 || n >= node_count)
            throw std::invalid_argument("shared training: rank node " + std::to_string(n) + " outside the network's " +
                                        std::to_string(node_count) + " nodes");
}

const std::vector<NodeTransfer>& TrainingTenant::advance(double now_s) {
    const auto& phases = job_.collective.phases;
    if (computing_) {
        computing_ = false;
        phase_ = 0;
        repeat_ = 0;
    } else if (++repeat_ >= phases[phase_].repeat) {
        ++phase_;
        repeat_ = 0;
    }
    transfers_.clear();
    for (; phase_ < phases.size(); ++phase_, repeat_ = 0) {
        const Phase& ph = phases[phase_];
        for (std::int32_t k = 0; k < ph.transfer_count; ++k) {
            const Transfer t = job_.collective.transfer(ph, k);
            const std::int32_t from = job_.rank_nodes[static_cast<std::size_t>(t.source_rank)];
            const std::int32_t to = job_.rank_nodes[static_cast<std::size_t>(t.target_rank)];
            if (from != to && t.bytes > 0.0) transfers_.push_back(NodeTransfer{from, to, t.bytes});
        }
        if (!transfers_.empty()) return transfers_;
        // Nothing moves in this phase: its repetitions pass at once too.
    }
    step_s_.push_back(now_s - step_start_s_);
    step_start_s_ = now_s;
    computing_ = true;
    compute_end_s_ = now_s + job_.compute_s;
    return transfers_;
}

SharedTrainingSummary TrainingTenant::summary() const {
    SharedTrainingSummary s;
    s.steps = static_cast<std::int64_t>(step_s_.size());
    s.bytes_sent = bytes_sent_;
    if (step_s_.empty()) return s;
    std::vector<double> sorted = step_s_;
    s.step_s = percentiles_of(sorted);
    s.mean_step_s = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
    s.mean_collective_s = s.mean_step_s - job_.compute_s;
    return s;
}

}  // namespace skyfabric::workloads::detail
