// The grammar stage in a sampler chain (sampling/grammar.cpp): where
// SpecsFromParams puts it, what it leaves the other samplers, refusals, -1
// when nothing is admitted, and starting over for a new prompt.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "sampling/chain.h"
#include "sampling/grammar/matcher.h"

using namespace ember;

namespace {

// Tokens "a".."e", "ac", "bc", "</s>" (end of generation).
const std::vector<std::string>& Texts() {
  static const std::vector<std::string> t = {"a", "b", "c", "d", "e", "ac", "bc", "</s>"};
  return t;
}
constexpr int32_t kEos = 7;

std::shared_ptr<const grammar::MaskTables> Tables(const std::string& gbnf) {
  const auto& t = Texts();
  auto trie = grammar::TokenTrie::Build(
      static_cast<int32_t>(t.size()),
      [&](int32_t i) { return std::string_view(t[static_cast<size_t>(i)]); },
      [](int32_t i) { return i == kEos; });
  std::shared_ptr<const grammar::MaskTables> tables;
  REQUIRE(grammar::BuildGrammarTables(gbnf, "root", trie, &tables).ok());
  return tables;
}

std::vector<std::string> Kinds(const SamplingParams& p) {
  std::vector<SamplerSpec> specs;
  const Status s = SpecsFromParams(p, &specs);
  REQUIRE(s.message() == "");
  std::vector<std::string> names;
  for (const SamplerSpec& x : specs) names.push_back(SamplerKindName(x.kind));
  return names;
}

std::unique_ptr<SamplerChain> Chain(const std::string& gbnf, SamplingParams p) {
  p.grammar = gbnf;
  std::vector<SamplerSpec> specs;
  REQUIRE(SpecsFromParams(p, &specs).ok());
  for (SamplerSpec& s : specs) {
    if (s.kind == SamplerKind::kGrammar) s.grammar_tables = Tables(s.grammar);
  }
  std::unique_ptr<SamplerChain> chain;
  const Status st = SamplerChain::Create(
      specs, SamplerContext{static_cast<int32_t>(Texts().size()), nullptr}, p.seed, &chain);
  REQUIRE(st.message() == "");
  return chain;
}

}  // namespace

TEST_CASE("grammar stage: its place in the chain", "[grammar]") {
  SamplingParams p;
  p.grammar = "root ::= \"a\"";
  CHECK(Kinds(p) ==
        std::vector<std::string>{"grammar", "temperature", "top-k", "top-p", "min-p", "dist"});
  p.repeat_penalty = 1.1f;
  CHECK(Kinds(p) == std::vector<std::string>{"penalties", "grammar", "temperature", "top-k",
                                             "top-p", "min-p", "dist"});
  // Kept by greedy and mirostat chains, which drop the truncations.
  p.temperature = 0.0f;
  CHECK(Kinds(p) == std::vector<std::string>{"penalties", "grammar", "greedy"});
  p.temperature = 0.8f;
  p.mirostat = 2;
  CHECK(Kinds(p) == std::vector<std::string>{"penalties", "grammar", "temperature", "mirostat-v2"});
  p.mirostat = 0;
  p.repeat_penalty = 1.0f;
  // A --samplers list without "grammar": before the first truncation, never dropped.
  p.order = {SamplerKind::kTopK, SamplerKind::kTemperature};
  CHECK(Kinds(p) == std::vector<std::string>{"grammar", "top-k", "temperature", "dist"});
  // Listed: where the list says (after truncation it may leave nothing).
  p.order = {SamplerKind::kTopK, SamplerKind::kGrammar, SamplerKind::kTemperature};
  CHECK(Kinds(p) == std::vector<std::string>{"top-k", "grammar", "temperature", "dist"});
  // No grammar: no stage, even when listed.
  p.grammar.clear();
  CHECK(Kinds(p) == std::vector<std::string>{"top-k", "temperature", "dist"});
}

TEST_CASE("grammar stage: the chain draws only admitted tokens", "[grammar]") {
  SamplingParams p;
  p.temperature = 1.0f;
  p.top_k = 0;
  p.top_p = 0.8f;
  p.min_p = 0.0f;
  auto chain = Chain("root ::= (\"a\" | \"b\") \"c\"", p);
  // The logits favour d, e and </s>; the grammar allows a, b, ac and bc first.
  const std::vector<float> logits = {1.0f, 1.0f, 0.0f, 9.0f, 9.0f, 0.5f, 0.5f, 9.0f};
  std::vector<TraceStage> trace;
  for (int i = 0; i < 50; ++i) {
    const int32_t t = chain->SampleWithTrace(logits.data(), &trace);
    CHECK((t == 0 || t == 1 || t == 5 || t == 6));
  }
  REQUIRE(trace.size() == 3);  // grammar, top-p, dist (temperature 1 does nothing)
  CHECK(trace[0].sampler == "grammar");
  CHECK(trace[0].survivors.size() == 4);  // a, b, ac, bc
  // top-p works on the admitted tokens' distribution (a and b 0.311 each, ac
  // and bc 0.189): 0.8 keeps a, b and one of ac, bc.
  CHECK(trace[1].sampler == "top-p");
  CHECK(trace[1].survivors.size() == 3);
  // Refused tokens change nothing; accepted ones advance the grammar.
  CHECK(chain->Accept(3).code() == Code::kInvalidArgument);
  REQUIRE(chain->Accept(1).ok());  // "b": then only "c"
  CHECK(chain->Sample(logits.data()) == 2);
  REQUIRE(chain->Accept(2).ok());
  CHECK(chain->Sample(logits.data()) == kEos);
  REQUIRE(chain->Accept(kEos).ok());
  // Finished: nothing is admitted.
  CHECK(chain->Sample(logits.data()) == -1);
  CHECK(chain->last_candidates().size() == 0);
  // A new generation starts over; a clone is independent.
  chain->AcceptPrompt({3, 4});
  REQUIRE(chain->Accept(0).ok());
  auto clone = chain->Clone();
  REQUIRE(clone->Accept(2).ok());
  CHECK(chain->Sample(logits.data()) == 2);
  CHECK(clone->Sample(logits.data()) == kEos);
}

TEST_CASE("grammar stage: after a truncation (candidates sorted), and when it leaves nothing",
          "[grammar]") {
  SamplingParams p;
  p.temperature = 1.0f;  // (a draw, so that top-k stays)
  p.top_k = 3;
  p.order = {SamplerKind::kTopK, SamplerKind::kGrammar};
  auto chain = Chain("root ::= \"b\" | \"c\" | \"ac\"", p);
  // top-k keeps d, e, </s> (sorted by logit) and then c (logit 8): c, d, e.
  const std::vector<float> logits = {1.0f, 2.0f, 8.0f, 9.0f, 9.5f, 0.5f, 0.5f, 0.0f};
  std::vector<TraceStage> trace;
  CHECK(chain->SampleWithTrace(logits.data(), &trace) == 2);
  REQUIRE(trace.size() == 3);
  CHECK(trace[1].sampler == "grammar");
  CHECK(trace[1].survivors.size() == 1);
  // The top three are all outside the grammar: nothing is left, -1.
  const std::vector<float> worse = {1.0f, 2.0f, 3.0f, 9.0f, 9.5f, 0.5f, 0.5f, 9.0f};
  CHECK(chain->Sample(worse.data()) == -1);
}
