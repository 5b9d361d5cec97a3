// GELU and GeGLU on AVX2: x / (1 + e^-2y) with ExpPoly8 for the exp (the form
// and its error against Gelu_ref: ops/gelu_exp_poly.h). Tails shorter than 8
// take GeluExpPoly, the same operations one float at a time.
#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/activation.h"
#include "ops/exp_poly_avx2.h"
#include "ops/gelu_exp_poly.h"

namespace ember {

namespace {

inline __m256 Gelu8(__m256 x) {
  using namespace gelu;
  const __m256 t = _mm256_mul_ps(
      x, _mm256_fmadd_ps(_mm256_mul_ps(x, x), _mm256_set1_ps(kT3), _mm256_set1_ps(kT1)));
  const __m256 g = _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), ExpPoly8(t)));
  // 0 where the exp saturates (-2y > kMax); a NaN t compares false: NaN stays.
  return _mm256_andnot_ps(_mm256_cmp_ps(t, _mm256_set1_ps(exp_poly::kMax), _CMP_GT_OQ), g);
}

}  // namespace

void Gelu_avx2(float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, Gelu8(_mm256_loadu_ps(x + i)));
  for (; i < n; ++i) x[i] = GeluExpPoly(x[i]);
}

void GeGlu_avx2(float* gate, const float* up, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = Gelu8(_mm256_loadu_ps(gate + i));
    _mm256_storeu_ps(gate + i, _mm256_mul_ps(g, _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) gate[i] = GeluExpPoly(gate[i]) * up[i];
}

}  // namespace ember
#endif
