// The reference single-head attention for every cache type: f16 (query
// rounded to f16 as well), f32 and int8 with per-row scales. One loop
// structure; the span type decides how a row element is read and scaled.
#include <cstddef>

#include "ops/activation.h"
#include "ops/attention.h"
#include "quant/fp16.h"

namespace ember {
namespace {

inline float Elem(const uint16_t* row, int d) { return Fp16ToFp32(row[d]); }
inline float Elem(const float* row, int d) { return row[d]; }
inline float Elem(const int8_t* row, int d) { return static_cast<float>(row[d]); }

// softmax_j(scale * q·k_j) weighted sum of v_j over the rows of all spans.
// An int8 row j stands for k_scale_j * k[j] (and v alike).
template <class Span>
void Attend(const float* q, const Span* spans, int n_spans, size_t stride, size_t scale_stride,
            int head_dim, float scale, float* scores, float* out) {
  int64_t n_kv = 0;
  for (int i = 0; i < n_spans; ++i) {
    for (int64_t j = 0; j < spans[i].n; ++j) {
      const auto* kj = spans[i].k + static_cast<size_t>(j) * stride;
      float s = 0.0f;
      for (int d = 0; d < head_dim; ++d) s += q[d] * Elem(kj, d);
      if constexpr (kRowScaled<Span>) s *= spans[i].k_scale[static_cast<size_t>(j) * scale_stride];
      scores[n_kv++] = s * scale;
    }
  }
  Softmax_ref(scores, n_kv);
  for (int d = 0; d < head_dim; ++d) out[d] = 0.0f;
  const float* p = scores;
  for (int i = 0; i < n_spans; ++i) {
    for (int64_t j = 0; j < spans[i].n; ++j) {
      const auto* vj = spans[i].v + static_cast<size_t>(j) * stride;
      float pj = *p++;
      // The row's scale folds into its weight: one multiply per row, not per element.
      if constexpr (kRowScaled<Span>) pj *= spans[i].v_scale[static_cast<size_t>(j) * scale_stride];
      for (int d = 0; d < head_dim; ++d) out[d] += pj * Elem(vj, d);
    }
  }
}

constexpr int kMaxHeadDim = 512;

}  // namespace

void AttendHead_ref(const float* q, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                    float scale, float* scores, float* out) {
  float qh[kMaxHeadDim];  // q rounded to f16, as the cache is f16
  for (int d = 0; d < head_dim; ++d) qh[d] = Fp16ToFp32(Fp32ToFp16(q[d]));
  Attend(qh, spans, n_spans, stride, 0, head_dim, scale, scores, out);
}

void AttendHeadF32_ref(const float* q, const KvSpanF32* spans, int n_spans, size_t stride,
                       int head_dim, float scale, float* scores, float* out) {
  Attend(q, spans, n_spans, stride, 0, head_dim, scale, scores, out);
}

void AttendHeadQ8_ref(const float* q, const KvSpanQ8* spans, int n_spans, size_t stride,
                      size_t scale_stride, int head_dim, float scale, float* scores, float* out) {
  Attend(q, spans, n_spans, stride, scale_stride, head_dim, scale, scores, out);
}

}  // namespace ember
