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

// Causal attention of a block of queries (prefill): up to kAttendBlockQueries
// query vectors of one KV head — consecutive tokens x heads of one GQA group —
// against the rows of `spans`, which are those of the block's latest token.
// Query m sees the first n_visible[m] rows in span order (an earlier token of
// the same sequence sees a prefix of its successor's rows). Each key and value
// row is converted once for the whole block instead of once per query.
//
// The arithmetic is fixed so that every variant gives the bits of _ref:
//   qr[d]  = q[m][d] rounded to f16 (the cache is f16)
//   s_j    = (fma chain over d = 0.. of qr[d] * k_j[d]) * scale
//   p_j    = ExpPoly(s_j - max_j s_j)        for j < n_visible[m]
//   out[d] = (fma chain over j = 0.. of p_j * v_j[d]) * float(1 / sum_j p_j),
//            the sum in double, in row order.
// q[m], out[m]: [head_dim] f32; scratch: AttendBlockScratch(n_rows, head_dim)
// floats, n_rows = sum of spans[i].n = max of n_visible.
constexpr int kAttendBlockQueries = 16;
// Head dims the SIMD variants of AttendBlock take; others run _ref, slower
// than one AttendHead per query.
constexpr int kAttendBlockDimMultiple = 16;

// Converted key rows a variant may hold at once (scratch for it follows).
constexpr int kAttendBlockKeyRows = 32;

inline int64_t AttendBlockScratch(int64_t n_rows, int head_dim) {
  return kAttendBlockQueries * (n_rows + head_dim) +
         kAttendBlockKeyRows * static_cast<int64_t>(head_dim);
}

using AttendBlockFn = void (*)(const float* const* q, const int64_t* n_visible, int n_q,
                               const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                               float scale, float* scratch, float* const* out);

void AttendBlock_ref(const float* const* q, const int64_t* n_visible, int n_q, const KvSpan* spans,
                     int n_spans, size_t stride, int head_dim, float scale, float* scratch,
                     float* const* out);

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

// The same over an f32 cache (--kv-type f32): no rounding anywhere, the
// precision of llama.cpp's `--fa off` with an f32 cache. q stays f32; scores,
// softmax and the weighted sum are f32 (the softmax sum in double).
struct KvSpanF32 {
  const float* k;
  const float* v;
  int64_t n;
};

using AttendHeadF32Fn = void (*)(const float* q, const KvSpanF32* spans, int n_spans, size_t stride,
                                 int head_dim, float scale, float* scores, float* out);

void AttendHeadF32_ref(const float* q, const KvSpanF32* spans, int n_spans, size_t stride,
                       int head_dim, float scale, float* scores, float* out);

// Whether a span's rows carry per-row scales (kernels templated over the span
// type apply them): an int8 row j stands for k_scale_j * k[j] (and v alike),
// f16 and f32 rows for themselves.
template <class Span>
inline constexpr bool kRowScaled = false;
template <>
inline constexpr bool kRowScaled<KvSpanQ8> = true;

}  // namespace ember
