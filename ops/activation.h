// Element-wise activations.
#pragma once

#include <cstdint>

namespace ember {

// gate[i] = silu(gate[i]) * up[i], silu(x) = x / (1 + e^-x). (SwiGLU)
void SwiGlu_ref(float* gate, const float* up, int64_t n);

// Softmax in place over n floats; the sum is accumulated in double.
void Softmax_ref(float* x, int64_t n);
// The same bytes as Softmax_ref (only the max is vectorized); AVX2 builds only.
void Softmax_avx2(float* x, int64_t n);

}  // namespace ember
