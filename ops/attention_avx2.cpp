// Attention of one head on AVX2 + F16C: 8 dims per register, keys and values
// converted from f16 with vcvtph2ps. Same math as AttendHead_ref; the dot
// products sum in 8 lanes and then across them, so results agree with the
// reference to float rounding (not bit for bit).
#if defined(__x86_64__)
#include <immintrin.h>

#include <cmath>

#include "ops/activation.h"
#include "ops/avx2_common.h"
#include "ops/attention.h"

namespace ember {
namespace {

inline __m256 LoadF16(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

}  // namespace

void AttendHead_avx2(const float* q, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                     float scale, float* scores, float* out) {
  if (head_dim % 8 != 0) {
    AttendHead_ref(q, spans, n_spans, stride, head_dim, scale, scores, out);
    return;
  }
  constexpr int kMaxHeadDim = 512;
  alignas(32) float qh[kMaxHeadDim];
  for (int d = 0; d < head_dim; d += 8) {
    // q rounded to f16, as the reference does.
    const __m256 x = _mm256_loadu_ps(q + d);
    _mm256_store_ps(qh + d, _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT)));
  }
  int64_t n_kv = 0;
  for (int i = 0; i < n_spans; ++i) {
    for (int64_t j = 0; j < spans[i].n; ++j) {
      const uint16_t* kj = spans[i].k + static_cast<size_t>(j) * stride;
      __m256 acc = _mm256_setzero_ps();
      for (int d = 0; d < head_dim; d += 8) {
        acc = _mm256_fmadd_ps(_mm256_load_ps(qh + d), LoadF16(kj + d), acc);
      }
      scores[n_kv++] = HorizontalSum(acc) * scale;
    }
  }
  Softmax_ref(scores, n_kv);
  for (int d = 0; d < head_dim; d += 8) {
    __m256 acc = _mm256_setzero_ps();
    const float* p = scores;
    for (int i = 0; i < n_spans; ++i) {
      const uint16_t* v = spans[i].v + d;
      for (int64_t j = 0; j < spans[i].n; ++j) {
        acc = _mm256_fmadd_ps(_mm256_set1_ps(*p++), LoadF16(v + static_cast<size_t>(j) * stride),
                              acc);
      }
    }
    _mm256_storeu_ps(out + d, acc);
  }
}

}  // namespace ember
#endif
