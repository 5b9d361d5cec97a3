// Float GEMM with AVX2 + FMA + F16C: the contract's 16 lanes are two ymm
// (lanes 0-7 and 8-15). With 16 ymm registers a block is 6 rows x 1 token
// (decode: 12 accumulators, the two activation and two weight registers
// fill the rest) or 2 rows x 2 tokens (8 accumulators, 2 + 2 loads);
// FGemm_avx2 picks by m and the rows' order. Decode reads the weights from
// memory, a block's rows at once: 6 rows in flight decoded an F16 model ~10%
// faster than 4 (docs/FLOAT.md), and 8 (which spill accumulators) no faster
// than 6. Every loop over the block's rows and tokens is unrolled by pragma:
// where one was left a loop (the reduction after the column loop), GCC kept
// the accumulator arrays in memory and stored all 12 of them every 16
// columns, and the 6 x 1 F16 block ran at 14 instead of 22 G weights/s in L2.
#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/fgemm_driver.h"

namespace ember {
namespace {

// The 16 weights at p (a chunk of a row), widened: lanes 0-7 in lo, 8-15 in hi.
template <FloatWeight W>
inline void Load16(const uint8_t* p, __m256* lo, __m256* hi) {
  if constexpr (W == FloatWeight::kF32) {
    const float* f = reinterpret_cast<const float*>(p);
    *lo = _mm256_loadu_ps(f);
    *hi = _mm256_loadu_ps(f + 8);
  } else {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16));
    if constexpr (W == FloatWeight::kF16) {
      *lo = _mm256_cvtph_ps(a);
      *hi = _mm256_cvtph_ps(b);
    } else {
      *lo = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(a), 16));
      *hi = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(b), 16));
    }
  }
}

// h8 = lo + hi (s[j] + s[j + 8]), then h4, h2 and h2[0] + h2[1].
inline float Reduce(__m256 lo, __m256 hi) {
  const __m256 h8 = _mm256_add_ps(lo, hi);
  const __m128 h4 = _mm_add_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1));
  const __m128 h2 = _mm_add_ps(h4, _mm_movehl_ps(h4, h4));
  return _mm_cvtss_f32(_mm_add_ss(h2, _mm_movehdup_ps(h2)));
}

template <int kR, int kT>
struct Avx2 {
  static constexpr int kRows = kR;
  static constexpr int kTokens = kT;

  template <FloatWeight W>
  static void Widen16(const uint8_t* p, float* out) {
    __m256 lo, hi;
    Load16<W>(p, &lo, &hi);
    _mm256_storeu_ps(out, lo);
    _mm256_storeu_ps(out + 8, hi);
  }

  template <FloatWeight W, int R, int T>
  static void Block(const FloatMatrix& w, int64_t r0, const float* x, int64_t t0, float* y,
                    int64_t ldy) {
    const int64_t k = w.n_cols, k16 = k - k % 16;
    const fgemm::BlockRows<R> rows(w, r0);
    const float* xs[T];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) xs[t] = x + (t0 + t) * k;
    __m256 lo[R][T], hi[R][T];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) lo[r][t] = hi[r][t] = _mm256_setzero_ps();
    }
    int64_t off = 0;  // chunk i / 16 of each row
    const uint8_t* pf = rows.prefetch;
    for (int64_t i = 0; i < k16; i += 16, off += rows.stride, pf += rows.prefetch_step) {
      fgemm::PrefetchRows<R, W>(pf);
      __m256 xl[T], xh[T];
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        xl[t] = _mm256_loadu_ps(xs[t] + i);
        xh[t] = _mm256_loadu_ps(xs[t] + i + 8);
      }
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        __m256 wl, wh;
        Load16<W>(rows.start[r] + off, &wl, &wh);
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) {
          lo[r][t] = _mm256_fmadd_ps(wl, xl[t], lo[r][t]);
          hi[r][t] = _mm256_fmadd_ps(wh, xh[t], hi[r][t]);
        }
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        y[(t0 + t) * ldy + r0 + r] =
            fgemm::Tail<W>(Reduce(lo[r][t], hi[r][t]), rows.tail[r], xs[t], k16, k);
      }
    }
  }
};

}  // namespace

void FloatRow_avx2(const FloatMatrix& w, int64_t r, float* out) {
  fgemm::WidenRow<Avx2<1, 1>>(w, r, out);
}

void FGemm_avx2(const FloatMatrix& w, int64_t row_begin, int64_t row_end, const float* x, int64_t m,
                float* y, int64_t ldy) {
  // In row groups (every F16 / BF16 matrix of a loaded model) the 6-row block
  // serves every m: its first token's pass reads the group's bytes as one
  // stream and the other tokens find them in cache. The 2 x 2 block read a
  // third of each group's chunk per pass: from memory (F16, 22,002 x 2048,
  // one thread) at m = 2 it ran 10.3 GB/s on groups where 6 x 1 runs 11.9
  // (2 x 2 on GGUF's rows: 13.3); at m = 4 / 16, 6 x 1 on groups runs
  // 8.3 / 2.6 and 2 x 2 on GGUF's rows 7.7 / 2.0 (docs/FLOAT.md). GGUF's row
  // order (F32) keeps 2 x 2 for m > 1.
  if (m == 1 || w.group != 1) {
    return fgemm::Dispatch<Avx2<kFloatGroupAvx2, 1>>(w, row_begin, row_end, x, m, y, ldy);
  }
  fgemm::Dispatch<Avx2<2, 2>>(w, row_begin, row_end, x, m, y, ldy);
}

}  // namespace ember
#endif  // __x86_64__
