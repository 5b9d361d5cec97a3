#include "ops/tile_split.h"

#include <algorithm>

namespace ember {

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

TileGrains MakeTileGrains(const int64_t* n_tiles, const size_t* tile_bytes, int count,
                          size_t grain_bytes) {
  TileGrains g;
  g.count = count;
  for (int i = 0; i < count; ++i) {
    g.n_tiles[i] = n_tiles[i];
    const size_t tb = std::max<size_t>(1, tile_bytes[i]);
    g.tiles_per_grain[i] = std::max<int64_t>(1, static_cast<int64_t>(grain_bytes / tb));
    const int64_t grains = (n_tiles[i] + g.tiles_per_grain[i] - 1) / g.tiles_per_grain[i];
    g.first[i + 1] = g.first[i] + grains;
  }
  return g;
}

TileGrains::Range TileGrains::operator[](int64_t grain) const {
  int i = 0;
  while (i + 1 < count && grain >= first[i + 1]) ++i;  // count <= 8: a scan
  const int64_t begin = (grain - first[i]) * tiles_per_grain[i];
  return {i, begin, std::min(n_tiles[i], begin + tiles_per_grain[i])};
}

}  // namespace ember
