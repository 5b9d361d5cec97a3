// Y = X · W^T for a weight matrix in its GGUF format (the straightforward
// path: activations quantized once per row to the weight's partner format,
// then one dot product per output element). Each output element is computed
// by one thread in a fixed order, so results do not depend on the thread count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "quant/ggml_type.h"

namespace ember {

// A weight matrix W[n_rows, n_cols] (n_cols contiguous) in a GGUF format.
struct WeightView {
  GgmlType type = GgmlType::kF32;
  const uint8_t* data = nullptr;
  int64_t n_rows = 0;  // output features
  int64_t n_cols = 0;  // input features
  size_t row_bytes = 0;
};

// Reusable buffer for quantized activations.
struct MatMulScratch {
  std::vector<uint8_t> act;
};

// x: [m, w.n_cols] floats, row stride w.n_cols; y: [m, w.n_rows], row stride ldy.
// Uses up to n_threads OpenMP threads. The weight type must have a FindVecDot pair.
void MatMul(const WeightView& w, const float* x, int64_t m, float* y, int64_t ldy,
            int n_threads, MatMulScratch* scratch);

}  // namespace ember
