// AVX-512 variants of the ggml-numerics attention (ops/ggml_numerics.h): the
// instructions llama.cpp's AVX-512 build runs, so the bits of the _ref
// versions (tested).
#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "ops/ggml_numerics.h"
#include "quant/fp16.h"

namespace ember {
namespace {

__m512 LoadF16(const uint16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// _mm512_reduce_add_ps as GCC 12 expands it: halves, quarters, then pairs.
float ReduceAdd(__m512 v) {
  // Zero-masked extracts: the plain ones (and _mm512_castps512_ps256, built on
  // them) pass an undefined merge source that trips GCC 12's -Wuninitialized
  // once inlined (as in attention_block_avx512.cpp).
  const __m256 hi = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, _mm512_castps_pd(v), 1));
  const __m256 lo = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, _mm512_castps_pd(v), 0));
  const __m256 t3 = _mm256_add_ps(hi, lo);
  const __m128 t6 = _mm_add_ps(_mm256_extractf128_ps(t3, 1), _mm256_castps256_ps128(t3));
  const __m128 t8 = _mm_add_ps(t6, _mm_permute_ps(t6, _MM_SHUFFLE(1, 0, 3, 2)));
  return _mm_cvtss_f32(t8) + _mm_cvtss_f32(_mm_movehdup_ps(t8));
}

// GgmlExpAvx512 on 16 lanes.
__m512 Exp16(__m512 x) {
  const __m512 shifter = _mm512_set1_ps(0x1.8p23f);
  const __m512 z = _mm512_fmadd_ps(x, _mm512_set1_ps(0x1.715476p+0f), shifter);
  const __m512 n = _mm512_sub_ps(z, shifter);
  const __m512 b = _mm512_fnmadd_ps(n, _mm512_set1_ps(0x1.7f7d1cp-20f),
                                    _mm512_fnmadd_ps(n, _mm512_set1_ps(0x1.62e4p-1f), x));
  const __m512 u = _mm512_mul_ps(b, b);
  const __m512 j = _mm512_fmadd_ps(
      _mm512_fmadd_ps(
          _mm512_fmadd_ps(_mm512_set1_ps(0x1.0e4020p-7f), b, _mm512_set1_ps(0x1.573e2ep-5f)), u,
          _mm512_fmadd_ps(_mm512_set1_ps(0x1.555e66p-3f), b, _mm512_set1_ps(0x1.fffdb6p-2f))),
      u, _mm512_fmadd_ps(_mm512_set1_ps(0x1.ffffecp-1f), b, _mm512_set1_ps(1.0f)));
  const __m512 res = _mm512_scalef_ps(j, n);
  const __mmask16 big = _mm512_cmp_ps_mask(_mm512_abs_ps(n), _mm512_set1_ps(192.0f), _CMP_GT_OQ);
  if (big == 0) return res;
  const __m512 alt = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(n, _mm512_setzero_ps(), _CMP_LE_OQ),
                                          _mm512_set1_ps(INFINITY), _mm512_setzero_ps());
  return _mm512_mask_blend_ps(big, res, alt);
}

__mmask16 Tail(int n) { return static_cast<__mmask16>((1u << n) - 1); }

}  // namespace

float GgmlDotF16_avx512(const uint16_t* x, const uint16_t* y, int n) {
  const int np = n & ~63;
  __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                   _mm512_setzero_ps()};
  for (int i = 0; i < np; i += 64) {
    for (int r = 0; r < 4; ++r) {
      acc[r] = _mm512_fmadd_ps(LoadF16(x + i + 16 * r), LoadF16(y + i + 16 * r), acc[r]);
    }
  }
  acc[0] = _mm512_add_ps(acc[0], acc[2]);
  acc[1] = _mm512_add_ps(acc[1], acc[3]);
  double sumf = ReduceAdd(_mm512_add_ps(acc[0], acc[1]));
  for (int i = np; i < n; ++i) {
    sumf += static_cast<double>(_cvtsh_ss(x[i]) * _cvtsh_ss(y[i]));
  }
  return static_cast<float>(sumf);
}

void GgmlScaleF16_avx512(uint16_t* y, float v, int n) {
  const __m512 vv = _mm512_set1_ps(v);
  for (int i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? __mmask16(0xFFFF) : Tail(n - i);
    const __m512 a = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, y + i));
    _mm256_mask_storeu_epi16(y + i, m,
                             _mm512_cvtps_ph(_mm512_mul_ps(a, vv), _MM_FROUND_TO_NEAREST_INT));
  }
}

void GgmlMadF16_avx512(uint16_t* y, const uint16_t* x, float v, int n) {
  const __m512 vv = _mm512_set1_ps(v);
  for (int i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? __mmask16(0xFFFF) : Tail(n - i);
    const __m512 a = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, y + i));
    const __m512 b = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, x + i));
    _mm256_mask_storeu_epi16(y + i, m,
                             _mm512_cvtps_ph(_mm512_fmadd_ps(b, vv, a), _MM_FROUND_TO_NEAREST_INT));
  }
}

void GgmlAttendTiledBlock_avx512(const float* const* q, const int64_t* n_visible, int n_q,
                                 const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                                 float scale, float* scratch, float* const* out) {
  constexpr int T = kGgmlTileKv;  // 64 cells: four registers of 16
  float* kt = scratch;            // [head_dim][T] keys, transposed
  float* vt = kt + T * head_dim;  // [T][head_dim] values
  float* kq = vt + T * head_dim;  // [T] one query's scores, then weights
  float* M = kq + T;              // [n_q] running maxima
  float* S = M + n_q;             // [n_q] running sums
  int64_t n_rows = 0;
  for (int m = 0; m < n_q; ++m) {
    n_rows = std::max(n_rows, n_visible[m]);
    M[m] = -INFINITY;
    S[m] = 0.0f;
    std::fill(out[m], out[m] + head_dim, 0.0f);
  }
  const int dv = head_dim & ~15;  // value dims in whole registers; the rest scalar
  // The rows of the spans in context order, a span at a time.
  int span = 0;
  int64_t span_row = 0;
  for (int64_t ic = 0; ic < n_rows; ic += T) {
    const int n_tile = static_cast<int>(std::min<int64_t>(T, n_rows - ic));
    for (int t = 0; t < n_tile; ++t, ++span_row) {
      while (span_row >= spans[span].n && span + 1 < n_spans) {
        ++span;
        span_row = 0;
      }
      const uint16_t* k = spans[span].k + static_cast<size_t>(span_row) * stride;
      const uint16_t* v = spans[span].v + static_cast<size_t>(span_row) * stride;
      for (int d = 0; d < head_dim; ++d) kt[d * T + t] = _cvtsh_ss(k[d]);
      for (int d = 0; d < head_dim; ++d) vt[t * head_dim + d] = _cvtsh_ss(v[d]);
    }
    for (int m = 0; m < n_q; ++m) {
      if (ic >= n_visible[m]) continue;  // every cell masked: nothing changes
      const int valid = static_cast<int>(std::min<int64_t>(n_tile, n_visible[m] - ic));
      // Scores: for each cell a chain of fused multiply-adds over the dims.
      __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                       _mm512_setzero_ps()};
      for (int d = 0; d < head_dim; ++d) {
        const __m512 qd = _mm512_set1_ps(q[m][d]);
        for (int g = 0; g < 4; ++g) {
          acc[g] = _mm512_fmadd_ps(_mm512_loadu_ps(kt + d * T + 16 * g), qd, acc[g]);
        }
      }
      __m512 vmax = _mm512_set1_ps(-INFINITY);
      for (int g = 0; g < 4; ++g) {
        __m512 s = _mm512_add_ps(_mm512_mul_ps(acc[g], _mm512_set1_ps(scale)), _mm512_setzero_ps());
        const int lo = 16 * g;
        const __mmask16 live = valid >= lo + 16 ? __mmask16(0xFFFF)
                               : valid > lo     ? Tail(valid - lo)
                                                : __mmask16(0);
        s = _mm512_mask_blend_ps(live, _mm512_set1_ps(-INFINITY), s);
        _mm512_storeu_ps(kq + lo, s);
        vmax = _mm512_max_ps(vmax, s);
      }
      const float tile_max = _mm512_reduce_max_ps(vmax);
      const float m_new = std::fmax(M[m], tile_max);
      float* o = out[m];
      if (m_new > M[m]) {
        const float ms = std::exp(M[m] - m_new);
        for (int d = 0; d < head_dim; ++d) o[d] *= ms;
        S[m] *= ms;
      }
      M[m] = m_new;
      double sum = 0.0;
      for (int g = 0; g < 4; ++g) {
        const __m512 p = Exp16(_mm512_sub_ps(_mm512_loadu_ps(kq + 16 * g), _mm512_set1_ps(m_new)));
        _mm512_storeu_ps(kq + 16 * g, p);
        sum += static_cast<double>(ReduceAdd(p));
      }
      S[m] = static_cast<float>(static_cast<double>(S[m]) + sum);
      // Values: per dim a chain of fused multiply-adds over the cells.
      for (int d = 0; d < dv; d += 16) {
        __m512 a = _mm512_loadu_ps(o + d);
        for (int t = 0; t < valid; ++t) {
          a = _mm512_fmadd_ps(_mm512_loadu_ps(vt + t * head_dim + d), _mm512_set1_ps(kq[t]), a);
        }
        _mm512_storeu_ps(o + d, a);
      }
      for (int d = dv; d < head_dim; ++d) {
        float a = o[d];
        for (int t = 0; t < valid; ++t) a = std::fma(vt[t * head_dim + d], kq[t], a);
        o[d] = a;
      }
    }
  }
  for (int m = 0; m < n_q; ++m) {
    const float s_inv = S[m] == 0.0f ? 0.0f : 1.0f / S[m];
    for (int d = 0; d < head_dim; ++d) out[m][d] *= s_inv;
  }
}

}  // namespace ember
#endif  // __x86_64__
