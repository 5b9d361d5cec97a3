// ExpPoly_ref (ops/exp_poly.h) for 4 floats on AArch64 NEON: the same
// operations in the same order (fma where fma is written), so the same bits.
//
// AArch64 only. 32-bit ARMv7 NEON flushes subnormals to zero (ExpPoly_ref
// returns subnormals just above kMin) and has no round-to-nearest convert
// (vrndnq/vcvtnq are ARMv8), so the same bits are not available there;
// armhf keeps the _ref activations (ops/kernels.cpp).
#pragma once

#if defined(__aarch64__)
#include <arm_neon.h>

#include "ops/exp_poly.h"

namespace ember {

inline float32x4_t ExpPoly4(float32x4_t x) {
  using namespace exp_poly;
  // fmin (FMIN) returns NaN when either input is NaN: NaN x stays NaN, as in
  // ExpPoly_ref; +inf becomes kMax.
  const float32x4_t v = vminq_f32(x, vdupq_n_f32(kMax));
  // Round to nearest, ties to even: std::nearbyint in the default mode.
  const float32x4_t n = vrndnq_f32(vmulq_f32(v, vdupq_n_f32(kLog2e)));
  // vfmaq_f32(a, b, c) = a + b * c, fused: std::fma(b, c, a).
  float32x4_t r = vfmaq_f32(v, n, vdupq_n_f32(-kLn2Hi));
  r = vfmaq_f32(r, n, vdupq_n_f32(-kLn2Lo));
  float32x4_t y = vdupq_n_f32(kC0);
  y = vfmaq_f32(vdupq_n_f32(kC1), y, r);
  y = vfmaq_f32(vdupq_n_f32(kC2), y, r);
  y = vfmaq_f32(vdupq_n_f32(kC3), y, r);
  y = vfmaq_f32(vdupq_n_f32(kC4), y, r);
  y = vfmaq_f32(vdupq_n_f32(kC5), y, r);
  y = vfmaq_f32(r, y, vmulq_f32(r, r));
  y = vaddq_f32(y, vdupq_n_f32(1.0f));
  // n is integral here (or NaN, which converts to 0: the result stays NaN).
  const int32x4_t e = vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(n), vdupq_n_s32(127)), 23);
  const float32x4_t out = vmulq_f32(y, vreinterpretq_f32_s32(e));
  // Below kMin (and -inf) the exponent field would not hold 2^n: +0 there.
  // The mask also keeps a caller's later add from fusing with the multiply.
  const uint32x4_t below = vcltq_f32(x, vdupq_n_f32(kMin));
  return vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(out), below));
}

}  // namespace ember
#endif
