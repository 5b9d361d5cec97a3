// The file quantizers write llama-quantize's bytes: a fixed input (rows with
// signed values, values all >= 0, outliers, all zeros, a zero super-block)
// through each QuantizeRow, hashed, against the hash of the same input through
// llama.cpp's own quantizers (ggml_quantize_chunk without an importance
// matrix, llama.cpp 0c1e57098 built by scripts/build-peer.sh, x86-64), which
// llama-quantize calls; and DequantizeRow of those bytes against llama.cpp's
// to_float of them (the values every repack and the reference forward start
// from). The expected hashes were printed once by a throwaway
// program linking that libggml-base with this generator; they are data from
// the peer, not from ember.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
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
    uint64_t llama_hash, llama_dequant_hash;
  } cases[] = {
      {GgmlType::kQ2_K, 0xad22e84b74d368fcull, 0x8fee7fc9542c5255ull},
      {GgmlType::kQ3_K, 0xd181b92ce3832803ull, 0xa890fefcd99d5c13ull},
      {GgmlType::kQ4_K, 0x2a2ee9bbd10fbf8bull, 0x8be6b938ddd89a5cull},
      {GgmlType::kQ5_K, 0xf4b74e5eeda202d8ull, 0x5d96c63b432ff726ull},
      {GgmlType::kQ6_K, 0xa830180e69832996ull, 0xc91b20275fdc0209ull},
      {GgmlType::kQ8_0, 0x431cda080dbc9821ull, 0xe29ebf1806af7d55ull},
      {GgmlType::kQ5_0, 0x48d67bf722847435ull, 0xa8ec0291b3f60401ull},
      {GgmlType::kQ5_1, 0x424cddbb5b4a16e7ull, 0xe04ebebb888edda0ull},
      {GgmlType::kQ4_0, 0x3e754e6fd6043801ull, 0xa0ec25aaf7d7bccfull},
      {GgmlType::kQ4_1, 0xbb6ae8ada881612aull, 0x04c1994086c282c4ull},
      {GgmlType::kIQ4_NL, 0x5e4ebfd890e69af5ull, 0xf886eda08129ec2bull},
      {GgmlType::kIQ4_XS, 0x07169934b415fe82ull, 0x0529483d43f4ab04ull},
  };
  const std::vector<float> x = FixedInput();
  for (const auto& c : cases) {
    const size_t rb = GgmlRowBytes(c.type, kCols);
    std::vector<uint8_t> out(rb * kRows);
    for (int r = 0; r < kRows; ++r) QuantizeRow(c.type, &x[r * kCols], &out[r * rb], kCols);
    INFO(GgmlTypeName(c.type));
    CHECK(Fnv1a(out) == c.llama_hash);
    std::vector<float> back(static_cast<size_t>(kRows * kCols));
    for (int r = 0; r < kRows; ++r) DequantizeRow(c.type, &out[r * rb], &back[r * kCols], kCols);
    std::vector<uint8_t> back_bytes(back.size() * sizeof(float));
    std::memcpy(back_bytes.data(), back.data(), back_bytes.size());
    CHECK(Fnv1a(back_bytes) == c.llama_dequant_hash);
  }
}

TEST_CASE("quantize: IQ4_NL and IQ4_XS dequantize as llama.cpp does", "[quantize]") {
  // Pseudo-random block bytes with an fp16 scale of each block set to a
  // finite value (0x2C00 + offset % 0x400), dequantized, hashed; the expected
  // hashes are llama.cpp's to_float of the same bytes (the throwaway program
  // as above): blocks no quantizer would write (any scale with any index).
  const struct {
    GgmlType type;
    size_t block_bytes;
    uint64_t llama_hash;
  } cases[] = {{GgmlType::kIQ4_NL, 18, 0x0d34270a3635263cull},
               {GgmlType::kIQ4_XS, 136, 0x6963ecadc55229d6ull}};
  for (const auto& c : cases) {
    const int n = 4096;
    std::vector<uint8_t> bytes(GgmlRowBytes(c.type, n));
    uint32_t s = 777;
    for (uint8_t& b : bytes) {
      s = s * 1664525u + 1013904223u;
      b = static_cast<uint8_t>(s >> 24);
    }
    for (size_t o = 0; o < bytes.size(); o += c.block_bytes) {
      const uint16_t d = static_cast<uint16_t>(0x2C00 + o % 0x400);
      std::memcpy(&bytes[o], &d, 2);
    }
    std::vector<float> y(n);
    DequantizeRow(c.type, bytes.data(), y.data(), n);
    std::vector<uint8_t> y_bytes(y.size() * sizeof(float));
    std::memcpy(y_bytes.data(), y.data(), y_bytes.size());
    INFO(GgmlTypeName(c.type));
    CHECK(Fnv1a(y_bytes) == c.llama_hash);
  }
}
