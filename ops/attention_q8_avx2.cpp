// Attention of one head over an int8 cache on AVX2: 8 dims per register,
// int8 widened to int32 then float. Same math as AttendHeadQ8_ref; the dot
// products sum in 8 lanes and then across them, so results agree with the
// reference to float rounding (not bit for bit).
#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/activation.h"
#include "ops/avx2_common.h"
#include "ops/attention.h"

namespace ember {
namespace {

inline __m256 LoadI8(const int8_t* p) {
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b));
}

}  // namespace

void AttendHeadQ8_avx2(const float* q, const KvSpanQ8* spans, int n_spans, size_t stride,
                       size_t scale_stride, int head_dim, float scale, float* scores, float* out) {
  if (head_dim % 8 != 0) {
    AttendHeadQ8_ref(q, spans, n_spans, stride, scale_stride, head_dim, scale, scores, out);
    return;
  }
  int64_t n_kv = 0;
  for (int i = 0; i < n_spans; ++i) {
    for (int64_t j = 0; j < spans[i].n; ++j) {
      const int8_t* kj = spans[i].k + static_cast<size_t>(j) * stride;
      __m256 acc = _mm256_setzero_ps();
      for (int d = 0; d < head_dim; d += 8) {
        acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + d), LoadI8(kj + d), acc);
      }
      scores[n_kv++] =
          HorizontalSum(acc) * spans[i].k_scale[static_cast<size_t>(j) * scale_stride] * scale;
    }
  }
  Softmax_ref(scores, n_kv);
  for (int d = 0; d < head_dim; d += 8) {
    __m256 acc = _mm256_setzero_ps();
    const float* p = scores;
    for (int i = 0; i < n_spans; ++i) {
      const int8_t* v = spans[i].v + d;
      const float* vs = spans[i].v_scale;
      for (int64_t j = 0; j < spans[i].n; ++j) {
        const float pj = *p++ * vs[static_cast<size_t>(j) * scale_stride];
        acc = _mm256_fmadd_ps(_mm256_set1_ps(pj), LoadI8(v + static_cast<size_t>(j) * stride), acc);
      }
    }
    _mm256_storeu_ps(out + d, acc);
  }
}

}  // namespace ember
#endif
