// Softmax and SwiGLU on AArch64 NEON, with ExpPoly4 for the exponentials
// (libm's expf is scalar). They agree with Softmax_ref / SwiGlu_ref (std::exp)
// to a few float ulps; the tails shorter than 4 use ExpPoly_ref, the same bits.
// AArch64 only: armhf keeps the _ref versions (ops/exp_poly_neon.h says why).
#if defined(__aarch64__)
#include <arm_neon.h>

#include <cmath>

#include "ops/activation.h"
#include "ops/exp_poly_neon.h"

namespace ember {

void ExpPoly_neon(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, ExpPoly4(vld1q_f32(x + i)));
  for (; i < n; ++i) y[i] = ExpPoly_ref(x[i]);
}

void Softmax_neon(float* x, int64_t n) {
  // The max as Softmax_ref takes it: fmaxnm is IEEE maxNum, which (like
  // std::fmax) returns the other operand when one is a quiet NaN.
  float32x4_t m4 = vdupq_n_f32(-INFINITY);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) m4 = vmaxnmq_f32(m4, vld1q_f32(x + i));
  float max = vmaxnmvq_f32(m4);
  for (; i < n; ++i) max = std::fmax(max, x[i]);
  // The exponentials, summed in double as Softmax_ref sums them (in another
  // order: two 2-lane accumulators).
  const float32x4_t mv = vdupq_n_f32(max);
  float64x2_t s0 = vdupq_n_f64(0.0), s1 = vdupq_n_f64(0.0);
  for (i = 0; i + 4 <= n; i += 4) {
    const float32x4_t e = ExpPoly4(vsubq_f32(vld1q_f32(x + i), mv));
    vst1q_f32(x + i, e);
    s0 = vaddq_f64(s0, vcvt_f64_f32(vget_low_f32(e)));
    s1 = vaddq_f64(s1, vcvt_high_f64_f32(e));
  }
  double sum = vaddvq_f64(vaddq_f64(s0, s1));
  for (; i < n; ++i) {
    x[i] = ExpPoly_ref(x[i] - max);
    sum += x[i];
  }
  const float inv = static_cast<float>(1.0 / sum);
  const float32x4_t iv = vdupq_n_f32(inv);
  for (i = 0; i + 4 <= n; i += 4) vst1q_f32(x + i, vmulq_f32(vld1q_f32(x + i), iv));
  for (; i < n; ++i) x[i] *= inv;
}

void SwiGlu_neon(float* gate, const float* up, int64_t n) {
  const float32x4_t one = vdupq_n_f32(1.0f);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float32x4_t g = vld1q_f32(gate + i);
    const float32x4_t e = ExpPoly4(vnegq_f32(g));  // e^-g
    const float32x4_t silu = vdivq_f32(g, vaddq_f32(one, e));
    vst1q_f32(gate + i, vmulq_f32(silu, vld1q_f32(up + i)));
  }
  for (; i < n; ++i) {
    const float g = gate[i];
    gate[i] = g / (1.0f + ExpPoly_ref(-g)) * up[i];
  }
}

}  // namespace ember
#endif
