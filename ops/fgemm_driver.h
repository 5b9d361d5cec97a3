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

// Float weights are read as stored, from the mapped file's 4 KiB pages,
// kRows rows at a time: kRows short streams (a 2048-column F16 row is one
// page), which the hardware prefetchers hardly start before they end. So a
// block's step over columns [i, i + 16) also asks for L2 the lines
// kPrefetchAhead bytes further on in the rows' order in memory (a block's
// rows are consecutive): the next block's lines arrive in order, as one
// stream. TinyLlama-shape F16, decode at 1 thread (docs/PERFORMANCE.md "Stop
// 40"): 5.9-6.8 -> 10.4-11.1 tok/s; into L1 instead 8.0-9.7, 8 KiB ahead no gain.
constexpr int64_t kPrefetchAhead = 16 << 10;

// Bytes of one weight as stored.
template <FloatWeight W>
constexpr int64_t kElemBytes = W == FloatWeight::kF32 ? 4 : 2;

// For R rows of W weights from row0, at column i (a multiple of 16): the
// bytes R rows read per 16 columns, kPrefetchAhead past the point the block
// has reached in its linear order. The step is a constant, so the loop
// unrolls to its 3 to 6 prefetches.
template <int R, FloatWeight W>
inline void PrefetchAhead(const uint8_t* row0, int64_t i) {
  constexpr int64_t kStep = 16 * R * kElemBytes<W>;
  const uint8_t* p = row0 + kPrefetchAhead + i * R * kElemBytes<W>;
#pragma GCC unroll 8
  for (int64_t b = 0; b < kStep; b += 64) __builtin_prefetch(p + b, 0, 2);
}

// Element i of a weight row, widened.
template <FloatWeight W>
inline float At(const uint8_t* row, int64_t i) {
  if constexpr (W == FloatWeight::kF32) {
    float f;
    std::memcpy(&f, row + 4 * i, 4);
    return f;
  } else {
    uint16_t h;
    std::memcpy(&h, row + 2 * i, 2);
    return W == FloatWeight::kF16 ? Fp16ToFp32(h) : Bf16ToFp32(h);
  }
}

// The contract's last step: the columns past the last whole 16, one fma each.
template <FloatWeight W>
inline float Tail(float acc, const uint8_t* row, const float* xt, int64_t k16, int64_t k) {
  for (int64_t i = k16; i < k; ++i) acc = std::fma(At<W>(row, i), xt[i], acc);
  return acc;
}

// K::Block<W, R, T>(w, r0, x, t0, y, ldy): R rows from r0, T tokens from t0.
// R is K::kRows or 1 (the last rows); T is 1 .. K::kTokens.
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

template <class K, FloatWeight W>
void Run(const FloatMatrix& w, int64_t row_begin, int64_t row_end, const float* x, int64_t m,
         float* y, int64_t ldy) {
  static_assert(K::kTokens >= 1 && K::kTokens <= 4, "token blocks of 1 to 4");
  const int64_t k = w.n_cols;
  const int64_t per_chunk = std::max<int64_t>(
      K::kTokens, kChunkBytes / std::max<int64_t>(1, 4 * k) / K::kTokens * K::kTokens);
  for (int64_t t0 = 0; t0 < m; t0 += per_chunk) {
    const int64_t t1 = std::min(m, t0 + per_chunk);
    int64_t r = row_begin;
    for (; r + K::kRows <= row_end; r += K::kRows) Rows<K, W, K::kRows>(w, r, x, t0, t1, y, ldy);
    for (; r < row_end; ++r) Rows<K, W, 1>(w, r, x, t0, t1, y, ldy);
  }
}

// A row widened to f32 with K::Widen16<W>(row, i, out) (16 columns from i).
template <class K, FloatWeight W>
void WidenRowAs(const uint8_t* row, int64_t k, float* out) {
  const int64_t k16 = k - k % 16;
  for (int64_t i = 0; i < k16; i += 16) K::template Widen16<W>(row, i, out + i);
  for (int64_t i = k16; i < k; ++i) out[i] = At<W>(row, i);
}

template <class K>
void WidenRow(const FloatMatrix& w, int64_t r, float* out) {
  switch (w.type) {
    case FloatWeight::kF32:
      return WidenRowAs<K, FloatWeight::kF32>(w.row(r), w.n_cols, out);
    case FloatWeight::kF16:
      return WidenRowAs<K, FloatWeight::kF16>(w.row(r), w.n_cols, out);
    case FloatWeight::kBF16:
      return WidenRowAs<K, FloatWeight::kBF16>(w.row(r), w.n_cols, out);
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
