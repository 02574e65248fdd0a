#include <skyfabric/workloads/repeated_sum.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
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

double add_sequence_repeatedly(double acc, std::span<const double> seq, std::int64_t times) {
    if (seq.size() == 1) return add_repeatedly(acc, seq.front(), times);
    const auto round = [seq](double a) {
        for (const double b : seq) a += b;
        return a;
    };
    bool plain = seq.empty() || !(acc >= 0.0) || !std::isfinite(acc);
    for (const double b : seq) plain = plain || !(b > 0.0) || !std::isfinite(b);
    if (plain) {
        for (std::int64_t r = 0; r < times; ++r) acc = round(acc);
        return acc;
    }
    // Within a binade of ulp u every addition adds a fixed multiple of u, except a round-half-even
    // tie, whose increment depends on acc's last bit; after a tie acc is even, so a round that has
    // ties ends on a last bit set by its own additions alone. Two rounds in a row inside one binade:
    // the second began where every further round there will, so each adds what it added.
    bool settled = false;  // the previous round lay inside the binade acc is in
    while (times > 0) {
        const double start = acc;
        acc = round(acc);
        --times;
        const int e = exponent_of(start);
        const bool inside = start > 0.0 && e >= -1022 && e <= 1022 && std::isfinite(acc) && exponent_of(acc) == e;
        if (!inside || !settled) {
            settled = inside;
            continue;
        }
        const double d = acc - start;  // exact: both on the binade's grid
        if (d == 0.0) break;           // every addition absorbed: acc stays
        const double top = power_of_two(e + 1);
        const double u = power_of_two(e - 52);
        const auto room = static_cast<std::int64_t>((top - acc) / u);  // exact integers
        const auto step = static_cast<std::int64_t>(d / u);
        const std::int64_t j = std::min(times, (room - 1) / step);   // rounds that end below top
        acc += static_cast<double>(j * step) * u;                    // on the grid, below top: exact
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
    // An accumulator fed once per round: closed form. Fed several times per round: its entries in
    // list order, the sequence repeated in closed form too (other accumulators do not interact);
    // each such sequence is gathered into one buffer, at a place kept per accumulator.
    thread_local std::vector<std::int32_t> next_slot;  // per accumulator: −1, or where its next entry goes
    thread_local std::vector<double> sequences;
    thread_local std::vector<std::pair<std::int32_t, std::int32_t>> shared;  // (accumulator, first slot), first-fed order
    if (next_slot.size() < acc.size()) next_slot.resize(acc.size(), -1);
    shared.clear();
    sequences.clear();
    // A uniform pattern (a ring's phase: every link the same bytes, from the same start) asks the
    // same sum over and over: the last one is kept (compared bit for bit, so −0 and NaN are not
    // mistaken for 0 and themselves).
    std::uint64_t last_acc = 0, last_b = 0;
    double last_sum = 0.0;
    bool have_last = false;
    for (const auto& [e, b] : entries) {
        const auto i = e >> shift;
        if (count[i] != 1) {
            if (next_slot[i] < 0) {
                next_slot[i] = static_cast<std::int32_t>(sequences.size());
                shared.emplace_back(i, next_slot[i]);
                sequences.resize(sequences.size() + static_cast<std::size_t>(count[i]));
            }
            sequences[static_cast<std::size_t>(next_slot[i]++)] = b;
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
    // The same kept for sequences: a ring's phase split over several paths feeds many links alike.
    std::span<const double> last_sequence;
    have_last = false;
    for (const auto& [i, first] : shared) {
        const std::span<const double> sequence(sequences.data() + first, static_cast<std::size_t>(count[i]));
        next_slot[i] = -1;
        const auto acc_bits = std::bit_cast<std::uint64_t>(acc[i]);
        const auto same_bits = [](std::span<const double> x, std::span<const double> y) {
            return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
        };
        if (!have_last || acc_bits != last_acc || !same_bits(sequence, last_sequence)) {
            last_acc = acc_bits;
            last_sequence = sequence;
            last_sum = add_sequence_repeatedly(acc[i], sequence, times);
            have_last = true;
        }
        acc[i] = last_sum;
    }
    for (const auto& [e, b] : entries) count[e >> shift] = 0;
}

}  // namespace skyfabric::workloads
