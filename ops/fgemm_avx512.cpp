// Float GEMM with AVX-512F: the contract's 16 lanes are one zmm. A block of
// 4 rows x 4 tokens keeps 16 accumulators; per 16 columns it loads 4 weight
// vectors (widened by vcvtph2ps, or a shift for bf16) and 4 activation
// vectors for 16 fmas.
#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/fgemm_driver.h"

namespace ember {
namespace {

// The 16 weights at p (a chunk of a row), widened.
template <FloatWeight W>
inline __m512 Load16(const uint8_t* p) {
  if constexpr (W == FloatWeight::kF32) {
    return _mm512_loadu_ps(reinterpret_cast<const float*>(p));
  } else {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    if constexpr (W == FloatWeight::kF16) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
}

// h8 = s[0..7] + s[8..15], h4, h2, then h2[0] + h2[1] (the contract's tree).
// (extractf32x8 for the low half too: GCC 12 warns on _mm512_castps512_ps256.)
inline float Reduce(__m512 s) {
  const __m256 h8 = _mm256_add_ps(_mm512_extractf32x8_ps(s, 0), _mm512_extractf32x8_ps(s, 1));
  const __m128 h4 = _mm_add_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1));
  const __m128 h2 = _mm_add_ps(h4, _mm_movehl_ps(h4, h4));
  return _mm_cvtss_f32(_mm_add_ss(h2, _mm_movehdup_ps(h2)));
}

struct Avx512 {
  static constexpr int kRows = kFloatGroupAvx512;
  static constexpr int kTokens = 4;

  template <FloatWeight W, int R, int T>
  static void Block(const FloatMatrix& w, int64_t r0, const float* x, int64_t t0, float* y,
                    int64_t ldy) {
    const int64_t k = w.n_cols, k16 = k - k % 16;
    const fgemm::BlockRows<R> rows(w, r0);
    const float* xs[T];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) xs[t] = x + (t0 + t) * k;
    __m512 acc[R][T];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) acc[r][t] = _mm512_setzero_ps();
    }
    int64_t off = 0;  // chunk i / 16 of each row
    const uint8_t* pf = rows.prefetch;
    for (int64_t i = 0; i < k16; i += 16, off += rows.stride, pf += rows.prefetch_step) {
      fgemm::PrefetchRows<R, W>(pf);
      __m512 xv[T];
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) xv[t] = _mm512_loadu_ps(xs[t] + i);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const __m512 wv = Load16<W>(rows.start[r] + off);
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) acc[r][t] = _mm512_fmadd_ps(wv, xv[t], acc[r][t]);
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        y[(t0 + t) * ldy + r0 + r] = fgemm::Tail<W>(Reduce(acc[r][t]), rows.tail[r], xs[t], k16, k);
      }
    }
  }
};

}  // namespace

void FGemm_avx512(const FloatMatrix& w, int64_t row_begin, int64_t row_end, const float* x,
                  int64_t m, float* y, int64_t ldy) {
  fgemm::Dispatch<Avx512>(w, row_begin, row_end, x, m, y, ldy);
}

}  // namespace ember
#endif  // __x86_64__
