#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "sampling/sampler.h"

using namespace ember;

namespace {

Candidates RunTopP(float p, const std::vector<float>& logits, size_t min_keep = 1,
                   bool sort_first = false) {
  SamplerSpec spec;
  spec.kind = SamplerKind::kTopP;
  spec.top_p = p;
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

// Probabilities 0.15, 0.5, 0.05, 0.3 (ids 0..3).
const std::vector<float> kLogits = {std::log(0.15f), std::log(0.5f), std::log(0.05f),
                                    std::log(0.3f)};

}  // namespace

// The ids in rank order, whatever order the sampler left them in.
std::vector<int32_t> Ranked(Candidates c) {
  c.Sort();
  return Ids(c);
}

TEST_CASE("top-p: the smallest prefix reaching p", "[sampling]") {
  for (bool sort_first : {false, true}) {
    CHECK(Ranked(RunTopP(0.4f, kLogits, 1, sort_first)) == std::vector<int32_t>{1});
    CHECK(Ranked(RunTopP(0.7f, kLogits, 1, sort_first)) == std::vector<int32_t>{1, 3});
    CHECK(Ranked(RunTopP(0.9f, kLogits, 1, sort_first)) == std::vector<int32_t>{1, 3, 0});
    CHECK(Ranked(RunTopP(0.99f, kLogits, 1, sort_first)) == std::vector<int32_t>{1, 3, 0, 2});
  }
  // Sorted input stays sorted; unsorted input keeps its order (no sort).
  CHECK(Ids(RunTopP(0.9f, kLogits, 1, true)) == std::vector<int32_t>{1, 3, 0});
  Candidates c = RunTopP(0.9f, kLogits);
  CHECK(Ids(c) == std::vector<int32_t>{0, 1, 3});
  CHECK_FALSE(c.sorted());
  // p is renormalized over the survivors: the softmax over them.
  REQUIRE(c.has_probs());
  Candidates fresh = c;
  fresh.ComputeProbs();
  for (size_t i = 0; i < c.size(); ++i) {
    CHECK(c.items()[i].p == Approx(fresh.items()[i].p).margin(1e-6));
  }
}

TEST_CASE("top-p: never empty, p = 1 keeps all, min_keep honored", "[sampling]") {
  for (bool sort_first : {false, true}) {
    Candidates c = RunTopP(1e-9f, kLogits, 1, sort_first);
    REQUIRE(c.size() == 1);
    CHECK(c.items()[0].id == 1);
    CHECK(Ranked(RunTopP(1e-9f, kLogits, 3, sort_first)) == std::vector<int32_t>{1, 3, 0});
    CHECK(Ranked(RunTopP(0.4f, kLogits, 2, sort_first)) == std::vector<int32_t>{1, 3});
  }
  Candidates c = RunTopP(1.0f, kLogits);
  CHECK(c.size() == 4);
  CHECK_FALSE(c.sorted());  // a no-op: no sort
}

TEST_CASE("top-p: infinite, tied and far-out logits", "[sampling]") {
  const float inf = INFINITY;
  CHECK(Ranked(RunTopP(0.5f, {0.0f, -inf, 1.0f, -inf})) == std::vector<int32_t>{2});
  CHECK(Ranked(RunTopP(0.99f, {0.0f, -inf, 1.0f, -inf})) == std::vector<int32_t>{2, 0});
  CHECK(Ranked(RunTopP(0.9f, {0.0f, inf, 1.0f, inf})) == std::vector<int32_t>{1, 3});
  // Equal logits: ties go to the lower ids.
  CHECK(Ranked(RunTopP(0.5f, std::vector<float>(8, 2.0f))) == std::vector<int32_t>{0, 1, 2, 3});
  // A logit far below the rest does not squeeze the others into one bucket.
  CHECK(Ranked(RunTopP(0.7f, {std::log(0.15f), std::log(0.5f), -1000.0f, std::log(0.3f)})) ==
        std::vector<int32_t>{1, 3});
}

TEST_CASE("top-p: the histogram selection matches a full sort at any mass", "[sampling]") {
  // Peaked (scale 8: a few tokens hold the mass) to flat (scale 0.5: most of
  // the vocabulary is needed), each p checked against a plain sort-and-sum.
  const int n = 20000;
  for (double scale : {8.0, 3.0, 0.5}) {
    Rng rng(static_cast<uint64_t>(scale * 10));
    std::vector<float> l(n);
    for (float& x : l) {  // Box-Muller
      const double u1 = 1.0 - rng.NextDouble(), u2 = rng.NextDouble();
      x = static_cast<float>(scale * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307 * u2));
    }
    for (float p : {0.5f, 0.9f, 0.95f}) {
      Candidates ref;
      ref.Reset(l.data(), n);
      ref.ComputeProbs();
      ref.Sort();
      double cum = 0.0;
      size_t want = 0;
      while (want < ref.size() && cum < p) cum += ref.items()[want++].p;
      Candidates c = RunTopP(p, l);
      INFO("scale " << scale << " p " << p);
      REQUIRE(c.size() == want);
      c.Sort();
      for (size_t i = 0; i < want; ++i) CHECK(c.items()[i].id == ref.items()[i].id);
    }
  }
}
