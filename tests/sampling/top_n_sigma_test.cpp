#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "sampling/sampler.h"

using namespace ember;

namespace {

Candidates RunSigma(float n, const std::vector<float>& logits, size_t min_keep = 1) {
  SamplerSpec spec;
  spec.kind = SamplerKind::kTopNSigma;
  spec.top_n_sigma = n;
  spec.min_keep = min_keep;
  std::unique_ptr<Sampler> s;
  REQUIRE(MakeSampler(spec, SamplerContext{static_cast<int32_t>(logits.size()), nullptr}, &s).ok());
  Candidates c;
  c.Reset(logits.data(), static_cast<int64_t>(logits.size()));
  Rng rng(1);
  s->Apply(c, rng);
  return c;
}

std::vector<int32_t> Ids(const Candidates& c) {
  std::vector<int32_t> ids;
  for (const Candidate& x : c.items()) ids.push_back(x.id);
  return ids;
}

}  // namespace

TEST_CASE("top-n-sigma: hand-computed: keeps logits >= max - n * sigma", "[sampling]") {
  // Logits 0, 4, -2, 2: mean 1, variance (1 + 9 + 9 + 1) / 4 = 5, sigma 2.236.
  const std::vector<float> l = {0.0f, 4.0f, -2.0f, 2.0f};
  CHECK(Ids(RunSigma(1.0f, l)) == std::vector<int32_t>{1, 3});     // >= 1.764
  CHECK(Ids(RunSigma(2.0f, l)) == std::vector<int32_t>{0, 1, 3});  // >= -0.472
  CHECK(Ids(RunSigma(0.5f, l)) == std::vector<int32_t>{1});        // >= 2.882
  CHECK(RunSigma(3.0f, l).size() == 4);                            // >= -2.708
  // Dividing by a temperature scales max and sigma alike: same set.
  CHECK(Ids(RunSigma(1.0f, {0.0f, 8.0f, -4.0f, 4.0f})) == std::vector<int32_t>{1, 3});
}

TEST_CASE("top-n-sigma: -inf logits are left out of sigma, min_keep honored", "[sampling]") {
  const std::vector<float> l = {0.0f, 4.0f, -INFINITY, -2.0f, 2.0f};
  CHECK(Ids(RunSigma(1.0f, l)) == std::vector<int32_t>{1, 4});
  CHECK(Ids(RunSigma(0.5f, l, 3)) == std::vector<int32_t>{1, 4, 0});
}
