#include "ops/activation.h"
#include "ops/attention.h"
#include "quant/fp16.h"

namespace ember {

void AttendHead_ref(const float* q, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                    float scale, float* scores, float* out) {
  constexpr int kMaxHeadDim = 512;
  float qh[kMaxHeadDim];
  for (int d = 0; d < head_dim; ++d) qh[d] = Fp16ToFp32(Fp32ToFp16(q[d]));
  int64_t n_kv = 0;
  for (int i = 0; i < n_spans; ++i) {
    for (int64_t j = 0; j < spans[i].n; ++j) {
      const uint16_t* kj = spans[i].k + static_cast<size_t>(j) * stride;
      float s = 0.0f;
      for (int d = 0; d < head_dim; ++d) s += qh[d] * Fp16ToFp32(kj[d]);
      scores[n_kv++] = s * scale;
    }
  }
  Softmax_ref(scores, n_kv);
  for (int d = 0; d < head_dim; ++d) out[d] = 0.0f;
  const float* p = scores;
  for (int i = 0; i < n_spans; ++i) {
    for (int64_t j = 0; j < spans[i].n; ++j) {
      const uint16_t* vj = spans[i].v + static_cast<size_t>(j) * stride;
      const float pj = *p++;
      for (int d = 0; d < head_dim; ++d) out[d] += pj * Fp16ToFp32(vj[d]);
    }
  }
}

}  // namespace ember
