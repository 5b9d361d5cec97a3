// Element-wise activations.
#pragma once

#include <cstdint>

namespace ember {

// gate[i] = silu(gate[i]) * up[i], silu(x) = x / (1 + e^-x). (SwiGLU)
void SwiGlu_ref(float* gate, const float* up, int64_t n);
using SwiGluFn = void (*)(float* gate, const float* up, int64_t n);

// Softmax in place over n floats; the sum is accumulated in double.
void Softmax_ref(float* x, int64_t n);

// AVX2 builds only: the same with ExpPoly8 (ops/exp_poly.h) for exp, within a
// few ulps of the _ref versions; ExpPoly_avx2 gives ExpPoly_ref's bits.
void Softmax_avx2(float* x, int64_t n);
void SwiGlu_avx2(float* gate, const float* up, int64_t n);
void ExpPoly_avx2(const float* x, float* y, int64_t n);

// AArch64 builds only: the same with ExpPoly4 (ops/exp_poly_neon.h).
// (armhf keeps the _ref versions: see ops/exp_poly_neon.h for why.)
void Softmax_neon(float* x, int64_t n);
void SwiGlu_neon(float* gate, const float* up, int64_t n);
void ExpPoly_neon(const float* x, float* y, int64_t n);

// GELU, tanh approximation (as ggml's gelu):
//   gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
// Gelu_ref works in place; GeGlu_ref: gate[i] = gelu(gate[i]) * up[i] (GeGLU,
// Gemma's feed-forward; no model in ember uses it yet).
void Gelu_ref(float* x, int64_t n);
void GeGlu_ref(float* gate, const float* up, int64_t n);
using GeGluFn = void (*)(float* gate, const float* up, int64_t n);

// SIMD GELU with the ExpPoly exp, in the form 0.5 x (1 + tanh y) =
// x / (1 + e^(-2y)) (ops/gelu_exp_poly.h says why); within 4e-7 of _ref,
// relative to max(|result|, |x|) (tests/ops/gelu_test.cpp).
void Gelu_avx2(float* x, int64_t n);
void GeGlu_avx2(float* gate, const float* up, int64_t n);
void Gelu_neon(float* x, int64_t n);
void GeGlu_neon(float* gate, const float* up, int64_t n);

}  // namespace ember
