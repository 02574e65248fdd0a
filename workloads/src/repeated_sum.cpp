#include <skyfabric/workloads/repeated_sum.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace skyfabric::workloads {

namespace {

// The binary exponent of a positive finite double from its bits: ilogb for normal numbers (a libm
// call that was a few per cent of a 10,005-satellite orbit), −1023 for every subnormal, which the
// closed form below never uses (it goes one addition at a time under 2^−1022).
int exponent_of(double x) { return static_cast<int>((std::bit_cast<std::uint64_t>(x) >> 52) & 0x7ff) - 1023; }

// 2^k, exactly.
double power_of_two(int k) {
    return k >= -1022 && k <= 1023 ? std::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52) : std::ldexp(1.0, k);
}

}  // namespace

double add_repeatedly(double acc, double b, std::int64_t times) {
    if (!(acc >= 0.0) || !(b > 0.0) || !std::isfinite(acc) || !std::isfinite(b)) {
        for (std::int64_t i = 0; i < times; ++i) acc += b;
        return acc;
    }
    while (times > 0) {
        const double next = acc + b;
        --times;
        const bool same_binade = acc > 0.0 && exponent_of(next) == exponent_of(acc);
        acc = next;
        if (!same_binade || times == 0 || !std::isfinite(acc)) continue;
        // acc and acc + b share a binade of ulp u: acc is on the grid of u, and even on it
        // if that step was a tie, so every further step adds the same d while below top.
        const double d = (acc + b) - acc;  // exact
        if (d == 0.0) break;               // b is absorbed: acc stays
        const int e = exponent_of(acc);
        // Only for normal acc below the top binade: there the grid's top (2^1024) is not finite, and
        // below 2^-1022 the ulp is not 2^(e-52); such sums go on one addition at a time.
        if (e < -1022 || e > 1022) continue;
        const double top = power_of_two(e + 1);
        const double u = power_of_two(e - 52);
        if (acc + d >= top) continue;
        const auto room = static_cast<std::int64_t>((top - acc) / u);  // exact integers
        const auto step = static_cast<std::int64_t>(d / u);
        const std::int64_t j = std::min(times, (room - 1) / step);
        acc += static_cast<double>(j * step) * u;  // on the grid, below top: exact
        times -= j;
    }
    return acc;
}

void accumulate_repeated(std::span<const std::pair<std::int32_t, double>> entries, std::int64_t times,
                         int shift, std::span<double> acc, std::vector<std::int32_t>& count) {
    if (times <= 0) return;
    if (times == 1) {
        for (const auto& [e, b] : entries) acc[e >> shift] += b;
        return;
    }
    if (count.size() < acc.size()) count.resize(acc.size(), 0);
    for (const auto& [e, b] : entries) ++count[e >> shift];
    // An accumulator fed once per round: closed form. Fed several times per round: the
    // rounds one by one, its entries in order (other accumulators do not interact).
    thread_local std::vector<std::pair<std::int32_t, double>> shared;  // in list order
    shared.clear();
    // A uniform pattern (a ring's phase: every link the same bytes, from the same start) asks the
    // same sum over and over: the last one is kept (compared bit for bit, so −0 and NaN are not
    // mistaken for 0 and themselves).
    std::uint64_t last_acc = 0, last_b = 0;
    double last_sum = 0.0;
    bool have_last = false;
    for (const auto& [e, b] : entries) {
        const auto i = e >> shift;
        if (count[i] != 1) {
            shared.emplace_back(i, b);
            continue;
        }
        const auto acc_bits = std::bit_cast<std::uint64_t>(acc[i]), b_bits = std::bit_cast<std::uint64_t>(b);
        if (!have_last || acc_bits != last_acc || b_bits != last_b) {
            last_acc = acc_bits;
            last_b = b_bits;
            last_sum = add_repeatedly(acc[i], b, times);
            have_last = true;
        }
        acc[i] = last_sum;
    }
    for (std::int64_t r = 0; !shared.empty() && r < times; ++r)
        for (const auto& [i, b] : shared) acc[i] += b;
    for (const auto& [e, b] : entries) count[e >> shift] = 0;
}

}  // namespace skyfabric::workloads
