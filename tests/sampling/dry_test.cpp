#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "sampling/sampler.h"

using namespace ember;

namespace {

// Token pieces: id 9 is a newline, id 8 contains a colon; the rest are words.
const std::vector<std::string> kPieces = {"a", "b", "c", "d", "e", "f", "g", "h", "x:y", "\n"};

std::unique_ptr<Sampler> MakeDry(const std::vector<std::string>* pieces, int32_t allowed = 2,
                                 int32_t last_n = -1) {
  SamplerSpec spec;
  spec.kind = SamplerKind::kDry;
  spec.dry_multiplier = 0.8f;
  spec.dry_base = 1.75f;
  spec.dry_allowed_length = allowed;
  spec.dry_penalty_last_n = last_n;
  SamplerContext ctx;
  ctx.n_vocab = 10;
  if (pieces != nullptr) {
    ctx.token_piece = [pieces](int32_t t) { return std::string_view((*pieces)[t]); };
  }
  std::unique_ptr<Sampler> s;
  REQUIRE(MakeSampler(spec, ctx, &s).ok());
  return s;
}

// The penalty each token got: logits are all 0, so -logit.
std::vector<float> Penalties(Sampler& s, const std::vector<int32_t>& history) {
  s.Reset();
  for (int32_t t : history) s.Accept(t);
  std::vector<float> zeros(10, 0.0f);
  Candidates c;
  c.Reset(zeros.data(), 10);
  Rng rng(1);
  s.Apply(c, rng);
  std::vector<float> out(10);
  for (const Candidate& x : c.items()) out[static_cast<size_t>(x.id)] = -x.logit;
  return out;
}

}  // namespace

TEST_CASE("dry: penalizes the token that would continue a repeat", "[sampling]") {
  auto s = MakeDry(&kPieces);
  // 1 2 3 4 1 2 3: the suffix "1 2 3" (3 tokens) was followed by 4.
  std::vector<float> p = Penalties(*s, {1, 2, 3, 4, 1, 2, 3});
  CHECK(p[4] == Approx(0.8 * std::pow(1.75, 3 - 2)));
  for (int t : {0, 1, 2, 3, 5, 6, 7, 8, 9}) CHECK(p[static_cast<size_t>(t)] == 0.0f);
  // The longest match of each continuation counts: "2 3" -> 5 (length 2,
  // penalty 0.8) and "1 2 3" -> 4 (length 3).
  p = Penalties(*s, {2, 3, 5, 1, 2, 3, 4, 1, 2, 3});
  CHECK(p[5] == Approx(0.8));
  CHECK(p[4] == Approx(0.8 * 1.75));
  // A repeat shorter than allowed_length is free: "3" -> 4 has length 1.
  p = Penalties(*s, {3, 4, 0, 3});
  CHECK(p[4] == 0.0f);
  auto lenient = MakeDry(&kPieces, 0);
  CHECK(Penalties(*lenient, {3, 4, 0, 3})[4] == Approx(0.8 * 1.75));
}

TEST_CASE("dry: sequence breakers end matches", "[sampling]") {
  auto s = MakeDry(&kPieces);
  // "9" (newline) inside the repeat: the match stops there, "1 2" -> 4 is
  // length 2 instead of 3.
  std::vector<float> p = Penalties(*s, {9, 1, 2, 4, 9, 1, 2});
  CHECK(p[4] == Approx(0.8));
  // A breaker as the last token: no penalty at all.
  p = Penalties(*s, {1, 2, 8, 4, 1, 2, 8});
  CHECK(p[4] == 0.0f);
  // A breaker as the continuation is not penalized.
  p = Penalties(*s, {1, 2, 3, 9, 1, 2, 3});
  CHECK(p[9] == 0.0f);
  // Without token pieces nothing is a breaker.
  auto plain = MakeDry(nullptr);
  CHECK(Penalties(*plain, {1, 2, 3, 9, 1, 2, 3})[9] == Approx(0.8 * 1.75));
}

TEST_CASE("dry: history window, Clone and Reset", "[sampling]") {
  auto s = MakeDry(&kPieces, 2, 4);  // sees only the last 4 tokens: 4 1 2 3
  CHECK(Penalties(*s, {1, 2, 3, 4, 1, 2, 3})[4] == 0.0f);

  auto d = MakeDry(&kPieces);
  for (int32_t t : {1, 2, 3, 4, 1, 2, 3}) d->Accept(t);
  std::unique_ptr<Sampler> clone = d->Clone();
  d->Reset();
  std::vector<float> zeros(10, 0.0f);
  Candidates c;
  c.Reset(zeros.data(), 10);
  Rng rng(1);
  d->Apply(c, rng);
  CHECK(c.items()[4].logit == 0.0f);  // reset: no history
  clone->Apply(c, rng);
  CHECK(c.items()[4].logit == Approx(-0.8 * 1.75));
  CHECK_FALSE(c.sorted());
}

TEST_CASE("dry: an infinite penalty on an infinite logit is -inf, never NaN", "[sampling]") {
  SamplerSpec spec;
  spec.kind = SamplerKind::kDry;
  spec.dry_multiplier = 1.0f;
  spec.dry_base = 1e30f;  // base^2 overflows float: the penalty is +inf
  spec.dry_allowed_length = 0;
  std::unique_ptr<Sampler> s;
  REQUIRE(MakeSampler(spec, SamplerContext{10, nullptr}, &s).ok());
  for (int32_t t : {1, 2, 3, 4, 1, 2, 3}) s->Accept(t);
  std::vector<float> logits(10, 0.0f);
  logits[4] = INFINITY;
  Candidates c;
  c.Reset(logits.data(), 10);
  Rng rng(1);
  s->Apply(c, rng);
  CHECK(c.items()[4].logit == -INFINITY);
  c.ComputeProbs();
  for (const Candidate& x : c.items()) CHECK_FALSE(std::isnan(x.p));
}
