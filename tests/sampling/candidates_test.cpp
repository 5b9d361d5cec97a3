#include "sampling/candidates.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "sampling/rng.h"

using namespace ember;

namespace {

std::vector<int32_t> Ids(const Candidates& c) {
  std::vector<int32_t> ids;
  for (const Candidate& x : c.items()) ids.push_back(x.id);
  return ids;
}

// Random logits with many exact ties (integers in [0, 50)).
std::vector<float> TiedLogits(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> l(n);
  for (float& x : l) x = static_cast<float>(rng.Next() % 50);
  return l;
}

}  // namespace

TEST_CASE("candidates: Reset gives every id in order, NaN becomes -inf", "[sampling]") {
  std::vector<float> l = {1.0f, NAN, -2.0f};
  Candidates c;
  c.selected = 7;
  c.Reset(l.data(), 3);
  REQUIRE(c.size() == 3);
  CHECK(Ids(c) == std::vector<int32_t>{0, 1, 2});
  CHECK(c.items()[1].logit == -INFINITY);
  CHECK_FALSE(c.sorted());
  CHECK_FALSE(c.has_probs());
  CHECK(c.selected == -1);
}

TEST_CASE("candidates: Sort is by logit descending, ties by id ascending", "[sampling]") {
  std::vector<float> l = {1.0f, 3.0f, 1.0f, 3.0f, -1.0f};
  Candidates c;
  c.Reset(l.data(), 5);
  c.Sort();
  CHECK(c.sorted());
  CHECK(Ids(c) == std::vector<int32_t>{1, 3, 0, 2, 4});
}

TEST_CASE("candidates: KeepTop keeps the k best, sorted, for small and large k", "[sampling]") {
  const std::vector<float> l = TiedLogits(10000, 5);
  Candidates all;
  all.Reset(l.data(), static_cast<int64_t>(l.size()));
  all.Sort();
  const std::vector<int32_t> all_ids = Ids(all);
  for (size_t k : {size_t{1}, size_t{40}, size_t{100}, size_t{3000}, size_t{9999}}) {
    Candidates c;
    c.Reset(l.data(), static_cast<int64_t>(l.size()));
    c.KeepTop(k);
    REQUIRE(c.size() == k);
    CHECK(c.sorted());
    std::vector<int32_t> want(all_ids.begin(), all_ids.begin() + static_cast<std::ptrdiff_t>(k));
    CHECK(Ids(c) == want);
  }
  Candidates c;
  c.Reset(l.data(), static_cast<int64_t>(l.size()));
  c.KeepTop(20000);  // more than there are: all, sorted
  CHECK(c.size() == l.size());
  CHECK(Ids(c) == all_ids);
  c.KeepTop(0);  // treated as 1
  CHECK(c.size() == 1);
}

TEST_CASE("candidates: ComputeProbs is the softmax, also with infinities", "[sampling]") {
  std::vector<float> l = {3.0f, 2.0f, 1.0f, 0.5f};
  Candidates c;
  c.Reset(l.data(), 4);
  c.ComputeProbs();
  CHECK(c.has_probs());
  const double z = std::exp(3.0) + std::exp(2.0) + std::exp(1.0) + std::exp(0.5);
  for (int i = 0; i < 4; ++i) CHECK(c.items()[i].p == Approx(std::exp(l[i]) / z).margin(1e-6));
  c.InvalidateProbs();
  CHECK_FALSE(c.has_probs());

  std::vector<float> banned(3, -INFINITY);
  c.Reset(banned.data(), 3);
  c.ComputeProbs();  // all banned: uniform rather than NaN
  for (const Candidate& x : c.items()) CHECK(x.p == Approx(1.0 / 3));

  std::vector<float> inf = {1.0f, INFINITY, 2.0f};
  c.Reset(inf.data(), 3);
  c.ComputeProbs();
  CHECK(c.items()[1].p == 1.0f);
  CHECK(c.items()[0].p == 0.0f);
}

TEST_CASE("candidates: IndexOf in id order and after reordering", "[sampling]") {
  std::vector<float> l = {0.0f, 5.0f, 1.0f, 4.0f};
  Candidates c;
  c.Reset(l.data(), 4);
  CHECK(c.IndexOf(2) == 2);
  c.Sort();  // ids 1, 3, 2, 0
  CHECK(c.IndexOf(0) == 3);
  CHECK(c.IndexOf(1) == 0);
  c.KeepTop(2);
  CHECK(c.IndexOf(0) == -1);
  CHECK(c.IndexOf(99) == -1);
  CHECK(c.IndexOf(-1) == -1);
}

TEST_CASE("candidates: KeepIf keeps order, or the min_keep best", "[sampling]") {
  std::vector<float> l = {0.0f, 5.0f, 1.0f, 4.0f, 3.0f};
  Candidates c;
  c.Reset(l.data(), 5);
  c.KeepIf([](const Candidate& x) { return x.logit >= 1.0f; }, 1);
  CHECK(Ids(c) == std::vector<int32_t>{1, 2, 3, 4});
  CHECK_FALSE(c.sorted());
  c.KeepIf([](const Candidate& x) { return x.logit > 4.5f; }, 3);  // 1 < min_keep: top 3
  CHECK(Ids(c) == std::vector<int32_t>{1, 3, 4});
  CHECK(c.sorted());
  c.KeepIf([](const Candidate&) { return false; }, 0);  // never empty
  CHECK(Ids(c) == std::vector<int32_t>{1});
}

TEST_CASE("candidates: dropping items renormalizes valid probabilities", "[sampling]") {
  std::vector<float> l = {0.0f, 5.0f, 1.0f, 4.0f, 3.0f};
  Candidates c;
  c.Reset(l.data(), 5);
  c.ComputeProbs();
  c.KeepIf([](const Candidate& x) { return x.logit >= 1.0f; }, 1);
  REQUIRE(c.has_probs());
  const double z = std::exp(5.0) + std::exp(1.0) + std::exp(4.0) + std::exp(3.0);
  CHECK(c.items()[0].p == Approx(std::exp(5.0) / z).margin(1e-6));
  c.KeepTop(2);
  REQUIRE(c.has_probs());
  CHECK(c.items()[0].p == Approx(1.0 / (1.0 + std::exp(-1.0))).margin(1e-6));
  c.InvalidateProbs();
  c.KeepTop(1);
  CHECK_FALSE(c.has_probs());  // nothing to renormalize
}
