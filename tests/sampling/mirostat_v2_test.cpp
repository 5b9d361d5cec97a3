#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "sampling/sampler.h"

using namespace ember;

namespace {

std::unique_ptr<Sampler> MakeMirostat(float tau, float eta) {
  SamplerSpec spec;
  spec.kind = SamplerKind::kMirostatV2;
  spec.mirostat_tau = tau;
  spec.mirostat_eta = eta;
  std::unique_ptr<Sampler> s;
  REQUIRE(MakeSampler(spec, SamplerContext{4, nullptr}, &s).ok());
  return s;
}

// Applies the sampler; returns how many candidates survived its truncation.
size_t Survivors(Sampler& s, const std::vector<float>& logits, Rng& rng) {
  Candidates c;
  c.Reset(logits.data(), static_cast<int64_t>(logits.size()));
  s.Apply(c, rng);
  REQUIRE(c.selected >= 0);
  REQUIRE(c.has_probs());
  double sum = 0;
  for (const Candidate& x : c.items()) sum += x.p;
  CHECK(sum == Approx(1.0));  // renormalized over the survivors
  return c.size();
}

}  // namespace

TEST_CASE("mirostat-v2: mu falls when the surprise exceeds tau", "[sampling]") {
  // Four equal tokens: each has surprise 2 bits. tau = 1, so mu starts at 2:
  // nothing exceeds it, all four stay; e = 2 > tau: mu = 2 - 0.1 * (2 - 1) = 1.9.
  // Now every token's surprise exceeds mu: only the most probable stays.
  auto s = MakeMirostat(1.0f, 0.1f);
  const std::vector<float> flat = {0.0f, 0.0f, 0.0f, 0.0f};
  Rng rng(5);
  CHECK(Survivors(*s, flat, rng) == 4);
  CHECK(Survivors(*s, flat, rng) == 1);
  std::unique_ptr<Sampler> clone = s->Clone();
  CHECK(Survivors(*clone, flat, rng) == 1);
  s->Reset();  // mu = 2 again
  CHECK(Survivors(*s, flat, rng) == 4);
}

TEST_CASE("mirostat-v2: mu rises when the surprise is below tau", "[sampling]") {
  // tau = 5, so mu starts at 10. Token 1 has surprise ~10.2 bits: cut. Token 0
  // is drawn with surprise ~0.001 < tau: mu = 10 + 0.1 * (5 - 0.001) ~ 10.5,
  // and token 1 survives the next truncation.
  auto s = MakeMirostat(5.0f, 0.1f);
  const std::vector<float> l = {0.0f, static_cast<float>(-10.2 * std::log(2.0)), -30.0f, -30.0f};
  Rng rng(5);
  CHECK(Survivors(*s, l, rng) == 1);
  std::unique_ptr<Sampler> clone = s->Clone();
  CHECK(Survivors(*s, l, rng) == 2);
  CHECK(Survivors(*clone, l, rng) == 2);
  s->Reset();
  CHECK(Survivors(*s, l, rng) == 1);
}
