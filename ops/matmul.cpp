#include "ops/matmul.h"

#include <algorithm>

#include "ops/fgemm_library.h"
#include "ops/kernels.h"
#include "ops/vec_dot.h"
#include "quant/quantize.h"

namespace ember {
namespace {

void MatMulPacked(const WeightView& w, const float* x, int64_t m, float* y, int64_t ldy,
                  int n_threads, MatMulScratch* scratch) {
  const PackedMatrix& p = *w.packed;
  const Kernels& k = Active();
  k.quantize_acts(x, m, p.n_cols, &scratch->qacts);
  const QuantizedActs& a = scratch->qacts;
  const QGemmFn fn = k.qgemm_for(p.layout);
  const int64_t n_tiles = p.n_tiles;
  const int chunks = static_cast<int>(std::min<int64_t>(n_threads, n_tiles));
  if (chunks <= 1) {
    fn(p, 0, n_tiles, a, y, ldy);
    return;
  }
  // Tiles are equal in bytes: an even split of tiles is an even split of work.
#pragma omp parallel for num_threads(chunks) schedule(static, 1)
  for (int c = 0; c < chunks; ++c) {
    const int64_t begin = n_tiles * c / chunks, end = n_tiles * (c + 1) / chunks;
    fn(p, begin, end, a, y, ldy);
  }
}

// Float weights as stored: a library for batches where it wins (prefill),
// else ember's own kernel, rows split over the threads in blocks of 16.
void MatMulFloat(const WeightView& w, const float* x, int64_t m, float* y, int64_t ldy,
                 int n_threads, bool use_library) {
  const FloatMatrix f{FloatWeightOf(w.type), w.data, w.n_rows, w.n_cols};
  const FloatLibrary* lib = use_library ? DefaultFloatLibrary() : nullptr;
  // A library error (none is expected for valid shapes) leaves y to the own
  // kernel, which computes every output.
  if (lib != nullptr && m >= lib->from_m && lib->gemm(f, x, m, y, ldy, n_threads).ok()) {
    return;
  }
  const FGemmFn fn = Active().fgemm;
  const int64_t n_blocks = (w.n_rows + 15) / 16;
  const int chunks = static_cast<int>(std::min<int64_t>(n_threads, n_blocks));
  if (chunks <= 1) {
    fn(f, 0, w.n_rows, x, m, y, ldy);
    return;
  }
#pragma omp parallel for num_threads(chunks) schedule(static, 1)
  for (int c = 0; c < chunks; ++c) {
    const int64_t begin = std::min(w.n_rows, 16 * (n_blocks * c / chunks));
    const int64_t end = std::min(w.n_rows, 16 * (n_blocks * (c + 1) / chunks));
    fn(f, begin, end, x, m, y, ldy);
  }
}

}  // namespace

void MatMulShared(const WeightView* const* ws, float* const* ys, const int64_t* ldys, int count,
                  const float* x, int64_t m, int n_threads, MatMulScratch* scratch) {
  bool all_packed = count <= kMaxSharedMatrices;
  for (int i = 0; i < count; ++i) {
    all_packed = all_packed && ws[i]->packed != nullptr && ws[i]->n_cols == ws[0]->n_cols;
  }
  if (!all_packed) {
    for (int i = 0; i < count; ++i) MatMul(*ws[i], x, m, ys[i], ldys[i], n_threads, scratch);
    return;
  }
  const Kernels& k = Active();
  k.quantize_acts(x, m, ws[0]->n_cols, &scratch->qacts);
  const QuantizedActs& a = scratch->qacts;
  int64_t n_tiles[kMaxSharedMatrices];
  size_t tile_bytes[kMaxSharedMatrices];
  int64_t total_tiles = 0;
  for (int i = 0; i < count; ++i) {
    n_tiles[i] = ws[i]->packed->n_tiles;
    tile_bytes[i] = ws[i]->packed->tile_bytes;
    total_tiles += n_tiles[i];
  }
  const int chunks = static_cast<int>(std::min<int64_t>(n_threads, total_tiles));
  auto run = [&](int c, int parts) {
    int64_t begin[kMaxSharedMatrices], end[kMaxSharedMatrices];
    SplitTilesByBytes(n_tiles, tile_bytes, count, parts, c, begin, end);
    for (int i = 0; i < count; ++i) {
      if (begin[i] >= end[i]) continue;
      const PackedMatrix& p = *ws[i]->packed;
      const QGemmFn fn = k.qgemm_for(p.layout);
      fn(p, begin[i], end[i], a, ys[i], ldys[i]);
    }
  };
  if (chunks <= 1) {
    run(0, 1);
    return;
  }
#pragma omp parallel for num_threads(chunks) schedule(static, 1)
  for (int c = 0; c < chunks; ++c) run(c, chunks);
}

void SplitTilesByBytes(const int64_t* n_tiles, const size_t* tile_bytes, int count, int parts,
                       int part, int64_t* begin, int64_t* end) {
  // Byte offsets fit in int64: weights are far below 2^63 / parts bytes.
  int64_t total = 0;
  for (int i = 0; i < count; ++i) total += n_tiles[i] * static_cast<int64_t>(tile_bytes[i]);
  const int64_t lo = total * part / parts, hi = total * (part + 1) / parts;
  // The first tile of matrix i whose first byte is at or after `at`.
  auto first_at = [](int64_t at, int64_t base, int64_t n, int64_t tb) {
    if (at <= base) return int64_t{0};
    return std::min(n, (at - base + tb - 1) / tb);
  };
  int64_t base = 0;
  for (int i = 0; i < count; ++i) {
    const int64_t tb = std::max<int64_t>(1, static_cast<int64_t>(tile_bytes[i]));
    begin[i] = first_at(lo, base, n_tiles[i], tb);
    end[i] = first_at(hi, base, n_tiles[i], tb);
    base += n_tiles[i] * static_cast<int64_t>(tile_bytes[i]);
  }
}

void MatMul(const WeightView& w, const float* x, int64_t m, float* y, int64_t ldy, int n_threads,
            MatMulScratch* scratch) {
  if (w.packed != nullptr) {
    MatMulPacked(w, x, m, y, ldy, n_threads, scratch);
    return;
  }
  if (IsFloatWeight(w.type) && w.ggml_dot == nullptr) {
    MatMulFloat(w, x, m, y, ldy, n_threads, scratch->float_library);
    return;
  }
  const int64_t k = w.n_cols;
  const VecDotPair* pair = w.ggml_dot ? nullptr : FindVecDot(w.type);
  const GgmlType act_type = w.ggml_dot ? w.ggml_dot->activation_type : pair->activation_type;
  const size_t act_row_bytes = GgmlRowBytes(act_type, static_cast<uint64_t>(k));
  scratch->act.resize(act_row_bytes * static_cast<size_t>(m));
  uint8_t* act = scratch->act.data();
  for (int64_t t = 0; t < m; ++t) {
    if (w.ggml_dot) {
      w.ggml_dot->quantize(x + t * k, act + t * act_row_bytes, k);
    } else {
      QuantizeRow(act_type, x + t * k, act + t * act_row_bytes, k);
    }
  }
  const VecDotFn dot = w.ggml_dot ? w.ggml_dot->dot : pair->dot;
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

void WeightRow(const WeightView& w, int64_t row, float* out) {
  if (w.packed != nullptr) {
    for (int64_t c = 0; c < w.n_cols; ++c) out[c] = PackedWeight(*w.packed, row, c);
    return;
  }
  DequantizeRow(w.type, w.data + static_cast<size_t>(row) * w.row_bytes, out, w.n_cols);
}

}  // namespace ember
