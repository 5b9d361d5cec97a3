// Every compiled attention variant against AttendHead_ref.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "ops/kernels.h"
#include "quant/fp16.h"

using namespace ember;

TEST_CASE("attention: every ISA variant matches _ref", "[attention][isa]") {
  std::mt19937 rng(21);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Vnni, Isa::kNeon, Isa::kNeonDot}) {
    if (!HasVariantsFor(isa) || !HostCpu().Supports(isa)) continue;
    const AttendHeadFn fn = KernelsFor(isa).attend_head;
    for (int head_dim : {8, 64, 72, 128}) {
      for (int64_t n_kv : {1, 2, 7, 64, 300}) {
        const size_t stride = static_cast<size_t>(head_dim) * 3;  // interleaved heads
        std::vector<float> q(head_dim);
        std::vector<uint16_t> k(stride * n_kv), v(stride * n_kv);
        for (float& x : q) x = 2.0f * d(rng);
        for (auto& x : k) x = Fp32ToFp16(d(rng));
        for (auto& x : v) x = Fp32ToFp16(d(rng));
        std::vector<float> s1(n_kv), s2(n_kv), want(head_dim), got(head_dim);
        const float scale = 1.0f / std::sqrt(float(head_dim));
        AttendHead_ref(q.data(), k.data(), v.data(), stride, n_kv, head_dim, scale, s1.data(),
                       want.data());
        fn(q.data(), k.data(), v.data(), stride, n_kv, head_dim, scale, s2.data(), got.data());
        for (int i = 0; i < head_dim; ++i) {
          INFO(IsaName(isa) << " head_dim " << head_dim << " n_kv " << n_kv << " i " << i);
          // Values are convex combinations of |v| <~ 4: float rounding of the
          // dot products (summed in another order) bounds the difference.
          REQUIRE(std::fabs(got[i] - want[i]) <= 2e-5f);
        }
      }
    }
  }
}
