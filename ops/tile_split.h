// How the tiles of one packed GEMM call (one matrix, or several sharing an
// input: MatMulShared) are shared by its threads. Two ways, by batch size:
//
// - Prefill (large batches): one fixed range of about equal bytes per thread
//   (SplitTilesByBytes), each range one call of the kernel, whose blocking
//   reuses a block of tiles in L2 for every group of tokens.
// - Decode and small batches (a stream of weights): grains of about equal
//   bytes (TileGrains) that threads take one at a time (ops/matmul.cpp
//   RunPacked). An even split of bytes is an even split of time only when
//   every core runs at the same speed all the time; with a fixed range, a
//   thread that finished first waited for the other at the region's end: a
//   core shared with another busy process (Qwen2.5-Coder at 2 threads with a
//   busy loop beside it: +8% with grains, docs/PERFORMANCE.md "Stop 39"), or a
//   board whose cores differ (big.LITTLE). Each thread takes its own grains
//   first, in order, so it still reads one stream of consecutive tiles.
#pragma once
#include <cstddef>
#include <cstdint>

namespace ember {

// At most this many matrices share one MatMulShared call.
constexpr int kMaxSharedMatrices = 8;

// Splits the tiles of `count` matrices, laid end to end (matrix i: n_tiles[i]
// tiles of tile_bytes[i] bytes each), into `parts` ranges of about equal bytes,
// so that threads finish together when an int8 matrix (a Q8_0 or F16 source)
// shares a region with int4 ones: an even split of tiles would give the thread
// with the int8 tiles up to twice the bytes to read. Part `part` gets tiles
// [begin[i], end[i]) of each matrix i: those whose first byte lies in its
// byte range [total * part / parts, total * (part + 1) / parts). Every tile goes
// to exactly one part, and each part is within one tile of an even share.
void SplitTilesByBytes(const int64_t* n_tiles, const size_t* tile_bytes, int count, int parts,
                       int part, int64_t* begin, int64_t* end);

// The tiles of `count` matrices laid end to end (matrix i: n_tiles[i] tiles),
// cut into grains: runs of consecutive tiles of one matrix, about grain_bytes
// each (a whole number of tiles, at least one; a matrix's last grain may be
// shorter). Grain g covers tiles [begin, end) of matrix `matrix`.
struct TileGrains {
  struct Range {
    int matrix;
    int64_t begin, end;
  };

  int count = 0;
  int64_t n_tiles[kMaxSharedMatrices] = {};
  int64_t tiles_per_grain[kMaxSharedMatrices] = {};
  int64_t first[kMaxSharedMatrices + 1] = {};  // matrix i's first grain; first[count]: all

  int64_t size() const { return first[count]; }
  Range operator[](int64_t g) const;
};

// count <= kMaxSharedMatrices.
TileGrains MakeTileGrains(const int64_t* n_tiles, const size_t* tile_bytes, int count,
                          size_t grain_bytes);

// The first of the grains that thread `part` of `parts` owns (takes first, in
// order): thread p owns [FirstOwnedGrain(p), FirstOwnedGrain(p + 1)). Grains
// are of about equal bytes, so these are about equal shares of the bytes.
inline int64_t FirstOwnedGrain(const TileGrains& g, int parts, int part) {
  return g.size() * part / parts;
}

}  // namespace ember
