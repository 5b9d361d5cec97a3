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
