#include "ops/activation.h"
#include "ops/attention.h"

namespace ember {

void AttendHeadQ8_ref(const float* q, const KvSpanQ8* spans, int n_spans, size_t stride,
                      size_t scale_stride, int head_dim, float scale, float* scores, float* out) {
  int64_t n_kv = 0;
  for (int i = 0; i < n_spans; ++i) {
    for (int64_t j = 0; j < spans[i].n; ++j) {
      const int8_t* kj = spans[i].k + static_cast<size_t>(j) * stride;
      float s = 0.0f;
      for (int d = 0; d < head_dim; ++d) s += q[d] * static_cast<float>(kj[d]);
      scores[n_kv++] = s * spans[i].k_scale[static_cast<size_t>(j) * scale_stride] * scale;
    }
  }
  Softmax_ref(scores, n_kv);
  for (int d = 0; d < head_dim; ++d) out[d] = 0.0f;
  const float* p = scores;
  for (int i = 0; i < n_spans; ++i) {
    for (int64_t j = 0; j < spans[i].n; ++j) {
      const int8_t* vj = spans[i].v + static_cast<size_t>(j) * stride;
      // The row's scale folds into its weight: one multiply per row, not per element.
      const float pj = *p++ * spans[i].v_scale[static_cast<size_t>(j) * scale_stride];
      for (int d = 0; d < head_dim; ++d) out[d] += pj * static_cast<float>(vj[d]);
    }
  }
}

}  // namespace ember
