#include "ops/vec_dot.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "quant/fp16.h"
#include "quant/quantize.h"

using namespace ember;

// Each (weight, activation) pair's dot product equals the float dot product of
// the dequantized rows, up to float rounding scaled by the inputs.
TEST_CASE("vec_dot: reference dot products match dequantized float math", "[vec_dot]") {
  std::mt19937 rng(11);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (GgmlType wt : {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ8_0, GgmlType::kF16,
                      GgmlType::kBF16, GgmlType::kF32}) {
    for (int64_t n : {32, 64, 96, 2048}) {
      const VecDotPair* pair = FindVecDot(wt);
      REQUIRE(pair != nullptr);
      std::vector<float> w(n), a(n), wd(n), ad(n);
      for (auto& v : w) v = d(rng);
      for (auto& v : a) v = d(rng);
      std::vector<uint8_t> wq(GgmlRowBytes(wt, n)), aq(GgmlRowBytes(pair->activation_type, n));
      QuantizeRow(wt, w.data(), wq.data(), n);
      QuantizeRow(pair->activation_type, a.data(), aq.data(), n);
      DequantizeRow(wt, wq.data(), wd.data(), n);
      if (pair->activation_type == GgmlType::kQ8_1) {
        // Q8_1 dequantizes like Q8_0 (the s field is derived data).
        const auto* b = reinterpret_cast<const BlockQ8_1*>(aq.data());
        for (int64_t i = 0; i < n; ++i) ad[i] = b[i / 32].qs[i % 32] * Fp16ToFp32(b[i / 32].d);
      } else {
        DequantizeRow(pair->activation_type, aq.data(), ad.data(), n);
      }
      double expect = 0, scale = 0;
      for (int64_t i = 0; i < n; ++i) {
        expect += double(wd[i]) * ad[i];
        scale += std::fabs(double(wd[i]) * ad[i]);
      }
      const float got = pair->dot(n, wq.data(), aq.data());
      INFO(GgmlTypeName(wt) << " n=" << n);
      // Q4_1's m * s term uses s rounded to fp16: allow that rounding too.
      CHECK(std::fabs(got - expect) <= 2e-3 * scale + 1e-4);
    }
  }
  CHECK(FindVecDot(GgmlType::kQ6_K) == nullptr);
}
