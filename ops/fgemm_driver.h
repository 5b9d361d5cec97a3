// The loops around a float GEMM kernel's register block (ops/fgemm.h), shared
// by the SIMD variants: each gives Block<R, T>, which computes R rows x T
// tokens over all of k, in the contract's order.
//
// Order of work: tokens in chunks whose activations fit in L2 (x: [chunk, k]
// f32), then blocks of kRows rows (their weights stay in L1 while every token
// block of the chunk passes over them), then blocks of kTokens tokens. A
// weight is read from memory once per chunk: once per call when m <= chunk,
// which is every decode step.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "ops/fgemm.h"
#include "quant/fp16.h"

namespace ember::fgemm {

// Activations a chunk may hold, in bytes: half of a 512 KiB L2 (Zen 2/3;
// a chunk that fills L2 measured half the GFLOP/s at m = 64).
constexpr int64_t kChunkBytes = 256 * 1024;

// A block reads its kRows rows 16 columns at a time. In GGUF's row order
// (group 1) those are kRows short streams (a 2048-column F16 row is 4 KiB),
// which the hardware prefetchers hardly start before they end. So a block's
// step over columns [i, i + 16) also asks for L2 the lines kPrefetchAhead
// bytes further on in the rows' order in memory (a block's rows are
// consecutive): the next block's lines arrive in order, as one stream.
// TinyLlama-shape F16, decode at 1 thread (docs/PERFORMANCE.md "Stop 40"):
// 5.9-6.8 -> 10.4-11.1 tok/s; into L1 instead 8.0-9.7, 8 KiB ahead no gain.
constexpr int64_t kPrefetchAhead = 16 << 10;
// In a grouped order (FloatMatrix::group) the block's bytes are one stream
// already, and a prefetch just ahead of it helps most: TinyLlama-shape F16,
// decode at 1 thread on the AVX2 host, distances alternating (tok/s, 3-4
// rounds): 16 KiB 5.7-7.6, 2 KiB 6.4-7.4, 1.5 KiB 7.1-8.0, 1 KiB 7.4-8.4,
// 768 B 7.7-8.8, 512 B 7.4-8.2, none 7.0-7.3.
constexpr int64_t kGroupedPrefetchAhead = 1 << 10;

// Bytes of one weight as stored.
template <FloatWeight W>
constexpr int64_t kElemBytes = W == FloatWeight::kF32 ? 4 : 2;

// The lines R rows of W weights fill per 16 columns, asked for L2 from p (a
// BlockRows::prefetch position). The count is a constant, so the loop
// unrolls to its 1 to 6 prefetches.
template <int R, FloatWeight W>
inline void PrefetchRows(const uint8_t* p) {
  constexpr int64_t kStep = 16 * R * kElemBytes<W>;
#pragma GCC unroll 8
  for (int64_t b = 0; b < kStep; b += 64) __builtin_prefetch(p + b, 0, 2);
}

// Element i of a run of weights, widened.
template <FloatWeight W>
inline float At(const uint8_t* p, int64_t i) {
  if constexpr (W == FloatWeight::kF32) {
    float f;
    std::memcpy(&f, p + 4 * i, 4);
    return f;
  } else {
    uint16_t h;
    std::memcpy(&h, p + 2 * i, 2);
    return W == FloatWeight::kF16 ? Fp16ToFp32(h) : Bf16ToFp32(h);
  }
}

// The contract's last step: the columns past the last whole 16 (k - k16 of
// them from `tail`, FloatRowRef::tail), one fma each.
template <FloatWeight W>
inline float Tail(float acc, const uint8_t* tail, const float* xt, int64_t k16, int64_t k) {
  for (int64_t i = k16; i < k; ++i) acc = std::fma(At<W>(tail, i - k16), xt[i], acc);
  return acc;
}

// The rows of a block [r0, r0 + R) as the kernels read them: each row's
// chunk c at start[r] + c * stride, its tail at tail[r]. One stride for all:
// Run gives a block only rows of one group (or of a group-1 matrix).
template <int R>
struct BlockRows {
  const uint8_t* start[R];
  const uint8_t* tail[R];
  int64_t stride;
  // Where PrefetchRows asks at the first 16 columns, and how far that moves
  // per 16: the block's place in its linear order in memory plus the
  // distance. In GGUF's order the block's R rows are one run of R rows, R x
  // 16 elements per 16 columns; in a group, the group's chunks, `stride`
  // apart (a block reads a whole group: Run and the variants' group sizes).
  const uint8_t* prefetch;
  int64_t prefetch_step;

  BlockRows(const FloatMatrix& w, int64_t r0) {
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const FloatRowRef ref = w.row_ref(r0 + r);
      start[r] = ref.start;
      tail[r] = ref.tail;
      stride = ref.stride;
    }
    const bool grouped = w.group != 1;
    const int64_t eb = static_cast<int64_t>(w.elem_bytes());
    prefetch = grouped ? start[0] - r0 % w.group * 16 * eb + kGroupedPrefetchAhead
                       : start[0] + kPrefetchAhead;
    prefetch_step = grouped ? stride : 16 * R * eb;
  }
};

// K::Block<W, R, T>(w, r0, x, t0, y, ldy): R rows from r0 (BlockRows<R>),
// T tokens from t0. R is K::kRows or 1; T is 1 .. K::kTokens.
template <class K, FloatWeight W, int R>
void Rows(const FloatMatrix& w, int64_t r0, const float* x, int64_t t_begin, int64_t t_end,
          float* y, int64_t ldy) {
  int64_t t = t_begin;
  for (; t + K::kTokens <= t_end; t += K::kTokens) {
    K::template Block<W, R, K::kTokens>(w, r0, x, t, y, ldy);
  }
  switch (t_end - t) {
    case 0:
      break;
    case 1:
      K::template Block<W, R, 1>(w, r0, x, t, y, ldy);
      break;
    case 2:
      if constexpr (K::kTokens > 2) K::template Block<W, R, 2>(w, r0, x, t, y, ldy);
      break;
    default:
      if constexpr (K::kTokens > 3) K::template Block<W, R, 3>(w, r0, x, t, y, ldy);
      break;
  }
}

// Rows go in blocks of K::kRows where the block's rows share one group of
// w's order (always in group 1; in a group of G, blocks aligned to it when
// K::kRows divides G), one at a time elsewhere: a row's sums do not depend
// on which way it went (the contract), only the speed does.
template <class K, FloatWeight W>
void Run(const FloatMatrix& w, int64_t row_begin, int64_t row_end, const float* x, int64_t m,
         float* y, int64_t ldy) {
  static_assert(K::kTokens >= 1 && K::kTokens <= 4, "token blocks of 1 to 4");
  const int64_t k = w.n_cols;
  const int64_t per_chunk = std::max<int64_t>(
      K::kTokens, kChunkBytes / std::max<int64_t>(1, 4 * k) / K::kTokens * K::kTokens);
  for (int64_t t0 = 0; t0 < m; t0 += per_chunk) {
    const int64_t t1 = std::min(m, t0 + per_chunk);
    for (int64_t r = row_begin; r < row_end;) {
      const int64_t last = r + K::kRows - 1;
      if (last < row_end && (w.group == 1 || r / w.group == last / w.group)) {
        Rows<K, W, K::kRows>(w, r, x, t0, t1, y, ldy);
        r += K::kRows;
      } else {
        Rows<K, W, 1>(w, r, x, t0, t1, y, ldy);
        ++r;
      }
    }
  }
}

// A row widened to f32 with K::Widen16<W>(p, out) (16 elements at p).
template <class K, FloatWeight W>
void WidenRowAs(const FloatRowRef& row, int64_t k, float* out) {
  const int64_t k16 = k - k % 16;
  const uint8_t* p = row.start;
  for (int64_t i = 0; i < k16; i += 16, p += row.stride) K::template Widen16<W>(p, out + i);
  for (int64_t i = k16; i < k; ++i) out[i] = At<W>(row.tail, i - k16);
}

template <class K>
void WidenRow(const FloatMatrix& w, int64_t r, float* out) {
  switch (w.type) {
    case FloatWeight::kF32:
      return WidenRowAs<K, FloatWeight::kF32>(w.row_ref(r), w.n_cols, out);
    case FloatWeight::kF16:
      return WidenRowAs<K, FloatWeight::kF16>(w.row_ref(r), w.n_cols, out);
    case FloatWeight::kBF16:
      return WidenRowAs<K, FloatWeight::kBF16>(w.row_ref(r), w.n_cols, out);
  }
}

// The entry point of a variant: the weight type picked once per call.
template <class K>
void Dispatch(const FloatMatrix& w, int64_t row_begin, int64_t row_end, const float* x, int64_t m,
              float* y, int64_t ldy) {
  switch (w.type) {
    case FloatWeight::kF32:
      return Run<K, FloatWeight::kF32>(w, row_begin, row_end, x, m, y, ldy);
    case FloatWeight::kF16:
      return Run<K, FloatWeight::kF16>(w, row_begin, row_end, x, m, y, ldy);
    case FloatWeight::kBF16:
      return Run<K, FloatWeight::kBF16>(w, row_begin, row_end, x, m, y, ldy);
  }
}

}  // namespace ember::fgemm
