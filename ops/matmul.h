// Y = X · W^T for one weight matrix. Three paths:
//  - packed (sources repacked into quant/packed.h layouts, see CanRepack):
//    activations quantized once to int8 groups, then the quantized GEMM kernel
//    of the active ISA over tiles of 16 rows, shared by the threads by bytes
//    (ops/tile_split.h);
//  - F32 / F16 / BF16 weights as stored (not repacked): float products with
//    f32 activations (ops/fgemm.h, and ops/fgemm_library.h for prefill);
//  - GGUF rows as stored (types with a FindVecDot pair): one reference dot
//    product per output; with ggml numerics (WeightView::ggml_dot) llama.cpp's
//    own quantizer and dot product.
// Each output element is computed by one thread in a fixed order, so results
// do not depend on the thread count (except through a float library, used
// for large batches of float weights: its order is its own).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "ops/ggml_numerics.h"
#include "ops/qgemm.h"
#include "ops/tile_split.h"
#include "quant/ggml_type.h"
#include "quant/packed.h"

namespace ember {

// A weight matrix W[n_rows, n_cols] (n_cols contiguous).
struct WeightView {
  GgmlType type = GgmlType::kF32;        // the GGUF type it came from
  const uint8_t* data = nullptr;         // GGUF rows (nullptr once released after repacking)
  int64_t n_rows = 0;                    // output features
  int64_t n_cols = 0;                    // input features
  size_t row_bytes = 0;                  // of a GGUF row
  const PackedMatrix* packed = nullptr;  // native layout, when repacked
  // F16 / BF16 copied at load: rows grouped (FloatMatrix::group); 1: GGUF's
  // row order, row_bytes apart.
  int64_t float_group = 1;
  // Set for models loaded with ggml numerics (GGUF rows, never repacked):
  // products with llama.cpp's activation quantizer and dot product.
  const GgmlVecDotPair* ggml_dot = nullptr;
};

// Reusable buffers for quantized activations.
struct MatMulScratch {
  std::vector<uint8_t> act;  // GGUF-path activations
  QuantizedActs qacts;       // packed-path activations
  // Float weights: false keeps every batch on ember's own kernel, whose rows
  // do not depend on the batch (a library sums in its own order; see
  // docs/FLOAT.md). Batched passes of several sessions set it.
  bool float_library = true;
  // One counter per thread of a packed call's grains (ops/tile_split.h), each on
  // its own cache line; grown as needed.
  struct alignas(64) GrainCounter {
    std::atomic<int64_t> next{0};
  };
  std::unique_ptr<GrainCounter[]> grain_next;
  int grain_threads = 0;
};

// x: [m, w.n_cols] floats, row stride w.n_cols; y: [m, w.n_rows], row stride ldy.
// Uses up to n_threads OpenMP threads.
void MatMul(const WeightView& w, const float* x, int64_t m, float* y, int64_t ldy, int n_threads,
            MatMulScratch* scratch);

// Several matrices (at most kMaxSharedMatrices) applied to the same input (Q,
// K and V; gate and up): the input is quantized once and one parallel region
// covers all of their tiles, shared by the threads by weight bytes
// (ops/tile_split.h). outputs[i] has row stride ldys[i].
void MatMulShared(const WeightView* const* ws, float* const* ys, const int64_t* ldys, int count,
                  const float* x, int64_t m, int n_threads, MatMulScratch* scratch);

// Row `row` of W as floats [n_cols] (embedding lookups).
void WeightRow(const WeightView& w, int64_t row, float* out);

}  // namespace ember
