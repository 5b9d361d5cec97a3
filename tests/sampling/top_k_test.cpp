#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "sampling/sampler.h"

using namespace ember;

namespace {

Candidates RunTopK(int32_t k, const std::vector<float>& logits, size_t min_keep = 1) {
  SamplerSpec spec;
  spec.kind = SamplerKind::kTopK;
  spec.top_k = k;
  spec.min_keep = min_keep;
  std::unique_ptr<Sampler> s;
  REQUIRE(MakeSampler(spec, SamplerContext{static_cast<int32_t>(logits.size()), nullptr}, &s).ok());
  Candidates c;
  c.Reset(logits.data(), static_cast<int64_t>(logits.size()));
  Rng rng(1);
  s->Apply(c, rng);
  return c;
}

}  // namespace

TEST_CASE("top-k: k = 2 of [3, 2, 1, 0.5] at T = 1 gives [0.7311, 0.2689]", "[sampling]") {
  Candidates c = RunTopK(2, {3.0f, 2.0f, 1.0f, 0.5f});
  REQUIRE(c.size() == 2);
  CHECK(c.sorted());
  CHECK_FALSE(c.has_probs());
  c.ComputeProbs();
  CHECK(c.items()[0].id == 0);
  CHECK(c.items()[1].id == 1);
  CHECK(c.items()[0].p == Approx(0.7311).margin(1e-4));
  CHECK(c.items()[1].p == Approx(0.2689).margin(1e-4));
}

TEST_CASE("top-k: 0 and k >= n keep all, min_keep wins over k, ties by id", "[sampling]") {
  const std::vector<float> l = {1.0f, 4.0f, 4.0f, 2.0f, 3.0f};
  CHECK(RunTopK(0, l).size() == 5);
  CHECK(RunTopK(9, l).size() == 5);
  CHECK(RunTopK(2, l, 3).size() == 3);
  Candidates c = RunTopK(1, l);
  REQUIRE(c.size() == 1);
  CHECK(c.items()[0].id == 1);
}

TEST_CASE("top-k: 40 of a 151936-token vocabulary are the 40 largest", "[sampling]") {
  const int n = 151936;
  std::vector<float> l(n);
  Rng rng(77);
  for (float& x : l) x = static_cast<float>(rng.NextDouble() * 20.0 - 10.0);
  Candidates c = RunTopK(40, l);
  REQUIRE(c.size() == 40);
  std::vector<float> sorted = l;
  std::sort(sorted.begin(), sorted.end(), std::greater<float>());
  for (size_t i = 0; i < 40; ++i) {
    CHECK(c.items()[i].logit == sorted[i]);
    CHECK(l[static_cast<size_t>(c.items()[i].id)] == sorted[i]);
  }
}
