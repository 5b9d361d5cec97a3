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

// The weights of quad q (rows 4q..4q+3) of one TileGroup at gp: wq[s] holds
// columns 4s..4s+3 of the group for the 4 rows (int4 unpacked to bytes).
template <bool kInt8>
inline void LoadQuadWeights(const uint8_t* gp, int q, int8x16_t wq[8]) {
  if (kInt8) {
    for (int s = 0; s < 8; ++s)
      wq[s] = vld1q_s8(reinterpret_cast<const int8_t*>(gp + 64 * s + 16 * q));
  } else {
    for (int s = 0; s < 4; ++s) {
      const uint8x16_t v = vld1q_u8(gp + 64 * s + 16 * q);
      wq[2 * s] = vreinterpretq_s8_u8(vandq_u8(v, vdupq_n_u8(0x0F)));
      wq[2 * s + 1] = vreinterpretq_s8_u8(vshrq_n_u8(v, 4));
    }
  }
}

}  // namespace
}  // namespace ember
#endif
