#include "quant/fp16.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

using namespace ember;

TEST_CASE("fp16: every half survives the round trip through float", "[fp16]") {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = Fp16ToFp32(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      REQUIRE(std::isnan(Fp16ToFp32(Fp32ToFp16(f))));
      continue;
    }
    REQUIRE(Fp32ToFp16(f) == h);
  }
}

TEST_CASE("fp16: known values and rounding to nearest even", "[fp16]") {
  CHECK(Fp16ToFp32(0x3C00) == 1.0f);
  CHECK(Fp16ToFp32(0xC000) == -2.0f);
  CHECK(Fp16ToFp32(0x7BFF) == 65504.0f);
  CHECK(Fp16ToFp32(0x0001) == std::ldexp(1.0f, -24));  // smallest subnormal
  CHECK(Fp32ToFp16(65520.0f) == 0x7C00);               // rounds up to inf
  CHECK(Fp32ToFp16(65519.0f) == 0x7BFF);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties go to even (1.0).
  CHECK(Fp32ToFp16(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9: goes up.
  CHECK(Fp32ToFp16(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02);
  CHECK(Fp32ToFp16(std::ldexp(1.0f, -25)) == 0x0000);  // half the smallest: ties to 0
  CHECK(Fp32ToFp16(std::ldexp(1.5f, -25)) == 0x0001);
  CHECK(Fp32ToFp16(-std::numeric_limits<float>::infinity()) == 0xFC00);
}

TEST_CASE("bf16: truncation with rounding", "[fp16]") {
  CHECK(Bf16ToFp32(Fp32ToBf16(1.0f)) == 1.0f);
  CHECK(Bf16ToFp32(Fp32ToBf16(-3.5f)) == -3.5f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7 in bf16: ties to even.
  CHECK(Fp32ToBf16(1.0f + std::ldexp(1.0f, -8)) == 0x3F80);
  CHECK(std::isnan(Bf16ToFp32(Fp32ToBf16(std::nanf("")))));
}
