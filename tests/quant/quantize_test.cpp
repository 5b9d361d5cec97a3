#include "quant/quantize.h"

#include "quant/fp16.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

using namespace ember;

namespace {

std::vector<float> RandomRow(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = d(rng);
  return x;
}

// Max error of quantize -> dequantize relative to the block's max |x|.
double RoundTripError(GgmlType type, const std::vector<float>& x) {
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<uint8_t> q(GgmlRowBytes(type, static_cast<uint64_t>(n)));
  std::vector<float> y(x.size());
  QuantizeRow(type, x.data(), q.data(), n);
  DequantizeRow(type, q.data(), y.data(), n);
  double worst = 0;
  for (int64_t b = 0; b < n / 32; ++b) {
    double amax = 0, err = 0;
    for (int j = 0; j < 32; ++j) {
      amax = std::max(amax, double(std::fabs(x[b * 32 + j])));
      err = std::max(err, double(std::fabs(x[b * 32 + j] - y[b * 32 + j])));
    }
    worst = std::max(worst, err / amax);
  }
  return worst;
}

}  // namespace

TEST_CASE("quantize: round-trip error is within each format's step", "[quant]") {
  auto x = RandomRow(4096, 7);
  // One quantization step relative to max|x|: Q8_0 1/127, Q4_0 1/8, Q4_1 range/15
  // (at most 2 max|x| / 15). Half a step is the rounding bound, plus fp16 scale
  // error; Q4_0 maps -max to -8 but +max can only reach +7: a full step there.
  CHECK(RoundTripError(GgmlType::kQ8_0, x) <= 0.5 / 127 + 1e-3);
  CHECK(RoundTripError(GgmlType::kQ4_0, x) <= 1.0 / 8 * 1.01 + 1e-3);
  CHECK(RoundTripError(GgmlType::kQ4_1, x) <= 1.0 / 15 * 1.01 + 1e-3);
  CHECK(RoundTripError(GgmlType::kF16, x) <= 1e-3);
  CHECK(RoundTripError(GgmlType::kBF16, x) <= 8e-3);
}

TEST_CASE("quantize: Q8_1 keeps d * sum(q) for the Q4_1 dot product", "[quant]") {
  auto x = RandomRow(64, 3);
  BlockQ8_1 b[2];
  QuantizeRowQ8_1(x.data(), b, 64);
  for (const BlockQ8_1& blk : b) {
    int sum = 0;
    for (int8_t q : blk.qs) sum += q;
    CHECK(Fp16ToFp32(blk.s) == Approx(Fp16ToFp32(blk.d) * sum).epsilon(1e-3));
  }
}

TEST_CASE("quantize: an all-zero block has scale zero and decodes to zeros", "[quant]") {
  std::vector<float> x(32, 0.0f), y(32, 1.0f);
  for (GgmlType t : {GgmlType::kQ8_0, GgmlType::kQ4_0, GgmlType::kQ4_1}) {
    std::vector<uint8_t> q(GgmlRowBytes(t, 32));
    QuantizeRow(t, x.data(), q.data(), 32);
    DequantizeRow(t, q.data(), y.data(), 32);
    for (float v : y) CHECK(v == 0.0f);
  }
}
