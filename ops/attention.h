// Attention of one query head over the cached keys and values of its KV head.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ember {

// A run of n consecutive cache rows: row j of the run at k + j * stride (and
// v + j * stride), f16. A token attends to one span (its sequence's rows) or
// two (a prefix shared with other sequences, then its own rows: beam search).
struct KvSpan {
  const uint16_t* k;
  const uint16_t* v;
  int64_t n;
};

// q:      [head_dim] f32 (rounded to f16 before the dot, as the cache is f16)
// spans:  n_spans runs of cached rows, stride elements apart within a run
// scores: scratch of sum(spans[i].n) floats; out: [head_dim] f32
// out = sum_j softmax_j(scale * q·k_j) v_j over the rows of all spans; one
// span gives exactly the same result as before spans existed (same order).
using AttendHeadFn = void (*)(const float* q, const KvSpan* spans, int n_spans, size_t stride,
                              int head_dim, float scale, float* scores, float* out);

void AttendHead_ref(const float* q, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                    float scale, float* scores, float* out);

}  // namespace ember
