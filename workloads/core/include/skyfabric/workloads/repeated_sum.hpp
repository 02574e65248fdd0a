#pragma once
// Repeated floating-point additions done in O(log n): the sums a flow simulation would get by
// adding a phase's bytes once per repetition, to the bit, without the repetitions. Pure.

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace skyfabric::workloads {

// acc + b + b + … (`times` additions, each rounded), in O(log times) steps: within a
// binade the rounded increment is constant (after one step there, which settles a
// round-half-even tie), so each binade is crossed in one multiplication.
double add_repeatedly(double acc, double b, std::int64_t times);

// acc + b₁ + … + bₘ, the sequence `times` times over, each addition rounded: in O(m · log times)
// (rounds inside a binade add alike once the one before settled its round-half-even ties).
double add_sequence_repeatedly(double acc, std::span<const double> seq, std::int64_t times);

// acc[e >> shift] += b for every (e, b) listed, the whole list `times` times over, with
// the rounding of doing it addition by addition. `count` is scratch (zeros, as long as
// acc; left zeroed).
void accumulate_repeated(std::span<const std::pair<std::int32_t, double>> entries, std::int64_t times,
                         int shift, std::span<double> acc, std::vector<std::int32_t>& count);

}  // namespace skyfabric::workloads
