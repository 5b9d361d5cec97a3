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

}  // namespace ember
