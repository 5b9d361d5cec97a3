// GELU and GeGLU, scalar reference: the tanh approximation as ggml writes it.
#include <cmath>

#include "ops/activation.h"
#include "ops/gelu_exp_poly.h"

namespace ember {

namespace {

inline float Gelu(float x) {
  using namespace gelu;
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + kCoef * x * x)));
}

}  // namespace

void Gelu_ref(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = Gelu(x[i]);
}

void GeGlu_ref(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) gate[i] = Gelu(gate[i]) * up[i];
}

}  // namespace ember
