#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "sampling/sampler.h"

using namespace ember;

namespace {

Candidates RunMinP(float min_p, const std::vector<float>& logits, size_t min_keep = 1,
                   bool sort_first = false) {
  SamplerSpec spec;
  spec.kind = SamplerKind::kMinP;
  spec.min_p = min_p;
  spec.min_keep = min_keep;
  std::unique_ptr<Sampler> s;
  REQUIRE(MakeSampler(spec, SamplerContext{static_cast<int32_t>(logits.size()), nullptr}, &s).ok());
  Candidates c;
  c.Reset(logits.data(), static_cast<int64_t>(logits.size()));
  if (sort_first) c.Sort();
  Rng rng(1);
  s->Apply(c, rng);
  return c;
}

std::vector<int32_t> Ids(const Candidates& c) {
  std::vector<int32_t> ids;
  for (const Candidate& x : c.items()) ids.push_back(x.id);
  return ids;
}

// Probabilities 0.15, 0.5, 0.05, 0.3 (ids 0..3); p_max = 0.5.
const std::vector<float> kLogits = {std::log(0.15f), std::log(0.5f), std::log(0.05f),
                                    std::log(0.3f)};

}  // namespace

TEST_CASE("min-p: keeps p >= min_p * p_max, in the candidates' order", "[sampling]") {
  // 0.2 * 0.5 = 0.1: drops only 0.05.
  Candidates c = RunMinP(0.2f, kLogits);
  CHECK(Ids(c) == std::vector<int32_t>{0, 1, 3});
  CHECK_FALSE(c.sorted());
  // 0.5 * 0.5 = 0.25: keeps 0.5 and 0.3.
  CHECK(Ids(RunMinP(0.5f, kLogits)) == std::vector<int32_t>{1, 3});
  c = RunMinP(0.5f, kLogits, 1, /*sort_first=*/true);
  CHECK(Ids(c) == std::vector<int32_t>{1, 3});
  CHECK(c.sorted());
  // 0: keeps all; 1: keeps the maximum.
  CHECK(RunMinP(0.0f, kLogits).size() == 4);
  CHECK(Ids(RunMinP(1.0f, kLogits)) == std::vector<int32_t>{1});
}

TEST_CASE("min-p: min_keep honored", "[sampling]") {
  Candidates c = RunMinP(1.0f, kLogits, 3);
  CHECK(Ids(c) == std::vector<int32_t>{1, 3, 0});
  CHECK(c.sorted());
}
