#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "sampling/sampler.h"

using namespace ember;

namespace {

std::unique_ptr<Sampler> MakePenalties(float repeat, float presence, float frequency,
                                       int32_t last_n) {
  SamplerSpec spec;
  spec.kind = SamplerKind::kPenalties;
  spec.repeat_penalty = repeat;
  spec.presence_penalty = presence;
  spec.frequency_penalty = frequency;
  spec.penalty_last_n = last_n;
  std::unique_ptr<Sampler> s;
  REQUIRE(MakeSampler(spec, SamplerContext{8, nullptr}, &s).ok());
  return s;
}

std::vector<float> Apply(Sampler& s, const std::vector<float>& logits, bool sort_first = false) {
  Candidates c;
  c.Reset(logits.data(), static_cast<int64_t>(logits.size()));
  if (sort_first) c.Sort();
  Rng rng(1);
  s.Apply(c, rng);
  std::vector<float> out(logits.size(), NAN);
  for (const Candidate& x : c.items()) out[static_cast<size_t>(x.id)] = x.logit;
  return out;
}

const std::vector<float> kLogits = {2.0f, -2.0f, 1.0f, 0.5f, 0.0f, 3.0f, -1.0f, 4.0f};

}  // namespace

TEST_CASE("penalties: repetition 1.3 takes 2.0 to 1.5385 and -2.0 to -2.6", "[sampling]") {
  auto s = MakePenalties(1.3f, 0.0f, 0.0f, 64);
  CHECK(Apply(*s, kLogits) == kLogits);  // no history: nothing changes
  s->Accept(0);
  s->Accept(1);
  s->Accept(0);  // seen twice: the repetition penalty still applies once
  const std::vector<float> out = Apply(*s, kLogits);
  CHECK(out[0] == Approx(1.5385).margin(1e-4));
  CHECK(out[1] == Approx(-2.6).margin(1e-4));
  for (size_t i = 2; i < kLogits.size(); ++i) CHECK(out[i] == kLogits[i]);
}

TEST_CASE("penalties: presence once, frequency per occurrence", "[sampling]") {
  auto s = MakePenalties(1.0f, 0.5f, 0.25f, -1);
  for (int32_t t : {5, 5, 5, 3}) s->Accept(t);
  const std::vector<float> out = Apply(*s, kLogits);
  CHECK(out[5] == Approx(3.0 - 0.5 - 3 * 0.25));
  CHECK(out[3] == Approx(0.5 - 0.5 - 0.25));
  CHECK(out[0] == kLogits[0]);
}

TEST_CASE("penalties: only the last N tokens count, Reset and Clone", "[sampling]") {
  auto s = MakePenalties(2.0f, 0.0f, 0.0f, 2);
  for (int32_t t : {7, 2, 5}) s->Accept(t);  // 7 has left the window
  std::vector<float> out = Apply(*s, kLogits);
  CHECK(out[7] == 4.0f);
  CHECK(out[2] == 0.5f);
  CHECK(out[5] == 1.5f);
  // On candidates no longer in id order the same ids are found.
  CHECK(Apply(*s, kLogits, /*sort_first=*/true) == out);

  std::unique_ptr<Sampler> clone = s->Clone();
  CHECK(Apply(*clone, kLogits) == out);
  s->Reset();
  CHECK(Apply(*s, kLogits) == kLogits);
  CHECK(Apply(*clone, kLogits) == out);  // the clone kept its own history

  auto off = MakePenalties(2.0f, 0.0f, 0.0f, 0);  // last_n 0: off
  off->Accept(7);
  CHECK(Apply(*off, kLogits) == kLogits);
}

TEST_CASE("penalties: an infinite logit meeting an infinite penalty is -inf, never NaN",
          "[sampling]") {
  // sampler_fuzz's finding: a repetition penalty of 1e-40 divides a positive
  // logit to +inf; a frequency penalty whose product overflows is +inf too,
  // and inf - inf was a NaN logit (NaN probabilities after it).
  auto s = MakePenalties(1e-40f, 0.0f, 3e38f, -1);
  s->Accept(7);
  s->Accept(7);
  std::vector<float> out = Apply(*s, kLogits);
  CHECK(out[7] == -INFINITY);  // the penalty wins
  // A banned token (-inf) with an infinite bonus stays banned.
  auto bonus = MakePenalties(1.0f, 0.0f, -3e38f, -1);
  bonus->Accept(2);
  bonus->Accept(2);
  std::vector<float> banned = kLogits;
  banned[2] = -INFINITY;
  out = Apply(*bonus, banned);
  CHECK(out[2] == -INFINITY);
  for (float x : out) CHECK_FALSE(std::isnan(x));
}
