// Small AVX2 helpers shared by the AVX2 kernels. Include only from sources
// compiled with -mavx2 (their ISA flags are per file, ops/CMakeLists).
#pragma once

#if defined(__x86_64__)
#include <immintrin.h>

namespace ember {

// The sum of the 8 lanes of v.
inline float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

}  // namespace ember
#endif
