// RMSNorm variants against RmsNorm_ref.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "ops/kernels.h"
#include "ops/norm.h"
#include "support/skip.h"

using namespace ember;

TEST_CASE("rmsnorm: _ref computes x / sqrt(mean(x^2) + eps) * w", "[norm]") {
  const std::vector<float> x = {3.0f, -4.0f}, w = {2.0f, 0.5f};
  std::vector<float> y(2);
  RmsNorm_ref(x.data(), w.data(), y.data(), 2, 0.0f);  // mean(x^2) = 12.5
  CHECK(y[0] == Approx(3.0 / std::sqrt(12.5) * 2.0));
  CHECK(y[1] == Approx(-4.0 / std::sqrt(12.5) * 0.5));
}

#if defined(__x86_64__)
TEST_CASE("rmsnorm: AVX2 within float rounding of _ref", "[norm][isa]") {
  if (!HostCpu().Supports(Isa::kAvx2)) EMBER_SKIP("no AVX2 on this CPU");
  std::mt19937 rng(4);
  std::normal_distribution<float> d(0.0f, 3.0f);
  for (int64_t n : {1, 7, 8, 9, 64, 576, 2048, 5632}) {
    std::vector<float> x(n), w(n), want(n), got(n);
    for (float& v : x) v = d(rng);
    for (float& v : w) v = 1.0f + 0.1f * d(rng);
    const float* const weights[2] = {nullptr, w.data()};
    for (const float* weight : weights) {
      RmsNorm_ref(x.data(), weight, want.data(), n, 1e-5f);
      RmsNorm_avx2(x.data(), weight, got.data(), n, 1e-5f);
      for (int64_t i = 0; i < n; ++i) {
        INFO("n " << n << " i " << i << (weight ? " weighted" : ""));
        // The double sums differ in order only; the float scale rarely moves by an ulp.
        REQUIRE(std::fabs(got[i] - want[i]) <= 2e-7f * std::fabs(want[i]) + 1e-30f);
      }
    }
  }
}
#endif
