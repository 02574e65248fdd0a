#pragma once
// The snapshot of a block: every satellite's LVLH and ECI state from the chief and the ECI offsets at the
// block's output time, with AVX2 by hand where the compiler does not vectorise the interleaved stores.
#include "dop853.hpp"

#include <skyfabric/physics/frames.hpp>
#include <skyfabric/physics/propagation.hpp>

#include <Eigen/Core>

#include <array>
#include <cstddef>
#include <vector>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace skyfabric::physics::detail {

#if defined(__AVX2__)
// Four satellites' 6 components (c[i] holds component i of satellites 0–3) stored as 6 contiguous
// doubles per satellite: a 4×4 transpose of components 0–3 and a 2×4 one of 4–5, 8 stores instead of 24.
inline void store_six_by_four(double* base, __m256d c0, __m256d c1, __m256d c2, __m256d c3, __m256d c4,
                              __m256d c5) {
    const __m256d t0 = _mm256_unpacklo_pd(c0, c1), t1 = _mm256_unpackhi_pd(c0, c1);
    const __m256d t2 = _mm256_unpacklo_pd(c2, c3), t3 = _mm256_unpackhi_pd(c2, c3);
    const __m256d u0 = _mm256_unpacklo_pd(c4, c5), u1 = _mm256_unpackhi_pd(c4, c5);
    _mm256_storeu_pd(base + 0, _mm256_permute2f128_pd(t0, t2, 0x20));
    _mm_storeu_pd(base + 4, _mm256_castpd256_pd128(u0));
    _mm256_storeu_pd(base + 6, _mm256_permute2f128_pd(t1, t3, 0x20));
    _mm_storeu_pd(base + 10, _mm256_castpd256_pd128(u1));
    _mm256_storeu_pd(base + 12, _mm256_permute2f128_pd(t0, t2, 0x31));
    _mm_storeu_pd(base + 16, _mm256_extractf128_pd(u0, 1));
    _mm256_storeu_pd(base + 18, _mm256_permute2f128_pd(t1, t3, 0x31));
    _mm_storeu_pd(base + 22, _mm256_extractf128_pd(u1, 1));
}
#endif

// n satellites' ECI offsets (SoA: dx dy dz dvx dvy dvz) to LVLH rot^T (dr, dv - w x dr) and ECI
// chief + offset, each written as 6 contiguous doubles (RelativeState / CartesianState). rot holds
// the LVLH axes' ECI components column by column (r00 r10 r20 r01 …). The compiler does not
// vectorise the 6-way interleaved stores, so with AVX2 four satellites go at a time by hand; the
// scalar loop does the rest (the same arithmetic).
inline void lvlh_and_eci(const double* __restrict px, const double* __restrict py, const double* __restrict pz,
                  const double* __restrict ux, const double* __restrict uy, const double* __restrict uz,
                  double* __restrict lv, double* __restrict ec, std::size_t n, const std::array<double, 9>& rot,
                  const std::array<double, 3>& w, const std::array<double, 3>& chief_r,
                  const std::array<double, 3>& chief_v) {
    const double r00 = rot[0], r10 = rot[1], r20 = rot[2], r01 = rot[3], r11 = rot[4], r21 = rot[5], r02 = rot[6],
                 r12 = rot[7], r22 = rot[8];
    const double wx = w[0], wy = w[1], wz = w[2];
    std::size_t k = 0;
#if defined(__AVX2__)
    const auto b = [](double v) { return _mm256_set1_pd(v); };
    const __m256d R00 = b(r00), R10 = b(r10), R20 = b(r20), R01 = b(r01), R11 = b(r11), R21 = b(r21), R02 = b(r02),
                  R12 = b(r12), R22 = b(r22), WX = b(wx), WY = b(wy), WZ = b(wz);
    const __m256d CX = b(chief_r[0]), CY = b(chief_r[1]), CZ = b(chief_r[2]), CVX = b(chief_v[0]),
                  CVY = b(chief_v[1]), CVZ = b(chief_v[2]);
    const auto mul = [](__m256d x, __m256d y) { return _mm256_mul_pd(x, y); };
    const auto add = [](__m256d x, __m256d y) { return _mm256_add_pd(x, y); };
    const auto sub = [](__m256d x, __m256d y) { return _mm256_sub_pd(x, y); };
    for (; k + 4 <= n; k += 4) {
        const __m256d dx = _mm256_loadu_pd(px + k), dy = _mm256_loadu_pd(py + k), dz = _mm256_loadu_pd(pz + k);
        const __m256d Ux = _mm256_loadu_pd(ux + k), Uy = _mm256_loadu_pd(uy + k), Uz = _mm256_loadu_pd(uz + k);
        const __m256d vx = sub(Ux, sub(mul(WY, dz), mul(WZ, dy)));
        const __m256d vy = sub(Uy, sub(mul(WZ, dx), mul(WX, dz)));
        const __m256d vz = sub(Uz, sub(mul(WX, dy), mul(WY, dx)));
        store_six_by_four(lv + 6 * k, add(add(mul(R00, dx), mul(R10, dy)), mul(R20, dz)),
                          add(add(mul(R01, dx), mul(R11, dy)), mul(R21, dz)),
                          add(add(mul(R02, dx), mul(R12, dy)), mul(R22, dz)),
                          add(add(mul(R00, vx), mul(R10, vy)), mul(R20, vz)),
                          add(add(mul(R01, vx), mul(R11, vy)), mul(R21, vz)),
                          add(add(mul(R02, vx), mul(R12, vy)), mul(R22, vz)));
        store_six_by_four(ec + 6 * k, add(CX, dx), add(CY, dy), add(CZ, dz), add(CVX, Ux), add(CVY, Uy),
                          add(CVZ, Uz));
    }
#endif
    for (; k < n; ++k) {
        const double dx = px[k], dy = py[k], dz = pz[k];
        const double vx = ux[k] - (wy * dz - wz * dy), vy = uy[k] - (wz * dx - wx * dz), vz = uz[k] - (wx * dy - wy * dx);
        lv[6 * k + 0] = r00 * dx + r10 * dy + r20 * dz;
        lv[6 * k + 1] = r01 * dx + r11 * dy + r21 * dz;
        lv[6 * k + 2] = r02 * dx + r12 * dy + r22 * dz;
        lv[6 * k + 3] = r00 * vx + r10 * vy + r20 * vz;
        lv[6 * k + 4] = r01 * vx + r11 * vy + r21 * vz;
        lv[6 * k + 5] = r02 * vx + r12 * vy + r22 * vz;
        ec[6 * k + 0] = chief_r[0] + dx;
        ec[6 * k + 1] = chief_r[1] + dy;
        ec[6 * k + 2] = chief_r[2] + dz;
        ec[6 * k + 3] = chief_v[0] + ux[k];
        ec[6 * k + 4] = chief_v[1] + uy[k];
        ec[6 * k + 5] = chief_v[2] + uz[k];
    }
}

// LVLH (rot^T dr, rot^T (dv - w x dr)) and ECI (chief + offset) of every satellite of b at b.out, about
// `chief`: the one chief of the formation (block 0's copy), not b's own copy. The copies take different
// steps, so their integration errors differ (they moved pairs across blocks by up to 1 cm over a week of
// J2 free fall, 4.4-6.0 cm in issue 52's run) while each offset is integrated to well below a millimetre:
// placing every block's offsets on one chief keeps pair distances across blocks as accurate as inside one
// (tests/physics/propagation_test.cpp, PairsAcrossBlocksDriftNoMoreThanPairsInsideABlockOverAWeek).
inline void write_snapshot(const Block& b, const CartesianState& chief, FormationSnapshot& snap) {
    static_assert(sizeof(RelativeState) == 6 * sizeof(double) && sizeof(CartesianState) == 6 * sizeof(double));
    const Eigen::Matrix3d rot = lvlh_to_eci_rotation(chief);
    const Eigen::Vector3d w = chief.position_m.cross(chief.velocity_m_s) / chief.position_m.squaredNorm();
    const std::size_t S = b.stride;
    const double* o = b.out.data() + 1;  // entity 0 is the chief
    lvlh_and_eci(o, o + S, o + 2 * S, o + 3 * S, o + 4 * S, o + 5 * S,
                 snap.satellites_lvlh[b.first].position_m.data(), snap.satellites_eci[b.first].position_m.data(),
                 b.count, {rot(0, 0), rot(1, 0), rot(2, 0), rot(0, 1), rot(1, 1), rot(2, 1), rot(0, 2), rot(1, 2), rot(2, 2)},
                 {w.x(), w.y(), w.z()}, {chief.position_m.x(), chief.position_m.y(), chief.position_m.z()},
                 {chief.velocity_m_s.x(), chief.velocity_m_s.y(), chief.velocity_m_s.z()});
}

inline void lvlh_of_block(const Block& b, std::vector<RelativeState>& out) {
    const CartesianState chief = chief_of(b);
    const Eigen::Matrix3d rot = lvlh_to_eci_rotation(chief);
    const Eigen::Vector3d w = chief.position_m.cross(chief.velocity_m_s) / chief.position_m.squaredNorm();
    for (std::size_t k = 0; k < b.count; ++k) {
        const Eigen::Vector3d dr = b.pos(b.out, k + 1), dv = b.vel(b.out, k + 1);
        out[b.first + k] = {rot.transpose() * dr, rot.transpose() * (dv - w.cross(dr))};
    }
}

// Reference orbits: the satellites' initial relative states, made bounded under the full force model
// (two-body + J2 + drag at the nominal B, which the chief shares). The closed-form HCW/SS orbit of the
// initial state is not bounded there: osculating J2 terms in the initial state give along-track drifts
// of ~10 m per orbit per 500 m of offset and metre-level periodic terms, which a 5 m dead band would
// chase at ~100 m/s per year. So the drift is measured and trimmed numerically: over two orbits, fit

}  // namespace skyfabric::physics::detail
