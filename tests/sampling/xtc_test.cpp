#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "sampling/sampler.h"

using namespace ember;

namespace {

Candidates RunXtc(float probability, float threshold, const std::vector<float>& logits, Rng& rng,
                  size_t min_keep = 1) {
  SamplerSpec spec;
  spec.kind = SamplerKind::kXtc;
  spec.xtc_probability = probability;
  spec.xtc_threshold = threshold;
  spec.min_keep = min_keep;
  std::unique_ptr<Sampler> s;
  REQUIRE(MakeSampler(spec, SamplerContext{static_cast<int32_t>(logits.size()), nullptr}, &s).ok());
  Candidates c;
  c.Reset(logits.data(), static_cast<int64_t>(logits.size()));
  s->Apply(c, rng);
  return c;
}

std::vector<int32_t> Ids(const Candidates& c) {
  std::vector<int32_t> ids;
  for (const Candidate& x : c.items()) ids.push_back(x.id);
  return ids;
}

// Probabilities 0.2, 0.4, 0.1, 0.3 (ids 0..3).
const std::vector<float> kLogits = {std::log(0.2f), std::log(0.4f), std::log(0.1f), std::log(0.3f)};

}  // namespace

TEST_CASE("xtc: probability 1 removes the top choices but the least probable of them",
          "[sampling]") {
  Rng rng(3);
  // >= 0.15: 0.4, 0.3 and 0.2; only 0.2 (id 0) of them stays, with 0.1.
  CHECK(Ids(RunXtc(1.0f, 0.15f, kLogits, rng)) == std::vector<int32_t>{0, 2});
  // >= 0.25: 0.4 and 0.3; 0.3 stays.
  CHECK(Ids(RunXtc(1.0f, 0.25f, kLogits, rng)) == std::vector<int32_t>{0, 2, 3});
  // Only one token >= 0.35: nothing to exclude.
  CHECK(RunXtc(1.0f, 0.35f, kLogits, rng).size() == 4);
  // Removing 2 of 4 would leave fewer than min_keep = 3.
  CHECK(RunXtc(1.0f, 0.15f, kLogits, rng, 3).size() == 4);
}

TEST_CASE("xtc: probability 0 is a no-op that draws nothing", "[sampling]") {
  Rng rng(3), untouched(3);
  Candidates c = RunXtc(0.0f, 0.15f, kLogits, rng);
  CHECK(Ids(c) == std::vector<int32_t>{0, 1, 2, 3});
  CHECK(rng.Next() == untouched.Next());
}

TEST_CASE("xtc: acts on about xtc_probability of the tokens", "[sampling]") {
  Rng rng(11);
  int acted = 0;
  for (int i = 0; i < 2000; ++i) acted += RunXtc(0.25f, 0.15f, kLogits, rng).size() == 2;
  // Binomial(2000, 0.25): mean 500, sd 19.4; +-5 sd.
  CHECK(acted > 403);
  CHECK(acted < 597);
}
