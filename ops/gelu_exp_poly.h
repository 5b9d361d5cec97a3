// GELU (tanh approximation) through ExpPoly: the constants Gelu_ref uses and
// the scalar form of the SIMD variants (their tails, shorter than a vector).
//
// The SIMD variants do not evaluate tanh: with y = sqrt(2/pi) (x + 0.044715 x^3),
//   0.5 x (1 + tanh y) = 0.5 x (1 + (1 - e^-2y) / (1 + e^-2y)) = x / (1 + e^-2y),
// one exp and one divide, and no cancellation in 1 + tanh y where tanh y is
// near -1 (x below about -1). The reference takes 1 + tanhf(y) as ggml does,
// and loses bits there that this form keeps. Measured on a 0.000137 sweep of
// [-20, 20] against the formula in double: this form is within 1.3e-7
// relative for x >= 0 and 7.3e-7 relative for -3 <= x < 0 (the exp's argument
// carries its rounding, times |2y| <= 7), _ref within 1.7e-7 and 1.2e-5; so
// the two differ by at most 2.4e-7 of max(|gelu|, |x|) (tests/ops/gelu_test.cpp
// requires 4e-7).
#pragma once

#include <cmath>

#include "ops/exp_poly.h"

namespace ember {
namespace gelu {

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCoef = 0.044715f;
// -2y = x (kT1 + kT3 x^2).
constexpr float kT1 = -2.0f * kSqrt2OverPi;
constexpr float kT3 = -2.0f * kSqrt2OverPi * kCoef;

}  // namespace gelu

// The SIMD variants' GELU for one float (the same operations, lane by lane).
// When -2y > kMax the exp would saturate at exp(kMax) and x / (1 + e^-2y)
// would be about x e^-88 instead of ~0: return 0 there, as _ref does (its
// 1 + tanh y is already exactly 0 from y < -9). Large positive x: e^-2y = 0,
// so gelu = x; NaN stays NaN. (x = -inf gives 0 here, NaN in _ref: -inf * 0.)
inline float GeluExpPoly(float x) {
  using namespace gelu;
  const float t = x * std::fma(x * x, kT3, kT1);  // -2y
  if (t > exp_poly::kMax) return 0.0f;
  return x / (1.0f + ExpPoly_ref(t));
}

}  // namespace ember
