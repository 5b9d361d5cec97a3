#include "sampling/candidates.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>
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

TEST_CASE("candidates: ComputeProbs in vector lanes is the softmax at every position",
          "[sampling]") {
  // 1027 items: 256 groups of four in the lanes and a tail of three, with
  // banned (-inf) and far-out logits in both, and ties at the maximum.
  std::mt19937 rng(7);
  std::normal_distribution<float> d(0.0f, 3.0f);
  std::vector<float> l(1027);
  for (float& x : l) x = d(rng);
  const float max = 12.0f;
  for (size_t i : {5u, 600u, 1025u}) l[i] = max;  // ties at the maximum
  for (size_t i : {1u, 513u, 1026u}) l[i] = -INFINITY;
  for (size_t i : {2u, 1024u}) l[i] = max - 90.0f;  // exp(-90): below the cut-off
  l[3] = max - 86.0f;                               // exp(-86): kept
  Candidates c;
  c.Reset(l.data(), static_cast<int64_t>(l.size()));
  c.ComputeProbs();
  double z = 0.0;
  for (float x : l) z += x < max - 87.0f ? 0.0 : std::exp(static_cast<double>(x) - max);
  double total = 0.0;
  for (size_t i = 0; i < l.size(); ++i) {
    INFO("item " << i << " logit " << l[i]);
    const double want = l[i] < max - 87.0f ? 0.0 : std::exp(static_cast<double>(l[i]) - max) / z;
    const float p = c.items()[i].p;
    // Within 3e-6: logit - max rounds to a float (half an ulp is ~1e-6 of
    // the exp at 16 below the maximum), exp within 3e-7, p rounded.
    CHECK(std::abs(p - want) <= 3e-6 * want);
    total += p;
  }
  CHECK(total == Approx(1.0).epsilon(1e-6));
  for (size_t i : {1u, 2u, 513u, 1024u, 1026u}) CHECK(c.items()[i].p == 0.0f);
  CHECK(c.items()[3].p > 0.0f);
  CHECK(c.items()[5].p == c.items()[600].p);  // the maximum's exp is exactly 1 in lanes and tail
  CHECK(c.items()[5].p == c.items()[1025].p);

  // +inf logits in the lanes and in the tail share all the mass.
  std::vector<float> inf(7, 1.0f);
  inf[2] = inf[6] = INFINITY;
  c.Reset(inf.data(), 7);
  c.ComputeProbs();
  for (int i = 0; i < 7; ++i) CHECK(c.items()[i].p == (i == 2 || i == 6 ? 0.5f : 0.0f));
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

namespace {

// Reset, the temperature sampler's division and the top-k sampler, one by
// one: what ResetTopK must leave.
Candidates ResetDivideTop(const std::vector<float>& l, float t, size_t k) {
  Candidates c;
  c.Reset(l.data(), static_cast<int64_t>(l.size()));
  for (Candidate& x : c.items()) x.logit /= t;
  if (k < c.size()) c.KeepTop(k);
  return c;
}

}  // namespace

TEST_CASE("candidates: ResetTopK leaves what Reset, the division and KeepTop leave, bit for bit",
          "[sampling]") {
  Rng rng(11);
  const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-30f, 3e38f};
  int fused_cases = 0;
  for (int64_t n : {5, 64, 65, 640, 4096, 49152}) {
    for (float t : {0.25f, 0.8f, 1.0f, 1.5f, 7.0f, 1e4f}) {
      for (size_t k : {size_t{1}, size_t{2}, size_t{40}, size_t{100}, size_t{5000}}) {
        for (int mode = 0; mode < 5; ++mode) {
          std::vector<float> l(static_cast<size_t>(n));
          for (float& x : l) {
            const uint64_t r = rng.Next();
            if (mode == 0) {  // few values: ties across blocks
              x = static_cast<float>(static_cast<int>(r % 9) - 4);
            } else if (mode == 1) {  // close floats: divisions that round together
              x = 1.0f + static_cast<float>(r % 64) * 1.1920929e-7f;
            } else if (mode == 2) {  // specials sprinkled in normal logits
              x = r % 5 == 0 ? specials[r % 7] : static_cast<float>(r % 1000) * 0.01f;
            } else if (mode == 3) {  // mostly -inf or NaN: the plain path
              x = r % 50 == 0 ? static_cast<float>(r % 3) : (r % 2 ? -INFINITY : NAN);
            } else {  // wide normal-ish logits
              x = static_cast<float>(static_cast<int64_t>(r % 20001) - 10000) * 1e-3f;
            }
          }
          const Candidates want = ResetDivideTop(l, t, k);
          Candidates got;
          got.ResetTopK(l.data(), n, t, k);
          INFO("n " << n << " t " << t << " k " << k << " mode " << mode);
          REQUIRE(got.size() == want.size());
          CHECK(got.sorted() == want.sorted());
          CHECK(got.has_probs() == want.has_probs());
          CHECK(got.selected == -1);
          bool same = true;
          for (size_t i = 0; i < want.size(); ++i) {
            const Candidate &a = got.items()[i], &b = want.items()[i];
            same = same && a.id == b.id && std::memcmp(&a.logit, &b.logit, sizeof(float)) == 0;
          }
          CHECK(same);
          fused_cases += static_cast<int64_t>(k) < n / 64 && mode != 3;
        }
      }
    }
  }
  CHECK(fused_cases > 100);  // most cases went through the fused path's conditions
}
