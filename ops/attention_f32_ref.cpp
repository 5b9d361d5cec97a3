#include "ops/activation.h"
#include "ops/attention.h"

namespace ember {

void AttendHeadF32_ref(const float* q, const KvSpanF32* spans, int n_spans, size_t stride,
                       int head_dim, float scale, float* scores, float* out) {
  int64_t n_kv = 0;
  for (int i = 0; i < n_spans; ++i) {
    for (int64_t j = 0; j < spans[i].n; ++j) {
      const float* kj = spans[i].k + static_cast<size_t>(j) * stride;
      float s = 0.0f;
      for (int d = 0; d < head_dim; ++d) s += q[d] * kj[d];
      scores[n_kv++] = s * scale;
    }
  }
  Softmax_ref(scores, n_kv);
  for (int d = 0; d < head_dim; ++d) out[d] = 0.0f;
  const float* p = scores;
  for (int i = 0; i < n_spans; ++i) {
    for (int64_t j = 0; j < spans[i].n; ++j) {
      const float* vj = spans[i].v + static_cast<size_t>(j) * stride;
      const float pj = *p++;
      for (int d = 0; d < head_dim; ++d) out[d] += pj * vj[d];
    }
  }
}

}  // namespace ember
