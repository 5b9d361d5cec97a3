#include "sampling/greedy.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "sampling/rng.h"
#include "sampling/sampler.h"

using namespace ember;

TEST_CASE("greedy: largest logit, ties to the lowest id", "[sampling]") {
  std::vector<float> l = {0.5f, 3.0f, -1.0f, 3.0f};
  CHECK(SelectGreedy(l.data(), 4) == 1);
  std::vector<float> one = {-7.0f};
  CHECK(SelectGreedy(one.data(), 1) == 0);
}

// SelectGreedy scans in blocks and vector lanes; it must pick what a plain
// scan with a strict `>` picks: the first maximum, NaN never, id 0 when
// nothing is above -inf.
int32_t ScalarGreedy(const std::vector<float>& l) {
  int32_t best = 0;
  float best_logit = -INFINITY;
  for (size_t i = 0; i < l.size(); ++i) {
    if (l[i] > best_logit) {
      best = static_cast<int32_t>(i);
      best_logit = l[i];
    }
  }
  return best;
}

TEST_CASE("greedy: the blocked scan picks the scalar scan's id", "[sampling]") {
  Rng rng(7);
  const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 3.0f};
  for (int n : {1, 2, 15, 16, 17, 1023, 1024, 1025, 3000, 49152}) {
    for (int trial = 0; trial < 40; ++trial) {
      std::vector<float> l(static_cast<size_t>(n));
      // Few distinct values (ties across lanes and blocks), sprinkled with
      // NaN, infinities and signed zeros; some arrays all NaN or -inf.
      const int mode = trial % 5;
      for (float& x : l) {
        const uint64_t r = rng.Next();
        if (mode == 0) {
          x = specials[r % 6];
        } else if (mode == 1) {
          x = (r % 4 == 0) ? NAN : -INFINITY;
        } else {
          x = static_cast<float>(static_cast<int>(r % 7) - 3);
          if (r % 97 == 0) x = NAN;
        }
      }
      if (mode == 3) l[rng.Next() % l.size()] = 9.0f;  // a single maximum anywhere
      if (mode == 4 && n > 1) {
        l[l.size() - 1] = 10.0f;  // the maximum in the last, partial block
      }
      INFO("n = " << n << ", trial " << trial);
      CHECK(SelectGreedy(l.data(), n) == ScalarGreedy(l));
    }
  }
}

TEST_CASE("rng: same seed, same stream, different seeds differ", "[sampling]") {
  Rng a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) {
    uint64_t x = a.Next();
    CHECK(x == b.Next());
    (void)c;
  }
  Rng d(42), e(43);
  CHECK(d.Next() != e.Next());
  Rng f(1);
  for (int i = 0; i < 1000; ++i) {
    double u = f.NextDouble();
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
  }
}

TEST_CASE("greedy sampler: largest logit, ties to the lowest id, in any order", "[sampling]") {
  SamplerSpec spec;
  spec.kind = SamplerKind::kGreedy;
  std::unique_ptr<Sampler> g;
  REQUIRE(MakeSampler(spec, SamplerContext{5, nullptr}, &g).ok());
  const std::vector<float> l = {0.5f, 3.0f, -1.0f, 3.0f, 2.9f};
  Rng rng(1);
  Candidates c;
  c.Reset(l.data(), 5);
  g->Apply(c, rng);
  CHECK(c.selected == 1);
  CHECK(c.size() == 5);  // selects, removes nothing
  // Reordered so that id 3 comes before id 1: still id 1.
  c.Reset(l.data(), 5);
  std::swap(c.items()[1], c.items()[3]);
  g->Apply(c, rng);
  CHECK(c.selected == 1);
  c.Reset(l.data(), 5);
  c.Sort();
  g->Apply(c, rng);
  CHECK(c.selected == 1);
}
