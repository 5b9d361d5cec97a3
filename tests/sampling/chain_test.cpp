#include "sampling/chain.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

using namespace ember;

namespace {

SamplerSpec Spec(SamplerKind kind) {
  SamplerSpec s;
  s.kind = kind;
  return s;
}

std::string CreateError(const std::vector<SamplerSpec>& specs, int32_t n_vocab = 10) {
  std::unique_ptr<SamplerChain> chain;
  const Status st = SamplerChain::Create(specs, SamplerContext{n_vocab, nullptr}, 1, &chain);
  if (st.ok()) return "";
  CHECK(chain == nullptr);
  return st.message();
}

std::vector<SamplerKind> Kinds(const SamplingParams& p) {
  std::vector<SamplerSpec> specs;
  REQUIRE(SpecsFromParams(p, &specs).ok());
  std::vector<SamplerKind> kinds;
  for (const SamplerSpec& s : specs) kinds.push_back(s.kind);
  return kinds;
}

std::unique_ptr<SamplerChain> ChainOf(const SamplingParams& p, int32_t n_vocab) {
  std::vector<SamplerSpec> specs;
  REQUIRE(SpecsFromParams(p, &specs).ok());
  std::unique_ptr<SamplerChain> chain;
  REQUIRE(SamplerChain::Create(specs, SamplerContext{n_vocab, nullptr}, p.seed, &chain).ok());
  return chain;
}

using K = SamplerKind;

}  // namespace

TEST_CASE("chain: structure errors", "[sampling]") {
  CHECK(CreateError({}).find("the sampler chain is empty") == 0);
  CHECK(CreateError({Spec(K::kTopK)}) ==
        "the sampler chain must end with exactly one terminal sampler (greedy, dist or "
        "mirostat-v2); got 'top-k' last");
  CHECK(CreateError({Spec(K::kGreedy), Spec(K::kTopK)}).find("got 'top-k' last") !=
        std::string::npos);
  CHECK(CreateError({Spec(K::kTopK), Spec(K::kGreedy), Spec(K::kDist)}) ==
        "two terminal samplers: 'greedy' and 'dist'");
  SamplerSpec bad = Spec(K::kTopP);
  bad.top_p = 1.5f;
  CHECK(CreateError({bad, Spec(K::kDist)}) == "top-p must be in (0, 1] (got 1.5)");
  SamplerSpec bias = Spec(K::kLogitBias);
  bias.logit_bias = {{10, 1.0f}};
  CHECK(CreateError({bias, Spec(K::kGreedy)}) == "logit-bias token id 10 is out of range [0, 10)");
  CHECK(CreateError({Spec(K::kGreedy)}, 0).find("n_vocab") != std::string::npos);
  CHECK(CreateError({Spec(K::kTopK), Spec(K::kTemperature), Spec(K::kDist)}).empty());
}

TEST_CASE("chain: SpecsFromParams includes only active samplers, in order", "[sampling]") {
  SamplingParams p;  // llama.cpp's defaults
  CHECK(Kinds(p) == std::vector<K>{K::kTemperature, K::kTopK, K::kTopP, K::kMinP, K::kDist});
  p.repeat_penalty = 1.1f;
  p.dry_multiplier = 0.8f;
  p.logit_bias = {{1, 2.0f}};
  p.typical_p = 0.9f;
  p.top_n_sigma = 1.0f;
  p.xtc_probability = 0.5f;
  CHECK(Kinds(p) == std::vector<K>{K::kLogitBias, K::kPenalties, K::kDry, K::kTopNSigma,
                                   K::kTemperature, K::kTopK, K::kTypicalP, K::kTopP, K::kMinP,
                                   K::kXtc, K::kDist});
  p.penalty_last_n = 0;  // penalties off
  p.dry_penalty_last_n = 0;
  CHECK(Kinds(p)[1] == K::kTopNSigma);

  SamplingParams off;
  off.temperature = 1.0f;
  off.top_k = 0;
  off.top_p = 1.0f;
  off.min_p = 0.0f;
  CHECK(Kinds(off) == std::vector<K>{K::kDist});
}

TEST_CASE("chain: temperature 0 ends in greedy, mirostat 2, mirostat 1 is an error", "[sampling]") {
  SamplingParams p;
  p.temperature = 0.0f;
  CHECK(Kinds(p) == std::vector<K>{K::kGreedy});
  p.repeat_penalty = 1.3f;
  p.xtc_probability = 1.0f;  // would remove the top token: dropped under greedy
  CHECK(Kinds(p) == std::vector<K>{K::kPenalties, K::kGreedy});
  p.top_p = 1.5f;  // dropped, but still checked
  std::vector<SamplerSpec> specs;
  CHECK(SpecsFromParams(p, &specs).message() == "top-p must be in (0, 1] (got 1.5)");

  SamplingParams m;
  m.mirostat = 2;
  CHECK(Kinds(m) == std::vector<K>{K::kTemperature, K::kMirostatV2});
  m.temperature = 1.0f;
  CHECK(Kinds(m) == std::vector<K>{K::kMirostatV2});
  m.mirostat = 1;
  Status st = SpecsFromParams(m, &specs);
  CHECK(st.code() == Code::kUnsupported);
  CHECK(st.message().find("mirostat v1 is not implemented") != std::string::npos);
  m.mirostat = 3;
  CHECK(SpecsFromParams(m, &specs).message() == "mirostat must be 0, 1 or 2 (got 3)");

  SamplingParams neg;
  neg.temperature = -0.5f;
  CHECK(SpecsFromParams(neg, &specs).message() == "temperature must be >= 0 (got -0.5)");
}

TEST_CASE("chain: a custom order is followed and validated", "[sampling]") {
  SamplingParams p;
  p.order = {K::kMinP, K::kTopK, K::kTemperature};  // top-p not listed: not used
  p.logit_bias = {{0, 1.0f}};                       // not listed: first anyway
  CHECK(Kinds(p) == std::vector<K>{K::kLogitBias, K::kMinP, K::kTopK, K::kTemperature, K::kDist});
  std::vector<SamplerSpec> specs;
  p.order = {K::kTopK, K::kMinP, K::kTopK};
  CHECK(SpecsFromParams(p, &specs).message() == "'top-k' appears twice in the sampler order");
  p.order = {K::kTopK, K::kDist};
  CHECK(SpecsFromParams(p, &specs).message().find("'dist' cannot be in the sampler order") == 0);
  p.order = {static_cast<SamplerKind>(42)};
  CHECK(SpecsFromParams(p, &specs).message() == "unknown sampler kind 42 in the sampler order");
}

TEST_CASE("chain: trace stages hold the survivors and their probabilities", "[sampling]") {
  SamplerSpec top_k = Spec(K::kTopK);
  top_k.top_k = 2;
  SamplerSpec temp = Spec(K::kTemperature);
  temp.temperature = 0.5f;
  std::unique_ptr<SamplerChain> chain;
  REQUIRE(SamplerChain::Create({temp, top_k, Spec(K::kDist)}, SamplerContext{4, nullptr}, 3, &chain)
              .ok());
  const std::vector<float> l = {1.0f, 0.5f, 2.0f, 3.0f};
  std::vector<TraceStage> trace;
  const int32_t id = chain->SampleWithTrace(l.data(), &trace);
  REQUIRE(trace.size() == 3);
  CHECK(trace[0].sampler == "temperature");
  REQUIRE(trace[0].survivors.size() == 4);
  const int32_t ids0[] = {3, 2, 0, 1};
  const double p0[] = {0.8618, 0.1166, 0.0158, 0.0058};
  for (int i = 0; i < 4; ++i) {
    CHECK(trace[0].survivors[i].id == ids0[i]);
    CHECK(trace[0].survivors[i].p == Approx(p0[i]).margin(1e-4));
  }
  CHECK(trace[1].sampler == "top-k");
  REQUIRE(trace[1].survivors.size() == 2);
  CHECK(trace[1].survivors[0].id == 3);
  CHECK(trace[1].survivors[0].p == Approx(0.8808).margin(1e-4));  // e^2 / (e^2 + 1)
  CHECK(trace[1].survivors[1].p == Approx(0.1192).margin(1e-4));
  CHECK(trace[2].sampler == "dist");
  CHECK(trace[2].survivors.size() == 2);
  CHECK((id == 3 || id == 2));
  // Tracing does not change what is drawn.
  auto again = chain->Clone();
  again->Reset();
  chain->Reset();
  for (int i = 0; i < 50; ++i) {
    CHECK(chain->SampleWithTrace(l.data(), &trace) == again->Sample(l.data()));
  }
}

TEST_CASE("chain: Accept reaches the samplers, Clone copies state, Reset reseeds", "[sampling]") {
  SamplingParams p;
  p.temperature = 0.0f;
  p.repeat_penalty = 1.3f;
  auto chain = ChainOf(p, 2);
  const std::vector<float> l = {2.0f, 1.9f};
  CHECK(chain->Sample(l.data()) == 0);
  REQUIRE(chain->Accept(0).ok());  // 2.0 / 1.3 = 1.54 < 1.9
  auto clone = chain->Clone();
  CHECK(chain->Sample(l.data()) == 1);
  CHECK(clone->Sample(l.data()) == 1);
  chain->Reset();
  CHECK(chain->Sample(l.data()) == 0);
  CHECK(clone->Sample(l.data()) == 1);

  SamplingParams r;
  r.seed = 99;
  auto a = ChainOf(r, 64);
  std::vector<float> flat(64, 0.0f);
  std::vector<int32_t> first;
  for (int i = 0; i < 20; ++i) first.push_back(a->Sample(flat.data()));
  auto fork = a->Clone();  // same RNG state: draws what a draws
  for (int i = 0; i < 20; ++i) CHECK(fork->Sample(flat.data()) == a->Sample(flat.data()));
  a->Reset();
  for (int i = 0; i < 20; ++i) CHECK(a->Sample(flat.data()) == first[static_cast<size_t>(i)]);
}

TEST_CASE("chain: at 151936 tokens, top-k 40 + top-p + min-p + dist draws from the top 40",
          "[sampling]") {
  const int n = 151936;
  std::vector<float> l(n);
  Rng rng(2024);
  for (float& x : l) {  // Box-Muller normal logits, scale 2
    const double u1 = 1.0 - rng.NextDouble(), u2 = rng.NextDouble();
    x = static_cast<float>(2.0 * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307 * u2));
  }
  std::vector<float> sorted = l;
  std::nth_element(sorted.begin(), sorted.begin() + 39, sorted.end(), std::greater<float>());
  const float fortieth = sorted[39];

  SamplingParams p;  // temperature 0.8, top-k 40, top-p 0.95, min-p 0.05
  p.seed = 5;
  p.min_p = 0.01f;
  auto chain = ChainOf(p, n);
  for (int i = 0; i < 200; ++i) {
    const int32_t id = chain->Sample(l.data());
    REQUIRE(id >= 0);
    REQUIRE(l[static_cast<size_t>(id)] >= fortieth);
    REQUIRE(chain->last_candidates().size() <= 40);
  }
}

TEST_CASE("chain: the fast paths draw what the samplers one by one draw", "[sampling]") {
  // Sample runs a chain that starts with sparse edits (logit bias,
  // penalties) and then greedy, or temperature and top-k, or temperature and
  // top-p, or temperature and min-p, through its fast paths (SamplerChain,
  // Candidates::ResetTopK, ResetTopP, ResetMinP); SampleWithTrace runs every
  // sampler in turn. Two chains with
  // one seed must draw the same tokens from the same candidates.
  const int n = 49152;
  Rng rng(99);
  std::vector<std::vector<float>> pool(8, std::vector<float>(n));
  for (auto& l : pool) {
    for (float& x : l) x = static_cast<float>(static_cast<int>(rng.Next() % 4001) - 2000) * 4e-3f;
    l[static_cast<size_t>(rng.Next() % n)] = NAN;
  }
  // Where top-p's histogram declines (ResetTopP too): an infinite logit, and
  // all logits equal.
  pool[3][17] = INFINITY;
  std::fill(pool[5].begin(), pool[5].end(), 0.25f);
  // Peaked, as a trained model's: top-p's histogram starts with the tokens
  // near the maximum (ResetTopP), and finds p's mass there. And one token
  // far above a flat rest: not there, so the whole histogram.
  for (int i = 0; i < 10; ++i) pool[6][static_cast<size_t>(rng.Next() % n)] = 20.0f - i * 0.3f;
  std::fill(pool[7].begin(), pool[7].end(), 0.0f);
  pool[7][4321] = 9.5f;
  struct Case {
    float temperature;
    int32_t top_k;
    float repeat, presence;
    bool bias;
    float top_p = 0.95f, min_p = 0.05f;
  };
  const Case cases[] = {{0.7f, 40, 1.0f, 0.0f, false},
                        {1.0f, 40, 1.0f, 0.0f, false},
                        {1.3f, 1, 1.0f, 0.0f, false},
                        {0.8f, 3000, 1.0f, 0.0f, false},
                        {0.8f, 40, 1.1f, 0.0f, false},
                        {0.8f, 40, 1.3f, 0.5f, true},
                        {0.0f, 40, 1.0f, 0.0f, false},
                        {0.0f, 40, 1.5f, 0.0f, false},
                        {0.0f, 40, 1.2f, 0.3f, true},
                        // top-p without top-k: with and without min-p after it, bias and penalties
                        {0.8f, 0, 1.0f, 0.0f, false},
                        {1.0f, 0, 1.0f, 0.0f, false, 0.5f, 0.0f},
                        {1.3f, 0, 1.1f, 0.0f, false, 0.9f, 0.0f},
                        {0.7f, 0, 1.3f, 0.5f, true, 0.999f, 0.05f},
                        {2.5f, 0, 1.0f, 0.0f, false, 0.2f, 0.0f},
                        // min-p without top-k or top-p
                        {0.8f, 0, 1.0f, 0.0f, false, 1.0f, 0.05f},
                        {1.0f, 0, 1.2f, 0.0f, true, 1.0f, 0.5f},
                        {1.7f, 0, 1.0f, 0.0f, false, 1.0f, 0.999f}};
  for (const Case& c : cases) {
    SamplingParams p;  // then top-p, min-p, dist (temperature 0: greedy)
    p.seed = 3;
    p.temperature = c.temperature;
    p.top_k = c.top_k;
    p.top_p = c.top_p;
    p.min_p = c.min_p;
    p.repeat_penalty = c.repeat;
    p.presence_penalty = c.presence;
    if (c.bias) p.logit_bias = {{7, 30.0f}, {11, -INFINITY}, {12, 0.5f}, {7, -2.0f}};
    auto fast = ChainOf(p, n), stepwise = ChainOf(p, n);
    const std::vector<int32_t> prompt = {7, 9, 9, 400};
    fast->AcceptPrompt(prompt);
    stepwise->AcceptPrompt(prompt);
    std::vector<TraceStage> trace;
    for (int i = 0; i < 24; ++i) {
      const float* l = pool[static_cast<size_t>(i) % pool.size()].data();
      const int32_t a = fast->Sample(l), b = stepwise->SampleWithTrace(l, &trace);
      INFO("temperature " << c.temperature << " top-k " << c.top_k << " top-p " << c.top_p
                          << " repeat " << c.repeat << " token " << i);
      REQUIRE(a == b);
      const Candidates &ca = fast->last_candidates(), &cb = stepwise->last_candidates();
      bool same = ca.size() == cb.size() && ca.selected == cb.selected;
      for (size_t j = 0; same && j < ca.size(); ++j) {
        same = ca.items()[j].id == cb.items()[j].id && ca.items()[j].p == cb.items()[j].p &&
               ca.items()[j].logit == cb.items()[j].logit;
      }
      REQUIRE(same);
      REQUIRE(fast->Accept(a).ok());
      REQUIRE(stepwise->Accept(b).ok());
    }
  }
}

TEST_CASE("chain: min-p's fast path keeps the logits exactly at its threshold", "[sampling]") {
  // Temperature 1 (no temperature sampler), min-p 0.3 alone: the threshold
  // is max + log(0.3) in float, and three logits sit exactly on it.
  const int n = 4096;
  const float thr = 1.0f + std::log(0.3f);
  std::vector<float> l(n, -5.0f);
  l[100] = 1.0f;
  l[7] = l[2000] = l[4095] = thr;
  l[8] = std::nextafter(thr, -INFINITY);  // just below: dropped
  SamplingParams p;
  p.temperature = 1.0f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.3f;
  auto fast = ChainOf(p, n), stepwise = ChainOf(p, n);
  std::vector<TraceStage> trace;
  REQUIRE(fast->Sample(l.data()) == stepwise->SampleWithTrace(l.data(), &trace));
  const Candidates& c = fast->last_candidates();
  REQUIRE(c.size() == 4);
  const int32_t want[] = {7, 100, 2000, 4095};
  for (size_t i = 0; i < 4; ++i) {
    CHECK(c.items()[i].id == want[i]);
    CHECK(c.items()[i].id == stepwise->last_candidates().items()[i].id);
    CHECK(c.items()[i].p == stepwise->last_candidates().items()[i].p);
  }
}

TEST_CASE("chain: greedy alone picks the argmax without the candidate array, as the sampler would",
          "[sampling]") {
  // NaN counts as -inf, ties go to the lowest id: the same pick as the chain's
  // greedy sampler over candidates, and last_candidates() the same array.
  std::vector<float> logits = {0.5f, NAN, 3.0f, -1.0f, 3.0f, NAN, 2.0f};
  const int32_t n = static_cast<int32_t>(logits.size());
  SamplerContext ctx;
  ctx.n_vocab = n;
  SamplerSpec greedy;
  greedy.kind = SamplerKind::kGreedy;
  std::unique_ptr<SamplerChain> chain;
  REQUIRE(SamplerChain::Create({greedy}, ctx, 1, &chain).ok());
  CHECK(chain->Sample(logits.data()) == 2);
  const Candidates& c = chain->last_candidates();
  REQUIRE(c.size() == logits.size());
  CHECK(c.selected == 2);
  for (int32_t i = 0; i < n; ++i) {
    CHECK(c.items()[i].id == i);
    CHECK(c.items()[i].logit == (std::isnan(logits[i]) ? -INFINITY : logits[i]));
  }
  std::vector<TraceStage> trace;  // the general path: the sampler over candidates
  CHECK(chain->SampleWithTrace(logits.data(), &trace) == 2);
  std::vector<float> all_nan(4, NAN);
  ctx.n_vocab = 4;
  std::unique_ptr<SamplerChain> small;
  REQUIRE(SamplerChain::Create({greedy}, ctx, 1, &small).ok());
  CHECK(small->Sample(all_nan.data()) == 0);
  CHECK(small->SampleWithTrace(all_nan.data(), &trace) == 0);
  // A copy samples alike.
  CHECK(chain->Clone()->Sample(logits.data()) == 2);
}
