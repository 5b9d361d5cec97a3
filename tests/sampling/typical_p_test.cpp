#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "sampling/sampler.h"

using namespace ember;

namespace {

Candidates RunTypical(float p, const std::vector<float>& logits, size_t min_keep = 1) {
  SamplerSpec spec;
  spec.kind = SamplerKind::kTypicalP;
  spec.typical_p = p;
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

// Probabilities 1/2, 1/4, 1/8, 1/8: surprises 1, 2, 3, 3 bits, entropy 1.75
// bits, so the scores |surprise - H| are 0.75, 0.25, 1.25, 1.25 bits: the
// most typical token is id 1, then id 0, then ids 2 and 3.
const std::vector<float> kLogits = {3 * std::log(2.0f), 2 * std::log(2.0f), std::log(2.0f),
                                    std::log(2.0f)};

}  // namespace

TEST_CASE("typical: hand-computed: ranks by |surprise - entropy|", "[sampling]") {
  // 0.2: id 1 alone (p 0.25) reaches it; the most probable token is dropped.
  CHECK(Ids(RunTypical(0.2f, kLogits)) == std::vector<int32_t>{1});
  // 0.5: ids 1 and 0 (0.75); the result is re-sorted by logit.
  Candidates c = RunTypical(0.5f, kLogits);
  CHECK(Ids(c) == std::vector<int32_t>{0, 1});
  CHECK(c.sorted());
  // 0.8: 0.75 falls short: one of the tied 1/8 tokens joins (the lower id).
  CHECK(Ids(RunTypical(0.8f, kLogits)) == std::vector<int32_t>{0, 1, 2});
  CHECK(RunTypical(1.0f, kLogits).size() == 4);
}

TEST_CASE("typical: min_keep honored", "[sampling]") {
  CHECK(Ids(RunTypical(0.2f, kLogits, 2)) == std::vector<int32_t>{0, 1});
}
