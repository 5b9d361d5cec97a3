// Softmax and SwiGLU on AVX2, with ExpPoly8 for the exponentials (libm's expf
// is scalar). They agree with Softmax_ref / SwiGlu_ref (std::exp) to a few
// float ulps; the tails shorter than 8 use ExpPoly_ref, the same bits.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cmath>

#include "ops/activation.h"
#include "ops/exp_poly_avx2.h"

namespace ember {

void ExpPoly_avx2(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, ExpPoly8(_mm256_loadu_ps(x + i)));
  for (; i < n; ++i) y[i] = ExpPoly_ref(x[i]);
}

void Softmax_avx2(float* x, int64_t n) {
  // The max as Softmax_ref takes it (max_ps(x, m) keeps m when x is NaN, as
  // fmax does); the sum in double, as there.
  __m256 m8 = _mm256_set1_ps(-INFINITY);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) m8 = _mm256_max_ps(_mm256_loadu_ps(x + i), m8);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, m8);
  float max = -INFINITY;
  for (float v : lanes) max = std::fmax(max, v);
  for (; i < n; ++i) max = std::fmax(max, x[i]);
  const __m256 mv = _mm256_set1_ps(max);
  __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
  for (i = 0; i + 8 <= n; i += 8) {
    const __m256 e = ExpPoly8(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv));
    _mm256_storeu_ps(x + i, e);
    s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
    s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
  }
  alignas(32) double d4[4];
  _mm256_store_pd(d4, _mm256_add_pd(s0, s1));
  double sum = (d4[0] + d4[1]) + (d4[2] + d4[3]);
  for (; i < n; ++i) {
    x[i] = ExpPoly_ref(x[i] - max);
    sum += x[i];
  }
  const float inv = static_cast<float>(1.0 / sum);
  const __m256 iv = _mm256_set1_ps(inv);
  for (i = 0; i + 8 <= n; i += 8)
    _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), iv));
  for (; i < n; ++i) x[i] *= inv;
}

void SwiGlu_avx2(float* gate, const float* up, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    const __m256 e = ExpPoly8(_mm256_xor_ps(g, sign));  // e^-g
    const __m256 silu = _mm256_div_ps(g, _mm256_add_ps(one, e));
    _mm256_storeu_ps(gate + i, _mm256_mul_ps(silu, _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) {
    const float g = gate[i];
    gate[i] = g / (1.0f + ExpPoly_ref(-g)) * up[i];
  }
}

}  // namespace ember
#endif
