// ExpPoly_ref (ops/exp_poly.h) for 8 floats: the same operations, so the same
// bits. Include only from sources compiled with -mavx2 -mfma.
#pragma once

#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/exp_poly.h"

namespace ember {

inline __m256 ExpPoly8(__m256 x) {
  using namespace exp_poly;
  // min_ps returns its second operand when either is NaN: NaN x stays NaN.
  const __m256 v = _mm256_min_ps(_mm256_set1_ps(kMax), x);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(v, _mm256_set1_ps(kLog2e)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-kLn2Hi), v);
  r = _mm256_fmadd_ps(n, _mm256_set1_ps(-kLn2Lo), r);
  __m256 y = _mm256_set1_ps(kC0);
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(kC1));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(kC2));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(kC3));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(kC4));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(kC5));
  y = _mm256_fmadd_ps(y, _mm256_mul_ps(r, r), r);
  y = _mm256_add_ps(y, _mm256_set1_ps(1.0f));
  const __m256i e =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  const __m256 out = _mm256_mul_ps(y, _mm256_castsi256_ps(e));
  // Below kMin (and -inf) the exponent field would not hold 2^n: +0 there.
  return _mm256_andnot_ps(_mm256_cmp_ps(x, _mm256_set1_ps(kMin), _CMP_LT_OQ), out);
}

}  // namespace ember
#endif
