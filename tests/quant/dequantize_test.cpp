// Dequantization of Q5_0, Q5_1, Q4_K, Q5_K and Q6_K against blocks built by
// hand from the layout definitions (explicit scales, mins and quants, chosen
// so that every expected value is exact in float), and round trips through
// the quantizers.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "quant/fp16.h"
#include "quant/quantize.h"

using namespace ember;

namespace {

// Quants that visit every value of the range in a scrambled order.
int Q4(int i) { return (i * 7 + 3) % 16; }
int Q5(int i) { return (i * 11 + 5) % 32; }
int Q6(int i) { return (i * 13 + 1) % 64; }

// Sub-block scales and mins of the K-quant blocks below, with top bits set.
constexpr int kSc[8] = {1, 2, 3, 63, 17, 40, 5, 33};
constexpr int kMin[8] = {0, 1, 62, 7, 20, 48, 9, 63};

// The 12 scale bytes of a Q4_K / Q5_K block, spelled out from the format: bytes
// 0-3 hold sc[0..3] (bits 0-5) and the top 2 bits of sc[4..7] (bits 6-7);
// bytes 4-7 the same for the mins; bytes 8-11 the low 4 bits of sc[4..7] (low
// nibble) and of m[4..7] (high nibble).
void HandScales(uint8_t* s) {
  for (int j = 0; j < 4; ++j) {
    s[j] = static_cast<uint8_t>(kSc[j] | ((kSc[j + 4] >> 4) << 6));
    s[j + 4] = static_cast<uint8_t>(kMin[j] | ((kMin[j + 4] >> 4) << 6));
    s[j + 8] = static_cast<uint8_t>((kSc[j + 4] & 15) | ((kMin[j + 4] & 15) << 4));
  }
}

std::vector<float> Dequantize(GgmlType type, const void* block, int64_t n) {
  std::vector<float> y(static_cast<size_t>(n));
  DequantizeRow(type, block, y.data(), n);
  return y;
}

}  // namespace

TEST_CASE("dequantize: Q5_0 and Q5_1 blocks built by hand", "[quant]") {
  BlockQ5_0 b0{};
  BlockQ5_1 b1{};
  b0.d = Fp32ToFp16(0.5f);
  b1.d = Fp32ToFp16(0.25f);
  b1.m = Fp32ToFp16(-1.5f);
  uint32_t qh = 0;
  for (int j = 0; j < 16; ++j) {
    b0.qs[j] = static_cast<uint8_t>((Q5(j) & 15) | ((Q5(j + 16) & 15) << 4));
  }
  for (int j = 0; j < 32; ++j) qh |= static_cast<uint32_t>(Q5(j) >> 4) << j;
  std::memcpy(b0.qh, &qh, 4);
  std::memcpy(b1.qs, b0.qs, 16);
  std::memcpy(b1.qh, b0.qh, 4);
  const auto y0 = Dequantize(GgmlType::kQ5_0, &b0, 32);
  const auto y1 = Dequantize(GgmlType::kQ5_1, &b1, 32);
  for (int j = 0; j < 32; ++j) {
    INFO("weight " << j);
    CHECK(y0[j] == 0.5f * static_cast<float>(Q5(j) - 16));
    CHECK(y1[j] == 0.25f * static_cast<float>(Q5(j)) - 1.5f);
  }
  CHECK(y0[1] == 0.5f * (16 - 16));  // Q5(1) = 16: the high bit alone
}

TEST_CASE("dequantize: Q4_K and Q5_K blocks built by hand", "[quant]") {
  BlockQ4_K b4{};
  BlockQ5_K b5{};
  b4.d = b5.d = Fp32ToFp16(0.5f);
  b4.dmin = b5.dmin = Fp32ToFp16(0.25f);
  HandScales(b4.scales);
  HandScales(b5.scales);
  // Chunk c of 64 weights: byte 32 c + l holds weight 64 c + l (low nibble)
  // and weight 64 c + 32 + l (high nibble); Q5_K's qh[l] bit j is bit 4 of
  // weight 32 j + l.
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) {
      b4.qs[32 * c + l] = static_cast<uint8_t>(Q4(64 * c + l) | (Q4(64 * c + 32 + l) << 4));
      b5.qs[32 * c + l] =
          static_cast<uint8_t>((Q5(64 * c + l) & 15) | ((Q5(64 * c + 32 + l) & 15) << 4));
    }
  }
  for (int j = 0; j < 8; ++j) {
    for (int l = 0; l < 32; ++l) b5.qh[l] |= static_cast<uint8_t>((Q5(32 * j + l) >> 4) << j);
  }
  const auto y4 = Dequantize(GgmlType::kQ4_K, &b4, 256);
  const auto y5 = Dequantize(GgmlType::kQ5_K, &b5, 256);
  for (int i = 0; i < 256; ++i) {
    INFO("weight " << i);
    const float sc = static_cast<float>(kSc[i / 32]), m = static_cast<float>(kMin[i / 32]);
    CHECK(y4[i] == 0.5f * sc * static_cast<float>(Q4(i)) - 0.25f * m);
    CHECK(y5[i] == 0.5f * sc * static_cast<float>(Q5(i)) - 0.25f * m);
  }
}

TEST_CASE("dequantize: Q6_K block built by hand", "[quant]") {
  BlockQ6_K b{};
  b.d = Fp32ToFp16(0.125f);
  for (int k = 0; k < 16; ++k) b.scales[k] = static_cast<int8_t>(k * 9 - 70);
  b.scales[0] = -128;
  b.scales[1] = 127;
  // Half h, l in [0, 32): ql[64h + l] = weight 128h + l (low) | weight
  // 128h + 64 + l (high); ql[64h + 32 + l] = weight 128h + 32 + l | weight
  // 128h + 96 + l; qh[32h + l] holds the top 2 bits of those four weights at
  // bits 0, 2, 4, 6 (in the order +0, +32, +64, +96).
  for (int h = 0; h < 2; ++h) {
    for (int l = 0; l < 32; ++l) {
      const int w0 = 128 * h + l, w1 = w0 + 32, w2 = w0 + 64, w3 = w0 + 96;
      b.ql[64 * h + l] = static_cast<uint8_t>((Q6(w0) & 15) | ((Q6(w2) & 15) << 4));
      b.ql[64 * h + 32 + l] = static_cast<uint8_t>((Q6(w1) & 15) | ((Q6(w3) & 15) << 4));
      b.qh[32 * h + l] = static_cast<uint8_t>((Q6(w0) >> 4) | ((Q6(w1) >> 4) << 2) |
                                              ((Q6(w2) >> 4) << 4) | ((Q6(w3) >> 4) << 6));
    }
  }
  const auto y = Dequantize(GgmlType::kQ6_K, &b, 256);
  for (int i = 0; i < 256; ++i) {
    INFO("weight " << i);
    CHECK(y[i] == 0.125f * static_cast<float>(b.scales[i / 16]) * static_cast<float>(Q6(i) - 32));
  }
}

TEST_CASE("quantize: new block types round-trip within their step", "[quant]") {
  std::mt19937 rng(17);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(4096);
  for (float& v : x) v = d(rng);
  // Worst |x - dequantized| per 256 weights, relative to their max |x|.
  auto worst = [&](GgmlType type) {
    std::vector<uint8_t> q(GgmlRowBytes(type, x.size()));
    std::vector<float> y(x.size());
    QuantizeRow(type, x.data(), q.data(), static_cast<int64_t>(x.size()));
    DequantizeRow(type, q.data(), y.data(), static_cast<int64_t>(x.size()));
    double w = 0;
    for (size_t b = 0; b < x.size(); b += 256) {
      double amax = 0, err = 0;
      for (size_t j = b; j < b + 256; ++j) {
        amax = std::max(amax, double(std::fabs(x[j])));
        err = std::max(err, double(std::fabs(x[j] - y[j])));
      }
      w = std::max(w, err / amax);
    }
    return w;
  };
  // Q5_0: max -> -16, +max at most 15: a full step of max/16. Q5_1: half a
  // step of (range <= 2 max) / 31. The K-quants' sub-block scales are rounded
  // to 6 (Q6_K: 8) bits, which widens the error of small sub-blocks a little
  // and of any sub-block by at most the rounding of its scale.
  CHECK(worst(GgmlType::kQ5_0) <= 1.0 / 16 * 1.01);
  CHECK(worst(GgmlType::kQ5_1) <= 1.0 / 31 * 1.01);
  CHECK(worst(GgmlType::kQ4_K) <= 0.1);
  CHECK(worst(GgmlType::kQ5_K) <= 0.05);
  CHECK(worst(GgmlType::kQ6_K) <= 0.03);
  // All-zero blocks decode to zeros.
  std::vector<float> zeros(256, 0.0f), y(256, 1.0f);
  for (GgmlType t :
       {GgmlType::kQ5_0, GgmlType::kQ5_1, GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K}) {
    std::vector<uint8_t> q(GgmlRowBytes(t, 256));
    QuantizeRow(t, zeros.data(), q.data(), 256);
    DequantizeRow(t, q.data(), y.data(), 256);
    for (float v : y) CHECK(v == 0.0f);
  }
}
