// RMSNorm on AArch64 NEON: squares in float, as RmsNorm_ref takes them,
// widened and summed in four 2-lane double accumulators (the reference sums
// them one by one in double: the same to within double rounding, so the float
// mean almost always agrees); then the same per-element float operations.
//
// AArch64 only. ARMv7 NEON has no double lanes: summing in float lanes would
// add float rounding to the mean (and ARMv7 NEON flushes subnormals), for a
// kernel that is a small share of a forward pass, so armhf keeps RmsNorm_ref.
#if defined(__aarch64__)
#include <arm_neon.h>

#include <cmath>

#include "ops/norm.h"

namespace ember {

namespace {

// Adds the squares of 4 floats, widened to double, to two accumulators.
inline void AddSquares(float32x4_t v, float64x2_t* lo, float64x2_t* hi) {
  const float32x4_t sq = vmulq_f32(v, v);
  *lo = vaddq_f64(*lo, vcvt_f64_f32(vget_low_f32(sq)));
  *hi = vaddq_f64(*hi, vcvt_high_f64_f32(sq));
}

}  // namespace

void RmsNorm_neon(const float* x, const float* weight, float* y, int64_t n, float eps) {
  // Two sets of accumulators so that consecutive adds do not wait on each other.
  float64x2_t s0 = vdupq_n_f64(0.0), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    AddSquares(vld1q_f32(x + i), &s0, &s1);
    AddSquares(vld1q_f32(x + i + 4), &s2, &s3);
  }
  for (; i + 4 <= n; i += 4) AddSquares(vld1q_f32(x + i), &s0, &s1);
  double sum = vaddvq_f64(vaddq_f64(vaddq_f64(s0, s1), vaddq_f64(s2, s3)));
  for (; i < n; ++i) sum += static_cast<double>(x[i] * x[i]);
  const float mean = static_cast<float>(sum / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(mean + eps);
  const float32x4_t sv = vdupq_n_f32(scale);
  for (i = 0; i + 4 <= n; i += 4) {
    float32x4_t v = vmulq_f32(vld1q_f32(x + i), sv);
    if (weight != nullptr) v = vmulq_f32(v, vld1q_f32(weight + i));
    vst1q_f32(y + i, v);
  }
  for (; i < n; ++i) y[i] = weight != nullptr ? (x[i] * scale) * weight[i] : x[i] * scale;
}

}  // namespace ember
#endif
