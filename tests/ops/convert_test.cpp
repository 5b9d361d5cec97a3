// Fp32ToFp16Row variants against Fp32ToFp16Row_ref, bit for bit, over the
// values where conversions go wrong: ties, overflow, subnormals, NaN.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ops/convert.h"
#include "ops/kernels.h"
#include "quant/fp16.h"
#include "support/simd_isas.h"
#include "support/skip.h"

using namespace ember;

namespace {

float FromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// Random floats of every kind, and the edges of f16's range.
std::vector<float> Values(size_t n, std::mt19937& rng) {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1.0f,
                          65504.0f,               // largest half
                          65519.99f,              // rounds down to it
                          65520.0f,               // rounds to inf
                          -1e9f,                  // overflows
                          5.9604645e-8f,          // smallest subnormal half
                          2.9802322e-8f,          // half of it: a tie, to 0
                          2.9802326e-8f,          // just above: to the subnormal
                          6.1035156e-5f,          // smallest normal half
                          1.0f + 1.0f / 2048.0f,  // a tie between halves, to even
                          1.0f + 3.0f / 2048.0f,  // a tie, up to even
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN(),
                          FromBits(0xFFC12345u),  // a negative NaN with a payload
                          FromBits(0x7F800001u),  // a signalling NaN
                          std::numeric_limits<float>::denorm_min()};
  std::uniform_int_distribution<uint32_t> bits;
  std::normal_distribution<float> normal(0.0f, 2.0f);
  while (v.size() < n) {
    v.push_back(FromBits(bits(rng)));  // any bit pattern
    v.push_back(normal(rng));
    v.push_back(std::ldexp(normal(rng), -20));  // the subnormal halves
  }
  v.resize(n);
  return v;
}

}  // namespace

TEST_CASE("convert: _ref is Fp32ToFp16 with one quiet NaN", "[convert]") {
  std::mt19937 rng(1);
  const std::vector<float> x = Values(3000, rng);
  std::vector<uint16_t> y(x.size());
  Fp32ToFp16Row_ref(x.data(), y.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) REQUIRE(y[i] == Fp32ToFp16(x[i]));
  CHECK(y[5] == 0x7C00);   // 65520 -> inf
  CHECK(y[11] == 0x3C00);  // 1 + 2^-11: the tie goes to even (1.0)
  CHECK(y[12] == 0x3C02);  // 1 + 3 * 2^-11: up to even
  CHECK(y[15] == 0x7E00);
  CHECK(y[16] == 0xFE00);  // sign kept, payload dropped
}

TEST_CASE("convert: every ISA's fp32_to_fp16_row gives _ref's bits", "[convert][isa]") {
  std::vector<Isa> isas;
  for (Isa isa :
       {Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Vnni, Isa::kNeon, Isa::kNeonDot, Isa::kNeonI8mm}) {
    if (test::CanTestVariants(isa)) isas.push_back(isa);
  }
  if (isas.empty()) EMBER_SKIP("no SIMD ISA on this build and CPU");
  std::mt19937 rng(2);
  for (Isa isa : isas) {
    const Fp32ToFp16RowFn fn = KernelsFor(isa).fp32_to_fp16_row;
    for (int64_t n : {1, 3, 4, 7, 8, 9, 15, 16, 17, 64, 192, 1000}) {
      const std::vector<float> x = Values(static_cast<size_t>(n) + 19, rng);
      std::vector<uint16_t> want(x.size()), got(x.size(), 0xABCD);
      // Start at an odd element: unaligned rows.
      Fp32ToFp16Row_ref(x.data() + 1, want.data() + 1, n);
      fn(x.data() + 1, got.data() + 1, n);
      CHECK(got[0] == 0xABCD);
      for (int64_t i = 1; i <= n; ++i) {
        INFO(IsaName(isa) << " n " << n << " i " << i << " x " << x[i]);
        REQUIRE(got[i] == want[i]);
      }
      if (n + 1 < static_cast<int64_t>(got.size())) CHECK(got[n + 1] == 0xABCD);
    }
  }
}
