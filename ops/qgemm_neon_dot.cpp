// Quantized GEMM on NEON with dotprod (Cortex-A76/A78/X1: Raspberry Pi 5).
// sdot multiplies each 4-row quad's 4 weight bytes per row with 4 activation
// bytes taken by lane from one 16-byte load: lane r of the result is row r.
#if defined(__aarch64__)
#include <arm_neon.h>

#include <cstring>

#include "ops/kernels.h"
#include "ops/qgemm_neon_common.h"

namespace ember {
namespace {

constexpr int kMr = 4;

template <int MR, PackedLayout kL, bool kHasMin>
void Quad(const PackedMatrix& w, int64_t tile, int q, const QuantizedActs& a, int64_t t0, float* y,
          int64_t ldy) {
  float32x4_t acc[MR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) acc[i] = vdupq_n_f32(0.0f);
  const uint8_t* gp = w.tile(tile);
  constexpr size_t q_bytes = PackedQuantBytes(kL);
  for (int64_t g = 0; g < w.n_groups; ++g, gp += w.group_bytes) {
    // wq[s] holds columns 4s .. 4s+3 of the group for the quad's 4 rows.
    int8x16_t wq[8];
    LoadQuadWeights<kL>(gp, q, wq);
    const float32x4_t dw = LoadF16x4(gp + q_bytes + 8 * q);
    float32x4_t mw = vdupq_n_f32(0.0f);
    if (kHasMin) mw = LoadF16x4(gp + q_bytes + 32 + 8 * q);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const int8_t* aq = a.q_row(t0 + i) + g * 32;
      const int8x16_t a0 = vld1q_s8(aq), a1 = vld1q_s8(aq + 16);
      // Columns 0-15 (a0, wq[0..3]) and 16-31 (a1, wq[4..7]).
      int32x4_t half[2] = {vdupq_n_s32(0), vdupq_n_s32(0)};
      half[0] = vdotq_laneq_s32(half[0], wq[0], a0, 0);
      half[0] = vdotq_laneq_s32(half[0], wq[1], a0, 1);
      half[0] = vdotq_laneq_s32(half[0], wq[2], a0, 2);
      half[0] = vdotq_laneq_s32(half[0], wq[3], a0, 3);
      half[1] = vdotq_laneq_s32(half[1], wq[4], a1, 0);
      half[1] = vdotq_laneq_s32(half[1], wq[5], a1, 1);
      half[1] = vdotq_laneq_s32(half[1], wq[6], a1, 2);
      half[1] = vdotq_laneq_s32(half[1], wq[7], a1, 3);
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
      switch (a.m - t) {
        case 1:
          Quad<1, kL, kHasMin>(w, tile, q, a, t, y, ldy);
          break;
        case 2:
          Quad<2, kL, kHasMin>(w, tile, q, a, t, y, ldy);
          break;
        case 3:
          Quad<3, kL, kHasMin>(w, tile, q, a, t, y, ldy);
          break;
        default:
          break;
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

// One group's integer sums of a quad (wq from LoadQuadWeights) with one
// token's 32 activations: the K layouts' Dot for QuadK.
struct GroupDot {
  static int32x4_t Sum(const int8x16_t (&wq)[8], const int8_t* aq) {
    const int8x16_t a0 = vld1q_s8(aq), a1 = vld1q_s8(aq + 16);
    int32x4_t s0 = vdupq_n_s32(0), s1 = vdupq_n_s32(0);  // two chains: half the latency
    s0 = vdotq_laneq_s32(s0, wq[0], a0, 0);
    s1 = vdotq_laneq_s32(s1, wq[1], a0, 1);
    s0 = vdotq_laneq_s32(s0, wq[2], a0, 2);
    s1 = vdotq_laneq_s32(s1, wq[3], a0, 3);
    s0 = vdotq_laneq_s32(s0, wq[4], a1, 0);
    s1 = vdotq_laneq_s32(s1, wq[5], a1, 1);
    s0 = vdotq_laneq_s32(s0, wq[6], a1, 2);
    s1 = vdotq_laneq_s32(s1, wq[7], a1, 3);
    return vaddq_s32(s0, s1);
  }
  // Columns 0-15 and 16-31 apart (Q3Kx16 / Q2Kx16 / Q6Kx16's scales per 16).
  static void Halves(const int8x16_t (&wq)[8], const int8_t* aq, int32x4_t (&half)[2]) {
    const int8x16_t a0 = vld1q_s8(aq), a1 = vld1q_s8(aq + 16);
    int32x4_t h0 = vdupq_n_s32(0), h1 = vdupq_n_s32(0);
    h0 = vdotq_laneq_s32(h0, wq[0], a0, 0);
    h1 = vdotq_laneq_s32(h1, wq[4], a1, 0);
    h0 = vdotq_laneq_s32(h0, wq[1], a0, 1);
    h1 = vdotq_laneq_s32(h1, wq[5], a1, 1);
    h0 = vdotq_laneq_s32(h0, wq[2], a0, 2);
    h1 = vdotq_laneq_s32(h1, wq[6], a1, 2);
    h0 = vdotq_laneq_s32(h0, wq[3], a0, 3);
    h1 = vdotq_laneq_s32(h1, wq[7], a1, 3);
    half[0] = h0;
    half[1] = h1;
  }
};

}  // namespace

void QGemmQ4Kx16_neon_dot(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                          const QuantizedActs& a, float* y, int64_t ldy) {
  DriveK<PackedLayout::kQ4Kx16, GroupDot, kMr>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ5Kx16_neon_dot(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                          const QuantizedActs& a, float* y, int64_t ldy) {
  DriveK<PackedLayout::kQ5Kx16, GroupDot, kMr>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ3Kx16_neon_dot(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                          const QuantizedActs& a, float* y, int64_t ldy) {
  DriveK16<PackedLayout::kQ3Kx16, GroupDot, kMr>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ2Kx16_neon_dot(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                          const QuantizedActs& a, float* y, int64_t ldy) {
  DriveK16<PackedLayout::kQ2Kx16, GroupDot, kMr>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ6Kx16_neon_dot(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                          const QuantizedActs& a, float* y, int64_t ldy) {
  DriveK16<PackedLayout::kQ6Kx16, GroupDot, kMr>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ4x16_neon_dot(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                         const QuantizedActs& a, float* y, int64_t ldy) {
  Run<PackedLayout::kQ4x16>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ5x16_neon_dot(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                         const QuantizedActs& a, float* y, int64_t ldy) {
  Run<PackedLayout::kQ5x16>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmQ8x16_neon_dot(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                         const QuantizedActs& a, float* y, int64_t ldy) {
  Run<PackedLayout::kQ8x16>(w, tile_begin, tile_end, a, y, ldy);
}

void QGemmIQ4x16_neon_dot(const PackedMatrix& w, int64_t tile_begin, int64_t tile_end,
                          const QuantizedActs& a, float* y, int64_t ldy) {
  Run<PackedLayout::kIQ4x16>(w, tile_begin, tile_end, a, y, ldy);
}

}  // namespace ember
#endif
