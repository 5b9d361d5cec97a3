// GELU and GeGLU on AArch64 NEON: x / (1 + e^-2y) with ExpPoly4 for the exp
// (the form and its error against Gelu_ref: ops/gelu_exp_poly.h). Tails
// shorter than 4 take GeluExpPoly, the same operations one float at a time.
// AArch64 only, as ExpPoly4 (ops/exp_poly_neon.h); armhf keeps _ref.
#if defined(__aarch64__)
#include <arm_neon.h>

#include "ops/activation.h"
#include "ops/exp_poly_neon.h"
#include "ops/gelu_exp_poly.h"

namespace ember {

namespace {

inline float32x4_t Gelu4(float32x4_t x) {
  using namespace gelu;
  // vfmaq_f32(a, b, c) = a + b * c, fused.
  const float32x4_t t =
      vmulq_f32(x, vfmaq_f32(vdupq_n_f32(kT1), vmulq_f32(x, x), vdupq_n_f32(kT3)));
  const float32x4_t g = vdivq_f32(x, vaddq_f32(vdupq_n_f32(1.0f), ExpPoly4(t)));
  // 0 where the exp saturates (-2y > kMax); a NaN t compares false: NaN stays.
  const uint32x4_t saturated = vcgtq_f32(t, vdupq_n_f32(exp_poly::kMax));
  return vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(g), saturated));
}

}  // namespace

void Gelu_neon(float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(x + i, Gelu4(vld1q_f32(x + i)));
  for (; i < n; ++i) x[i] = GeluExpPoly(x[i]);
}

void GeGlu_neon(float* gate, const float* up, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float32x4_t g = Gelu4(vld1q_f32(gate + i));
    vst1q_f32(gate + i, vmulq_f32(g, vld1q_f32(up + i)));
  }
  for (; i < n; ++i) gate[i] = GeluExpPoly(gate[i]) * up[i];
}

}  // namespace ember
#endif
