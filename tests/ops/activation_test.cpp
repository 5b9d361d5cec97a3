// SIMD activations against their _ref twins.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "ops/activation.h"
#include "ops/kernels.h"
#include "support/skip.h"

using namespace ember;

#if defined(__x86_64__)
TEST_CASE("softmax: Softmax_avx2 gives Softmax_ref's bytes", "[activation][isa]") {
  if (!HostCpu().Supports(Isa::kAvx2)) EMBER_SKIP("no AVX2 on this CPU");
  std::mt19937 rng(8);
  std::normal_distribution<float> d(0.0f, 6.0f);
  for (int64_t n : {1, 7, 8, 9, 64, 301}) {
    for (int special = 0; special < 4; ++special) {
      std::vector<float> x(n);
      for (float& v : x) v = d(rng);
      // The max decides every value; put it in the vector part, the scalar
      // tail, next to a NaN (ignored by fmax) and at -inf.
      if (special == 1) x[n - 1] = 40.0f;
      if (special == 2 && n > 1) x[0] = NAN;
      if (special == 3) x[n / 2] = -INFINITY;
      std::vector<float> want = x, got = x;
      Softmax_ref(want.data(), n);
      Softmax_avx2(got.data(), n);
      INFO("n " << n << " case " << special);
      REQUIRE(std::memcmp(want.data(), got.data(), n * sizeof(float)) == 0);
    }
  }
}
#endif
