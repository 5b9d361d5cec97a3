// Attention of one head (decode) on AVX2 + F16C: 8 dims per register, keys and
// values converted from f16 with vcvtph2ps (or loaded as they are from an f32
// cache). Same math as AttendHead_ref / AttendHeadF32_ref; the
// dot products sum in 8 lanes and then across them, so results agree with the
// reference to float rounding (not bit for bit). Prefill blocks of queries go
// through AttendBlock (ops/attention_block_avx2.cpp).
#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/avx2_common.h"

namespace ember {
namespace {

inline __m256 Load8(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline __m256 Load8(const float* p) { return _mm256_loadu_ps(p); }
inline __m256 Load8(const int8_t* p) {
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b));
}

// Scores of one query against four keys at a time: 4 independent fma chains
// (one chain per key waited on the fma latency every 8 dims), reduced by hadd.
// A key's score does not depend on which keys share its block: the lanes and
// the reduction order are the same for every slot, so any split of the rows
// gives the same bits.
// Span is KvSpan (f16 rows), KvSpanF32 or KvSpanQ8.
template <class Span>
void Scores(const float* q, const Span* spans, int n_spans, size_t stride, size_t scale_stride,
            int head_dim, float scale, float* scores) {
  int64_t n_kv = 0;
  for (int i = 0; i < n_spans; ++i) {
    const Span& sp = spans[i];
    for (int64_t j = 0; j < sp.n; j += 4) {
      // A short last block repeats its last key; the extra scores are dropped.
      decltype(sp.k) k[4];
      for (int b = 0; b < 4; ++b) {
        k[b] = sp.k + static_cast<size_t>(std::min<int64_t>(j + b, sp.n - 1)) * stride;
      }
      __m256 acc[4];
      for (int b = 0; b < 4; ++b) acc[b] = _mm256_setzero_ps();
      for (int d = 0; d < head_dim; d += 8) {
        const __m256 qv = _mm256_loadu_ps(q + d);
        for (int b = 0; b < 4; ++b) acc[b] = _mm256_fmadd_ps(qv, Load8(k[b] + d), acc[b]);
      }
      const int64_t take = std::min<int64_t>(4, sp.n - j);
      const __m256 s8 =
          _mm256_hadd_ps(_mm256_hadd_ps(acc[0], acc[1]), _mm256_hadd_ps(acc[2], acc[3]));
      const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
      alignas(16) float out4[4];
      _mm_store_ps(out4, _mm_mul_ps(s4, _mm_set1_ps(scale)));
      for (int b = 0; b < take; ++b) {
        float sc = out4[b];
        if constexpr (kRowScaled<Span>) sc *= sp.k_scale[static_cast<size_t>(j + b) * scale_stride];
        scores[n_kv + b] = sc;
      }
      n_kv += take;
    }
  }
}

// out[d0, d0 + 8 ND) = sum_j p[j] v_j[d0, d0 + 8 ND) over the rows of all
// spans. Each lane adds the rows in order whatever ND is, as the reference does.
template <int ND, class Span>
void WeightedRows(const float* p, const Span* spans, int n_spans, size_t stride,
                  size_t scale_stride, int d0, float* out) {
  __m256 acc[ND];
  for (int c = 0; c < ND; ++c) acc[c] = _mm256_setzero_ps();
  for (int i = 0; i < n_spans; ++i) {
    auto v = spans[i].v + d0;
    for (int64_t j = 0; j < spans[i].n; ++j, ++p, v += stride) {
      float w = *p;
      if constexpr (kRowScaled<Span>) w *= spans[i].v_scale[static_cast<size_t>(j) * scale_stride];
      const __m256 pj = _mm256_set1_ps(w);
      for (int c = 0; c < ND; ++c) acc[c] = _mm256_fmadd_ps(pj, Load8(v + 8 * c), acc[c]);
    }
  }
  for (int c = 0; c < ND; ++c) _mm256_storeu_ps(out + d0 + 8 * c, acc[c]);
}

template <class Span>
using WeightedRowsFn = void (*)(const float*, const Span*, int, size_t, size_t, int, float*);
// By the number of 8-dim registers per pass: 64 dims (8 accumulators and a
// row in 16 registers), fewer for the last pass of a head.
template <class Span>
constexpr WeightedRowsFn<Span> kWeightedRows[9] = {nullptr,
                                                   WeightedRows<1, Span>,
                                                   WeightedRows<2, Span>,
                                                   WeightedRows<3, Span>,
                                                   WeightedRows<4, Span>,
                                                   WeightedRows<5, Span>,
                                                   WeightedRows<6, Span>,
                                                   WeightedRows<7, Span>,
                                                   WeightedRows<8, Span>};

constexpr int kMaxHeadDim = 512;

// Scores, softmax, weighted rows: q as the kernel should see it.
template <class Span>
void Attend(const float* q, const Span* spans, int n_spans, size_t stride, size_t scale_stride,
            int head_dim, float scale, float* scores, float* out) {
  Scores(q, spans, n_spans, stride, scale_stride, head_dim, scale, scores);
  int64_t n_kv = 0;
  for (int i = 0; i < n_spans; ++i) n_kv += spans[i].n;
  Softmax_avx2(scores, n_kv);
  for (int d0 = 0; d0 < head_dim; d0 += 64) {
    kWeightedRows<Span>[std::min(64, head_dim - d0) / 8](scores, spans, n_spans, stride,
                                                         scale_stride, d0, out);
  }
}

}  // namespace

void AttendHead_avx2(const float* q, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                     float scale, float* scores, float* out) {
  if (head_dim % 8 != 0 || head_dim > kMaxHeadDim) {
    AttendHead_ref(q, spans, n_spans, stride, head_dim, scale, scores, out);
    return;
  }
  alignas(32) float qh[kMaxHeadDim];
  for (int d = 0; d < head_dim; d += 8) {  // q rounded to f16, as the reference does
    const __m256 x = _mm256_loadu_ps(q + d);
    _mm256_store_ps(qh + d, _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT)));
  }
  Attend(qh, spans, n_spans, stride, 0, head_dim, scale, scores, out);
}

void AttendHeadF32_avx2(const float* q, const KvSpanF32* spans, int n_spans, size_t stride,
                        int head_dim, float scale, float* scores, float* out) {
  if (head_dim % 8 != 0 || head_dim > kMaxHeadDim) {
    AttendHeadF32_ref(q, spans, n_spans, stride, head_dim, scale, scores, out);
    return;
  }
  Attend(q, spans, n_spans, stride, 0, head_dim, scale, scores, out);
}

void AttendHeadQ8_avx2(const float* q, const KvSpanQ8* spans, int n_spans, size_t stride,
                       size_t scale_stride, int head_dim, float scale, float* scores, float* out) {
  if (head_dim % 8 != 0 || head_dim > kMaxHeadDim) {
    AttendHeadQ8_ref(q, spans, n_spans, stride, scale_stride, head_dim, scale, scores, out);
    return;
  }
  Attend(q, spans, n_spans, stride, scale_stride, head_dim, scale, scores, out);
}

}  // namespace ember
#endif
