#pragma once
// The critical path of a run's training timeline (issue 49, item 3): which collective sets each step's
// length, so that `analyze` can draw the chain compute → exposed collective → next step as flow arrows
// over the run's Perfetto trace. Plain structs in and out, as analysis.hpp.

#include <cstdint>
#include <span>
#include <vector>

namespace skyfabric::analysis {

// A step of the ranks' track: [start_s, end_s), its compute ending at compute_end_s.
struct StepSlice {
    std::int64_t step = 0;
    double start_s = 0.0;
    double compute_end_s = 0.0;
    double end_s = 0.0;
};

// A collective of the collective stream, in the step it belongs to.
struct CollectiveSlice {
    std::int64_t step = 0;
    double start_s = 0.0;
    double end_s = 0.0;
};

// One step's link in the chain.
struct StepPath {
    std::int32_t step_index = 0;   // into the steps given
    // Into the collectives given: the step's collective that ends last, when it ends after the step's
    // compute (its tail is the step's exposed communication); −1 when compute alone sets the step.
    std::int32_t gating_collective = -1;
    // The next step (into the steps given) starts when this one's chain ends (within `tolerance_s`):
    // the chain goes on into it; −1 at the last step or where the next one waited for something else.
    std::int32_t next_step_index = -1;
};

// The chain through every step, in the order of the steps given (sorted by start).
std::vector<StepPath> critical_path(std::span<const StepSlice> steps, std::span<const CollectiveSlice> collectives,
                                    double tolerance_s = 1e-9);

}  // namespace skyfabric::analysis
