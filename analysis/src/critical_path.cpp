#include <skyfabric/analysis/critical_path.hpp>

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace skyfabric::analysis {

std::vector<StepPath> critical_path(std::span<const StepSlice> steps, std::span<const CollectiveSlice> collectives,
                                    double tolerance_s) {
    // Each step's last-ending collective.
    std::unordered_map<std::int64_t, std::int32_t> last_of_step;
    for (std::size_t c = 0; c < collectives.size(); ++c) {
        const auto [it, fresh] = last_of_step.try_emplace(collectives[c].step, static_cast<std::int32_t>(c));
        if (!fresh && collectives[c].end_s > collectives[static_cast<std::size_t>(it->second)].end_s)
            it->second = static_cast<std::int32_t>(c);
    }
    std::vector<StepPath> path;
    path.reserve(steps.size());
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const StepSlice& s = steps[i];
        StepPath p;
        p.step_index = static_cast<std::int32_t>(i);
        double chain_end = s.compute_end_s;
        if (const auto it = last_of_step.find(s.step); it != last_of_step.end()) {
            const CollectiveSlice& c = collectives[static_cast<std::size_t>(it->second)];
            if (c.end_s > s.compute_end_s + tolerance_s) {
                p.gating_collective = it->second;
                chain_end = c.end_s;
            }
        }
        // The chain ends with the step; the next step goes on from it if it starts then (a later start
        // waited for something else: a stall, a fault, the trace's sampling of steps).
        chain_end = std::max(chain_end, s.end_s);
        if (i + 1 < steps.size() && std::abs(steps[i + 1].start_s - chain_end) <= tolerance_s * std::max(1.0, std::abs(chain_end)))
            p.next_step_index = static_cast<std::int32_t>(i + 1);
        path.push_back(p);
    }
    return path;
}

}  // namespace skyfabric::analysis
