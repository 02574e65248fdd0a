#pragma once
// Storage of the nonlinear propagator's blocks: the chief (entity 0) and up to chunk_capacity
// satellites' ECI offsets from it, structure of arrays: component c (x, y, z, vx, vy, vz) of entity e at
// [c * stride + e], so the right-hand side, the stage sums and the snapshot run over contiguous arrays.
#include <Eigen/Core>

#include <cmath>
#include <cstddef>
#include <new>
#include <vector>

namespace skyfabric::physics::detail {

// Satellites per independently integrated block (each block carries its own copy of the chief, which
// its offsets are integrated about; the snapshot puts every block's offsets on block 0's copy).
// Fixed, so results do not depend on the number of threads.
constexpr std::size_t chunk_capacity = 128;

// Storage aligned to 64 bytes, with every component row a multiple of 8 doubles long: the vector
// loops then load and store whole cache lines instead of splitting one access in two.
template <class T>
struct CacheLineAllocator {
    using value_type = T;
    static constexpr std::align_val_t alignment{64};
    CacheLineAllocator() = default;
    template <class U>
    CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}
    T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), alignment)); }
    void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, alignment); }
    template <class U>
    bool operator==(const CacheLineAllocator<U>&) const noexcept { return true; }
};
using AlignedDoubles = std::vector<double, CacheLineAllocator<double>>;

// Where entity e's components live in a block's arrays.
struct BlockLayout {
    std::size_t first = 0;  // global index of the block's first satellite
    std::size_t count = 0;
    std::size_t stride = 0;  // entries per component: count + 1, rounded up to whole cache lines
    std::size_t len = 0;     // 6 * stride

    explicit BlockLayout(std::size_t satellites)
        : count(satellites), stride((satellites + 1 + 7) & ~std::size_t{7}), len(6 * stride) {}

    Eigen::Vector3d pos(const AlignedDoubles& s, std::size_t e) const {
        return {s[e], s[stride + e], s[2 * stride + e]};
    }
    Eigen::Vector3d vel(const AlignedDoubles& s, std::size_t e) const {
        return {s[3 * stride + e], s[4 * stride + e], s[5 * stride + e]};
    }
    void set(AlignedDoubles& s, std::size_t e, const Eigen::Vector3d& r, const Eigen::Vector3d& v) const {
        for (std::size_t c = 0; c < 3; ++c) {
            s[c * stride + e] = r[static_cast<Eigen::Index>(c)];
            s[(c + 3) * stride + e] = v[static_cast<Eigen::Index>(c)];
        }
    }

    Eigen::Vector3d pos_of(const double* s, std::size_t e) const {
        return {s[e], s[stride + e], s[2 * stride + e]};
    }

    // Global index of the first satellite with a non-finite entry in s (the chief counts as the
    // block's first satellite), or -1.
    long long first_bad(const double* s) const {
        for (std::size_t c = 0; c < 6; ++c) {
            for (std::size_t e = 0; e <= count; ++e) {
                if (!std::isfinite(s[c * stride + e])) {
                    return static_cast<long long>(e == 0 ? first : first + e - 1);
                }
            }
        }
        return -1;
    }
};

}  // namespace skyfabric::physics::detail
