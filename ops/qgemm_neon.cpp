// Quantized GEMM on NEON without dotprod (Cortex-A53/A72: Raspberry Pi 3/4,
// and 32-bit ARMv7 with NEON). A 64-byte sub-chunk is four q-registers of 4
// rows x 4 bytes; the 4-byte dot products come from widening multiplies
// (s8 x s8 -> s16, exact) and pairwise adds (a pair of products fits int16:
// 2 * 128 * 127 < 32768).
#if defined(__aarch64__) || (defined(__arm__) && defined(__ARM_NEON))
#include <arm_neon.h>

#include <cstring>

#include "ops/kernels.h"
#include "ops/qgemm_neon_common.h"

namespace ember {
namespace {

constexpr int kMr = 2;

// For 4 rows (4 bytes each in w) and the same 4 activation bytes a4:
// lane r = sum_b w[4r + b] * a4[b].
inline int32x4_t Dot4x4(int8x16_t w, int8x16_t a) {
  const int16x8_t lo = vmull_s8(vget_low_s8(w), vget_low_s8(a));
  const int16x8_t hi = vmull_s8(vget_high_s8(w), vget_high_s8(a));
  const int32x4_t plo = vpaddlq_s16(lo);  // sums of byte pairs: rows 0,1
  const int32x4_t phi = vpaddlq_s16(hi);  // rows 2,3
#if defined(__aarch64__)
  return vpaddq_s32(plo, phi);
#else
  return vcombine_s32(vpadd_s32(vget_low_s32(plo), vget_high_s32(plo)),
                      vpadd_s32(vget_low_s32(phi), vget_high_s32(phi)));
#endif
}

inline int8x16_t Bcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return vreinterpretq_s8_s32(vdupq_n_s32(v));
}

// One quad of 4 rows (q = 0..3 within the tile) for MR tokens.
template <int MR, PackedLayout kL, bool kHasMin>
void Quad(const PackedMatrix& w, int64_t tile, int q, const QuantizedActs& a, int64_t t0, float* y,
          int64_t ldy) {
  float32x4_t acc[MR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) acc[i] = vdupq_n_f32(0.0f);
  const uint8_t* gp = w.tile(tile);
  constexpr size_t q_bytes = PackedQuantBytes(kL);
  for (int64_t g = 0; g < w.n_groups; ++g, gp += w.group_bytes) {
    int8x16_t wq[8];
    LoadQuadWeights<kL>(gp, q, wq);
    const float32x4_t dw = LoadF16x4(gp + q_bytes + 8 * q);
    float32x4_t mw = vdupq_n_f32(0.0f);
    if (kHasMin) mw = LoadF16x4(gp + q_bytes + 32 + 8 * q);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const int8_t* aq = a.q_row(t0 + i) + g * 32;
      // Per half of the group (columns 0-15, 16-31), as AddGroup takes them.
      int32x4_t half[2] = {vdupq_n_s32(0), vdupq_n_s32(0)};
#pragma GCC unroll 8
      for (int s = 0; s < 8; ++s) {
        // int8: sub-chunk s = columns 4s..4s+3; int4: wq[2s'] / wq[2s'+1] are
        // columns 8s'..8s'+3 / 8s'+4..8s'+7, i.e. 4s..4s+3 again.
        half[s / 4] = vaddq_s32(half[s / 4], Dot4x4(wq[s], Bcast4(aq + 4 * s)));
      }
      acc[i] = AddGroup<kL, kHasMin>(acc[i], half, dw, mw, a, t0 + i, g);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
    StoreRows4(y + (t0 + i) * ldy, acc[i], tile * kTileRows + 4 * q, w.n_rows);
}

template <PackedLayout kL, bool kHasMin>
void Drive(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end, const QuantizedActs& a,
           float* y, int64_t ldy) {
  for (int64_t tile = tile_begin; tile < tile_end; ++tile) {
    for (int q = 0; q < 4; ++q) {
      if (tile * kTileRows + 4 * q >= w.n_rows) break;
      int64_t t = 0;
      for (; t + kMr <= a.m; t += kMr) Quad<kMr, kL, kHasMin>(w, tile, q, a, t, y, ldy);
      if (t < a.m) Quad<1, kL, kHasMin>(w, tile, q, a, t, y, ldy);
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

// One group's integer sums of a quad (wq from LoadQuadWeights) with one
// token's 32 activations: the K layouts' Dot for QuadK.
struct GroupDot {
  static int32x4_t Sum(const int8x16_t (&wq)[8], const int8_t* aq) {
    int32x4_t sum = vdupq_n_s32(0);
#pragma GCC unroll 8
    for (int s = 0; s < 8; ++s) sum = vaddq_s32(sum, Dot4x4(wq[s], Bcast4(aq + 4 * s)));
    return sum;
  }
  // Columns 0-15 and 16-31 apart (Q3Kx16 / Q2Kx16 / Q6Kx16's scales per 16).
  static void Halves(const int8x16_t (&wq)[8], const int8_t* aq, int32x4_t (&half)[2]) {
    half[0] = half[1] = vdupq_n_s32(0);
#pragma GCC unroll 8
    for (int s = 0; s < 8; ++s)
      half[s / 4] = vaddq_s32(half[s / 4], Dot4x4(wq[s], Bcast4(aq + 4 * s)));
  }
};

}  // namespace

void QGemmQ4Kx16_neon(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                      const QuantizedActs& a, float* y, int64_t ldy) {
  DriveK<PackedLayout::kQ4Kx16, GroupDot, kMr>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ5Kx16_neon(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                      const QuantizedActs& a, float* y, int64_t ldy) {
  DriveK<PackedLayout::kQ5Kx16, GroupDot, kMr>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ3Kx16_neon(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                      const QuantizedActs& a, float* y, int64_t ldy) {
  DriveK16<PackedLayout::kQ3Kx16, GroupDot, kMr>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ2Kx16_neon(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                      const QuantizedActs& a, float* y, int64_t ldy) {
  DriveK16<PackedLayout::kQ2Kx16, GroupDot, kMr>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ6Kx16_neon(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                      const QuantizedActs& a, float* y, int64_t ldy) {
  DriveK16<PackedLayout::kQ6Kx16, GroupDot, kMr>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ4x16_neon(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                     const QuantizedActs& a, float* y, int64_t ldy) {
  Run<PackedLayout::kQ4x16>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ5x16_neon(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                     const QuantizedActs& a, float* y, int64_t ldy) {
  Run<PackedLayout::kQ5x16>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ8x16_neon(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                     const QuantizedActs& a, float* y, int64_t ldy) {
  Run<PackedLayout::kQ8x16>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmIQ4x16_neon(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                      const QuantizedActs& a, float* y, int64_t ldy) {
  Run<PackedLayout::kIQ4x16>(w, tile_begin, tile_end, a, y, ldy);
}

}  // namespace ember
#endif
