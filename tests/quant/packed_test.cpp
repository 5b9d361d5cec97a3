// PackedView: native-layout bytes as stored in a file, wrapped without a copy.
#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <vector>

#include "quant/packed.h"
#include "quant/quantize.h"

using namespace ember;

namespace {

// A matrix [rows, cols] of random values in `type`, repacked.
PackedMatrix RandomPacked(int64_t rows, int64_t cols, GgmlType type = GgmlType::kQ4_1) {
  std::mt19937 rng(3);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(rows * cols));
  for (float& v : x) v = d(rng);
  const size_t row_bytes = GgmlRowBytes(type, static_cast<uint64_t>(cols));
  std::vector<uint8_t> src(row_bytes * static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    QuantizeRow(type, &x[static_cast<size_t>(r * cols)], &src[r * row_bytes], cols);
  }
  PackedMatrix p;
  REQUIRE(Repack(type, src.data(), rows, cols, &p).ok());
  return p;
}

}  // namespace

TEST_CASE("packed: PackedView wraps repacked bytes without copying", "[packed]") {
  const PackedMatrix p = RandomPacked(32, 64);
  CHECK(NativeTypeFor(GgmlType::kQ4_1) == GgmlType::kEmberQ4x16Min);
  CHECK(NativeTypeFor(GgmlType::kQ4_0) == GgmlType::kEmberQ4x16);
  CHECK(NativeTypeFor(GgmlType::kQ6_K) == GgmlType::kEmberQ6Kx16);
  CHECK(NativeTypeFor(GgmlType::kQ8_0) == GgmlType::kEmberQ8x16);
  CHECK(NativeTypeFor(GgmlType::kF16) == GgmlType::kEmberQ8x16);
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

TEST_CASE("packed: 5-bit sources keep their size as native types", "[packed]") {
  // Q5_0 and Q5_1 map to Q5x16 at their own 22 / 24 bytes per 32 weights.
  const struct {
    GgmlType source, native;
    bool has_min;
  } cases[] = {{GgmlType::kQ5_0, GgmlType::kEmberQ5x16, false},
               {GgmlType::kQ5_1, GgmlType::kEmberQ5x16Min, true}};
  for (const auto& c : cases) {
    INFO(GgmlTypeName(c.source));
    CHECK(NativeTypeFor(c.source) == c.native);
    const int64_t cols = 64;
    const PackedMatrix p = RandomPacked(32, cols, c.source);
    CHECK(p.layout == PackedLayout::kQ5x16);
    CHECK(GgmlRowBytes(c.native, static_cast<uint64_t>(cols)) * 32 == p.bytes());
    CHECK(GgmlRowBytes(c.source, static_cast<uint64_t>(cols)) * 32 == p.bytes());
    PackedMatrix v;
    REQUIRE(PackedView(c.native, p.data.get(), p.bytes(), 32, cols, &v).ok());
    CHECK(v.has_min == c.has_min);
    CHECK(v.layout == PackedLayout::kQ5x16);
    for (int64_t r = 0; r < 32; ++r) {
      for (int64_t col = 0; col < cols; ++col) {
        REQUIRE(PackedWeight(v, r, col) == PackedWeight(p, r, col));
      }
    }
  }
}

TEST_CASE("packed: Q6_K maps to Q6Kx16 at its own 6.5625 bits per weight", "[packed]") {
  // A super-group of 16 rows x 256 columns: a 288-byte header (fp16 d[16],
  // int8 sc[16][16]) and 8 groups of 384 bytes of quants (nibbles, crumbs), 3360 bytes:
  // 210 per row and 256 weights, Q6_K's own block size, so the native tensor
  // takes exactly the bytes of the GGUF one.
  CHECK(NativeTypeFor(GgmlType::kQ6_K) == GgmlType::kEmberQ6Kx16);
  CHECK(IsNativeType(GgmlType::kEmberQ6Kx16));
  CHECK(GgmlTypeName(GgmlType::kEmberQ6Kx16) == std::string("EMBER_Q6Kx16"));
  CHECK(KHeaderBytes(PackedLayout::kQ6Kx16) == 288);
  CHECK(KGroupBytes(PackedLayout::kQ6Kx16) == 384);
  CHECK(KSuperBytes(PackedLayout::kQ6Kx16) == 3360);
  CHECK(GgmlRowBytes(GgmlType::kEmberQ6Kx16, 256) == 210);
  CHECK(GgmlRowBytes(GgmlType::kQ6_K, 256) == 210);
  const int64_t rows = 48, cols = 768;
  const PackedMatrix p = RandomPacked(rows, cols, GgmlType::kQ6_K);
  CHECK(p.layout == PackedLayout::kQ6Kx16);
  CHECK_FALSE(p.has_min);
  CHECK(p.super_bytes == 3360);
  CHECK(p.bytes() == size_t{3360} * 3 * 3);
  CHECK(GgmlRowBytes(GgmlType::kQ6_K, cols) * rows == p.bytes());
  CHECK(RepackedBytes(GgmlType::kQ6_K, rows, cols) == p.bytes());
  PackedMatrix v;
  REQUIRE(PackedView(GgmlType::kEmberQ6Kx16, p.data.get(), p.bytes(), rows, cols, &v).ok());
  CHECK(v.layout == PackedLayout::kQ6Kx16);
  CHECK_FALSE(v.has_min);
  CHECK(v.data.get() == p.data.get());
  CHECK(v.tile_bytes == p.tile_bytes);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) REQUIRE(PackedWeight(v, r, c) == PackedWeight(p, r, c));
  }
  // Columns must be whole super-groups, and other layouts' sizes differ.
  CHECK(PackedView(GgmlType::kEmberQ6Kx16, p.data.get(), p.bytes(), rows, 512, &v).code() ==
        Code::kInvalidArgument);
  CHECK(PackedView(GgmlType::kEmberQ3Kx16, p.data.get(), p.bytes(), rows, cols, &v).code() ==
        Code::kInvalidArgument);
}

TEST_CASE("packed: IQ4_NL and IQ4_XS map to IQ4x16 at 4.5 bits per weight", "[packed]") {
  // 288 bytes per 16 rows x 32 columns: 18 per 32 weights of a row, IQ4_NL's
  // own size (IQ4_XS's is 17: its 6-bit scales per 32 become fp16).
  CHECK(PackedGroupBytes(PackedLayout::kIQ4x16, false) == 288);
  CHECK(GgmlRowBytes(GgmlType::kEmberIQ4x16, 256) == 144);
  CHECK(GgmlTypeName(GgmlType::kEmberIQ4x16) == std::string("EMBER_IQ4x16"));
  CHECK(IsNativeType(GgmlType::kEmberIQ4x16));
  for (GgmlType source : {GgmlType::kIQ4_NL, GgmlType::kIQ4_XS}) {
    INFO(GgmlTypeName(source));
    CHECK(NativeTypeFor(source) == GgmlType::kEmberIQ4x16);
    const int64_t rows = 48, cols = 512;
    const PackedMatrix p = RandomPacked(rows, cols, source);
    CHECK(p.layout == PackedLayout::kIQ4x16);
    CHECK_FALSE(p.has_min);
    CHECK(GgmlRowBytes(GgmlType::kEmberIQ4x16, cols) * rows == p.bytes());
    if (source == GgmlType::kIQ4_NL) CHECK(GgmlRowBytes(source, cols) * rows == p.bytes());
    PackedMatrix v;
    REQUIRE(PackedView(GgmlType::kEmberIQ4x16, p.data.get(), p.bytes(), rows, cols, &v).ok());
    CHECK(v.layout == PackedLayout::kIQ4x16);
    CHECK_FALSE(v.has_min);
    CHECK(v.data.get() == p.data.get());
    CHECK(v.group_bytes == 288);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) REQUIRE(PackedWeight(v, r, c) == PackedWeight(p, r, c));
    }
    // Q4x16 without mins has the same size: only the type id tells them apart.
    REQUIRE(PackedView(GgmlType::kEmberQ4x16, p.data.get(), p.bytes(), rows, cols, &v).ok());
    CHECK(v.layout == PackedLayout::kQ4x16);
  }
}

TEST_CASE(
    "packed: K-quants map to the K layouts (Q4_K 4.625, Q5_K 5.625, Q3_K 3.5625, Q2_K 2.625 bits)",
    "[packed]") {
  // A super-group of 16 rows x 256 columns: a 320-byte header (d, dmin, the
  // scales and mins as bytes) and the quants, 2368 / 2880 bytes: 148 / 180 per
  // row and 256 weights, against Q4_K's 144 and Q5_K's 176.
  const struct {
    GgmlType source, native;
    PackedLayout layout;
    size_t super_bytes, row_bytes;
  } cases[] = {{GgmlType::kQ4_K, GgmlType::kEmberQ4Kx16, PackedLayout::kQ4Kx16, 2368, 148},
               {GgmlType::kQ5_K, GgmlType::kEmberQ5Kx16, PackedLayout::kQ5Kx16, 2880, 180},
               // Q3_K (110 bytes per 256) and Q2_K (84): a 288 / 320-byte
               // header with the scales per 16 as bytes, 192 / 128 bytes of
               // quants per group.
               {GgmlType::kQ3_K, GgmlType::kEmberQ3Kx16, PackedLayout::kQ3Kx16, 1824, 114},
               {GgmlType::kQ2_K, GgmlType::kEmberQ2Kx16, PackedLayout::kQ2Kx16, 1344, 84}};
  for (const auto& c : cases) {
    INFO(GgmlTypeName(c.source));
    CHECK(NativeTypeFor(c.source) == c.native);
    CHECK(IsNativeType(c.native));
    CHECK(KSuperBytes(c.layout) == c.super_bytes);
    CHECK(GgmlRowBytes(c.native, 256) == c.row_bytes);
    const int64_t rows = 48, cols = 768;
    const PackedMatrix p = RandomPacked(rows, cols, c.source);
    CHECK(p.layout == c.layout);
    CHECK_FALSE(p.has_min);
    CHECK(p.super_bytes == c.super_bytes);
    CHECK(p.bytes() == c.super_bytes * 3 * 3);
    CHECK(GgmlRowBytes(c.native, cols) * rows == p.bytes());
    PackedMatrix v;
    REQUIRE(PackedView(c.native, p.data.get(), p.bytes(), rows, cols, &v).ok());
    CHECK(v.layout == c.layout);
    CHECK(v.data.get() == p.data.get());
    CHECK(v.tile_bytes == p.tile_bytes);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t col = 0; col < cols; ++col) {
        REQUIRE(PackedWeight(v, r, col) == PackedWeight(p, r, col));
      }
    }
    // Columns must be whole super-groups of 256.
    CHECK(PackedView(c.native, p.data.get(), p.bytes(), rows, 736, &v).code() ==
          Code::kInvalidArgument);
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
