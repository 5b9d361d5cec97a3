// Pieces shared by the NEON quantized-GEMM kernels (qgemm_neon.cpp,
// qgemm_neon_dot.cpp, qgemm_neon_i8mm.cpp), among them the K layouts' quad
// kernel QuadK, which each file instantiates with its own group dot product.
// Internal linkage: each kernel file compiles them with its own target flags.
//
// The loops over sub-chunks, tokens and row pairs in these kernels carry
// `#pragma GCC unroll`: their trip counts are constants, but GCC at -O2 keeps
// them as loops, and an array indexed by a loop variable (the unpacked
// weights wq[8], the per-token sums) then lives on the stack: every group
// stored its unpacked weights and loaded them back. Unrolled, one group of one
// quad and one token is a straight block of 46 instructions on Cortex-A76
// (bench/mca/mca_arm.py), the weights stay in registers.
#pragma once

#if defined(__aarch64__) || (defined(__arm__) && defined(__ARM_NEON))
#include <arm_neon.h>

#include <cstdint>
#include <cstring>

#include "ops/qgemm.h"
#include "quant/blocks.h"
#include "quant/packed.h"

namespace ember {
namespace {

inline float32x4_t LoadF16x4(const uint8_t* p) {
  return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(reinterpret_cast<const uint16_t*>(p))));
}

// One group's integer sums of one token (half[0]: columns 0-15, half[1]:
// 16-31) into acc, as qgemm_ref.cpp: the offset taken off the sum, then the
// scales, and the mins where stored.
template <PackedLayout kL, bool kHasMin>
inline float32x4_t AddGroup(float32x4_t acc, const int32x4_t half[2], float32x4_t dw,
                            float32x4_t mw, const QuantizedActs& a, int64_t t, int64_t g) {
  int32x4_t isum = vaddq_s32(half[0], half[1]);
  if (PackedOffset(kL) != 0 && !kHasMin)
    isum = vaddq_s32(isum, vdupq_n_s32(PackedOffset(kL) * a.qsum_row(t)[g]));
  acc = vfmaq_f32(acc, vcvtq_f32_s32(isum), vmulq_n_f32(dw, a.d_row(t)[g]));
  if (kHasMin) acc = vfmaq_f32(acc, mw, vdupq_n_f32(a.sm_row(t)[g]));
  return acc;
}

// Stores 4 row results at y[row0 ...], dropping rows past n_rows.
inline void StoreRows4(float* y, float32x4_t v, int64_t row0, int64_t n_rows) {
  const int64_t left = n_rows - row0;
  if (left >= 4) {
    vst1q_f32(y + row0, v);
  } else if (left > 0) {
    float tmp[4];
    vst1q_f32(tmp, v);
    std::memcpy(y + row0, tmp, static_cast<size_t>(left) * sizeof(float));
  }
}

// Q5x16's high bits of unpacked vector v, one quad (rows 4q..4q+3), as 16 in
// each marked byte: `plane` is the quad's 16 bytes of the group's high-bit
// plane (bytes 16q..16q+15), whose bit v belongs to vector v (quant/packed.h).
// One shift by register (left by 4 - v; a negative count shifts right) and a
// mask, for any v; the plane is loaded once per quad for all 8 vectors.
inline uint8x16_t HighBits(uint8x16_t plane, int v) {
  return vandq_u8(vshlq_u8(plane, vdupq_n_s8(static_cast<int8_t>(4 - v))), vdupq_n_u8(16));
}

// Q6Kx16's top 2 bits of unpacked vector 4c + k from the quad's 16 bytes of
// crumb vector c: bits 2k, 2k+1 moved to bits 4-5.
template <int K>
inline uint8x16_t CrumbsQuad(uint8x16_t cr) {
  const uint8x16_t mask = vdupq_n_u8(0x30);
  if (K == 0) return vandq_u8(vshlq_n_u8(cr, 4), mask);
  if (K == 1) return vandq_u8(vshlq_n_u8(cr, 2), mask);
  if (K == 2) return vandq_u8(cr, mask);
  return vandq_u8(vshrq_n_u8(cr, 2), mask);
}

// IQ4x16's 16 indices (0..15) -> the grid's int8 values (kIq4Grid, -127..113):
// one table lookup (AArch64 tbl; ARMv7's vtbl takes 8 indices at a time from a
// table of up to 32 bytes, so two).
inline int8x16_t Iq4Lookup(uint8x16_t index) {
#if defined(__aarch64__)
  return vqtbl1q_s8(vld1q_s8(kIq4Grid), index);
#else
  const int8x8x2_t grid = {{vld1_s8(kIq4Grid), vld1_s8(kIq4Grid + 8)}};
  return vcombine_s8(vtbl2_s8(grid, vreinterpret_s8_u8(vget_low_u8(index))),
                     vtbl2_s8(grid, vreinterpret_s8_u8(vget_high_u8(index))));
#endif
}

// Unpacked vector V of a quad of a Q3Kx16 / Q2Kx16 group: the quad's 16
// bytes of crumb vector V / 4 moved down from bits 2 (V % 4), and for Q3Kx16
// bit V of its 16 bytes of the high-bit plane moved to bit 2 (quant/packed.h).
template <int V, bool kQ3>
inline int8x16_t UnpackK16(uint8x16_t cr, uint8x16_t hb) {
  uint8x16_t q = cr;
  if constexpr (V % 4 != 0) q = vshrq_n_u8(cr, 2 * (V % 4));
  q = vandq_u8(q, vdupq_n_u8(3));
  if constexpr (kQ3) {
    uint8x16_t h = hb;
    if constexpr (V < 2) h = vshlq_n_u8(hb, 2 - V);
    if constexpr (V > 2) h = vshrq_n_u8(hb, V - 2);
    q = vorrq_u8(q, vandq_u8(h, vdupq_n_u8(4)));
  }
  return vreinterpretq_s8_u8(q);
}

// The weights of quad q of a Q3Kx16 / Q2Kx16 group at gq (its quants only):
// wq[v] = columns 4v..4v+3 of the 4 rows, 0..7 / 0..3.
template <bool kQ3>
inline void LoadQuadWeightsK16(const uint8_t* gq, int q, int8x16_t wq[8]) {
  const uint8x16_t cr0 = vld1q_u8(gq + 16 * q), cr1 = vld1q_u8(gq + 64 + 16 * q);
  const uint8x16_t hb = kQ3 ? vld1q_u8(gq + kQ3HighOffset + 16 * q) : vdupq_n_u8(0);
  wq[0] = UnpackK16<0, kQ3>(cr0, hb);
  wq[1] = UnpackK16<1, kQ3>(cr0, hb);
  wq[2] = UnpackK16<2, kQ3>(cr0, hb);
  wq[3] = UnpackK16<3, kQ3>(cr0, hb);
  wq[4] = UnpackK16<4, kQ3>(cr1, hb);
  wq[5] = UnpackK16<5, kQ3>(cr1, hb);
  wq[6] = UnpackK16<6, kQ3>(cr1, hb);
  wq[7] = UnpackK16<7, kQ3>(cr1, hb);
}

// The weights of quad q (rows 4q..4q+3) of one TileGroup at gp: wq[s] holds
// columns 4s..4s+3 of the group for the 4 rows (int4 and int5 unpacked to
// bytes, 0..15 and 0..31, non-negative as int8; IQ4x16's indices
// looked up in the grid, signed int8 -127..113; sdot, smmla and vmull are
// signed, so every layout multiplies the same way).
template <PackedLayout kL>
inline void LoadQuadWeights(const uint8_t* gp, int q, int8x16_t wq[8]) {
  if (kL == PackedLayout::kQ8x16) {
#pragma GCC unroll 8
    for (int s = 0; s < 8; ++s)
      wq[s] = vld1q_s8(reinterpret_cast<const int8_t*>(gp + 64 * s + 16 * q));
  } else {
    uint8x16_t plane = vdupq_n_u8(0);  // read only for Q5x16
    if constexpr (kL == PackedLayout::kQ5x16) plane = vld1q_u8(gp + 256 + 16 * q);
#pragma GCC unroll 8
    for (int s = 0; s < 4; ++s) {
      const uint8x16_t v = vld1q_u8(gp + 64 * s + 16 * q);
      uint8x16_t lo = vandq_u8(v, vdupq_n_u8(0x0F)), hi = vshrq_n_u8(v, 4);
      if (kL == PackedLayout::kQ5x16) {
        lo = vorrq_u8(lo, HighBits(plane, 2 * s));
        hi = vorrq_u8(hi, HighBits(plane, 2 * s + 1));
      }
      if (kL == PackedLayout::kIQ4x16) {
        wq[2 * s] = Iq4Lookup(lo);
        wq[2 * s + 1] = Iq4Lookup(hi);
        continue;
      }
      wq[2 * s] = vreinterpretq_s8_u8(lo);
      wq[2 * s + 1] = vreinterpretq_s8_u8(hi);
    }
  }
}

// ---- The K layouts (Q4Kx16, Q5Kx16): super-groups of 8 groups with a header.

// 4 bytes (one per row of a quad) as float lanes.
inline float32x4_t QuadBytesToFloat(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  const uint16x8_t h = vmovl_u8(vreinterpret_u8_u32(vdup_n_u32(v)));
  return vcvtq_f32_u32(vmovl_u16(vget_low_u16(h)));
}

// The layout of a K layout's group quants (Q4x16's nibbles, Q5x16's planes).
template <PackedLayout kL>
constexpr PackedLayout KQuantLayout() {
  return kL == PackedLayout::kQ5Kx16 ? PackedLayout::kQ5x16 : PackedLayout::kQ4x16;
}

// Rows 4q..4q+3 of a tile of a K layout for MR tokens, as qgemm_ref.cpp:
// per group, sd = fma(float(isum), float(sc) * d_a, sd) (the exact product sc
// * isum * d_a, rounded once) and sm = fma(float(m), dqsum, sm); per
// super-group, acc = fma(d, sd, acc), acc = fms(dmin, sm, acc).
// Dot::Sum(wq, aq) is the ISA's integer sum of one group (wq as
// LoadQuadWeights gives it, aq the token's 32 activations).
template <int MR, PackedLayout kL, class Dot>
void QuadK(const PackedMatrix& w, int64_t tile, int q, const QuantizedActs& a, int64_t t0, float* y,
           int64_t ldy) {
  constexpr size_t kHeader = KHeaderBytes(kL), kGroup = KGroupBytes(kL);
  float32x4_t acc[MR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) acc[i] = vdupq_n_f32(0.0f);
  const uint8_t* sg = w.tile(tile);
  const int64_t n_supers = w.n_groups / kSuperGroups;
  for (int64_t s = 0; s < n_supers; ++s, sg += w.super_bytes) {
    float32x4_t sd[MR], sm[MR];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) sd[i] = sm[i] = vdupq_n_f32(0.0f);
    for (int jg = 0; jg < kSuperGroups; ++jg) {
      const int64_t g = s * kSuperGroups + jg;
      int8x16_t wq[8];
      LoadQuadWeights<KQuantLayout<kL>()>(sg + kHeader + jg * kGroup, q, wq);
      const float32x4_t sc = QuadBytesToFloat(sg + kKScaleOffset + 16 * jg + 4 * q);
      const float32x4_t m = QuadBytesToFloat(sg + kKMinOffset + 16 * jg + 4 * q);
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) {
        const int32x4_t isum = Dot::Sum(wq, a.q_row(t0 + i) + g * 32);
        sd[i] = vfmaq_f32(sd[i], vcvtq_f32_s32(isum), vmulq_n_f32(sc, a.d_row(t0 + i)[g]));
        sm[i] = vfmaq_f32(sm[i], m, vdupq_n_f32(a.dqsum_row(t0 + i)[g]));
      }
    }
    const float32x4_t d = LoadF16x4(sg + 8 * q), dmin = LoadF16x4(sg + kKDminOffset + 8 * q);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      acc[i] = vfmaq_f32(acc[i], d, sd[i]);
      acc[i] = vfmsq_f32(acc[i], dmin, sm[i]);  // acc - dmin * sm, one rounding
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
    StoreRows4(y + (t0 + i) * ldy, acc[i], tile * kTileRows + 4 * q, w.n_rows);
}

// Every quad of tiles [tile_begin, tile_end) for all tokens, kMr (2 or 4) at
// a time and the rest in one call.
template <PackedLayout kL, class Dot, int kMr>
void DriveK(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end, const QuantizedActs& a,
            float* y, int64_t ldy) {
  static_assert(kMr == 2 || kMr == 4);
  for (int64_t tile = tile_begin; tile < tile_end; ++tile) {
    for (int q = 0; q < 4; ++q) {
      if (tile * kTileRows + 4 * q >= w.n_rows) break;
      int64_t t = 0;
      for (; t + kMr <= a.m; t += kMr) QuadK<kMr, kL, Dot>(w, tile, q, a, t, y, ldy);
      switch (a.m - t) {
        case 1:
          QuadK<1, kL, Dot>(w, tile, q, a, t, y, ldy);
          break;
        case 2:
          QuadK<2, kL, Dot>(w, tile, q, a, t, y, ldy);
          break;
        case 3:
          QuadK<3, kL, Dot>(w, tile, q, a, t, y, ldy);
          break;
        default:
          break;
      }
    }
  }
}

// 4 bytes (one per row of a quad) as int32 lanes, sign-extended (Q3Kx16's
// scales) or not.
template <bool kSigned>
inline int32x4_t QuadBytesToInt(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  const uint8x8_t b = vreinterpret_u8_u32(vdup_n_u32(v));
  if constexpr (kSigned) return vmovl_s16(vget_low_s16(vmovl_s8(vreinterpret_s8_u8(b))));
  return vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(vmovl_u8(b))));
}

// The layouts with scales per 16 columns: Q3Kx16 and Q6Kx16 have signed
// scales and an offset that comes off each half's sum (q - 4, q - 32; as a
// left shift of qsum16 by 2 or 5), Q2Kx16 unsigned scales and mins.
template <PackedLayout kL>
constexpr bool K16HasMins() {
  return kL == PackedLayout::kQ2Kx16;
}
template <PackedLayout kL>
constexpr int K16OffsetShift() {
  return kL == PackedLayout::kQ3Kx16 ? 2 : 5;
}

// The weights of quad q of a Q6Kx16 group at gq (its quants only): wq[v] =
// columns 4v..4v+3 of the 4 rows, 0..63. The low 4 bits unpack as Q4x16's
// nibbles; vector v's top 2 bits are crumb v % 4 of crumb vector v / 4, whose
// bytes 16q..16q+15 belong to the quad.
inline void LoadQuadWeightsQ6K(const uint8_t* gq, int q, int8x16_t wq[8]) {
  LoadQuadWeights<PackedLayout::kQ4x16>(gq, q, wq);
  const uint8x16_t cr0 = vld1q_u8(gq + kQ6CrumbOffset + 16 * q);
  const uint8x16_t cr1 = vld1q_u8(gq + kQ6CrumbOffset + 64 + 16 * q);
  wq[0] = vreinterpretq_s8_u8(vorrq_u8(vreinterpretq_u8_s8(wq[0]), CrumbsQuad<0>(cr0)));
  wq[1] = vreinterpretq_s8_u8(vorrq_u8(vreinterpretq_u8_s8(wq[1]), CrumbsQuad<1>(cr0)));
  wq[2] = vreinterpretq_s8_u8(vorrq_u8(vreinterpretq_u8_s8(wq[2]), CrumbsQuad<2>(cr0)));
  wq[3] = vreinterpretq_s8_u8(vorrq_u8(vreinterpretq_u8_s8(wq[3]), CrumbsQuad<3>(cr0)));
  wq[4] = vreinterpretq_s8_u8(vorrq_u8(vreinterpretq_u8_s8(wq[4]), CrumbsQuad<0>(cr1)));
  wq[5] = vreinterpretq_s8_u8(vorrq_u8(vreinterpretq_u8_s8(wq[5]), CrumbsQuad<1>(cr1)));
  wq[6] = vreinterpretq_s8_u8(vorrq_u8(vreinterpretq_u8_s8(wq[6]), CrumbsQuad<2>(cr1)));
  wq[7] = vreinterpretq_s8_u8(vorrq_u8(vreinterpretq_u8_s8(wq[7]), CrumbsQuad<3>(cr1)));
}

// The weights of quad q of a Q3Kx16 / Q2Kx16 / Q6Kx16 group at gq.
template <PackedLayout kL>
inline void LoadQuadWeightsAnyK16(const uint8_t* gq, int q, int8x16_t wq[8]) {
  if constexpr (kL == PackedLayout::kQ6Kx16) {
    LoadQuadWeightsQ6K(gq, q, wq);
  } else {
    LoadQuadWeightsK16<kL == PackedLayout::kQ3Kx16>(gq, q, wq);
  }
}

// Rows 4q..4q+3 of a tile of Q3Kx16 / Q2Kx16 / Q6Kx16 for MR tokens, as
// qgemm_ref.cpp: per group, the halves' integer sums (Dot::Halves: columns
// 0-15, 16-31) times their scales, Q3_K's offset -4 qsum16 (Q6_K's -32
// qsum16) taken off each half first, Q2_K's mins m_b0 qsum16_0 + m_b1
// qsum16_1; sd = fma(float(isum), d_a, sd), sm the same with the mins; per
// super-group acc = fma(d, sd, acc), fms(dmin, sm, acc).
template <int MR, PackedLayout kL, class Dot>
void QuadK16(const PackedMatrix& w, int64_t tile, int q, const QuantizedActs& a, int64_t t0,
             float* y, int64_t ldy) {
  constexpr bool kQ3 = !K16HasMins<kL>();  // signed scales and an offset (Q3_K, Q6_K)
  constexpr int kShift = K16OffsetShift<kL>();
  constexpr size_t kHeader = KHeaderBytes(kL), kGroup = KGroupBytes(kL);
  constexpr size_t kScales = K16ScaleOffset(kL);
  float32x4_t acc[MR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) acc[i] = vdupq_n_f32(0.0f);
  const uint8_t* sg = w.tile(tile);
  const int64_t n_supers = w.n_groups / kSuperGroups;
  for (int64_t s = 0; s < n_supers; ++s, sg += w.super_bytes) {
    float32x4_t sd[MR], sm[MR];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) sd[i] = sm[i] = vdupq_n_f32(0.0f);
    for (int jg = 0; jg < kSuperGroups; ++jg) {
      const int64_t g = s * kSuperGroups + jg;
      int8x16_t wq[8];
      LoadQuadWeightsAnyK16<kL>(sg + kHeader + jg * kGroup, q, wq);
      int32x4_t sc0 = QuadBytesToInt<kQ3>(sg + kScales + 32 * jg + 4 * q);
      int32x4_t sc1 = QuadBytesToInt<kQ3>(sg + kScales + 32 * jg + 16 + 4 * q);
      int32x4_t m0 = vdupq_n_s32(0), m1 = vdupq_n_s32(0);
      if constexpr (!kQ3) {  // Q2_K's bytes: scale | min << 4
        m0 = vshrq_n_s32(sc0, 4);
        m1 = vshrq_n_s32(sc1, 4);
        sc0 = vandq_s32(sc0, vdupq_n_s32(0x0F));
        sc1 = vandq_s32(sc1, vdupq_n_s32(0x0F));
      }
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) {
        int32x4_t half[2];
        Dot::Halves(wq, a.q_row(t0 + i) + g * 32, half);
        const int32_t* qsum16 = a.qsum16_row(t0 + i) + 2 * g;
        const float32x4_t da = vdupq_n_f32(a.d_row(t0 + i)[g]);
        if constexpr (kQ3) {
          half[0] = vsubq_s32(half[0], vdupq_n_s32(qsum16[0] << kShift));
          half[1] = vsubq_s32(half[1], vdupq_n_s32(qsum16[1] << kShift));
        }
        const int32x4_t isum = vmlaq_s32(vmulq_s32(sc0, half[0]), sc1, half[1]);
        sd[i] = vfmaq_f32(sd[i], vcvtq_f32_s32(isum), da);
        if constexpr (!kQ3) {
          const int32x4_t msum = vmlaq_n_s32(vmulq_n_s32(m0, qsum16[0]), m1, qsum16[1]);
          sm[i] = vfmaq_f32(sm[i], vcvtq_f32_s32(msum), da);
        }
      }
    }
    const float32x4_t d = LoadF16x4(sg + 8 * q);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      acc[i] = vfmaq_f32(acc[i], d, sd[i]);
      if constexpr (!kQ3) acc[i] = vfmsq_f32(acc[i], LoadF16x4(sg + kKDminOffset + 8 * q), sm[i]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
    StoreRows4(y + (t0 + i) * ldy, acc[i], tile * kTileRows + 4 * q, w.n_rows);
}

// As DriveK, for Q3Kx16 / Q2Kx16 / Q6Kx16.
template <PackedLayout kL, class Dot, int kMr>
void DriveK16(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end, const QuantizedActs& a,
              float* y, int64_t ldy) {
  static_assert(kMr == 2 || kMr == 4);
  for (int64_t tile = tile_begin; tile < tile_end; ++tile) {
    for (int q = 0; q < 4; ++q) {
      if (tile * kTileRows + 4 * q >= w.n_rows) break;
      int64_t t = 0;
      for (; t + kMr <= a.m; t += kMr) QuadK16<kMr, kL, Dot>(w, tile, q, a, t, y, ldy);
      switch (a.m - t) {
        case 1:
          QuadK16<1, kL, Dot>(w, tile, q, a, t, y, ldy);
          break;
        case 2:
          QuadK16<2, kL, Dot>(w, tile, q, a, t, y, ldy);
          break;
        case 3:
          QuadK16<3, kL, Dot>(w, tile, q, a, t, y, ldy);
          break;
        default:
          break;
      }
    }
  }
}

}  // namespace
}  // namespace ember
#endif
