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

// Two query heads of one KV head (grouped-query attention) at once: exactly the
// results of two AttendHead calls of the same variant, with each key and value
// row loaded and converted once for both. scores0 / scores1: scratch as above.
using AttendHeadPairFn = void (*)(const float* q0, const float* q1, const KvSpan* spans,
                                  int n_spans, size_t stride, int head_dim, float scale,
                                  float* scores0, float* scores1, float* out0, float* out1);

void AttendHeadPair_ref(const float* q0, const float* q1, const KvSpan* spans, int n_spans,
                        size_t stride, int head_dim, float scale, float* scores0, float* scores1,
                        float* out0, float* out1);

// The same over an int8 cache (--kv-type q8): row j of a span holds head_dim
// int8 values at k + j * stride with one f32 scale per (token, head) at
// k_scale + j * scale_stride, so k_j = k_scale_j * k[j] (and v alike).
struct KvSpanQ8 {
  const int8_t* k;
  const int8_t* v;
  const float* k_scale;
  const float* v_scale;
  int64_t n;
};

// q stays f32 (no rounding: the cache, not the query, is what is compressed).
using AttendHeadQ8Fn = void (*)(const float* q, const KvSpanQ8* spans, int n_spans, size_t stride,
                                size_t scale_stride, int head_dim, float scale, float* scores,
                                float* out);

void AttendHeadQ8_ref(const float* q, const KvSpanQ8* spans, int n_spans, size_t stride,
                      size_t scale_stride, int head_dim, float scale, float* scores, float* out);

}  // namespace ember
