#pragma once
// Counter-based random numbers: Philox-4x32-10 (Salmon, Moraes, Dror & Shaw, "Parallel
// random numbers: as easy as 1, 2, 3", SC'11; Random123). A draw is a pure function of
// (key, counter): no state, no order dependence, so a CPU loop and a CUDA thread asked for
// the same (seed, stream, counter) get the same bits. Header-only; every function is
// SKYFABRIC_HD (host + device under nvcc, plain inline otherwise) and uses only integer
// arithmetic and one exactly-rounded int->double conversion, so results are bit-identical
// on every backend.
//
// Convention used across skyfabric: key = 64-bit seed (split in two 32-bit words),
// counter = {index low, index high, stream low, stream high} with a 64-bit draw index and
// a 64-bit stream id (e.g. trial, satellite, purpose packed by the caller).

#include <cstdint>

#ifndef SKYFABRIC_HD
#if defined(__CUDACC__)
#define SKYFABRIC_HD __host__ __device__
#else
#define SKYFABRIC_HD
#endif
#endif

namespace skyfabric::physics::rng {

struct Philox4x32 {
    std::uint32_t v[4];
};

// High and low 32 bits of a 32x32 -> 64-bit product.
SKYFABRIC_HD inline void philox_mulhilo(std::uint32_t a, std::uint32_t b, std::uint32_t& hi, std::uint32_t& lo) {
    const std::uint64_t p = static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b);
    hi = static_cast<std::uint32_t>(p >> 32);
    lo = static_cast<std::uint32_t>(p);
}

// Philox-4x32 with 10 rounds. Known answers (Random123 kat_vectors) are in the tests.
SKYFABRIC_HD inline Philox4x32 philox4x32_10(Philox4x32 ctr, std::uint32_t key0, std::uint32_t key1) {
    constexpr std::uint32_t m0 = 0xD2511F53u;
    constexpr std::uint32_t m1 = 0xCD9E8D57u;
    constexpr std::uint32_t w0 = 0x9E3779B9u;  // golden ratio
    constexpr std::uint32_t w1 = 0xBB67AE85u;  // sqrt(3) - 1
    for (int round = 0; round < 10; ++round) {
        if (round > 0) {
            key0 += w0;
            key1 += w1;
        }
        std::uint32_t hi0, lo0, hi1, lo1;
        philox_mulhilo(m0, ctr.v[0], hi0, lo0);
        philox_mulhilo(m1, ctr.v[2], hi1, lo1);
        const Philox4x32 next{{hi1 ^ ctr.v[1] ^ key0, lo1, hi0 ^ ctr.v[3] ^ key1, lo0}};
        ctr = next;
    }
    return ctr;
}

// splitmix64 finaliser (Steele, Lea & Flood 2014): a bijective 64-bit mixer, used here to
// derive independent sub-seeds from one scenario seed.
SKYFABRIC_HD inline std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// Sub-seed for one purpose (e.g. a fixed tag per model) of a scenario seed.
SKYFABRIC_HD inline std::uint64_t derive_seed(std::uint64_t scenario_seed, std::uint64_t purpose_tag) {
    return splitmix64(scenario_seed ^ splitmix64(purpose_tag + 0x243F6A8885A308D3ull));
}

// 128 random bits for (seed, stream, index).
SKYFABRIC_HD inline Philox4x32 random_block(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
    const Philox4x32 ctr{{static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32),
                          static_cast<std::uint32_t>(stream), static_cast<std::uint32_t>(stream >> 32)}};
    return philox4x32_10(ctr, static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
}

// Uniform in (0, 1] from 53 random bits (never 0, so -log(u) is finite).
SKYFABRIC_HD inline double unit_from_bits53(std::uint32_t hi, std::uint32_t lo) {
    const std::uint64_t bits = ((static_cast<std::uint64_t>(hi) << 32) | lo) >> 11;
    return (static_cast<double>(bits) + 1.0) * (1.0 / 9007199254740992.0);  // 2^-53
}

// Uniform in [0, 1) from 32 random bits.
SKYFABRIC_HD inline double unit_from_bits32(std::uint32_t x) {
    return static_cast<double>(x) * (1.0 / 4294967296.0);  // 2^-32
}

// One uniform (0, 1] for (seed, stream, index).
SKYFABRIC_HD inline double uniform01(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
    const Philox4x32 b = random_block(seed, stream, index);
    return unit_from_bits53(b.v[0], b.v[1]);
}

}  // namespace skyfabric::physics::rng
