// The values of an attention block in tiles of rows: the loop that the AVX2
// and NEON AttendBlock (and their AttendValues stage) share, around each
// ISA's pass of four queries x 16 dims.
//
// Row by row over all rows per 16-dim run, a 64-dim head's value rows are
// read four times: at depth 4096 (SmolLM2, 512 KB per KV head) from L3 after
// the first run. In tiles of kValueTileRows rows, every run of a tile before
// the next tile, a tile's rows (16 KB at head dim 64) come from memory once
// and from L1 for the other runs. The chain of each (query, dim) continues
// through out[] from tile to tile, in row order, so the bits are those of one
// pass over all rows (docs/KV.md, "Attention jobs and threads").
#pragma once

#include <algorithm>
#include <cstdint>

#include "ops/attention.h"

namespace ember {

constexpr int64_t kValueTileRows = 128;
constexpr int kValueTileSpans = 8;  // a tile is cut from at most this many spans

// out[m][d0, d1) of the n_q queries from the probabilities st[n_rows][W]
// (lane m = query m) and the spans' value rows. Isa supplies
//   template <int W, bool kSum> static void Pass(st, spans, n_spans, stride,
//       m0, n_out, d, carry, sum, out):
//     out[m0 + i][d, d + 16) for i < n_out over the rows of spans (st: their
//     first row), chains started from out (carry) or 0, stored unscaled;
//     kSum: the p of queries m0 .. m0 + 3 also added to sum[0, 4) in double,
//     row by row;
//   static void Scale(float* o, int d0, int d1, float s): o[d0, d1) *= s.
// The result is scaled by inv[m], or, with inv null (the stages), by
// float(1 / sum p) with the sums taken in each tile's first run of dims:
// _ref's static_cast<float>(1.0 / sum).
template <int W, typename Isa>
void ValuesInTiles(const float* st, const float* inv, int n_q, const KvSpan* spans, int n_spans,
                   size_t stride, int d0, int d1, float* const* out) {
  int64_t n_rows = 0;
  for (int i = 0; i < n_spans; ++i) n_rows += spans[i].n;
  // More spans than a tile may be cut into (never from the runtime, which
  // has at most 6): one tile of all rows.
  const bool tiled = n_spans <= kValueTileSpans;
  const int64_t tile = tiled ? kValueTileRows : n_rows;
  alignas(32) double sum[W] = {};
  for (int64_t r0 = 0; r0 < n_rows; r0 += tile) {
    KvSpan sub[kValueTileSpans];
    const int n_sub =
        tiled ? SubSpans(spans, n_spans, stride, r0, std::min(n_rows, r0 + tile), sub) : n_spans;
    const KvSpan* rows = tiled ? sub : spans;
    for (int m0 = 0; m0 < n_q; m0 += 4) {
      const int n_out = std::min(4, n_q - m0);
      for (int d = d0; d < d1; d += 16) {
        if (!inv && d == d0) {
          Isa::template Pass<W, true>(st + r0 * W, rows, n_sub, stride, m0, n_out, d, r0 > 0,
                                      sum + m0, out);
        } else {
          Isa::template Pass<W, false>(st + r0 * W, rows, n_sub, stride, m0, n_out, d, r0 > 0,
                                       nullptr, out);
        }
      }
    }
  }
  for (int m = 0; m < n_q; ++m) {
    Isa::Scale(out[m], d0, d1, inv ? inv[m] : static_cast<float>(1.0 / sum[m]));
  }
}

}  // namespace ember
