// RMSNorm on AVX2: squares in float, as RmsNorm_ref takes them, summed in two
// 4-lane double accumulators (the reference sums them one by one in double: the
// same to within double rounding, so the float mean almost always agrees);
// then the same per-element float operations.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cmath>

#include "ops/norm.h"

namespace ember {

void RmsNorm_avx2(const float* x, const float* weight, float* y, int64_t n, float eps) {
  __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 sq = _mm256_mul_ps(v, v);
    s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(sq)));
    s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(sq, 1)));
  }
  alignas(32) double d4[4];
  _mm256_store_pd(d4, _mm256_add_pd(s0, s1));
  double sum = (d4[0] + d4[1]) + (d4[2] + d4[3]);
  for (; i < n; ++i) sum += static_cast<double>(x[i] * x[i]);
  const float mean = static_cast<float>(sum / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(mean + eps);
  const __m256 sv = _mm256_set1_ps(scale);
  for (i = 0; i + 8 <= n; i += 8) {
    __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + i), sv);
    if (weight != nullptr) v = _mm256_mul_ps(v, _mm256_loadu_ps(weight + i));
    _mm256_storeu_ps(y + i, v);
  }
  for (; i < n; ++i) y[i] = weight != nullptr ? (x[i] * scale) * weight[i] : x[i] * scale;
}

}  // namespace ember
#endif
