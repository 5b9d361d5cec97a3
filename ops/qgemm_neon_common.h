// Pieces shared by the NEON quantized-GEMM kernels (qgemm_neon.cpp and
// qgemm_neon_dot.cpp). Internal linkage: each kernel file compiles them with
// its own target flags.
#pragma once

#if defined(__aarch64__) || (defined(__arm__) && defined(__ARM_NEON))
#include <arm_neon.h>

#include <cstdint>
#include <cstring>

#include "quant/packed.h"

namespace ember {
namespace {

inline float32x4_t LoadF16x4(const uint8_t* p) {
  return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(reinterpret_cast<const uint16_t*>(p))));
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

// Q5x16's high bits of quad q in unpacked vector v: bytes 2q, 2q + 1 of
// qh[v] (16 bits, one per byte of the quad's 16) as 16 in each marked byte.
inline uint8x16_t HighBitsQuad(const uint8_t* qh_v, int q) {
  static const uint8_t kBit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
  const uint8x16_t bytes = vcombine_u8(vdup_n_u8(qh_v[2 * q]), vdup_n_u8(qh_v[2 * q + 1]));
  return vandq_u8(vtstq_u8(bytes, vld1q_u8(kBit)), vdupq_n_u8(16));
}

// The weights of quad q (rows 4q..4q+3) of one TileGroup at gp: wq[s] holds
// columns 4s..4s+3 of the group for the 4 rows (int4 and int5 unpacked to
// bytes, 0..15 and 0..31, non-negative as int8).
template <PackedLayout kL>
inline void LoadQuadWeights(const uint8_t* gp, int q, int8x16_t wq[8]) {
  if (kL == PackedLayout::kQ8x16) {
    for (int s = 0; s < 8; ++s)
      wq[s] = vld1q_s8(reinterpret_cast<const int8_t*>(gp + 64 * s + 16 * q));
  } else {
    for (int s = 0; s < 4; ++s) {
      const uint8x16_t v = vld1q_u8(gp + 64 * s + 16 * q);
      uint8x16_t lo = vandq_u8(v, vdupq_n_u8(0x0F)), hi = vshrq_n_u8(v, 4);
      if (kL == PackedLayout::kQ5x16) {
        lo = vorrq_u8(lo, HighBitsQuad(gp + 256 + 8 * (2 * s), q));
        hi = vorrq_u8(hi, HighBitsQuad(gp + 256 + 8 * (2 * s + 1), q));
      }
      wq[2 * s] = vreinterpretq_s8_u8(lo);
      wq[2 * s + 1] = vreinterpretq_s8_u8(hi);
    }
  }
}

}  // namespace
}  // namespace ember
#endif
