// Speculative decoding (runtime/decoding/speculative.h): the output is token
// for token plain decoding's, greedy and sampled, whatever the drafts; the
// cache rolls back (rings and sliding-window rings included); sampled tokens
// keep the model's distribution; bad draft models are refused.
#include "runtime/decoding/speculative.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "sampling/logprobs.h"
#include "support/loaders.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

using namespace ember;

namespace {

std::unique_ptr<Session> NewSession(const Model& m, int64_t n_ctx = 512) {
  SessionParams p;
  p.n_ctx = n_ctx;
  p.n_threads = 1;
  p.n_threads_batch = 1;
  return test::CreateSessionOrFail(m, p);
}

GenerateParams Params(int64_t n, float temperature, uint64_t seed = 1) {
  GenerateParams g;
  g.n_predict = n;
  g.ignore_eos = true;
  g.sampling.temperature = temperature;
  g.sampling.seed = seed;
  return g;
}

GenerateResult Plain(const Model& m, const std::vector<int32_t>& prompt, const GenerateParams& g) {
  auto s = NewSession(m);
  GenerateResult r;
  const Status st = Generate(*s, prompt, g, nullptr, nullptr, &r);
  INFO(st.message());
  REQUIRE(st.ok());
  return r;
}

GenerateResult Speculative(Session& s, DraftSource& d, const std::vector<int32_t>& prompt,
                           const GenerateParams& g, SpeculativeStats* stats,
                           SpeculativeParams sp = SpeculativeParams()) {
  GenerateResult r;
  const Status st = GenerateSpeculative(s, d, prompt, g, sp, nullptr, nullptr, &r, stats);
  INFO(st.message());
  REQUIRE(st.ok());
  return r;
}

// Drafts that are always wrong-ish: k random tokens.
class RandomDraft final : public DraftSource {
 public:
  const char* name() const override { return "random"; }
  Status Draft(const std::vector<int32_t>&, int32_t k, std::vector<int32_t>* out) override {
    out->clear();
    for (int32_t i = 0; i < k; ++i) out->push_back(static_cast<int32_t>(rng_() % 1000) + 100);
    return Status::Ok();
  }

 private:
  std::mt19937 rng_{5};
};

// Drafts the same token every time.
class FixedDraft final : public DraftSource {
 public:
  explicit FixedDraft(int32_t t) : t_(t) {}
  const char* name() const override { return "fixed"; }
  Status Draft(const std::vector<int32_t>&, int32_t k, std::vector<int32_t>* out) override {
    out->assign(static_cast<size_t>(k), t_);
    return Status::Ok();
  }

 private:
  int32_t t_;
};

std::vector<int32_t> RepetitivePrompt(const Model& m) {
  return m.tokenizer().Encode(
      "def add(a, b):\n    return a + b\n\ndef add(a, b):\n    return a + b\n\ndef add(", true,
      false);
}

}  // namespace

TEST_CASE("speculative: greedy output is plain greedy's with every draft source", "[speculative]") {
  const std::string path = test::BuildArchModel("qwen2");
  REQUIRE(!path.empty());
  auto model = test::LoadModelOrFail(path);
  const std::vector<int32_t> prompt = RepetitivePrompt(*model);
  const GenerateParams g = Params(80, 0.0f);
  const GenerateResult plain = Plain(*model, prompt, g);
  REQUIRE(plain.tokens.size() == 80);

  SECTION("lookup") {
    LookupDraft lookup(3);
    auto s = NewSession(*model);
    SpeculativeStats st;
    const GenerateResult r = Speculative(*s, lookup, prompt, g, &st);
    CHECK(r.tokens == plain.tokens);
    CHECK(r.text == plain.text);
    // Speculation happened: drafts were verified and some accepted (the
    // tiny model's greedy text repeats itself), in fewer passes than tokens.
    CHECK(st.n_drafted > 0);
    CHECK(st.n_accepted > 0);
    CHECK(st.n_steps < 80);
    // The cache holds what plain decoding's holds.
    auto ps = NewSession(*model);
    GenerateResult again;
    REQUIRE(Generate(*ps, prompt, g, nullptr, nullptr, &again).ok());
    CHECK(s->tokens() == ps->tokens());
  }
  SECTION("the model as its own draft: every draft accepted") {
    auto target = NewSession(*model);
    auto draft_session = NewSession(*model);
    std::unique_ptr<DraftModel> draft;
    REQUIRE(DraftModel::Create(draft_session.get(), model->tokenizer(), &draft).ok());
    SpeculativeStats st;
    SpeculativeParams sp;
    sp.adaptive = false;
    sp.draft_max = 7;
    const GenerateResult r = Speculative(*target, *draft, prompt, g, &st, sp);
    CHECK(r.tokens == plain.tokens);
    CHECK(st.n_accepted == st.n_drafted);
    CHECK(st.n_steps <= 80 / 8 + 1);
  }
  SECTION("another model's drafts (same vocabulary, other weights)") {
    test::TinyModelSpec spec = test::ArchSpec("qwen2");
    spec.seed = 77;
    const std::string other_path = test::TempPath("other_qwen2.gguf");
    REQUIRE(test::BuildTinyModel(spec, other_path).ok());
    auto other = test::LoadModelOrFail(other_path);
    auto target = NewSession(*model);
    auto draft_session = NewSession(*other);
    std::unique_ptr<DraftModel> draft;
    REQUIRE(DraftModel::Create(draft_session.get(), model->tokenizer(), &draft).ok());
    SpeculativeStats st;
    const GenerateResult r = Speculative(*target, *draft, prompt, g, &st);
    CHECK(r.tokens == plain.tokens);
    CHECK(st.n_drafted > 0);
  }
  SECTION("a draft model that fails: probed on a short context, then given up") {
    // Another model's greedy drafts, none of which this target takes (the
    // seed is chosen so; checked below). A costly source is probed (2 tokens)
    // before any round at draft_max, reads only the context's last
    // kProbeWindow tokens while it has had nothing accepted, and is given up
    // after the probe at the longest back-off: steps 1, 33, 97 and 225, then
    // none in the 275 steps after.
    test::TinyModelSpec spec = test::ArchSpec("qwen2");
    spec.seed = 78;
    const std::string other_path = test::TempPath("failing_qwen2.gguf");
    REQUIRE(test::BuildTinyModel(spec, other_path).ok());
    auto other = test::LoadModelOrFail(other_path);
    std::vector<int32_t> long_prompt;
    for (int i = 0; i < 3; ++i) long_prompt.insert(long_prompt.end(), prompt.begin(), prompt.end());
    REQUIRE(long_prompt.size() > 2 * DraftModel::kProbeWindow);
    const GenerateParams g500 = Params(500, 0.0f);
    auto plain_session = NewSession(*model, 1024);
    GenerateResult plain500;
    REQUIRE(Generate(*plain_session, long_prompt, g500, nullptr, nullptr, &plain500).ok());
    auto target = NewSession(*model, 1024);
    auto draft_session = NewSession(*other, 1024);
    std::unique_ptr<DraftModel> draft;
    REQUIRE(DraftModel::Create(draft_session.get(), model->tokenizer(), &draft).ok());
    SpeculativeStats st;
    const GenerateResult r = Speculative(*target, *draft, long_prompt, g500, &st);
    CHECK(r.tokens == plain500.tokens);
    REQUIRE(st.n_accepted == 0);
    CHECK(st.n_drafted == 4 * 2);
    CHECK(draft_session->n_past() <= static_cast<int64_t>(DraftModel::kProbeWindow) + 2);
  }
  SECTION("random drafts: all rejected, and the adaptive length turns drafting off") {
    RandomDraft random;
    auto s = NewSession(*model);
    SpeculativeStats st;
    const GenerateResult r = Speculative(*s, random, prompt, g, &st);
    CHECK(r.tokens == plain.tokens);
    CHECK(st.n_accepted <= st.n_drafted / 10);
    // 2 rounds to learn (both accept nothing), then probes of 2 tokens, 32,
    // then 64, 128 ... steps apart while they fail.
    CHECK(st.n_drafted <= 2 * 8 + 3 * 2);
  }
}

TEST_CASE("speculative: sampled output is plain sampling's, token for token", "[speculative]") {
  const std::string path = test::BuildArchModel("qwen2");
  REQUIRE(!path.empty());
  auto model = test::LoadModelOrFail(path);
  const std::vector<int32_t> prompt = RepetitivePrompt(*model);
  for (uint64_t seed : {1, 2, 3}) {
    GenerateParams g = Params(48, 0.9f, seed);
    g.sampling.top_k = 0;
    g.sampling.top_p = 0.98f;
    g.sampling.repeat_penalty = 1.1f;
    const GenerateResult plain = Plain(*model, prompt, g);
    LookupDraft lookup(2);
    auto s = NewSession(*model);
    SpeculativeStats st;
    const GenerateResult r = Speculative(*s, lookup, prompt, g, &st);
    CHECK(r.tokens == plain.tokens);
    CHECK(r.logprob == Approx(plain.logprob).epsilon(1e-6));
  }
}

TEST_CASE("speculative: rollback through sliding-window rings and context shifts",
          "[speculative]") {
  const std::string path = test::BuildArchModel("gemma3");  // 5 layers with a window of 8
  REQUIRE(!path.empty());
  auto model = test::LoadModelOrFail(path);
  const std::vector<int32_t> prompt = RepetitivePrompt(*model);
  // A small context: generation runs past it, so the context shifts too.
  for (const int64_t n_ctx : {int64_t(512), int64_t(64)}) {
    SessionParams p;
    p.n_ctx = n_ctx;
    p.n_threads = 1;
    p.n_threads_batch = 1;
    auto plain_s = test::CreateSessionOrFail(*model, p);
    const GenerateParams g = Params(100, 0.0f);
    GenerateResult plain;
    REQUIRE(Generate(*plain_s, prompt, g, nullptr, nullptr, &plain).ok());
    auto s = test::CreateSessionOrFail(*model, p);
    RandomDraft random;  // many rejections: many rollbacks
    SpeculativeParams sp;
    sp.adaptive = false;
    sp.draft_max = 5;
    SpeculativeStats st;
    const GenerateResult r = Speculative(*s, random, prompt, g, &st, sp);
    INFO("n_ctx " << n_ctx);
    CHECK(r.tokens == plain.tokens);
    CHECK(s->tokens() == plain_s->tokens());
    CHECK(st.n_drafted > 100);
  }
}

TEST_CASE("speculative: sampled tokens keep the model's distribution (chi-square)",
          "[speculative]") {
  // The second token is the first one verified against a draft. Drafting the
  // first token's most likely follower every time must not bias it: its
  // frequencies over many seeds follow p(second | prompt, first).
  const std::string path = test::BuildArchModel("llama");
  REQUIRE(!path.empty());
  auto model = test::LoadModelOrFail(path);
  const std::vector<int32_t> prompt =
      model->tokenizer().Encode("The weather today is", true, false);
  auto s = NewSession(*model, 64);
  std::map<int32_t, std::map<int32_t, int>> counts;  // first -> second -> n
  const int kRuns = 4000;
  const float kT = 0.2f;
  for (int seed = 0; seed < kRuns; ++seed) {
    // A low temperature: the tiny model's logits are about unit spread, so
    // at T = 1 every token is about as likely as any other.
    GenerateParams g = Params(2, kT, static_cast<uint64_t>(seed));
    g.sampling.top_k = 0;
    g.sampling.top_p = 1.0f;
    g.sampling.min_p = 0.0f;
    g.logprobs = false;
    s->Reset();
    FixedDraft draft(prompt.back());
    SpeculativeStats st;
    SpeculativeParams sp;
    sp.adaptive = false;
    sp.draft_max = 1;
    const GenerateResult r = Speculative(*s, draft, prompt, g, &st, sp);
    REQUIRE(r.tokens.size() == 2);
    ++counts[r.tokens[0]][r.tokens[1]];
  }
  // The most frequent first token: its second tokens against the exact p.
  int32_t first = -1;
  int most = 0;
  for (const auto& [t, m] : counts) {
    int n = 0;
    for (const auto& kv : m) n += kv.second;
    if (n > most) {
      most = n;
      first = t;
    }
  }
  REQUIRE(most >= 200);
  auto ref = NewSession(*model, 64);
  std::vector<int32_t> ctx = prompt;
  ctx.push_back(first);
  REQUIRE(ref->Decode(ctx).ok());
  std::vector<float> logits = ref->logits();
  for (float& l : logits) l /= kT;
  const double lse = LogSumExp(logits.data(), static_cast<int64_t>(logits.size()));
  // Categories: tokens with expected count >= 5, the rest pooled.
  double chi2 = 0, rest_expected = 0;
  int rest_observed = 0, dof = -1;
  for (size_t id = 0; id < logits.size(); ++id) {
    const double p = std::exp(static_cast<double>(logits[id]) - lse);
    const double expected = p * most;
    const auto it = counts[first].find(static_cast<int32_t>(id));
    const int observed = it == counts[first].end() ? 0 : it->second;
    if (expected >= 5) {
      chi2 += (observed - expected) * (observed - expected) / expected;
      ++dof;
    } else {
      rest_expected += expected;
      rest_observed += observed;
    }
  }
  if (rest_expected > 0) {
    chi2 += (rest_observed - rest_expected) * (rest_observed - rest_expected) / rest_expected;
    ++dof;
  }
  REQUIRE(dof >= 1);
  // The 99.9% quantile of chi-square with dof degrees of freedom, by the
  // Wilson-Hilferty approximation (z = 3.09).
  const double d = dof;
  const double q = d * std::pow(1 - 2 / (9 * d) + 3.09 * std::sqrt(2 / (9 * d)), 3);
  INFO("most " << most << " chi2 " << chi2 << " with " << dof << " degrees of freedom, limit "
               << q);
  CHECK(chi2 < q);
}

TEST_CASE("speculative: bad settings and draft models", "[speculative][bad-input]") {
  const std::string path = test::BuildArchModel("qwen2");
  REQUIRE(!path.empty());
  auto model = test::LoadModelOrFail(path);
  auto s = NewSession(*model);
  LookupDraft lookup(2);
  GenerateResult r;
  SpeculativeStats st;
  const std::vector<int32_t> prompt = {1, 2, 3};
  SpeculativeParams sp;
  sp.draft_max = 0;
  CHECK(
      GenerateSpeculative(*s, lookup, prompt, Params(4, 0), sp, nullptr, nullptr, &r, &st).code() ==
      Code::kInvalidArgument);
  sp = SpeculativeParams();
  sp.draft_min = 9;
  CHECK(
      GenerateSpeculative(*s, lookup, prompt, Params(4, 0), sp, nullptr, nullptr, &r, &st).code() ==
      Code::kInvalidArgument);
  GenerateParams beams = Params(4, 0);
  beams.beams = 2;
  CHECK(
      GenerateSpeculative(*s, lookup, prompt, beams, SpeculativeParams(), nullptr, nullptr, &r, &st)
          .code() == Code::kUnsupported);
  // A draft model of another vocabulary (GPT-2's) is refused, naming a token.
  auto other = test::LoadModelOrFail();  // the default tiny model: GPT-2's vocabulary
  auto ds = NewSession(*other);
  std::unique_ptr<DraftModel> draft;
  const Status bad = DraftModel::Create(ds.get(), model->tokenizer(), &draft);
  CHECK(bad.code() == Code::kInvalidArgument);
  CHECK(bad.message().find("another vocabulary: token") != std::string::npos);
}

TEST_CASE("speculative: a grammar checks the drafts, output as plain decoding's",
          "[speculative][grammar]") {
  const std::string path = test::BuildArchModel("qwen2");
  REQUIRE(!path.empty());
  auto model = test::LoadModelOrFail(path);
  const std::vector<int32_t> prompt = RepetitivePrompt(*model);
  const std::string gbnf =
      "root ::= (\"def \" [a-z]{1,8} \"(a, b):\\n    return \" [a-z +]{1,12} \"\\n\\n\"){1,4}";
  for (const float temperature : {0.0f, 0.9f}) {
    GenerateParams g = Params(60, temperature, 3);
    g.ignore_eos = false;
    g.sampling.grammar = gbnf;
    const GenerateResult plain = Plain(*model, prompt, g);
    for (int which = 0; which < 2; ++which) {
      LookupDraft lookup(2);
      RandomDraft random;
      DraftSource& d = which == 0 ? static_cast<DraftSource&>(lookup) : random;
      auto s = NewSession(*model);
      SpeculativeStats st;
      const GenerateResult r = Speculative(*s, d, prompt, g, &st);
      INFO("temperature " << temperature << ", " << d.name() << ": " << r.text);
      CHECK(r.tokens == plain.tokens);
      CHECK(r.finish == plain.finish);
      CHECK(st.n_steps > 0);
    }
  }
}
