// Constrained generation on the tiny random-weight model (real GPT-2
// vocabulary): whatever the model wants, the text follows the grammar; JSON
// schemas give documents that parse and validate; the finish reason when the
// grammar admits nothing; beam search under a grammar; masks on the Qwen2
// vocabulary (150k tokens) equal trying every token.
#include <catch2/catch.hpp>
#include <filesystem>
#include <random>
#include <string>

#include "runtime/constrain/json_schema.h"
#include "runtime/decoding/generate.h"
#include "runtime/gguf/gguf.h"
#include "runtime/model/model.h"
#include "sampling/grammar/matcher.h"
#include "support/loaders.h"
#include "support/schema_check.h"
#include "support/test_paths.h"

using namespace ember;
using Json = nlohmann::ordered_json;

namespace {

std::unique_ptr<Session> NewSession(const Model& m, int64_t n_ctx = 1024) {
  SessionParams p;
  p.n_ctx = n_ctx;
  p.n_threads = 1;  // (the model is tiny: one thread, no waiting at barriers)
  p.n_threads_batch = 1;
  return test::CreateSessionOrFail(m, p);
}

GenerateResult Generate(const Model& m, const std::string& gbnf, float temperature, uint64_t seed,
                        int64_t n_predict, int32_t beams = 0, bool ignore_eos = false) {
  auto s = NewSession(m);
  GenerateParams gp;
  gp.n_predict = n_predict;
  gp.sampling.temperature = temperature;
  gp.sampling.seed = seed;
  gp.sampling.grammar = gbnf;
  gp.beams = beams;
  gp.ignore_eos = ignore_eos;
  gp.logprobs = false;
  GenerateResult r;
  const Status st = Generate(*s, {464, 2068, 7586}, gp, nullptr, nullptr, &r);
  INFO(st.message());
  REQUIRE(st.ok());
  return r;
}

// Whether `tokens` (the model's) keep the grammar alive; *complete: whether it may end there.
bool Follows(const Model& m, const std::string& gbnf, const std::vector<int32_t>& tokens,
             bool* complete) {
  std::shared_ptr<const grammar::MaskTables> tables;
  REQUIRE(m.grammar_cache().Tables(gbnf, "root", &tables).ok());
  grammar::GrammarMatcher matcher(tables);
  for (const int32_t t : tokens) {
    if (!matcher.Accept(t)) return false;
  }
  *complete = matcher.CanEnd();
  return true;
}

std::string SharedGrammar(const std::string& name) {
  const std::string path = test::SharedDir() + "/grammars/" + name;
  return test::FileExists(path) ? test::ReadFile(path) : "";
}

}  // namespace

TEST_CASE("grammar generation: every grammar of ../shared/grammars constrains", "[grammar]") {
  auto m = test::LoadModelOrFail();
  int n = 0;
  for (const char* name : {"json.gbnf", "json_arr.gbnf", "arithmetic.gbnf", "c.gbnf", "chess.gbnf",
                           "english.gbnf", "japanese.gbnf", "list.gbnf"}) {
    const std::string gbnf = SharedGrammar(name);
    if (gbnf.empty()) continue;
    ++n;
    for (uint64_t seed = 0; seed < 3; ++seed) {
      INFO(name << " seed " << seed);
      const GenerateResult r = Generate(*m, gbnf, seed == 0 ? 0.0f : 1.0f, seed, 40);
      CHECK(r.tokens.size() > 0);
      bool complete = false;
      CHECK(Follows(*m, gbnf, r.tokens, &complete));
      if (r.finish == FinishReason::kEos) CHECK(complete);
      CHECK((r.finish == FinishReason::kEos || r.finish == FinishReason::kLength));
    }
  }
  if (n == 0) EMBER_SKIP("no ../shared/grammars");
}

TEST_CASE("grammar generation: JSON schema outputs parse and validate", "[grammar]") {
  auto m = test::LoadModelOrFail();
  // Schemas whose documents are bounded, so that generation must end.
  const std::vector<std::string> schemas = {
      R"({"type": "object", "properties": {"name": {"type": "string", "maxLength": 8},
          "age": {"type": "integer", "minimum": 0, "maximum": 120},
          "color": {"enum": ["red", "green", "blue"]}},
          "required": ["name", "age"], "additionalProperties": false})",
      R"({"type": "array", "items": {"type": "number", "minimum": -5, "maximum": 5},
          "minItems": 1, "maxItems": 4})",
      R"({"type": "object", "properties": {"id": {"type": "string", "format": "uuid"},
          "when": {"type": "string", "format": "date-time"},
          "code": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3}$"},
          "ok": {"type": "boolean"}}, "required": ["id", "when", "code", "ok"],
          "additionalProperties": false})",
      R"({"$defs": {"pt": {"type": "object", "properties": {"x": {"type": "integer",
          "minimum": 0, "maximum": 9}, "y": {"type": "integer", "minimum": 0, "maximum": 9}},
          "required": ["x", "y"], "additionalProperties": false}},
          "type": "object", "properties": {"from": {"$ref": "#/$defs/pt"},
          "to": {"$ref": "#/$defs/pt"}, "label": {"anyOf": [{"type": "null"},
          {"type": "string", "maxLength": 3}]}}, "required": ["from", "to"],
          "additionalProperties": false})",
  };
  for (const std::string& text : schemas) {
    const Json schema = Json::parse(text);
    std::string gbnf;
    REQUIRE(JsonSchemaToGbnf(text, &gbnf).ok());
    for (uint64_t seed = 0; seed < 4; ++seed) {
      INFO(text << "\nseed " << seed);
      const GenerateResult r = Generate(*m, gbnf, seed == 0 ? 0.0f : 1.0f, seed, 600);
      INFO("output: " << r.text);
      REQUIRE(r.finish == FinishReason::kEos);
      Json doc;
      REQUIRE_NOTHROW(doc = Json::parse(r.text));
      CHECK(test::SchemaViolation(doc, schema, schema) == "");
    }
  }
}

TEST_CASE("grammar generation: when the grammar admits no token, finish reason grammar",
          "[grammar]") {
  auto m = test::LoadModelOrFail();
  // Nothing at all (an empty class).
  GenerateResult r = Generate(*m, "root ::= [^\\x00-\\U0010FFFF]", 0.0f, 0, 20);
  CHECK(r.finish == FinishReason::kGrammar);
  CHECK(r.tokens.empty());
  // Complete, and end-of-generation tokens are ignored: the next step has nothing.
  r = Generate(*m, "root ::= \"a\"", 0.0f, 0, 20, 0, /*ignore_eos=*/true);
  CHECK(r.finish == FinishReason::kGrammar);
  REQUIRE(r.tokens.size() == 2);  // "a", then an end-of-generation token taken as text
  CHECK(r.text == "a");
  // Without --ignore-eos the same grammar ends with eos.
  r = Generate(*m, "root ::= \"a\"", 0.0f, 0, 20);
  CHECK(r.finish == FinishReason::kEos);
  CHECK(r.text == "a");
}

TEST_CASE("grammar generation: beam search follows the grammar", "[grammar]") {
  auto m = test::LoadModelOrFail();
  const std::string gbnf =
      "root ::= \"[\" item (\", \" item){0,3} \"]\"\nitem ::= [a-z]{1,6} | [0-9]{1,3}";
  // One beam is greedy under the grammar.
  const GenerateResult greedy = Generate(*m, gbnf, 0.0f, 0, 60);
  const GenerateResult one = Generate(*m, gbnf, 0.0f, 0, 60, /*beams=*/1);
  CHECK(one.tokens == greedy.tokens);
  for (int32_t beams : {2, 4}) {
    const GenerateResult r = Generate(*m, gbnf, 0.0f, 0, 60, beams);
    INFO("beams " << beams << ": " << r.text);
    bool complete = false;
    CHECK(Follows(*m, gbnf, r.tokens, &complete));
    CHECK(r.finish == FinishReason::kEos);
    CHECK(complete);
  }
}

TEST_CASE("grammar generation: a chain refuses tokens the grammar does not allow", "[grammar]") {
  auto m = test::LoadModelOrFail();
  SamplingParams p;
  p.temperature = 0.0f;
  p.grammar = "root ::= \"Hello\"";
  std::vector<SamplerSpec> specs;
  REQUIRE(SpecsFromParams(p, &specs).ok());
  REQUIRE(m->grammar_cache().Attach(&specs).ok());
  std::unique_ptr<SamplerChain> chain;
  const auto n_vocab = static_cast<int32_t>(m->config().n_vocab);
  REQUIRE(SamplerChain::Create(specs, SamplerContext{n_vocab, nullptr}, 0, &chain).ok());
  const std::vector<int32_t> hello = m->tokenizer().Encode("Hello", false, false);
  const std::vector<int32_t> world = m->tokenizer().Encode("World", false, false);
  const Status refused = chain->Accept(world[0]);
  CHECK(refused.code() == Code::kInvalidArgument);
  CHECK(refused.message().find("not allowed by the grammar") != std::string::npos);
  for (const int32_t t : hello) CHECK(chain->Accept(t).ok());
  // The chain picks only what the grammar allows, whatever the logits say.
  std::vector<float> logits(static_cast<size_t>(n_vocab), 0.0f);
  logits[static_cast<size_t>(world[0])] = 100.0f;
  chain->AcceptPrompt({1, 2, 3});  // a new generation: the grammar starts over
  CHECK(chain->Sample(logits.data()) != world[0]);
}

TEST_CASE("grammar masks on a 150k vocabulary equal trying every token", "[grammar]") {
  const std::string path = test::SharedDir() + "/vocab/ggml-vocab-qwen2.gguf";
  if (!test::FileExists(path)) EMBER_SKIP("no ../shared/vocab/ggml-vocab-qwen2.gguf");
  std::unique_ptr<Model> m;
  REQUIRE(Model::Load(path, nullptr, &m, /*vocab_only=*/true).ok());
  const std::string json = SharedGrammar("json.gbnf");
  if (json.empty()) EMBER_SKIP("no ../shared/grammars");
  std::string schema;
  REQUIRE(JsonSchemaToGbnf(R"({"type": "object", "properties": {"text": {"type": "string",
      "maxLength": 40}, "n": {"type": "integer"}}, "required": ["text"]})",
                           &schema)
              .ok());
  std::mt19937 rng(3);
  for (const std::string& gbnf : {json, schema}) {
    std::shared_ptr<const grammar::MaskTables> tables;
    REQUIRE(m->grammar_cache().Tables(gbnf, "root", &tables).ok());
    grammar::GrammarMatcher matcher(tables);
    // A random walk through admitted tokens, comparing masks on the way.
    for (int step = 0; step < 12; ++step) {
      std::vector<uint64_t> fast, slow;
      matcher.FillMask(&fast);
      matcher.FillMaskBruteForce(&slow);
      REQUIRE(fast == slow);
      std::vector<int32_t> allowed;
      for (int32_t t = 0; t < tables->trie().n_vocab(); ++t) {
        if (((fast[static_cast<size_t>(t) >> 6] >> (t & 63)) & 1) && !tables->trie().is_eog(t)) {
          allowed.push_back(t);
        }
      }
      if (allowed.empty()) break;
      REQUIRE(matcher.Accept(allowed[rng() % allowed.size()]));
    }
  }
}
