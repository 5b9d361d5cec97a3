// Attention of one head on AVX2 + F16C: 8 dims per register, keys and values
// converted from f16 with vcvtph2ps. Same math as AttendHead_ref; the dot
// products sum in 8 lanes and then across them, so results agree with the
// reference to float rounding (not bit for bit).
#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/avx2_common.h"

namespace ember {
namespace {

inline __m256 LoadF16(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// q . k for four keys at once: four independent fma chains (one chain per key
// waited on the fma latency every 8 dims), reduced by hadd. A key's score
// does not depend on which keys share its block: the lanes and the reduction
// order are the same for every slot, so prefill, decode and any split of the
// rows agree bit for bit.
inline __m128 Dot4Keys(const float* qh, const uint16_t* k0, const uint16_t* k1, const uint16_t* k2,
                       const uint16_t* k3, int head_dim) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  for (int d = 0; d < head_dim; d += 8) {
    const __m256 qv = _mm256_load_ps(qh + d);
    a0 = _mm256_fmadd_ps(qv, LoadF16(k0 + d), a0);
    a1 = _mm256_fmadd_ps(qv, LoadF16(k1 + d), a1);
    a2 = _mm256_fmadd_ps(qv, LoadF16(k2 + d), a2);
    a3 = _mm256_fmadd_ps(qv, LoadF16(k3 + d), a3);
  }
  const __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
  return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

// out[d0, d0 + 8 ND) = sum_j p_j v_j[d0, d0 + 8 ND) over the rows of all spans.
template <int ND>
void WeightedRows(const float* p, const KvSpan* spans, int n_spans, size_t stride, int d0,
                  float* out) {
  __m256 acc[ND];
  for (int c = 0; c < ND; ++c) acc[c] = _mm256_setzero_ps();
  for (int i = 0; i < n_spans; ++i) {
    const uint16_t* v = spans[i].v + d0;
    for (int64_t j = 0; j < spans[i].n; ++j, v += stride) {
      const __m256 pj = _mm256_set1_ps(*p++);
      for (int c = 0; c < ND; ++c) acc[c] = _mm256_fmadd_ps(pj, LoadF16(v + 8 * c), acc[c]);
    }
  }
  for (int c = 0; c < ND; ++c) _mm256_storeu_ps(out + d0 + 8 * c, acc[c]);
}

}  // namespace

void AttendHead_avx2(const float* q, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                     float scale, float* scores, float* out) {
  constexpr int kMaxHeadDim = 512;
  if (head_dim % 8 != 0 || head_dim > kMaxHeadDim) {
    AttendHead_ref(q, spans, n_spans, stride, head_dim, scale, scores, out);
    return;
  }
  alignas(32) float qh[kMaxHeadDim];
  for (int d = 0; d < head_dim; d += 8) {
    // q rounded to f16, as the reference does.
    const __m256 x = _mm256_loadu_ps(q + d);
    _mm256_store_ps(qh + d, _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT)));
  }
  int64_t n_kv = 0;
  for (int i = 0; i < n_spans; ++i) {
    const KvSpan& sp = spans[i];
    for (int64_t j = 0; j < sp.n; j += 4) {
      // A short last block repeats its last key; the extra scores are dropped.
      const uint16_t* k[4];
      for (int b = 0; b < 4; ++b) {
        k[b] = sp.k + static_cast<size_t>(std::min<int64_t>(j + b, sp.n - 1)) * stride;
      }
      alignas(16) float s4[4];
      _mm_store_ps(s4,
                   _mm_mul_ps(Dot4Keys(qh, k[0], k[1], k[2], k[3], head_dim), _mm_set1_ps(scale)));
      const int64_t take = std::min<int64_t>(4, sp.n - j);
      for (int b = 0; b < take; ++b) scores[n_kv++] = s4[b];
    }
  }
  Softmax_avx2(scores, n_kv);
  // out = sum_j p_j v_j, 64 dims (8 independent accumulators) per pass over
  // the rows; each lane still adds the rows in order, as the reference does.
  for (int d0 = 0; d0 < head_dim; d0 += 64) {
    switch (std::min(64, head_dim - d0) / 8) {
      case 8:
        WeightedRows<8>(scores, spans, n_spans, stride, d0, out);
        break;
      case 7:
        WeightedRows<7>(scores, spans, n_spans, stride, d0, out);
        break;
      case 6:
        WeightedRows<6>(scores, spans, n_spans, stride, d0, out);
        break;
      case 5:
        WeightedRows<5>(scores, spans, n_spans, stride, d0, out);
        break;
      case 4:
        WeightedRows<4>(scores, spans, n_spans, stride, d0, out);
        break;
      case 3:
        WeightedRows<3>(scores, spans, n_spans, stride, d0, out);
        break;
      case 2:
        WeightedRows<2>(scores, spans, n_spans, stride, d0, out);
        break;
      default:
        WeightedRows<1>(scores, spans, n_spans, stride, d0, out);
        break;
    }
  }
}

}  // namespace ember
#endif
