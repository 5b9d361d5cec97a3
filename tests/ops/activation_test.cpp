// Activations: ExpPoly against std::exp, and the SIMD activations against
// their _ref twins.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ops/activation.h"
#include "ops/exp_poly.h"
#include "ops/kernels.h"
#include "support/simd_isas.h"
#include "support/skip.h"

using namespace ember;

namespace {

// Distance in units in the last place between two finite positive floats.
int64_t UlpDistance(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  return std::llabs(static_cast<int64_t>(ia) - static_cast<int64_t>(ib));
}

using ExpFn = void (*)(const float* x, float* y, int64_t n);
using SoftmaxFn = void (*)(float* x, int64_t n);

// fn gives ExpPoly_ref's bits over a sweep of [-100, 100] and the edges.
// (Unused where no SIMD variant is built: armhf keeps _ref.)
[[maybe_unused]] void CheckExpPolyBits(ExpFn fn) {
  std::vector<float> x;
  for (float v = -100.0f; v <= 100.0f; v += 0.0173f) x.push_back(v);
  for (float v : {-87.3365478515625f, -87.33f, -87.34f, 88.0f, 88.01f, 0.0f, -0.0f, 1e-30f, -1e-30f,
                  1e-45f, -INFINITY, INFINITY}) {
    x.push_back(v);
  }
  // Just above kMin, where ExpPoly_ref's results are subnormal.
  for (float v = -87.3365478515625f; v < -86.9f; v += 0.001f) x.push_back(v);
  x.push_back(NAN);
  std::vector<float> got(x.size());
  fn(x.data(), got.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    INFO("x " << x[i]);
    const float want = ExpPoly_ref(x[i]);
    if (std::isnan(want)) {
      REQUIRE(std::isnan(got[i]));
    } else {
      REQUIRE(std::memcmp(&want, &got[i], 4) == 0);
    }
  }
}

// softmax and swiglu agree with Softmax_ref / SwiGlu_ref to float rounding.
[[maybe_unused]] void CheckSoftmaxSwiGlu(SoftmaxFn softmax, SwiGluFn swiglu) {
  std::mt19937 rng(8);
  std::normal_distribution<float> d(0.0f, 6.0f);
  for (int64_t n : {1, 3, 4, 7, 8, 9, 15, 16, 17, 64, 301, 576, 2048, 5632}) {
    for (int special = 0; special < 3; ++special) {
      std::vector<float> x(n);
      for (float& v : x) v = d(rng);
      // The max in the vector part or in the scalar tail; a masked (-inf) score.
      if (special == 1) x[n - 1] = 40.0f;
      if (special == 2) x[n / 2] = -INFINITY;
      std::vector<float> want = x, got = x;
      Softmax_ref(want.data(), n);
      softmax(got.data(), n);
      INFO("n " << n << " case " << special);
      for (int64_t i = 0; i < n; ++i) {
        if (std::isnan(want[i])) {  // n = 1 and the one score -inf: NaN in both
          REQUIRE(std::isnan(got[i]));
          continue;
        }
        REQUIRE(std::fabs(got[i] - want[i]) <= 1e-6f * want[i] + 1e-30f);
      }
      if (special == 2 && n > 1) CHECK(got[n / 2] == 0.0f);
    }
    std::vector<float> gate(n), up(n);
    for (float& v : gate) v = d(rng);
    for (float& v : up) v = d(rng);
    std::vector<float> want = gate, got = gate;
    SwiGlu_ref(want.data(), up.data(), n);
    swiglu(got.data(), up.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      INFO("swiglu n " << n << " i " << i);
      REQUIRE(std::fabs(got[i] - want[i]) <= 1e-6f * std::fabs(want[i]) + 1e-30f);
    }
  }
  // A NaN score makes the whole softmax NaN in both.
  std::vector<float> x = {1.0f, NAN, 2.0f, 0.5f, 1.0f, 1.0f, 1.0f, 1.0f, 3.0f};
  std::vector<float> want = x, got = x;
  Softmax_ref(want.data(), 9);
  softmax(got.data(), 9);
  for (int i = 0; i < 9; ++i) CHECK(std::isnan(got[i]) == std::isnan(want[i]));
}

}  // namespace

TEST_CASE("exp: ExpPoly_ref is within 2 ulp of exp on its range", "[activation]") {
  int64_t worst = 0;
  for (float x = -87.3f; x <= 88.0f; x += 0.00731f) {
    const float want = static_cast<float>(std::exp(static_cast<double>(x)));
    worst = std::max(worst, UlpDistance(ExpPoly_ref(x), want));
  }
  INFO("worst " << worst << " ulp");
  CHECK(worst <= 2);
  CHECK(ExpPoly_ref(0.0f) == 1.0f);
  CHECK(ExpPoly_ref(-88.0f) == 0.0f);
  CHECK(ExpPoly_ref(-INFINITY) == 0.0f);
  CHECK(ExpPoly_ref(1000.0f) == ExpPoly_ref(88.0f));
  CHECK(std::isnan(ExpPoly_ref(NAN)));
}

#if defined(__x86_64__)
TEST_CASE("exp: ExpPoly_avx2 gives ExpPoly_ref's bits", "[activation][isa]") {
  if (!HostCpu().Supports(Isa::kAvx2)) EMBER_SKIP("no AVX2 on this CPU");
  CheckExpPolyBits(ExpPoly_avx2);
}

TEST_CASE("softmax and SwiGLU: AVX2 within float rounding of _ref", "[activation][isa]") {
  if (!HostCpu().Supports(Isa::kAvx2)) EMBER_SKIP("no AVX2 on this CPU");
  CheckSoftmaxSwiGlu(Softmax_avx2, SwiGlu_avx2);
}
#endif

#if defined(__aarch64__)
TEST_CASE("exp: ExpPoly_neon gives ExpPoly_ref's bits", "[activation][isa]") {
  if (!HostCpu().Supports(Isa::kNeon)) EMBER_SKIP("no NEON on this CPU");
  CheckExpPolyBits(ExpPoly_neon);
}

TEST_CASE("softmax and SwiGLU: NEON within float rounding of _ref", "[activation][isa]") {
  if (!HostCpu().Supports(Isa::kNeon)) EMBER_SKIP("no NEON on this CPU");
  CheckSoftmaxSwiGlu(Softmax_neon, SwiGlu_neon);
}
#endif

TEST_CASE("swiglu: every ISA's table entry is its SIMD variant or _ref", "[activation][isa]") {
  // The table's swiglu for each ISA agrees with _ref (the variants above, through
  // the table the model reads).
  std::vector<float> gate(37), up(37);
  for (int i = 0; i < 37; ++i) {
    gate[i] = 0.37f * static_cast<float>(i - 18);
    up[i] = 1.0f - 0.05f * static_cast<float>(i);
  }
  std::vector<float> want = gate;
  SwiGlu_ref(want.data(), up.data(), 37);
  for (Isa isa : {Isa::kRef, Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Vnni, Isa::kNeon, Isa::kNeonDot,
                  Isa::kNeonI8mm}) {
    if (!test::CanTestVariants(isa)) continue;
    std::vector<float> got = gate;
    KernelsFor(isa).swiglu(got.data(), up.data(), 37);
    for (int i = 0; i < 37; ++i) {
      INFO(IsaName(isa) << " i " << i);
      REQUIRE(std::fabs(got[i] - want[i]) <= 1e-6f * std::fabs(want[i]) + 1e-30f);
    }
  }
}
