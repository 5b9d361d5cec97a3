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
// Query m sees the rows j with f_m <= j < n_visible[m] in span order, where
// f_m = n_first ? n_first[m] : 0 and 0 <= f_m < n_visible[m]: an earlier token
// of the same sequence sees a prefix of its successor's rows, and under a
// sliding window (Gemma 3's local layers) only the last rows of that prefix.
// n_first need not be non-decreasing. Each key and value row is converted once
// for the whole block instead of once per query.
//
// The arithmetic is fixed so that every variant gives the bits of _ref, with
// V_m = {j : f_m <= j < n_visible[m]} the visible rows of query m:
//   qr[d]  = q[m][d] rounded to f16 (the cache is f16)
//   s_j    = (fma chain over d = 0.. of qr[d] * k_j[d]) * scale
//   p_j    = ExpPoly(s_j - max_{i in V_m} s_i)   for j in V_m
//   out[d] = (fma chain from 0 over j in V_m, in row order, of p_j * v_j[d])
//            * float(1 / sum_{j in V_m} p_j), the sum in double, in row order.
// Rows outside V_m change no bit: they are left out of the max and the sum,
// and a variant that runs them through the value chain gives them p = 0, as
// fma(0, v, acc) == acc for the finite v of an f16 cache. (Before the first
// visible row acc is +0 and stays +0. After the last, acc == -0 would turn +0;
// it needs p_j v_j to round to -0, i.e. exactly -2^-150, as p_j >= 2^-126 and
// |v_j| >= 2^-24.) So n_first == nullptr gives the bits of all-zero n_first,
// and dropping from the spans the leading rows no query sees (n_first and
// n_visible lowered to match) gives the same bits.
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

using AttendBlockFn = void (*)(const float* const* q, const int64_t* n_first,
                               const int64_t* n_visible, int n_q, const KvSpan* spans, int n_spans,
                               size_t stride, int head_dim, float scale, float* scratch,
                               float* const* out);

void AttendBlock_ref(const float* const* q, const int64_t* n_first, const int64_t* n_visible,
                     int n_q, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                     float scale, float* scratch, float* const* out);

// AttendBlock in stages, for a block too big for one thread: a decode step's
// GQA group over a long context, when a model has fewer KV heads than threads
// (Gemma 3: 1; SmolLM2: 3 on 2 threads), so that the rows of the scores and
// of the softmax and the dims of the values can go to different threads. Each
// stage computes exactly its part of the formulas above, so every split of
// the rows among AttendScores / AttendMax / AttendExp calls and of the dims
// among AttendValues calls, by any variant, gives the bits of AttendBlock_ref.
// For n_q <= kAttendLanes queries:
//   qt:  [head_dim][kAttendLanes] the f16-rounded queries (AttendQueriesT);
//   st:  [n_rows][kAttendLanes] lane m = query m: scores, then probabilities;
//   mx:  [kAttendLanes] a maximum of scores per query.
// Lanes from n_q on hold unspecified values that no stage stores to out.
constexpr int kAttendLanes = 8;

// qt from q[0..n_q) (lanes from n_q on repeat the last query). Plain code:
// it runs once per block, before the stages are split.
void AttendQueriesT(const float* const* q, int n_q, int head_dim, float* qt);

// st[r][m] = s_j of query m for the r-th row of `spans` (a run of the block's
// rows: the caller points st at the run's first row). Every row is scored,
// whether its queries see it or not. kf: kAttendBlockKeyRows * head_dim floats.
using AttendScoresFn = void (*)(const float* qt, int n_q, const KvSpan* spans, int n_spans,
                                size_t stride, int head_dim, float scale, float* kf, float* st);
// mx[m] = the largest st[j][m] over the rows j in [r0, r1) that query m sees
// (n_first[m] <= j < n_visible[m]; n_first may be null: 0), -inf if none.
// The maximum of these over runs that cover the rows is the block's maximum.
using AttendMaxFn = void (*)(const int64_t* n_first, const int64_t* n_visible, int n_q, int64_t r0,
                             int64_t r1, const float* st, float* mx);
// In place over rows [r0, r1) of st: p_j = ExpPoly(s_j - mx[m]) for the rows
// query m sees, 0 for the others (mx: the block's maximum).
using AttendExpFn = void (*)(const int64_t* n_first, const int64_t* n_visible, int n_q, int64_t r0,
                             int64_t r1, const float* mx, float* st);
// out[m][d0, d1) for every query over all rows of the spans (st[r] the r-th
// row's probabilities), scaled by float(1 / sum p), the sum in double over
// all rows in order (each call sums them itself). d0, d1: multiples of
// kAttendBlockDimMultiple, or 0 and head_dim.
using AttendValuesFn = void (*)(const float* st, int n_q, const KvSpan* spans, int n_spans,
                                size_t stride, int d0, int d1, float* const* out);

// Whether each of the n_q queries sees every row of [r0, r1) (n_first may
// be null: 0): a decode step's, mostly, where the stages may skip the masks.
inline bool SeesAll(const int64_t* n_first, const int64_t* n_visible, int n_q, int64_t r0,
                    int64_t r1) {
  for (int m = 0; m < n_q; ++m) {
    if ((n_first && n_first[m] > r0) || n_visible[m] < r1) return false;
  }
  return true;
}

// The rows [r0, r1) of spans[0..n_spans) (rows counted in span order) as
// spans in out[] (at most n_spans of them); returns how many.
inline int SubSpans(const KvSpan* spans, int n_spans, size_t stride, int64_t r0, int64_t r1,
                    KvSpan* out) {
  int n_out = 0;
  int64_t base = 0;  // row index of spans[i]'s first row
  for (int i = 0; i < n_spans; base += spans[i].n, ++i) {
    const int64_t lo = r0 > base ? r0 - base : 0;
    const int64_t hi = r1 - base < spans[i].n ? r1 - base : spans[i].n;
    if (hi <= lo) continue;
    const size_t off = static_cast<size_t>(lo) * stride;
    out[n_out++] = {spans[i].k + off, spans[i].v + off, hi - lo};
  }
  return n_out;
}

void AttendScores_ref(const float* qt, int n_q, const KvSpan* spans, int n_spans, size_t stride,
                      int head_dim, float scale, float* kf, float* st);
void AttendMax_ref(const int64_t* n_first, const int64_t* n_visible, int n_q, int64_t r0,
                   int64_t r1, const float* st, float* mx);
void AttendExp_ref(const int64_t* n_first, const int64_t* n_visible, int n_q, int64_t r0,
                   int64_t r1, const float* mx, float* st);
void AttendValues_ref(const float* st, int n_q, const KvSpan* spans, int n_spans, size_t stride,
                      int d0, int d1, float* const* out);

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
