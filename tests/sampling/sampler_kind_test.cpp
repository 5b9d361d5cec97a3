#include <catch2/catch.hpp>
#include <string>

#include "sampling/grammar/matcher.h"
#include "sampling/sampler.h"

using namespace ember;

namespace {

// The error MakeSampler gives for `spec` over a 100-token vocabulary ("" if none).
std::string Error(const SamplerSpec& spec, int32_t n_vocab = 100) {
  std::unique_ptr<Sampler> s;
  const Status st = MakeSampler(spec, SamplerContext{n_vocab, nullptr}, &s);
  if (st.ok()) {
    REQUIRE(s != nullptr);
    CHECK(s->kind() == spec.kind);
    return "";
  }
  CHECK(st.code() == Code::kInvalidArgument);
  return st.message();
}

SamplerSpec Spec(SamplerKind kind) {
  SamplerSpec s;
  s.kind = kind;
  return s;
}

// A grammar compiled for a vocabulary of n tokens "t0", "t1", ...
std::shared_ptr<const grammar::MaskTables> GrammarTables(int32_t n) {
  std::vector<std::string> texts;
  for (int32_t i = 0; i < n; ++i) texts.push_back("t" + std::to_string(i));
  auto trie = grammar::TokenTrie::Build(
      n, [&](int32_t t) { return std::string_view(texts[static_cast<size_t>(t)]); }, nullptr);
  std::shared_ptr<const grammar::MaskTables> tables;
  REQUIRE(grammar::BuildGrammarTables("root ::= \"t\" [0-9]+", "root", trie, &tables).ok());
  return tables;
}

}  // namespace

TEST_CASE("sampler kinds: names round-trip, llama.cpp aliases parse", "[sampling]") {
  for (int k = 0; k <= static_cast<int>(SamplerKind::kMirostatV2); ++k) {
    const SamplerKind kind = static_cast<SamplerKind>(k);
    SamplerKind parsed = SamplerKind::kGreedy;
    REQUIRE(ParseSamplerKind(SamplerKindName(kind), &parsed).ok());
    CHECK(parsed == kind);
  }
  const std::pair<const char*, SamplerKind> aliases[] = {
      {"temp", SamplerKind::kTemperature},
      {"temperature", SamplerKind::kTemperature},
      {"top_k", SamplerKind::kTopK},
      {"top_p", SamplerKind::kTopP},
      {"nucleus", SamplerKind::kTopP},
      {"min_p", SamplerKind::kMinP},
      {"typ_p", SamplerKind::kTypicalP},
      {"typical_p", SamplerKind::kTypicalP},
      {"typical", SamplerKind::kTypicalP},
      {"top_n_sigma", SamplerKind::kTopNSigma},
      {"xtc", SamplerKind::kXtc},
      {"dry", SamplerKind::kDry},
      {"penalties", SamplerKind::kPenalties},
      {"logit_bias", SamplerKind::kLogitBias},
      {"Top-K", SamplerKind::kTopK},
      {"mirostat_v2", SamplerKind::kMirostatV2},
  };
  for (const auto& [name, kind] : aliases) {
    SamplerKind parsed = SamplerKind::kGreedy;
    INFO(name);
    REQUIRE(ParseSamplerKind(name, &parsed).ok());
    CHECK(parsed == kind);
  }
  SamplerKind parsed;
  const Status st = ParseSamplerKind("top-q", &parsed);
  CHECK(st.code() == Code::kInvalidArgument);
  CHECK(st.message().find("unknown sampler 'top-q'") != std::string::npos);
  CHECK(st.message().find("top-p") != std::string::npos);   // lists the known names
  CHECK_FALSE(ParseSamplerKind("mirostat", &parsed).ok());  // v1 or v2? neither
}

TEST_CASE("sampler kinds: exactly greedy, dist and mirostat-v2 are terminal", "[sampling]") {
  CHECK(IsTerminal(SamplerKind::kGreedy));
  CHECK(IsTerminal(SamplerKind::kDist));
  CHECK(IsTerminal(SamplerKind::kMirostatV2));
  CHECK_FALSE(IsTerminal(SamplerKind::kTopK));
  CHECK_FALSE(IsTerminal(SamplerKind::kTemperature));
  CHECK_FALSE(IsTerminal(SamplerKind::kXtc));
}

TEST_CASE("sampler kinds: every kind builds with its default parameters", "[sampling]") {
  for (int k = 0; k <= static_cast<int>(SamplerKind::kMirostatV2); ++k) {
    SamplerSpec s = Spec(static_cast<SamplerKind>(k));
    s.dry_multiplier = 0.8f;
    if (s.kind == SamplerKind::kGrammar) s.grammar_tables = GrammarTables(100);
    INFO(SamplerKindName(s.kind));
    CHECK(Error(s).empty());
  }
}

TEST_CASE("sampler kinds: the grammar stage needs tables for the chain's vocabulary",
          "[sampling]") {
  SamplerSpec s = Spec(SamplerKind::kGrammar);
  s.grammar = "root ::= \"t1\"";
  CHECK(Error(s) ==
        "the grammar stage needs the grammar compiled for the vocabulary "
        "(SamplerSpec::grammar_tables, from BuildGrammarTables)");
  s.grammar_tables = GrammarTables(50);
  CHECK(Error(s) == "the grammar was compiled for 50 tokens, the chain has 100");
  CHECK(Error(s, 50).empty());
}

TEST_CASE("sampler kinds: bad parameters are errors that name the parameter", "[sampling]") {
  SamplerSpec s = Spec(SamplerKind::kTemperature);
  s.temperature = -0.5f;
  CHECK(Error(s) == "temperature must be >= 0 (got -0.5)");
  s.temperature = NAN;
  CHECK(Error(s) == "temperature must be >= 0 (got nan)");
  s.temperature = 0.0f;
  CHECK(Error(s).empty());

  s = Spec(SamplerKind::kTopP);
  s.top_p = 1.5f;
  CHECK(Error(s) == "top-p must be in (0, 1] (got 1.5)");
  s.top_p = 0.0f;
  CHECK(Error(s) == "top-p must be in (0, 1] (got 0)");
  s.top_p = 1.0f;
  CHECK(Error(s).empty());

  s = Spec(SamplerKind::kTopK);
  s.top_k = -1;
  CHECK(Error(s) == "top-k must be >= 0 (got -1)");

  s = Spec(SamplerKind::kMinP);
  s.min_p = 1.25f;
  CHECK(Error(s) == "min-p must be in [0, 1] (got 1.25)");

  s = Spec(SamplerKind::kTypicalP);
  s.typical_p = 0.0f;
  CHECK(Error(s) == "typical must be in (0, 1] (got 0)");

  s = Spec(SamplerKind::kTopNSigma);
  s.top_n_sigma = -1.0f;
  CHECK(Error(s) == "top-nsigma must be > 0 (got -1)");

  s = Spec(SamplerKind::kXtc);
  s.xtc_probability = 2.0f;
  CHECK(Error(s) == "xtc-probability must be in [0, 1] (got 2)");
  s.xtc_probability = 0.5f;
  s.xtc_threshold = -0.1f;
  CHECK(Error(s) == "xtc-threshold must be in [0, 1] (got -0.1)");

  s = Spec(SamplerKind::kPenalties);
  s.repeat_penalty = 0.0f;
  CHECK(Error(s) == "repeat-penalty must be > 0 (got 0)");
  s.repeat_penalty = 1.1f;
  s.penalty_last_n = -2;
  CHECK(Error(s) == "repeat-last-n must be >= -1 (got -2)");

  s = Spec(SamplerKind::kDry);
  s.dry_multiplier = -1.0f;
  CHECK(Error(s) == "dry-multiplier must be >= 0 (got -1)");
  s.dry_multiplier = 0.8f;
  s.dry_base = 1.0f;
  CHECK(Error(s) == "dry-base must be > 1 (got 1)");
  s.dry_base = 1.75f;
  s.dry_allowed_length = -1;
  CHECK(Error(s) == "dry-allowed-length must be >= 0 (got -1)");
  s.dry_allowed_length = 2;
  s.dry_sequence_breakers = {"\n", ""};
  CHECK(Error(s).find("dry-sequence-breakers") == 0);

  s = Spec(SamplerKind::kMirostatV2);
  s.mirostat_tau = 0.0f;
  CHECK(Error(s) == "mirostat-ent (tau) must be > 0 (got 0)");
  s.mirostat_tau = 5.0f;
  s.mirostat_eta = -0.1f;
  CHECK(Error(s) == "mirostat-lr (eta) must be > 0 (got -0.1)");

  s = Spec(SamplerKind::kLogitBias);
  s.logit_bias = {{3, 1.0f}, {100, -1.0f}};
  CHECK(Error(s) == "logit-bias token id 100 is out of range [0, 100)");
  s.logit_bias = {{-1, 1.0f}};
  CHECK(Error(s) == "logit-bias token id -1 is out of range [0, 100)");
  s.logit_bias = {{99, -INFINITY}};
  CHECK(Error(s).empty());

  CHECK(Error(Spec(static_cast<SamplerKind>(42))) == "unknown sampler kind 42");
  CHECK(Error(Spec(SamplerKind::kDist), 0).find("n_vocab must be > 0 (got 0)") !=
        std::string::npos);
}
