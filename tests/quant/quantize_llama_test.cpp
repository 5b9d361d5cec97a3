// The file quantizers write llama-quantize's bytes: a fixed input (rows with
// signed values, values all >= 0, outliers, all zeros, a zero super-block)
// through each QuantizeRow, hashed, against the hash of the same input through
// llama.cpp's own quantizers (ggml_quantize_chunk without an importance
// matrix, llama.cpp 0c1e57098 built by scripts/build-peer.sh, x86-64), which
// llama-quantize calls. The expected hashes were printed once by a throwaway
// program linking that libggml-base with this generator; they are data from
// the peer, not from ember.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "quant/ggml_type.h"
#include "quant/quantize.h"

using namespace ember;

namespace {

constexpr int kRows = 6, kCols = 512;

std::vector<float> FixedInput() {
  std::vector<float> x(kRows * kCols);
  uint32_t s = 12345;
  for (int r = 0; r < kRows; ++r) {
    for (int c = 0; c < kCols; ++c) {
      s = s * 1664525u + 1013904223u;
      float v = static_cast<float>(static_cast<int>(s >> 9) % 20001 - 10000) / 10000.0f;
      const float scale = 0.01f * static_cast<float>(r + 1);
      if (r == 2) v = v * v;                 // all >= 0: the min clamps to 0
      if (r == 3 && c % 97 == 0) v *= 9.0f;  // outliers
      if (r == 4) v = 0.0f;                  // an all-zero row
      if (r == 5 && c >= 256) v = 0.0f;      // a zero super-block
      x[r * kCols + c] = v * scale;
    }
  }
  return x;
}

uint64_t Fnv1a(const std::vector<uint8_t>& bytes) {
  uint64_t h = 1469598103934665603ull;
  for (uint8_t b : bytes) {
    h ^= b;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

TEST_CASE("quantize: every file quantizer writes llama-quantize's bytes", "[quantize]") {
  const struct {
    GgmlType type;
    uint64_t llama_hash;
  } cases[] = {
      {GgmlType::kQ4_K, 0x2a2ee9bbd10fbf8bull}, {GgmlType::kQ5_K, 0xf4b74e5eeda202d8ull},
      {GgmlType::kQ6_K, 0xa830180e69832996ull}, {GgmlType::kQ8_0, 0x431cda080dbc9821ull},
      {GgmlType::kQ5_0, 0x48d67bf722847435ull}, {GgmlType::kQ5_1, 0x424cddbb5b4a16e7ull},
      {GgmlType::kQ4_0, 0x3e754e6fd6043801ull}, {GgmlType::kQ4_1, 0xbb6ae8ada881612aull},
  };
  const std::vector<float> x = FixedInput();
  for (const auto& c : cases) {
    const size_t rb = GgmlRowBytes(c.type, kCols);
    std::vector<uint8_t> out(rb * kRows);
    for (int r = 0; r < kRows; ++r) QuantizeRow(c.type, &x[r * kCols], &out[r * rb], kCols);
    INFO(GgmlTypeName(c.type));
    CHECK(Fnv1a(out) == c.llama_hash);
  }
}
