#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "sampling/sampler.h"

using namespace ember;

namespace {

Candidates RunBias(const std::vector<std::pair<int32_t, float>>& bias,
                   const std::vector<float>& logits, bool sort_first = false) {
  SamplerSpec spec;
  spec.kind = SamplerKind::kLogitBias;
  spec.logit_bias = bias;
  std::unique_ptr<Sampler> s;
  REQUIRE(MakeSampler(spec, SamplerContext{static_cast<int32_t>(logits.size()), nullptr}, &s).ok());
  Candidates c;
  c.Reset(logits.data(), static_cast<int64_t>(logits.size()));
  if (sort_first) c.Sort();
  Rng rng(1);
  s->Apply(c, rng);
  return c;
}

float LogitOf(const Candidates& c, int32_t id) {
  return c.items()[static_cast<size_t>(c.IndexOf(id))].logit;
}

}  // namespace

TEST_CASE("logit-bias: adds to the given ids, entries for one id add up", "[sampling]") {
  const std::vector<float> l = {1.0f, 2.0f, 3.0f};
  for (bool sort_first : {false, true}) {
    Candidates c = RunBias({{0, 5.0f}, {2, -1.0f}, {2, -0.5f}}, l, sort_first);
    CHECK(LogitOf(c, 0) == 6.0f);
    CHECK(LogitOf(c, 1) == 2.0f);
    CHECK(LogitOf(c, 2) == 1.5f);
    CHECK_FALSE(c.sorted());
    CHECK_FALSE(c.has_probs());
  }
}

TEST_CASE("logit-bias: -inf bans a token: probability 0, never drawn", "[sampling]") {
  Candidates c = RunBias({{2, -INFINITY}}, {1.0f, 2.0f, 3.0f});
  c.ComputeProbs();
  CHECK(c.items()[2].p == 0.0f);
  CHECK(c.items()[1].p == Approx(1.0 / (1.0 + std::exp(-1.0))));

  SamplerSpec bias, dist;
  bias.kind = SamplerKind::kLogitBias;
  bias.logit_bias = {{2, -INFINITY}, {2, INFINITY}};  // -inf + inf: the ban wins
  std::unique_ptr<Sampler> b, d;
  REQUIRE(MakeSampler(bias, SamplerContext{3, nullptr}, &b).ok());
  dist.kind = SamplerKind::kDist;
  REQUIRE(MakeSampler(dist, SamplerContext{3, nullptr}, &d).ok());
  const std::vector<float> l = {1.0f, 2.0f, 30.0f};
  Rng rng(9);
  for (int i = 0; i < 1000; ++i) {
    Candidates x;
    x.Reset(l.data(), 3);
    b->Apply(x, rng);
    d->Apply(x, rng);
    REQUIRE(x.selected != 2);
  }
}
