#include "ops/matmul.h"

#include "ops/vec_dot.h"
#include "quant/quantize.h"

namespace ember {

void MatMul(const WeightView& w, const float* x, int64_t m, float* y, int64_t ldy,
            int n_threads, MatMulScratch* scratch) {
  const VecDotPair* pair = FindVecDot(w.type);
  const int64_t k = w.n_cols;
  const size_t act_row_bytes = GgmlRowBytes(pair->activation_type, static_cast<uint64_t>(k));
  scratch->act.resize(act_row_bytes * static_cast<size_t>(m));
  uint8_t* act = scratch->act.data();
  for (int64_t t = 0; t < m; ++t) {
    QuantizeRow(pair->activation_type, x + t * k, act + t * act_row_bytes, k);
  }
  const VecDotFn dot = pair->dot;
  // Rows outer, tokens inner: a weight row is read from memory once and used
  // for all m tokens while it is in cache.
#pragma omp parallel for num_threads(n_threads) schedule(static) if (n_threads > 1)
  for (int64_t r = 0; r < w.n_rows; ++r) {
    const uint8_t* wr = w.data + static_cast<size_t>(r) * w.row_bytes;
    for (int64_t t = 0; t < m; ++t) {
      y[t * ldy + r] = dot(k, wr, act + t * act_row_bytes);
    }
  }
}

}  // namespace ember
