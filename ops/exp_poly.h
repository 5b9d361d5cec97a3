// exp(x) for float, by range reduction and a degree-7 polynomial, in a scalar
// and an AVX2 form that give the same bits (the same operations in the same
// order, fma where fma is written). Used where the softmax and SiLU want
// exp for a whole vector: libm's expf is scalar and was 5-6% of prefill.
//
//   n = round(x log2 e), r = x - n ln2 (ln2 in two parts, Cody-Waite),
//   exp(r) ~ 1 + r + r^2 (c5 + c4 r + ... + c0 r^5) on |r| <= ln2 / 2,
//   exp(x) = exp(r) 2^n, 2^n built in the exponent field.
// The coefficients are the Cephes expf minimax fit; the error is within 2 ulp
// of the exact value on [-87.3, 88] (measured against std::exp in the tests).
// Outside: x < -87.33 (2^n would be subnormal) gives +0, also for -inf;
// x > 88 gives exp(88); NaN stays NaN.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace ember {
namespace exp_poly {

constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kC0 = 1.9875691500e-4f;
constexpr float kC1 = 1.3981999507e-3f;
constexpr float kC2 = 8.3334519073e-3f;
constexpr float kC3 = 4.1665795894e-2f;
constexpr float kC4 = 1.6666665459e-1f;
constexpr float kC5 = 5.0000001201e-1f;
constexpr float kMin = -87.3365478515625f;  // ln(2^-126), rounded up: n >= -126
constexpr float kMax = 88.0f;

}  // namespace exp_poly

inline float ExpPoly_ref(float x) {
  using namespace exp_poly;
  if (std::isnan(x)) return x;
  if (x < kMin) return 0.0f;  // also -inf
  const float v = std::fmin(x, kMax);
  const float n = std::nearbyint(v * kLog2e);
  float r = std::fma(n, -kLn2Hi, v);
  r = std::fma(n, -kLn2Lo, r);
  float y = kC0;
  y = std::fma(y, r, kC1);
  y = std::fma(y, r, kC2);
  y = std::fma(y, r, kC3);
  y = std::fma(y, r, kC4);
  y = std::fma(y, r, kC5);
  y = std::fma(y, r * r, r);
  y = y + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, 4);
  return y * scale;
}

}  // namespace ember
