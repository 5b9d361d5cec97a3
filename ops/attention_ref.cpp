#include "ops/attention.h"

#include "ops/activation.h"
#include "quant/fp16.h"

namespace ember {

void AttendHead_ref(const float* q, const uint16_t* k, const uint16_t* v, size_t stride,
                    int64_t n_kv, int head_dim, float scale, float* scores, float* out) {
  constexpr int kMaxHeadDim = 512;
  float qh[kMaxHeadDim];
  for (int d = 0; d < head_dim; ++d) qh[d] = Fp16ToFp32(Fp32ToFp16(q[d]));
  for (int64_t j = 0; j < n_kv; ++j) {
    const uint16_t* kj = k + static_cast<size_t>(j) * stride;
    float s = 0.0f;
    for (int d = 0; d < head_dim; ++d) s += qh[d] * Fp16ToFp32(kj[d]);
    scores[j] = s * scale;
  }
  Softmax_ref(scores, n_kv);
  for (int d = 0; d < head_dim; ++d) out[d] = 0.0f;
  for (int64_t j = 0; j < n_kv; ++j) {
    const uint16_t* vj = v + static_cast<size_t>(j) * stride;
    const float p = scores[j];
    for (int d = 0; d < head_dim; ++d) out[d] += p * Fp16ToFp32(vj[d]);
  }
}

}  // namespace ember
