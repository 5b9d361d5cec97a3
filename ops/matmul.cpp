#include "ops/matmul.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <memory>

#include "ops/fgemm_library.h"
#include "ops/kernels.h"
#include "ops/vec_dot.h"
#include "quant/quantize.h"

namespace ember {
namespace {

// Up to kSmallBatch tokens (decode, draft verification, a few sequences) a
// call is a stream of weights, shared in grains (ops/tile_split.h): of
// kGrainBytes (a few microseconds each), so that a thread waits at most
// about that for the others at the end; for one token of kDecodeGrainBytes,
// since the kernels read one token's tiles as several streams (kStreams in
// ops/qgemm_avx2_common.h), which want a few tiles each. Larger batches split
// by bytes once.
constexpr int64_t kSmallBatch = 16;
constexpr size_t kGrainBytes = size_t{32} << 10;
constexpr size_t kDecodeGrainBytes = size_t{256} << 10;

// y_i = X W_i^T for `count` packed matrices of as many columns, x [m,
// n_cols], on up to n_threads threads. x is first quantized (QuantizedActs,
// in scratch): a batch's tokens by the threads of the team that multiplies,
// each its share of the tokens, before they meet at a barrier. Quantized by
// one thread ahead of the team (the other waiting), the activations had 5%
// of the samples of `ember serve` under 4 clients and 2% of a prefill's; in
// the team a 2-thread pass of 4 or 8 tokens takes ~2% less
// (docs/PERFORMANCE.md "Stop 51"). One token is quantized before the team
// starts: it is a few microseconds.
void RunPacked(const PackedMatrix* const* ps, float* const* ys, const int64_t* ldys, int count,
               const float* x, int64_t m, int n_threads, MatMulScratch* scratch) {
  const Kernels& k = Active();
  QuantizedActs& a = scratch->qacts;
  a.Resize(m, ps[0]->n_cols);
  int64_t n_tiles[kMaxSharedMatrices];
  size_t tile_bytes[kMaxSharedMatrices];
  QGemmFn fns[kMaxSharedMatrices];
  int64_t total_tiles = 0;
  for (int i = 0; i < count; ++i) {
    n_tiles[i] = ps[i]->n_tiles;
    tile_bytes[i] = ps[i]->tile_bytes;
    fns[i] = k.qgemm_for(ps[i]->layout);
    total_tiles += n_tiles[i];
  }
  // Tokens [m * c / parts, m * (c + 1) / parts) of x into a.
  const auto quantize = [&](int c, int parts) {
    const int64_t t0 = m * c / parts, t1 = m * (c + 1) / parts;
    if (t0 < t1) k.quantize_act_rows(x, t0, t1, &a);
  };
  if (a.m > kSmallBatch) {
    const int chunks = static_cast<int>(std::min<int64_t>(n_threads, total_tiles));
    auto run = [&](int c, int parts) {
      int64_t begin[kMaxSharedMatrices], end[kMaxSharedMatrices];
      SplitTilesByBytes(n_tiles, tile_bytes, count, parts, c, begin, end);
      for (int i = 0; i < count; ++i) {
        if (begin[i] < end[i]) fns[i](*ps[i], begin[i], end[i], a, ys[i], ldys[i]);
      }
    };
    if (chunks <= 1) {
      quantize(0, 1);
      return run(0, 1);
    }
#pragma omp parallel num_threads(chunks)
    {
      // The team may have fewer threads than asked: each takes every
      // team-th share.
      const int team = omp_get_num_threads(), id = omp_get_thread_num();
      quantize(id, team);
#pragma omp barrier
      for (int c = id; c < chunks; c += team) run(c, chunks);
    }
    return;
  }
  const TileGrains grains =
      MakeTileGrains(n_tiles, tile_bytes, count, a.m == 1 ? kDecodeGrainBytes : kGrainBytes);
  auto run = [&](int64_t g) {
    const TileGrains::Range r = grains[g];
    fns[r.matrix](*ps[r.matrix], r.begin, r.end, a, ys[r.matrix], ldys[r.matrix]);
  };
  const int chunks = static_cast<int>(std::min<int64_t>(n_threads, grains.size()));
  const bool quantize_in_team = chunks > 1 && m > 1;
  if (!quantize_in_team) quantize(0, 1);
  if (chunks <= 1) {
    for (int64_t g = 0; g < grains.size(); ++g) run(g);
    return;
  }
  if (scratch->grain_threads < chunks) {
    scratch->grain_next = std::make_unique<MatMulScratch::GrainCounter[]>(chunks);
    scratch->grain_threads = chunks;
  }
  MatMulScratch::GrainCounter* next = scratch->grain_next.get();
  for (int c = 0; c < chunks; ++c) {
    next[c].next.store(FirstOwnedGrain(grains, chunks, c), std::memory_order_relaxed);
  }
  // Thread c takes its own grains in order, then the remaining ones of the
  // others through the same counters: each grain is taken exactly once, and
  // a tile's outputs do not depend on which thread computed them. The
  // counters only hand out indices (relaxed); the region's end orders the
  // outputs for the caller.
#pragma omp parallel num_threads(chunks)
  {
    const int team = omp_get_num_threads(), id = omp_get_thread_num();
    if (quantize_in_team) {
      quantize(id, team);
#pragma omp barrier
    }
    for (int c = id; c < chunks; c += team) {
      for (int d = 0; d < chunks; ++d) {
        const int owner = (c + d) % chunks;
        const int64_t end = FirstOwnedGrain(grains, chunks, owner + 1);
        for (int64_t g = next[owner].next.fetch_add(1, std::memory_order_relaxed); g < end;
             g = next[owner].next.fetch_add(1, std::memory_order_relaxed)) {
          run(g);
        }
      }
    }
  }
}

void MatMulPacked(const WeightView& w, const float* x, int64_t m, float* y, int64_t ldy,
                  int n_threads, MatMulScratch* scratch) {
  const PackedMatrix* p = w.packed;
  RunPacked(&p, &y, &ldy, 1, x, m, n_threads, scratch);
}

// Float weights as stored: a library for batches where it wins (prefill),
// else ember's own kernel, rows split over the threads in blocks of 16 (y's
// cache lines; a thread's first rows up to a row group's start go one by one,
// ops/fgemm_driver.h).
void MatMulFloat(const WeightView& w, const float* x, int64_t m, float* y, int64_t ldy,
                 int n_threads, bool use_library) {
  const FloatMatrix f{FloatWeightOf(w.type), w.data, w.n_rows, w.n_cols, w.float_group};
  const FloatLibrary* lib = use_library ? FloatLibraryFor(f.type, m, n_threads) : nullptr;
  // A library error (none is expected for valid shapes) leaves y to the own
  // kernel, which computes every output.
  if (lib != nullptr && lib->gemm(f, x, m, y, ldy, n_threads).ok()) {
    return;
  }
  const FGemmFn fn = Active().fgemm;
  constexpr int64_t kSplit = 16;
  const int64_t n_blocks = (w.n_rows + kSplit - 1) / kSplit;
  const int chunks = static_cast<int>(std::min<int64_t>(n_threads, n_blocks));
  if (chunks <= 1) {
    fn(f, 0, w.n_rows, x, m, y, ldy);
    return;
  }
#pragma omp parallel for num_threads(chunks) schedule(static, 1)
  for (int c = 0; c < chunks; ++c) {
    const int64_t begin = std::min(w.n_rows, kSplit * (n_blocks * c / chunks));
    const int64_t end = std::min(w.n_rows, kSplit * (n_blocks * (c + 1) / chunks));
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
  const PackedMatrix* ps[kMaxSharedMatrices];
  for (int i = 0; i < count; ++i) ps[i] = ws[i]->packed;
  RunPacked(ps, ys, ldys, count, x, m, n_threads, scratch);
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
  if (w.float_group != 1) {
    const FloatMatrix f{FloatWeightOf(w.type), w.data, w.n_rows, w.n_cols, w.float_group};
    Active().float_row(f, row, out);
    return;
  }
  DequantizeRow(w.type, w.data + static_cast<size_t>(row) * w.row_bytes, out, w.n_cols);
}

}  // namespace ember
