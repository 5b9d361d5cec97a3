// Quantized GEMM on NEON with i8mm (Cortex-A510/A710/X2, Neoverse V1/N2,
// Apple M2+). smmla multiplies a 2x8 int8 block by the transpose of another
// 2x8 block into a 2x2 int32 block: two weight rows times two tokens, 8
// columns deep, i.e. 32 multiply-adds per instruction where sdot does 16.
//
// The native layout needs no change for it. For a quad of rows (4q..4q+3),
// LoadQuadWeights gives wq[s] = columns 4s..4s+3 of the four rows; zipping the
// 32-bit lanes of wq[2j] and wq[2j+1] gives [row 0: columns 8j..8j+7, row 1:
// the same] (zip1) and rows 2 and 3 (zip2): exactly smmla's 2x8 operand. Int2
// to int6 weights are 0..3 to 0..63, non-negative as int8, and IQ4x16's grid
// values signed int8, so signed smmla serves every layout. The layouts with
// scales per 16 columns (Q3Kx16, Q2Kx16, Q6Kx16): j = 0, 1 (columns 0-15) and
// j = 2, 3 (16-31) sum apart and are scaled in integers.
//
// Accumulator lanes of a row pair (r, r+1) and token pair (t, u):
//   [w_r . a_t, w_r . a_u, w_r+1 . a_t, w_r+1 . a_u]
// so the per-group scales are dw zipped with itself times (da_t, da_u, da_t, da_u),
// and uzp1 / uzp2 of the two row pairs give token t's and token u's four rows.
//
// Decode (one token) would waste half of every smmla; it uses the sdot kernel,
// which every i8mm CPU has (Isa::kNeonI8mm requires dotprod).
#if defined(__aarch64__)
#include <arm_neon.h>

#include <cstring>

#include "ops/kernels.h"
#include "ops/qgemm_neon_common.h"

namespace ember {
namespace {

constexpr int kPairs = 2;  // token pairs per kernel call (4 tokens)

// Two tokens' 8 activation bytes at column offset c: smmla's second operand.
inline int8x16_t TokenPair(const int8_t* at, const int8_t* au, int64_t c) {
  return vcombine_s8(vld1_s8(at + c), vld1_s8(au + c));
}

// Rows 4q..4q+3 of a tile for NP token pairs starting at t0. `last` is the
// number of real tokens (2 * NP, or 2 * NP - 1 when the last pair repeats its
// first token to fill the block; that output is not stored).
template <int NP, PackedLayout kL, bool kHasMin>
void QuadPairs(const PackedMatrix& w, int64_t tile, int q, const QuantizedActs& a, int64_t t0,
               int last, float* y, int64_t ldy) {
  float32x4_t acc01[NP], acc23[NP];  // row pairs (0,1) and (2,3) of the quad
#pragma GCC unroll 8
  for (int p = 0; p < NP; ++p) acc01[p] = acc23[p] = vdupq_n_f32(0.0f);
  int64_t tok[2 * NP];
#pragma GCC unroll 8
  for (int i = 0; i < 2 * NP; ++i) tok[i] = t0 + (i < last ? i : i - 1);
  const uint8_t* gp = w.tile(tile);
  constexpr size_t q_bytes = PackedQuantBytes(kL);
  for (int64_t g = 0; g < w.n_groups; ++g, gp += w.group_bytes) {
    int8x16_t wq[8];
    LoadQuadWeights<kL>(gp, q, wq);
    int8x16_t w01[4], w23[4];  // [j]: columns 8j..8j+7 of a row pair
#pragma GCC unroll 8
    for (int j = 0; j < 4; ++j) {
      const int32x4_t lo = vreinterpretq_s32_s8(wq[2 * j]);
      const int32x4_t hi = vreinterpretq_s32_s8(wq[2 * j + 1]);
      w01[j] = vreinterpretq_s8_s32(vzip1q_s32(lo, hi));
      w23[j] = vreinterpretq_s8_s32(vzip2q_s32(lo, hi));
    }
    const float32x4_t dw = LoadF16x4(gp + q_bytes + 8 * q);
    const float32x4_t dw01 = vzip1q_f32(dw, dw), dw23 = vzip2q_f32(dw, dw);
    float32x4_t mw01 = vdupq_n_f32(0.0f), mw23 = vdupq_n_f32(0.0f);
    if (kHasMin) {
      const float32x4_t mw = LoadF16x4(gp + q_bytes + 32 + 8 * q);
      mw01 = vzip1q_f32(mw, mw);
      mw23 = vzip2q_f32(mw, mw);
    }
#pragma GCC unroll 8
    for (int p = 0; p < NP; ++p) {
      const int64_t t = tok[2 * p], u = tok[2 * p + 1];
      const int8_t* at = a.q_row(t) + g * 32;
      const int8_t* au = a.q_row(u) + g * 32;
      // Two chains per row pair: j = 0, 1 (columns 0-15) and j = 2, 3.
      int32x4_t h01[2] = {vdupq_n_s32(0), vdupq_n_s32(0)};
      int32x4_t h23[2] = {vdupq_n_s32(0), vdupq_n_s32(0)};
#pragma GCC unroll 8
      for (int j = 0; j < 4; ++j) {
        const int8x16_t act = TokenPair(at, au, 8 * j);
        h01[j / 2] = vmmlaq_s32(h01[j / 2], w01[j], act);
        h23[j / 2] = vmmlaq_s32(h23[j / 2], w23[j], act);
      }
      int32x4_t s01 = vaddq_s32(h01[0], h01[1]);
      int32x4_t s23 = vaddq_s32(h23[0], h23[1]);
      if (PackedOffset(kL) != 0 && !kHasMin) {
        // the offset, off the integer sums (qgemm_ref.cpp)
        const int32_t ot = PackedOffset(kL) * a.qsum_row(t)[g];
        const int32_t ou = PackedOffset(kL) * a.qsum_row(u)[g];
        const int32x4_t off = {ot, ou, ot, ou};
        s01 = vaddq_s32(s01, off);
        s23 = vaddq_s32(s23, off);
      }
      const float dt = a.d_row(t)[g], du = a.d_row(u)[g];
      const float32x4_t da = {dt, du, dt, du};
      acc01[p] = vfmaq_f32(acc01[p], vcvtq_f32_s32(s01), vmulq_f32(dw01, da));
      acc23[p] = vfmaq_f32(acc23[p], vcvtq_f32_s32(s23), vmulq_f32(dw23, da));
      if (kHasMin) {
        const float st = a.sm_row(t)[g], su = a.sm_row(u)[g];
        const float32x4_t sa = {st, su, st, su};
        acc01[p] = vfmaq_f32(acc01[p], mw01, sa);
        acc23[p] = vfmaq_f32(acc23[p], mw23, sa);
      }
    }
  }
  const int64_t row0 = tile * kTileRows + 4 * q;
#pragma GCC unroll 8
  for (int p = 0; p < NP; ++p) {
    StoreRows4(y + (t0 + 2 * p) * ldy, vuzp1q_f32(acc01[p], acc23[p]), row0, w.n_rows);
    if (2 * p + 1 < last) {
      StoreRows4(y + (t0 + 2 * p + 1) * ldy, vuzp2q_f32(acc01[p], acc23[p]), row0, w.n_rows);
    }
  }
}

template <PackedLayout kL, bool kHasMin>
void Drive(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end, const QuantizedActs& a,
           float* y, int64_t ldy) {
  constexpr int kBlock = 2 * kPairs;
  for (int64_t tile = tile_begin; tile < tile_end; ++tile) {
    for (int q = 0; q < 4; ++q) {
      if (tile * kTileRows + 4 * q >= w.n_rows) break;
      int64_t t = 0;
      for (; t + kBlock <= a.m; t += kBlock) {
        QuadPairs<kPairs, kL, kHasMin>(w, tile, q, a, t, kBlock, y, ldy);
      }
      const int left = static_cast<int>(a.m - t);
      if (left > 2) {
        QuadPairs<2, kL, kHasMin>(w, tile, q, a, t, left, y, ldy);
      } else if (left > 0) {
        QuadPairs<1, kL, kHasMin>(w, tile, q, a, t, left, y, ldy);
      }
    }
  }
}

// The kernel of layout kL: stored mins are a run-time property of Q4x16 and
// Q5x16 matrices only.
template <PackedLayout kL>
void Run(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end, const QuantizedActs& a,
         float* y, int64_t ldy) {
  if constexpr (kL == PackedLayout::kQ4x16 || kL == PackedLayout::kQ5x16) {
    if (w.has_min) return Drive<kL, true>(w, tile_begin, tile_end, a, y, ldy);
  }
  Drive<kL, false>(w, tile_begin, tile_end, a, y, ldy);
}

// The K layouts (Q4Kx16, Q5Kx16): QuadPairs' block products per group, and
// qgemm_ref.cpp's order of the scales (as QuadK in qgemm_neon_common.h), with
// every factor laid out as the accumulators: row pair (r, r+1) x tokens (t, u).
template <int NP, PackedLayout kL>
void QuadPairsK(const PackedMatrix& w, int64_t tile, int q, const QuantizedActs& a, int64_t t0,
                int last, float* y, int64_t ldy) {
  constexpr size_t kHeader = KHeaderBytes(kL), kGroup = KGroupBytes(kL);
  float32x4_t acc01[NP], acc23[NP];
#pragma GCC unroll 8
  for (int p = 0; p < NP; ++p) acc01[p] = acc23[p] = vdupq_n_f32(0.0f);
  int64_t tok[2 * NP];
#pragma GCC unroll 8
  for (int i = 0; i < 2 * NP; ++i) tok[i] = t0 + (i < last ? i : i - 1);
  const uint8_t* sg = w.tile(tile);
  const int64_t n_supers = w.n_groups / kSuperGroups;
  for (int64_t s = 0; s < n_supers; ++s, sg += w.super_bytes) {
    float32x4_t sd01[NP], sd23[NP], sm01[NP], sm23[NP];
#pragma GCC unroll 8
    for (int p = 0; p < NP; ++p) sd01[p] = sd23[p] = sm01[p] = sm23[p] = vdupq_n_f32(0.0f);
    for (int jg = 0; jg < kSuperGroups; ++jg) {
      const int64_t g = s * kSuperGroups + jg;
      int8x16_t wq[8];
      LoadQuadWeights<KQuantLayout<kL>()>(sg + kHeader + jg * kGroup, q, wq);
      int8x16_t w01[4], w23[4];  // [j]: columns 8j..8j+7 of a row pair
#pragma GCC unroll 8
      for (int j = 0; j < 4; ++j) {
        const int32x4_t lo = vreinterpretq_s32_s8(wq[2 * j]);
        const int32x4_t hi = vreinterpretq_s32_s8(wq[2 * j + 1]);
        w01[j] = vreinterpretq_s8_s32(vzip1q_s32(lo, hi));
        w23[j] = vreinterpretq_s8_s32(vzip2q_s32(lo, hi));
      }
      const float32x4_t sc = QuadBytesToFloat(sg + kKScaleOffset + 16 * jg + 4 * q);
      const float32x4_t sc01 = vzip1q_f32(sc, sc), sc23 = vzip2q_f32(sc, sc);
      const float32x4_t m = QuadBytesToFloat(sg + kKMinOffset + 16 * jg + 4 * q);
      const float32x4_t m01 = vzip1q_f32(m, m), m23 = vzip2q_f32(m, m);
#pragma GCC unroll 8
      for (int p = 0; p < NP; ++p) {
        const int64_t t = tok[2 * p], u = tok[2 * p + 1];
        const int8_t* at = a.q_row(t) + g * 32;
        const int8_t* au = a.q_row(u) + g * 32;
        int32x4_t i01 = vdupq_n_s32(0), i23 = vdupq_n_s32(0);
#pragma GCC unroll 8
        for (int j = 0; j < 4; ++j) {
          const int8x16_t act = TokenPair(at, au, 8 * j);
          i01 = vmmlaq_s32(i01, w01[j], act);
          i23 = vmmlaq_s32(i23, w23[j], act);
        }
        const float dt = a.d_row(t)[g], du = a.d_row(u)[g];
        const float32x4_t da = {dt, du, dt, du};
        sd01[p] = vfmaq_f32(sd01[p], vcvtq_f32_s32(i01), vmulq_f32(sc01, da));
        sd23[p] = vfmaq_f32(sd23[p], vcvtq_f32_s32(i23), vmulq_f32(sc23, da));
        const float ft = a.dqsum_row(t)[g], fu = a.dqsum_row(u)[g];
        const float32x4_t f = {ft, fu, ft, fu};
        sm01[p] = vfmaq_f32(sm01[p], m01, f);
        sm23[p] = vfmaq_f32(sm23[p], m23, f);
      }
    }
    const float32x4_t d = LoadF16x4(sg + 8 * q), dmin = LoadF16x4(sg + kKDminOffset + 8 * q);
    const float32x4_t d01 = vzip1q_f32(d, d), d23 = vzip2q_f32(d, d);
    const float32x4_t dmin01 = vzip1q_f32(dmin, dmin), dmin23 = vzip2q_f32(dmin, dmin);
#pragma GCC unroll 8
    for (int p = 0; p < NP; ++p) {
      acc01[p] = vfmsq_f32(vfmaq_f32(acc01[p], d01, sd01[p]), dmin01, sm01[p]);
      acc23[p] = vfmsq_f32(vfmaq_f32(acc23[p], d23, sd23[p]), dmin23, sm23[p]);
    }
  }
  const int64_t row0 = tile * kTileRows + 4 * q;
#pragma GCC unroll 8
  for (int p = 0; p < NP; ++p) {
    StoreRows4(y + (t0 + 2 * p) * ldy, vuzp1q_f32(acc01[p], acc23[p]), row0, w.n_rows);
    if (2 * p + 1 < last) {
      StoreRows4(y + (t0 + 2 * p + 1) * ldy, vuzp2q_f32(acc01[p], acc23[p]), row0, w.n_rows);
    }
  }
}

// Q3Kx16 / Q2Kx16 / Q6Kx16 (scales, Q2_K's mins, per 16 columns): the block products
// of columns 0-15 (j = 0, 1) and 16-31 (j = 2, 3) apart, then qgemm_ref.cpp's
// integers (as QuadK16 in qgemm_neon_common.h) with every factor laid out as
// the accumulators.
template <int NP, PackedLayout kL>
void QuadPairsK16(const PackedMatrix& w, int64_t tile, int q, const QuantizedActs& a, int64_t t0,
                  int last, float* y, int64_t ldy) {
  constexpr bool kQ3 = !K16HasMins<kL>();  // signed scales and an offset (Q3_K, Q6_K)
  constexpr int kShift = K16OffsetShift<kL>();
  constexpr size_t kHeader = KHeaderBytes(kL), kGroup = KGroupBytes(kL);
  constexpr size_t kScales = K16ScaleOffset(kL);
  float32x4_t acc01[NP], acc23[NP];
#pragma GCC unroll 8
  for (int p = 0; p < NP; ++p) acc01[p] = acc23[p] = vdupq_n_f32(0.0f);
  int64_t tok[2 * NP];
#pragma GCC unroll 8
  for (int i = 0; i < 2 * NP; ++i) tok[i] = t0 + (i < last ? i : i - 1);
  const uint8_t* sg = w.tile(tile);
  const int64_t n_supers = w.n_groups / kSuperGroups;
  for (int64_t s = 0; s < n_supers; ++s, sg += w.super_bytes) {
    float32x4_t sd01[NP], sd23[NP], sm01[NP], sm23[NP];
#pragma GCC unroll 8
    for (int p = 0; p < NP; ++p) sd01[p] = sd23[p] = sm01[p] = sm23[p] = vdupq_n_f32(0.0f);
    for (int jg = 0; jg < kSuperGroups; ++jg) {
      const int64_t g = s * kSuperGroups + jg;
      int8x16_t wq[8];
      LoadQuadWeightsAnyK16<kL>(sg + kHeader + jg * kGroup, q, wq);
      int8x16_t w01[4], w23[4];  // [j]: columns 8j..8j+7 of a row pair
#pragma GCC unroll 8
      for (int j = 0; j < 4; ++j) {
        const int32x4_t lo = vreinterpretq_s32_s8(wq[2 * j]);
        const int32x4_t hi = vreinterpretq_s32_s8(wq[2 * j + 1]);
        w01[j] = vreinterpretq_s8_s32(vzip1q_s32(lo, hi));
        w23[j] = vreinterpretq_s8_s32(vzip2q_s32(lo, hi));
      }
      // The scales (and Q2_K's mins) of the halves, row pairs as the accumulators.
      int32x4_t sc[2] = {QuadBytesToInt<kQ3>(sg + kScales + 32 * jg + 4 * q),
                         QuadBytesToInt<kQ3>(sg + kScales + 32 * jg + 16 + 4 * q)};
      int32x4_t m[2] = {vdupq_n_s32(0), vdupq_n_s32(0)};
      if constexpr (!kQ3) {  // Q2_K's bytes: scale | min << 4
#pragma GCC unroll 8
        for (int h = 0; h < 2; ++h) {
          m[h] = vshrq_n_s32(sc[h], 4);
          sc[h] = vandq_s32(sc[h], vdupq_n_s32(0x0F));
        }
      }
      int32x4_t sc01[2], sc23[2], m01[2], m23[2];
#pragma GCC unroll 8
      for (int h = 0; h < 2; ++h) {
        sc01[h] = vzip1q_s32(sc[h], sc[h]);
        sc23[h] = vzip2q_s32(sc[h], sc[h]);
        m01[h] = vzip1q_s32(m[h], m[h]);
        m23[h] = vzip2q_s32(m[h], m[h]);
      }
#pragma GCC unroll 8
      for (int p = 0; p < NP; ++p) {
        const int64_t t = tok[2 * p], u = tok[2 * p + 1];
        const int8_t* at = a.q_row(t) + g * 32;
        const int8_t* au = a.q_row(u) + g * 32;
        int32x4_t h01[2] = {vdupq_n_s32(0), vdupq_n_s32(0)};
        int32x4_t h23[2] = {vdupq_n_s32(0), vdupq_n_s32(0)};
#pragma GCC unroll 8
        for (int j = 0; j < 4; ++j) {
          const int8x16_t act = TokenPair(at, au, 8 * j);
          h01[j / 2] = vmmlaq_s32(h01[j / 2], w01[j], act);
          h23[j / 2] = vmmlaq_s32(h23[j / 2], w23[j], act);
        }
        const int32_t* qt = a.qsum16_row(t) + 2 * g;
        const int32_t* qu = a.qsum16_row(u) + 2 * g;
        const int32x4_t qs[2] = {{qt[0], qu[0], qt[0], qu[0]}, {qt[1], qu[1], qt[1], qu[1]}};
        if constexpr (kQ3) {  // - 4 qsum16 (Q6_K: - 32 qsum16) off each half
#pragma GCC unroll 8
          for (int h = 0; h < 2; ++h) {
            h01[h] = vsubq_s32(h01[h], vshlq_n_s32(qs[h], kShift));
            h23[h] = vsubq_s32(h23[h], vshlq_n_s32(qs[h], kShift));
          }
        }
        const int32x4_t i01 = vmlaq_s32(vmulq_s32(sc01[0], h01[0]), sc01[1], h01[1]);
        const int32x4_t i23 = vmlaq_s32(vmulq_s32(sc23[0], h23[0]), sc23[1], h23[1]);
        const float dt = a.d_row(t)[g], du = a.d_row(u)[g];
        const float32x4_t da = {dt, du, dt, du};
        sd01[p] = vfmaq_f32(sd01[p], vcvtq_f32_s32(i01), da);
        sd23[p] = vfmaq_f32(sd23[p], vcvtq_f32_s32(i23), da);
        if constexpr (!kQ3) {
          const int32x4_t ms01 = vmlaq_s32(vmulq_s32(m01[0], qs[0]), m01[1], qs[1]);
          const int32x4_t ms23 = vmlaq_s32(vmulq_s32(m23[0], qs[0]), m23[1], qs[1]);
          sm01[p] = vfmaq_f32(sm01[p], vcvtq_f32_s32(ms01), da);
          sm23[p] = vfmaq_f32(sm23[p], vcvtq_f32_s32(ms23), da);
        }
      }
    }
    const float32x4_t d = LoadF16x4(sg + 8 * q);
    const float32x4_t d01 = vzip1q_f32(d, d), d23 = vzip2q_f32(d, d);
#pragma GCC unroll 8
    for (int p = 0; p < NP; ++p) {
      acc01[p] = vfmaq_f32(acc01[p], d01, sd01[p]);
      acc23[p] = vfmaq_f32(acc23[p], d23, sd23[p]);
    }
    if constexpr (!kQ3) {
      const float32x4_t dmin = LoadF16x4(sg + kKDminOffset + 8 * q);
      const float32x4_t dmin01 = vzip1q_f32(dmin, dmin), dmin23 = vzip2q_f32(dmin, dmin);
#pragma GCC unroll 8
      for (int p = 0; p < NP; ++p) {
        acc01[p] = vfmsq_f32(acc01[p], dmin01, sm01[p]);
        acc23[p] = vfmsq_f32(acc23[p], dmin23, sm23[p]);
      }
    }
  }
  const int64_t row0 = tile * kTileRows + 4 * q;
#pragma GCC unroll 8
  for (int p = 0; p < NP; ++p) {
    StoreRows4(y + (t0 + 2 * p) * ldy, vuzp1q_f32(acc01[p], acc23[p]), row0, w.n_rows);
    if (2 * p + 1 < last) {
      StoreRows4(y + (t0 + 2 * p + 1) * ldy, vuzp2q_f32(acc01[p], acc23[p]), row0, w.n_rows);
    }
  }
}

// QuadPairsK or QuadPairsK16, by layout.
template <int NP, PackedLayout kL>
void QuadPairsAny(const PackedMatrix& w, int64_t tile, int q, const QuantizedActs& a, int64_t t0,
                  int last, float* y, int64_t ldy) {
  if constexpr (IsK16Layout(kL)) {
    QuadPairsK16<NP, kL>(w, tile, q, a, t0, last, y, ldy);
  } else {
    QuadPairsK<NP, kL>(w, tile, q, a, t0, last, y, ldy);
  }
}

template <PackedLayout kL>
void DriveK(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end, const QuantizedActs& a,
            float* y, int64_t ldy) {
  constexpr int kBlock = 2 * kPairs;
  for (int64_t tile = tile_begin; tile < tile_end; ++tile) {
    for (int q = 0; q < 4; ++q) {
      if (tile * kTileRows + 4 * q >= w.n_rows) break;
      int64_t t = 0;
      for (; t + kBlock <= a.m; t += kBlock)
        QuadPairsAny<kPairs, kL>(w, tile, q, a, t, kBlock, y, ldy);
      const int left = static_cast<int>(a.m - t);
      if (left > 2) {
        QuadPairsAny<2, kL>(w, tile, q, a, t, left, y, ldy);
      } else if (left > 0) {
        QuadPairsAny<1, kL>(w, tile, q, a, t, left, y, ldy);
      }
    }
  }
}

}  // namespace

void QGemmQ4Kx16_neon_i8mm(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                           const QuantizedActs& a, float* y, int64_t ldy) {
  if (a.m == 1) return QGemmQ4Kx16_neon_dot(w, tile_begin, tile_end, a, y, ldy);
  DriveK<PackedLayout::kQ4Kx16>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ5Kx16_neon_i8mm(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                           const QuantizedActs& a, float* y, int64_t ldy) {
  if (a.m == 1) return QGemmQ5Kx16_neon_dot(w, tile_begin, tile_end, a, y, ldy);
  DriveK<PackedLayout::kQ5Kx16>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ3Kx16_neon_i8mm(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                           const QuantizedActs& a, float* y, int64_t ldy) {
  if (a.m == 1) return QGemmQ3Kx16_neon_dot(w, tile_begin, tile_end, a, y, ldy);
  DriveK<PackedLayout::kQ3Kx16>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ2Kx16_neon_i8mm(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                           const QuantizedActs& a, float* y, int64_t ldy) {
  if (a.m == 1) return QGemmQ2Kx16_neon_dot(w, tile_begin, tile_end, a, y, ldy);
  DriveK<PackedLayout::kQ2Kx16>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ6Kx16_neon_i8mm(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                           const QuantizedActs& a, float* y, int64_t ldy) {
  if (a.m == 1) return QGemmQ6Kx16_neon_dot(w, tile_begin, tile_end, a, y, ldy);
  DriveK<PackedLayout::kQ6Kx16>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ4x16_neon_i8mm(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                          const QuantizedActs& a, float* y, int64_t ldy) {
  if (a.m == 1) return QGemmQ4x16_neon_dot(w, tile_begin, tile_end, a, y, ldy);
  Run<PackedLayout::kQ4x16>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ5x16_neon_i8mm(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                          const QuantizedActs& a, float* y, int64_t ldy) {
  if (a.m == 1) return QGemmQ5x16_neon_dot(w, tile_begin, tile_end, a, y, ldy);
  Run<PackedLayout::kQ5x16>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ8x16_neon_i8mm(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                          const QuantizedActs& a, float* y, int64_t ldy) {
  if (a.m == 1) return QGemmQ8x16_neon_dot(w, tile_begin, tile_end, a, y, ldy);
  Run<PackedLayout::kQ8x16>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmIQ4x16_neon_i8mm(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                           const QuantizedActs& a, float* y, int64_t ldy) {
  if (a.m == 1) return QGemmIQ4x16_neon_dot(w, tile_begin, tile_end, a, y, ldy);
  Run<PackedLayout::kIQ4x16>(w, tile_begin, tile_end, a, y, ldy);
}

}  // namespace ember
#endif
