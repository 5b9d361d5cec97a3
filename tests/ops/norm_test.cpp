// RMSNorm variants against RmsNorm_ref.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "ops/kernels.h"
#include "ops/norm.h"
#include "support/simd_isas.h"
#include "support/skip.h"

using namespace ember;

TEST_CASE("rmsnorm: _ref computes x / sqrt(mean(x^2) + eps) * w", "[norm]") {
  const std::vector<float> x = {3.0f, -4.0f}, w = {2.0f, 0.5f};
  std::vector<float> y(2);
  RmsNorm_ref(x.data(), w.data(), y.data(), 2, 0.0f);  // mean(x^2) = 12.5
  CHECK(y[0] == Approx(3.0 / std::sqrt(12.5) * 2.0));
  CHECK(y[1] == Approx(-4.0 / std::sqrt(12.5) * 0.5));
}

TEST_CASE("rmsnorm: every ISA's rms_norm within float rounding of _ref", "[norm][isa]") {
  // RmsNorm_avx2 on x86 (every level above ref), RmsNorm_neon on AArch64.
  std::vector<Isa> isas;
  for (Isa isa :
       {Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Vnni, Isa::kNeon, Isa::kNeonDot, Isa::kNeonI8mm}) {
    if (test::CanTestVariants(isa)) isas.push_back(isa);
  }
  if (isas.empty()) EMBER_SKIP("no SIMD ISA on this build and CPU");
  std::mt19937 rng(4);
  std::normal_distribution<float> d(0.0f, 3.0f);
  for (Isa isa : isas) {
    const RmsNormFn fn = KernelsFor(isa).rms_norm;
    for (int64_t n : {1, 3, 4, 7, 8, 9, 15, 16, 17, 64, 576, 2048, 5632}) {
      std::vector<float> x(n), w(n), want(n), got(n);
      for (float& v : x) v = d(rng);
      for (float& v : w) v = 1.0f + 0.1f * d(rng);
      const float* const weights[2] = {nullptr, w.data()};
      for (const float* weight : weights) {
        RmsNorm_ref(x.data(), weight, want.data(), n, 1e-5f);
        fn(x.data(), weight, got.data(), n, 1e-5f);
        for (int64_t i = 0; i < n; ++i) {
          INFO(IsaName(isa) << " n " << n << " i " << i << (weight ? " weighted" : ""));
          // The double sums differ in order only; the float scale rarely moves by an ulp.
          REQUIRE(std::fabs(got[i] - want[i]) <= 2e-7f * std::fabs(want[i]) + 1e-30f);
        }
      }
    }
  }
}
