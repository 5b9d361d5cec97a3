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

#include <cstddef>
#include <cstdint>

#include "quant/ggml_type.h"

namespace ember {

enum class FloatWeight { kF32, kF16, kBF16 };
constexpr int kFloatWeightCount = 3;

// Whether `type` is one of the float weight types, and which.
bool IsFloatWeight(GgmlType type);
FloatWeight FloatWeightOf(GgmlType type);  // requires IsFloatWeight

// A weight matrix W[n_rows, n_cols] as stored (n_cols contiguous elements of
// 4 or 2 bytes per row; rows row_stride elements apart).
struct FloatMatrix {
  FloatWeight type = FloatWeight::kF32;
  const void* data = nullptr;
  int64_t n_rows = 0;
  int64_t n_cols = 0;

  size_t elem_bytes() const { return type == FloatWeight::kF32 ? 4 : 2; }
  const uint8_t* row(int64_t r) const {
    return static_cast<const uint8_t*>(data) + static_cast<size_t>(r * n_cols) * elem_bytes();
  }
  size_t bytes() const { return static_cast<size_t>(n_rows * n_cols) * elem_bytes(); }
};

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
