// Fp32ToFp16Row with F16C: vcvtps2ph rounds to nearest even as _ref does; a
// NaN keeps the top of its payload there, so NaN lanes are replaced with
// _ref's sign | 0x7E00.
#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/convert.h"
#include "quant/fp16.h"

namespace ember {

void Fp32ToFp16Row_avx2(const float* x, uint16_t* y, int64_t n) {
  const __m256i sign_mask = _mm256_set1_epi32(static_cast<int>(0x80000000u));
  const __m256i quiet = _mm256_set1_epi32(0x7E00);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    // 8 halves in the low 16 bits of each 32-bit lane, for the NaN fix-up.
    __m256i h = _mm256_cvtepu16_epi32(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    const __m256i canonical = _mm256_or_si256(
        quiet, _mm256_srli_epi32(_mm256_and_si256(_mm256_castps_si256(v), sign_mask), 16));
    h = _mm256_blendv_epi8(h, canonical, nan);
    // Back to 8 x 16 bits: packus of (lanes 0-3, 4-7) within 128-bit halves.
    const __m128i packed =
        _mm_packus_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), packed);
  }
  for (; i < n; ++i) y[i] = Fp32ToFp16(x[i]);
}

}  // namespace ember
#endif  // __x86_64__
