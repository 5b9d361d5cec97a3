// RoPE: RopeApply_ref by hand, and every ISA's rope_apply against it, bit for
// bit (ops/rope.h: the rope sources are compiled without fma contraction).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "ops/kernels.h"
#include "ops/rope.h"
#include "support/simd_isas.h"
#include "support/skip.h"

using namespace ember;

namespace {

// The ISAs whose table has a rope_apply other than _ref, on this build and CPU.
std::vector<Isa> SimdIsas() {
  std::vector<Isa> out;
  for (Isa isa :
       {Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Vnni, Isa::kNeon, Isa::kNeonDot, Isa::kNeonI8mm}) {
    if (test::CanTestVariants(isa)) out.push_back(isa);
  }
  return out;
}

}  // namespace

TEST_CASE("rope: _ref rotates the pairs of each mode", "[rope]") {
  // One pair per mode, rotated by the cache's (c, s) = (0.6, 0.8).
  const float cache[4] = {0.6f, 0.8f, 1.0f, 0.0f};  // pair 1: no rotation
  float normal[5] = {1.0f, 2.0f, 3.0f, 4.0f, 9.0f};
  RopeApply_ref(normal, cache, 4, RopeMode::kNormal);
  CHECK(normal[0] == 1.0f * 0.6f - 2.0f * 0.8f);
  CHECK(normal[1] == 1.0f * 0.8f + 2.0f * 0.6f);
  CHECK(normal[2] == 3.0f);
  CHECK(normal[3] == 4.0f);
  CHECK(normal[4] == 9.0f);                        // past n_dims: untouched
  float neox[5] = {1.0f, 3.0f, 2.0f, 4.0f, 9.0f};  // pairs (x[0], x[2]) and (x[1], x[3])
  RopeApply_ref(neox, cache, 4, RopeMode::kNeox);
  CHECK(neox[0] == 1.0f * 0.6f - 2.0f * 0.8f);
  CHECK(neox[2] == 1.0f * 0.8f + 2.0f * 0.6f);
  CHECK(neox[1] == 3.0f);
  CHECK(neox[3] == 4.0f);
  CHECK(neox[4] == 9.0f);
}

TEST_CASE("rope: every ISA's rope_apply gives _ref's bits", "[rope][isa]") {
  const std::vector<Isa> isas = SimdIsas();
  if (isas.empty()) EMBER_SKIP("no SIMD rope_apply on this build and CPU");
  std::mt19937 rng(31);
  std::normal_distribution<float> d(0.0f, 2.0f);
  std::uniform_real_distribution<float> exponent(-30.0f, 30.0f);
  for (Isa isa : isas) {
    const RopeApplyFn fn = KernelsFor(isa).rope_apply;
    for (int n_dims : {2, 4, 6, 8, 12, 16, 24, 32, 64, 80, 128}) {
      // Partial rotary: head vectors longer than n_dims keep the rest as is.
      for (int extra : {0, 3, 64}) {
        for (RopeMode mode : {RopeMode::kNormal, RopeMode::kNeox}) {
          for (int64_t pos : {0, 1, 17, 4095}) {
            const int len = n_dims + extra;
            std::vector<float> cache(n_dims);
            RopeCache(cache.data(), pos, n_dims, 10000.0f, 1.0f, nullptr);
            std::vector<float> x(len);
            // Magnitudes from 1e-30 to 1e30 (products near float's range
            // ends round differently when fused: the test would see it).
            for (float& v : x) v = d(rng) * std::pow(10.0f, exponent(rng));
            std::vector<float> want = x, got = x;
            RopeApply_ref(want.data(), cache.data(), n_dims, mode);
            fn(got.data(), cache.data(), n_dims, mode);
            INFO(IsaName(isa) << " n_dims " << n_dims << " extra " << extra << " mode "
                              << (mode == RopeMode::kNormal ? "normal" : "neox") << " pos " << pos);
            REQUIRE(std::memcmp(got.data(), want.data(), sizeof(float) * len) == 0);
            for (int i = n_dims; i < len; ++i) REQUIRE(std::memcmp(&got[i], &x[i], 4) == 0);
          }
        }
      }
    }
  }
}

TEST_CASE("rope: the SIMD rope_apply gives _ref's bits on ordinary activations", "[rope][isa]") {
  // Activations of ordinary size, where a fused x0 c - x1 s differs from the
  // unfused one in the last bit for a good share of the elements.
  const std::vector<Isa> isas = SimdIsas();
  if (isas.empty()) EMBER_SKIP("no SIMD rope_apply on this build and CPU");
  std::mt19937 rng(32);
  std::normal_distribution<float> d(0.0f, 1.0f);
  const int n_dims = 128;
  std::vector<float> cache(n_dims), x(n_dims);
  for (Isa isa : isas) {
    for (RopeMode mode : {RopeMode::kNormal, RopeMode::kNeox}) {
      for (int64_t pos = 0; pos < 64; ++pos) {
        RopeCache(cache.data(), pos * 37, n_dims, 500000.0f, 1.0f, nullptr);
        for (float& v : x) v = d(rng);
        std::vector<float> want = x, got = x;
        RopeApply_ref(want.data(), cache.data(), n_dims, mode);
        KernelsFor(isa).rope_apply(got.data(), cache.data(), n_dims, mode);
        INFO(IsaName(isa) << " pos " << pos * 37);
        REQUIRE(std::memcmp(got.data(), want.data(), sizeof(float) * n_dims) == 0);
      }
    }
  }
}
