// PackedView: native-layout bytes as stored in a file, wrapped without a copy.
#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <vector>

#include "quant/packed.h"
#include "quant/quantize.h"

using namespace ember;

namespace {

// A Q4_1 matrix [rows, cols] of random values, repacked.
PackedMatrix RandomPacked(int64_t rows, int64_t cols) {
  std::mt19937 rng(3);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(rows * cols));
  for (float& v : x) v = d(rng);
  const size_t row_bytes = GgmlRowBytes(GgmlType::kQ4_1, static_cast<uint64_t>(cols));
  std::vector<uint8_t> src(row_bytes * static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    QuantizeRow(GgmlType::kQ4_1, &x[static_cast<size_t>(r * cols)], &src[r * row_bytes], cols);
  }
  PackedMatrix p;
  REQUIRE(Repack(GgmlType::kQ4_1, src.data(), rows, cols, &p).ok());
  return p;
}

}  // namespace

TEST_CASE("packed: PackedView wraps repacked bytes without copying", "[packed]") {
  const PackedMatrix p = RandomPacked(32, 64);
  CHECK(NativeTypeFor(GgmlType::kQ4_1) == GgmlType::kEmberQ4x16Min);
  CHECK(NativeTypeFor(GgmlType::kQ4_0) == GgmlType::kEmberQ4x16);
  CHECK(NativeTypeFor(GgmlType::kQ6_K) == GgmlType::kEmberQ8x16);
  // The stored size is the GGUF row arithmetic of the native type.
  CHECK(GgmlRowBytes(GgmlType::kEmberQ4x16Min, 64) * 32 == p.bytes());
  PackedMatrix v;
  REQUIRE(PackedView(GgmlType::kEmberQ4x16Min, p.data.get(), p.bytes(), 32, 64, &v).ok());
  CHECK(v.data.get() == p.data.get());
  CHECK(v.tile_bytes == p.tile_bytes);
  CHECK(v.has_min);
  for (int64_t r = 0; r < 32; ++r) {
    for (int64_t c = 0; c < 64; ++c) REQUIRE(PackedWeight(v, r, c) == PackedWeight(p, r, c));
  }
}

TEST_CASE("packed: PackedView refuses what it cannot map", "[packed][bad-input]") {
  const PackedMatrix p = RandomPacked(32, 64);
  const uint8_t* d = p.data.get();
  PackedMatrix v;
  CHECK(PackedView(GgmlType::kQ4_1, d, p.bytes(), 32, 64, &v).code() == Code::kInvalidArgument);
  CHECK(PackedView(GgmlType::kEmberQ4x16Min, d, p.bytes(), 24, 64, &v).code() ==
        Code::kInvalidArgument);  // rows not whole tiles
  CHECK(PackedView(GgmlType::kEmberQ4x16Min, d, p.bytes(), 32, 48, &v).code() ==
        Code::kInvalidArgument);  // columns not whole groups
  CHECK(PackedView(GgmlType::kEmberQ4x16Min, d, p.bytes() - 32, 32, 64, &v).code() ==
        Code::kInvalidArgument);  // size mismatch
  CHECK(PackedView(GgmlType::kEmberQ4x16, d, p.bytes(), 32, 64, &v).code() ==
        Code::kInvalidArgument);  // the no-min layout is smaller
  Status s = PackedView(GgmlType::kEmberQ4x16Min, d + 16, p.bytes(), 32, 64, &v);
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message().find("aligned") != std::string::npos);
  CHECK(v.data == nullptr);  // nothing kept on error
}
