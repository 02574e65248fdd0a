// Repeated additions in closed form (repeated_sum.hpp) against the loops they replace: acc + b + b + …,
// a sequence added round after round, and accumulators fed from a list of entries, each bit for bit.
#include <bit>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <skyfabric/workloads/repeated_sum.hpp>

namespace sw = skyfabric::workloads;

TEST(RepeatedSum, ClosedFormsAreBitExactAgainstTheLoops) {
    // add_repeatedly against the loop it replaces: sums starting at zero and elsewhere,
    // increments that tie (halves of an ulp), that are absorbed, and long runs.
    std::vector<double> bs{1.0, 0.1, 3.0, 1e9 / 7.0, 2.5e-7, 1.0 + std::ldexp(1.0, -52), 0.75,
                           std::ldexp(1.0, -30) * 3.0, 123456789.123456789, 6.02e23 / 9.0};
    std::vector<double> starts{0.0, 1.0, 0.3, 1e6, 1e15, 7.0, std::ldexp(1.0, 60), 5e-8};
    // Subnormal and near-overflow sums too (the binade arithmetic reads exponents off the bits).
    bs.push_back(std::ldexp(3.0, -1074));
    starts.push_back(std::ldexp(5.0, -1074));
    starts.push_back(std::ldexp(1.0, -1022));
    starts.push_back(std::ldexp(1.9, 1023));
    std::uint64_t x = 88172645463325252ULL;
    for (int i = 0; i < 40; ++i) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        bs.push_back(std::ldexp(1.0 + static_cast<double>(x % 1000003) / 1000003.0, static_cast<int>(x % 60) - 30));
    }
    for (double b : bs)
        for (double a : starts)
            for (std::int64_t times : {0, 1, 2, 3, 5, 17, 1000, 40000}) {
                double want = a;
                for (std::int64_t i = 0; i < times; ++i) want += b;
                EXPECT_EQ(sw::add_repeatedly(a, b, times), want) << a << " + " << b << " × " << times;
            }
    // A sequence added round after round (an edge several paths of a phase cross) against its loop:
    // sequences of 2-5 of the increments above, with half-ulp ties at 1 (2^-53, 3·2^-53) among them
    // so that a round's last bit depends on the one before, and a zero and a negative one (taken
    // addition by addition).
    const std::vector<double> ties{std::ldexp(1.0, -53), std::ldexp(3.0, -53), std::ldexp(5.0, -54)};
    std::vector<double> pool = bs;
    pool.insert(pool.end(), ties.begin(), ties.end());
    for (int c = 0; c < 300; ++c) {
        std::vector<double> seq;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const auto m = 2 + static_cast<std::size_t>(x % 4);
        for (std::size_t k = 0; k < m; ++k) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            seq.push_back(c % 3 == 0 ? ties[x % ties.size()] * static_cast<double>(1 + x % 3) : pool[x % pool.size()]);
        }
        if (c == 7) seq[1] = 0.0;
        if (c == 8) seq[0] = -0.25;
        for (double a : {0.0, 1.0, 0.3, 1e6, 7.0, std::ldexp(1.0, 60)})
            for (std::int64_t times : {0, 1, 2, 3, 4, 9, 1000, 40000}) {
                double want = a;
                for (std::int64_t i = 0; i < times; ++i)
                    for (double b : seq) want += b;
                EXPECT_EQ(std::bit_cast<std::uint64_t>(sw::add_sequence_repeatedly(a, seq, times)),
                          std::bit_cast<std::uint64_t>(want))
                    << "case " << c << ": " << a << " × " << times;
            }
    }
    // Several entries per accumulator (edges 4 and 5 share link 2 with shift 1).
    const std::vector<std::pair<std::int32_t, double>> entries{{4, 0.1}, {1, 1e9 / 3}, {5, 0.7}, {8, 2.5}, {4, 1e-3}};
    for (std::int64_t times : {1, 2, 9, 3001}) {
        std::vector<double> want(8, 1.0), got(8, 1.0);
        std::vector<std::int32_t> count;
        for (std::int64_t r = 0; r < times; ++r)
            for (const auto& [e, b] : entries) want[e >> 1] += b;
        sw::accumulate_repeated(entries, times, 1, got, count);
        EXPECT_EQ(got, want) << times;
        for (auto c : count) EXPECT_EQ(c, 0);
    }
    // Shared accumulators fed alike (one sum reused) and not: 0 and 2 the same sequence from the same
    // start, 3 the same sequence from another, 1 the same entries in another order, 4 one entry fewer.
    const std::vector<std::pair<std::int32_t, double>> paths{{0, 0.1}, {2, 0.1}, {1, 0.2}, {3, 0.1}, {4, 0.1},
                                                             {0, 0.2}, {1, 0.1}, {2, 0.2}, {3, 0.2}, {4, 0.2},
                                                             {0, 1e-17}, {2, 1e-17}, {3, 1e-17}, {1, 1e-17}};
    for (std::int64_t times : {2, 5, 40000}) {
        std::vector<double> want{1.0, 1.0, 1.0, 3.0, 1.0}, got = want;
        std::vector<std::int32_t> count;
        for (std::int64_t r = 0; r < times; ++r)
            for (const auto& [e, b] : paths) want[e] += b;
        sw::accumulate_repeated(paths, times, 0, got, count);
        for (std::size_t i = 0; i < want.size(); ++i)
            EXPECT_EQ(std::bit_cast<std::uint64_t>(got[i]), std::bit_cast<std::uint64_t>(want[i])) << i << " × " << times;
    }
    // A ring's uniform pattern, where one sum is reused: the same increment on accumulators that
    // start alike, apart, at -0 and at +0, and a different increment between them.
    const std::vector<std::pair<std::int32_t, double>> uniform{{0, 0.1}, {1, 0.1}, {2, 0.1}, {3, 0.1}, {4, 0.3},
                                                               {5, 0.1}, {6, 0.1}, {7, 0.1}};
    const std::vector<double> starts_alike{1.0, 1.0, 2.0, 1.0, 1.0, 1.0, -0.0, 0.0};
    for (std::int64_t times : {2, 7, 40000}) {
        std::vector<double> want = starts_alike, got = starts_alike;
        std::vector<std::int32_t> count;
        for (std::int64_t r = 0; r < times; ++r)
            for (const auto& [e, b] : uniform) want[e] += b;
        sw::accumulate_repeated(uniform, times, 0, got, count);
        for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(std::bit_cast<std::uint64_t>(got[i]), std::bit_cast<std::uint64_t>(want[i])) << i << " × " << times;
    }
}
