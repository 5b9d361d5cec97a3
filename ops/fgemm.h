// Float GEMM/GEMV over weights as GGUF stores them (F32, F16, BF16 rows):
//   Y[m, n] = X[m, k] · W[n, k]^T
// with X in f32. The weights are widened to f32 exactly (f16 and bf16 are
// subsets of f32) and the activations are never rounded: the only error is
// f32 rounding of the products' sum.
//
// The contract every variant keeps (so they agree bit for bit with _ref, and
// an output does not depend on m, on which rows a thread gets, or on whether
// tokens come one by one or in a batch):
//   k16 = k - k % 16
//   s[j] = 0, then for i = j, j + 16, ... < k16 in order: s[j] = fma(w[i], x[i], s[j])
//          (16 lanes, j = 0..15: one zmm, two ymm, four NEON q registers)
//   h8[j] = s[j] + s[j + 8]   (j < 8)
//   h4[j] = h8[j] + h8[j + 4] (j < 4)
//   h2[j] = h4[j] + h4[j + 2] (j < 2)
//   y = h2[0] + h2[1], then for i = k16 .. k - 1: y = fma(w[i], x[i], y)
// The library paths (ops/fgemm_library.h: oneDNN, XNNPACK) sum in their own
// order; ops/matmul.cpp uses them only where docs/FLOAT.md says they win.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "quant/ggml_type.h"

namespace ember {

enum class FloatWeight { kF32, kF16, kBF16 };
constexpr int kFloatWeightCount = 3;

// Whether `type` is one of the float weight types, and which.
bool IsFloatWeight(GgmlType type);
FloatWeight FloatWeightOf(GgmlType type);  // requires IsFloatWeight

// Where row r of a FloatMatrix lies: its 16-column chunk c (columns 16c ..
// 16c + 15, c < n_cols / 16) at start + c * stride, its last n_cols % 16
// elements from tail on.
struct FloatRowRef {
  const uint8_t* start = nullptr;
  int64_t stride = 0;  // bytes
  const uint8_t* tail = nullptr;
};

// A weight matrix W[n_rows, n_cols] of 4- or 2-byte elements, in one of two
// orders:
//   group == 1: GGUF's, row after row (n_cols contiguous elements each);
//   group == G > 1: rows in groups of G from row 0 (the last group may have
//     g < G rows). A group's bytes are its 16-column chunks in column order,
//     each the g rows' 16 elements of those columns row after row, then the
//     g rows' last n_cols % 16 elements row after row. A kernel that reads G
//     rows at once reads their bytes in order, as one stream: F16 and BF16
//     matrices are put in this order at load with the active kernels' group
//     (Kernels::float_group; docs/FLOAT.md). Same bytes as GGUF's order.
struct FloatMatrix {
  FloatWeight type = FloatWeight::kF32;
  const void* data = nullptr;
  int64_t n_rows = 0;
  int64_t n_cols = 0;
  int64_t group = 1;

  size_t elem_bytes() const { return type == FloatWeight::kF32 ? 4 : 2; }
  // Row r's first element in GGUF's order (group == 1 only).
  const uint8_t* row(int64_t r) const {
    return static_cast<const uint8_t*>(data) + static_cast<size_t>(r * n_cols) * elem_bytes();
  }
  FloatRowRef row_ref(int64_t r) const {
    const int64_t eb = static_cast<int64_t>(elem_bytes()), k16 = n_cols - n_cols % 16;
    const int64_t g0 = r / group * group, g = std::min(group, n_rows - g0), j = r - g0;
    const uint8_t* base = static_cast<const uint8_t*>(data) + g0 * n_cols * eb;
    return {base + j * 16 * eb, g * 16 * eb, base + (k16 * g + j * (n_cols - k16)) * eb};
  }
  size_t bytes() const { return static_cast<size_t>(n_rows * n_cols) * elem_bytes(); }
};

// Copies w (group 1) into dst (w.bytes()) in the order of `group`; returns
// the copy's FloatMatrix.
FloatMatrix GroupFloatRows(const FloatMatrix& w, int64_t group, uint8_t* dst);

// The rows each variant's decode block (m = 1) reads at once, the group its
// F16 / BF16 matrices are put in at load (Kernels::float_group). _ref and
// ARMv7's NEON read a row at a time: group 1.
constexpr int64_t kFloatGroupAvx2 = 6;
constexpr int64_t kFloatGroupAvx512 = 4;
constexpr int64_t kFloatGroupNeon64 = 4;

// Computes y[t * ldy + r] for rows r in [row_begin, row_end) and all m tokens
// t; x is [m, w.n_cols] with row stride w.n_cols.
using FGemmFn = void (*)(const FloatMatrix& w, int64_t row_begin, int64_t row_end, const float* x,
                         int64_t m, float* y, int64_t ldy);

// The contract above, one output at a time.
void FGemm_ref(const FloatMatrix& w, int64_t row_begin, int64_t row_end, const float* x, int64_t m,
               float* y, int64_t ldy);
// Blocks of rows x tokens in registers, tokens in chunks that stay in L2.
// x86-64 builds only (AVX2 + FMA + F16C; AVX-512F).
void FGemm_avx2(const FloatMatrix& w, int64_t row_begin, int64_t row_end, const float* x, int64_t m,
                float* y, int64_t ldy);
void FGemm_avx512(const FloatMatrix& w, int64_t row_begin, int64_t row_end, const float* x,
                  int64_t m, float* y, int64_t ldy);
// ARM builds with NEON (AArch64; armv7 with VFPv4 for fma and f16 converts).
void FGemm_neon(const FloatMatrix& w, int64_t row_begin, int64_t row_end, const float* x, int64_t m,
                float* y, int64_t ldy);

// Row r of w widened to f32 (out: [w.n_cols]); exact, so every variant gives
// the same floats.
void FloatRow(const FloatMatrix& w, int64_t r, float* out);
using FloatRowFn = void (*)(const FloatMatrix& w, int64_t r, float* out);
void FloatRow_avx2(const FloatMatrix& w, int64_t r, float* out);
void FloatRow_neon(const FloatMatrix& w, int64_t r, float* out);

}  // namespace ember
