#pragma once
// The training job that shares the serving engine's fabric (serving.hpp SharedTraining): where its
// step is (computing, or in which phase of its collective) and the steps it has finished. The
// serving engine moves the phases' transfers as flows; this only says what comes next. Internal.

#include <skyfabric/workloads/serving.hpp>

#include <cstdint>
#include <limits>
#include <vector>

namespace skyfabric::workloads::detail {

struct NodeTransfer {
    std::int32_t source = 0, target = 0;  // nodes, distinct
    double bytes = 0.0;                   // > 0
};

class TrainingTenant {
public:
    // Throws std::invalid_argument for compute_s ≤ 0, a rank count unlike the collective's, or a node
    // outside [0, node_count).
    TrainingTenant(const SharedTraining& job, std::int32_t node_count, double start_s);
    // When the step's compute ends; +inf while its collective runs.
    double compute_end_s() const { return computing_ ? compute_end_s_ : std::numeric_limits<double>::infinity(); }
    // Called when the compute ends or the running phase's transfers have all landed: the next phase's
    // transfers (those between distinct nodes, with bytes; a phase without any passes at once). Empty:
    // the step ended now, and the next one computes until compute_end_s().
    const std::vector<NodeTransfer>& advance(double now_s);
    void add_bytes_sent(double bytes) { bytes_sent_ += bytes; }
    SharedTrainingSummary summary() const;

private:
    const SharedTraining& job_;
    bool computing_ = true;
    double step_start_s_ = 0.0, compute_end_s_ = 0.0;
    std::size_t phase_ = 0;
    std::int32_t repeat_ = 0;  // repetitions of phase_ done
    std::vector<NodeTransfer> transfers_;
    std::vector<double> step_s_;
    double bytes_sent_ = 0.0;
};

}  // namespace skyfabric::workloads::detail
