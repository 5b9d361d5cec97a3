#include <cmath>

#include "ops/rope.h"

namespace ember {

void RopeCache(float* cache, int64_t pos, int n_dims, float freq_base, float freq_scale,
               const float* freq_factors) {
  const float theta_scale = std::pow(freq_base, -2.0f / static_cast<float>(n_dims));
  float theta = static_cast<float>(pos);
  for (int i = 0; i < n_dims / 2; ++i) {
    const float ff = freq_factors ? freq_factors[i] : 1.0f;
    const float t = freq_scale * (theta / ff);
    cache[2 * i] = std::cos(t);
    cache[2 * i + 1] = std::sin(t);
    theta *= theta_scale;
  }
}

void RopeApply_ref(float* x, const float* cache, int n_dims, RopeMode mode) {
  RopeApplyFrom_ref(x, cache, n_dims, mode, 0);
}

void RopeApplyFrom_ref(float* x, const float* cache, int n_dims, RopeMode mode, int from) {
  const int half = n_dims / 2;
  for (int i = from; i < half; ++i) {
    const int a = mode == RopeMode::kNormal ? 2 * i : i;
    const int b = mode == RopeMode::kNormal ? 2 * i + 1 : i + half;
    const float c = cache[2 * i], s = cache[2 * i + 1];
    const float x0 = x[a], x1 = x[b];
    x[a] = x0 * c - x1 * s;
    x[b] = x0 * s + x1 * c;
  }
}

}  // namespace ember
