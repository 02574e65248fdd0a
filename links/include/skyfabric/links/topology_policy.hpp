#pragma once
// Time-varying topology: which satellite pairs get a link at each step.
//
// Candidates come from the k-d tree (physics::k_nearest_neighbours), so a step costs
// O(N log N); the policy then picks links greedily under the terminal limit:
//  * nearest_k    — shortest candidates first (each satellite ends up with up to k of its
//                   nearest partners that also have a free terminal), re-evaluated every step;
//  * max_capacity — highest budget capacity first (greedy maximum-weight b-matching, a
//                   1/2-approximation), ties broken by distance;
//  * lattice      — the nearest_k choice of the first step, frozen; those pairs go down
//                   out of range and come back when in range again.
// Hysteresis, so links do not flap: an existing link is kept out to range·(1+h) while a
// new one needs ≤ range, and an existing link ranks as if it were shorter by (1+h)
// (capacity higher by (1+h)) when terminals are contested.

#include <skyfabric/links/budget.hpp>
#include <skyfabric/links/terminals.hpp>
#include <skyfabric/links/topology.hpp>
#include <skyfabric/physics/enum_names.hpp>

#include <Eigen/Core>

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace skyfabric::links {

enum class TopologyPolicy : std::uint8_t { lattice, nearest_k, max_capacity };
// The scenario key's values, in the order its messages list them (not the values' order).
inline constexpr auto topology_policy_names = physics::enum_names<TopologyPolicy>({
    {TopologyPolicy::nearest_k, "nearest_k"},
    {TopologyPolicy::lattice, "lattice"},
    {TopologyPolicy::max_capacity, "max_capacity"},
});

// nullopt for a name not in the table.
inline std::optional<TopologyPolicy> topology_policy_from_name(std::string_view name) {
    return topology_policy_names.value(name);
}
inline std::string_view to_string(TopologyPolicy policy) { return topology_policy_names.name(policy); }

struct TopologyParameters {
    TopologyPolicy policy = TopologyPolicy::nearest_k;
    TerminalParameters terminals{};
    int neighbours_k = 0;              // links wanted per satellite; 0 = terminals_per_satellite
    int candidates_per_satellite = 0;  // k-d tree neighbours examined; 0 = 2·k
    double hysteresis_fraction = 0.1;  // h above
    bool initial_links_acquired = true;  // links of the first step carry traffic at once
    OpticalTerminalParameters optics{};  // budget used for capacity, margin, range
    bool operator==(const TopologyParameters&) const = default;
};

// Keeps the previous topology so it can apply hysteresis, re-acquisition and report events.
class TopologyBuilder {
public:
    explicit TopologyBuilder(const TopologyParameters& parameters);

    // Topology at time_s for these positions (any one Cartesian frame, metres). Appends the
    // link events of this step to `events` (up, down_range, down_reassigned, reacquired).
    // Calls must come in non-decreasing time; a change in satellite count starts afresh.
    Topology update(double time_s, std::span<const Eigen::Vector3d> positions_m, std::vector<LinkEvent>& events);

    const Topology& current() const { return current_; }
    const LinkBudgetModel& budget_model() const { return model_; }
    double range_m() const { return range_m_; }
    void reset();

private:
    struct State {
        std::int32_t source, target;
        double up_since_s;
        bool acquiring;
    };
    TopologyParameters p_;
    LinkBudgetModel model_;
    double range_m_ = 0.0;
    int k_ = 0;
    bool started_ = false;
    Topology current_;
    std::vector<State> state_;                                // sorted by (source, target)
    std::vector<std::pair<std::int32_t, std::int32_t>> lattice_pairs_;  // frozen (lattice policy)
};

// One-shot helper: the topology a fresh builder gives for one set of positions.
Topology build_topology(std::span<const Eigen::Vector3d> positions_m, const TopologyParameters& parameters,
                        double time_s = 0.0);

}  // namespace skyfabric::links
