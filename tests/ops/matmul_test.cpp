// Packed matmuls share their tiles by weight bytes (ops/tile_split.h): a
// prefill's byte split gives every tile to exactly one thread with even
// shares to within a tile; small batches' grains cover every tile once, in
// order, each within its byte size; and the outputs are bit-identical for
// every thread count (and to one MatMul per matrix) when an int8 matrix
// shares the region with int4 ones, on both paths.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <vector>

#include "ops/matmul.h"
#include "quant/packed.h"
#include "quant/quantize.h"

using namespace ember;

namespace {

struct Split {
  std::vector<int64_t> begin, end;
};

Split Part(const std::vector<int64_t>& n_tiles, const std::vector<size_t>& tile_bytes, int parts,
           int part) {
  const int count = static_cast<int>(n_tiles.size());
  Split s{std::vector<int64_t>(count), std::vector<int64_t>(count)};
  SplitTilesByBytes(n_tiles.data(), tile_bytes.data(), count, parts, part, s.begin.data(),
                    s.end.data());
  return s;
}

std::vector<uint8_t> RandomGguf(GgmlType type, int64_t n, int64_t k, std::mt19937& rng) {
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n * k));
  for (float& v : x) v = d(rng);
  const size_t rb = GgmlRowBytes(type, static_cast<uint64_t>(k));
  std::vector<uint8_t> bytes(rb * static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) QuantizeRow(type, &x[r * k], &bytes[r * rb], k);
  return bytes;
}

}  // namespace

TEST_CASE("matmul: an int8 matrix next to an int4 one is split by bytes", "[matmul]") {
  // 10 int4 tiles of 100 bytes, then 10 int8 tiles of 200 bytes: 3000 bytes.
  const std::vector<int64_t> n = {10, 10};
  const std::vector<size_t> tb = {100, 200};
  const Split a = Part(n, tb, 2, 0), b = Part(n, tb, 2, 1);
  // Part 0 reads bytes [0, 1500): all int4 tiles and the int8 tiles starting
  // at 1000, 1200 and 1400 (1600 bytes); part 1 the other 7 (1400 bytes). An
  // even split of tiles would have given them 1000 and 2000.
  CHECK(a.begin == (std::vector<int64_t>{0, 0}));
  CHECK(a.end == (std::vector<int64_t>{10, 3}));
  CHECK(b.begin == (std::vector<int64_t>{10, 3}));
  CHECK(b.end == (std::vector<int64_t>{10, 10}));
}

TEST_CASE("matmul: byte splits cover every tile once, evenly", "[matmul]") {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 300; ++trial) {
    const int count = 1 + static_cast<int>(rng() % kMaxSharedMatrices);
    std::vector<int64_t> n(count);
    std::vector<size_t> tb(count);
    int64_t total = 0;
    size_t max_tile = 0;
    for (int i = 0; i < count; ++i) {
      n[i] = static_cast<int64_t>(rng() % 40);  // some matrices may be empty
      tb[i] = 64 * (1 + rng() % 40);
      total += n[i] * static_cast<int64_t>(tb[i]);
      max_tile = std::max(max_tile, tb[i]);
    }
    const int parts = 1 + static_cast<int>(rng() % 12);
    INFO("trial " << trial << ", " << count << " matrices, " << parts << " parts");
    std::vector<int64_t> next(count, 0);  // where the next part must begin
    for (int p = 0; p < parts; ++p) {
      const Split s = Part(n, tb, parts, p);
      int64_t bytes = 0;
      for (int i = 0; i < count; ++i) {
        REQUIRE(s.begin[i] == next[i]);
        REQUIRE(s.end[i] >= s.begin[i]);
        REQUIRE(s.end[i] <= n[i]);
        bytes += (s.end[i] - s.begin[i]) * static_cast<int64_t>(tb[i]);
        next[i] = s.end[i];
      }
      const int64_t share = total * (p + 1) / parts - total * p / parts;
      CHECK(bytes <= share + static_cast<int64_t>(max_tile));
      CHECK(bytes >= share - static_cast<int64_t>(max_tile));
    }
    for (int i = 0; i < count; ++i) CHECK(next[i] == n[i]);
  }
}

TEST_CASE("matmul: grains cover every tile once in order within their bytes", "[matmul]") {
  std::mt19937 rng(29);
  for (int trial = 0; trial < 300; ++trial) {
    const int count = 1 + static_cast<int>(rng() % kMaxSharedMatrices);
    std::vector<int64_t> n(count);
    std::vector<size_t> tb(count);
    for (int i = 0; i < count; ++i) {
      n[i] = static_cast<int64_t>(rng() % 60);  // some matrices may be empty
      tb[i] = 64 * (1 + rng() % 40);
    }
    const size_t grain_bytes = 64 * (1 + rng() % 200);  // some below a tile
    INFO("trial " << trial << ", " << count << " matrices, grains of " << grain_bytes);
    const TileGrains g = MakeTileGrains(n.data(), tb.data(), count, grain_bytes);
    // Grain by grain: the tiles of matrix 0, then 1, ..., each tile once.
    int matrix = 0;
    int64_t at = 0;
    for (int64_t i = 0; i < g.size(); ++i) {
      const TileGrains::Range r = g[i];
      while (matrix < count && at == n[matrix]) ++matrix, at = 0;
      REQUIRE(r.matrix == matrix);
      REQUIRE(r.begin == at);
      REQUIRE(r.end > r.begin);
      REQUIRE(r.end <= n[matrix]);
      const size_t bytes = static_cast<size_t>(r.end - r.begin) * tb[matrix];
      // At most a grain's bytes (or one tile, when a tile is larger); short
      // only at a matrix's end.
      CHECK(bytes <= std::max(grain_bytes, tb[matrix]));
      if (r.end < n[matrix]) CHECK(bytes + tb[matrix] > grain_bytes);
      at = r.end;
    }
    while (matrix < count && at == n[matrix]) ++matrix, at = 0;
    CHECK(matrix == count);
    // The owned ranges of any thread count partition the grains.
    const int parts = 1 + static_cast<int>(rng() % 12);
    CHECK(FirstOwnedGrain(g, parts, 0) == 0);
    CHECK(FirstOwnedGrain(g, parts, parts) == g.size());
    for (int p = 0; p < parts; ++p) {
      CHECK(FirstOwnedGrain(g, parts, p) <= FirstOwnedGrain(g, parts, p + 1));
    }
  }
}

TEST_CASE("matmul: mixed int4/int8 shared matmuls are thread-count independent", "[matmul]") {
  std::mt19937 rng(23);
  const int64_t k = 256;
  // 3 tokens share the tiles in grains (of 32 KiB: each matrix here has 3-4,
  // so threads take each other's), 20 (past the small batches) by a byte
  // split.
  const int64_t m = GENERATE(3, 20);
  INFO(m << " tokens");
  // Q4_0 and Q4_1 repack to int4 tiles, Q8_0 to int8 tiles of twice the bytes.
  const GgmlType types[3] = {GgmlType::kQ4_0, GgmlType::kQ8_0, GgmlType::kQ4_1};
  const int64_t rows[3] = {700, 370, 500};
  std::vector<PackedMatrix> packed(3);
  std::vector<WeightView> views(3);
  for (int i = 0; i < 3; ++i) {
    const std::vector<uint8_t> src = RandomGguf(types[i], rows[i], k, rng);
    REQUIRE(Repack(types[i], src.data(), rows[i], k, &packed[i]).ok());
    views[i].type = types[i];
    views[i].n_rows = rows[i];
    views[i].n_cols = k;
    views[i].row_bytes = GgmlRowBytes(types[i], static_cast<uint64_t>(k));
    views[i].packed = &packed[i];
  }
  REQUIRE(packed[1].tile_bytes > packed[0].tile_bytes);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(m * k));
  for (float& v : x) v = d(rng);

  auto run_shared = [&](int threads) {
    std::vector<std::vector<float>> ys(3);
    float* yp[3];
    int64_t ld[3];
    const WeightView* ws[3];
    for (int i = 0; i < 3; ++i) {
      ys[i].assign(static_cast<size_t>(m * rows[i]), -1.0f);
      yp[i] = ys[i].data();
      ld[i] = rows[i];
      ws[i] = &views[i];
    }
    MatMulScratch scratch;
    MatMulShared(ws, yp, ld, 3, x.data(), m, threads, &scratch);
    return ys;
  };
  const auto one = run_shared(1);
  for (int threads : {2, 3, 4, 7, 64}) {
    INFO(threads << " threads");
    const auto many = run_shared(threads);
    for (int i = 0; i < 3; ++i) {
      REQUIRE(std::memcmp(one[i].data(), many[i].data(), one[i].size() * sizeof(float)) == 0);
    }
  }
  // And equal to one MatMul per matrix.
  for (int i = 0; i < 3; ++i) {
    std::vector<float> y(static_cast<size_t>(m * rows[i]));
    MatMulScratch scratch;
    MatMul(views[i], x.data(), m, y.data(), rows[i], 2, &scratch);
    CHECK(std::memcmp(y.data(), one[i].data(), y.size() * sizeof(float)) == 0);
  }
}
