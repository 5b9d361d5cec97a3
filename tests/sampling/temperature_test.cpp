#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "sampling/sampler.h"

using namespace ember;

namespace {

Candidates RunTemperature(float t, const std::vector<float>& logits, bool sort_first = false) {
  SamplerSpec spec;
  spec.kind = SamplerKind::kTemperature;
  spec.temperature = t;
  std::unique_ptr<Sampler> s;
  REQUIRE(MakeSampler(spec, SamplerContext{static_cast<int32_t>(logits.size()), nullptr}, &s).ok());
  Candidates c;
  c.Reset(logits.data(), static_cast<int64_t>(logits.size()));
  if (sort_first) c.Sort();
  Rng rng(1);
  s->Apply(c, rng);
  return c;
}

}  // namespace

TEST_CASE("temperature: T = 0.5 and T = 2 on [3, 2, 1, 0.5]", "[sampling]") {
  const std::vector<float> l = {3.0f, 2.0f, 1.0f, 0.5f};
  Candidates c = RunTemperature(0.5f, l);
  CHECK_FALSE(c.has_probs());
  c.ComputeProbs();
  const double sharp[] = {0.8618, 0.1166, 0.0158, 0.0058};
  for (int i = 0; i < 4; ++i) CHECK(c.items()[i].p == Approx(sharp[i]).margin(1e-4));

  c = RunTemperature(2.0f, l);
  c.ComputeProbs();
  const double flat[] = {0.4423, 0.2683, 0.1627, 0.1267};
  for (int i = 0; i < 4; ++i) CHECK(c.items()[i].p == Approx(flat[i]).margin(1e-4));
  CHECK(c.items()[0].logit == 1.5f);
}

TEST_CASE("temperature: T = 0 keeps only the maximum, ties to the lowest id", "[sampling]") {
  Candidates c = RunTemperature(0.0f, {1.0f, 5.0f, -2.0f, 5.0f, 4.0f});
  REQUIRE(c.size() == 1);
  CHECK(c.items()[0].id == 1);
  CHECK(c.sorted());
  c = RunTemperature(0.0f, {1.0f, 5.0f, -2.0f, 5.0f, 4.0f}, /*sort_first=*/true);
  REQUIRE(c.size() == 1);
  CHECK(c.items()[0].id == 1);
}

TEST_CASE("temperature: keeps a sorted set sorted unless rounding ties it", "[sampling]") {
  Candidates c = RunTemperature(0.7f, {0.1f, 2.0f, 1.0f}, true);
  CHECK(c.sorted());
  // 1 + 2^-23 and 1 differ, but both divided by 3 round to the same float;
  // with the larger id first, the set is no longer sorted by (logit, id).
  const float a = 1.0f + 0x1.0p-23f;
  Candidates d = RunTemperature(3.0f, {1.0f, a}, true);  // sorted: id 1, then id 0
  REQUIRE(d.items()[0].id == 1);
  if (d.items()[0].logit == d.items()[1].logit) {
    CHECK_FALSE(d.sorted());
  } else {
    CHECK(d.sorted());
  }
}
