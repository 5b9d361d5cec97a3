// The C API's grammar functions (include/ember.h, "Grammars"): chains with a
// grammar stage, refusals, the finish reason, JSON schemas, bad input.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "ember.h"
#include "support/loaders.h"

namespace {

struct SamplerDeleter {
  void operator()(ember_sampler* s) const { ember_sampler_free(s); }
};
using SamplerPtr = std::unique_ptr<ember_sampler, SamplerDeleter>;

std::vector<int32_t> Tokenize(const ember_model* m, const std::string& text) {
  std::vector<int32_t> ids(64);
  size_t n = 0;
  REQUIRE(ember_tokenize(m, text.data(), text.size(), false, false, ids.data(), ids.size(), &n) ==
          EMBER_OK);
  ids.resize(n);
  return ids;
}

}  // namespace

TEST_CASE("c_api grammar: a chain with a grammar stage", "[c_api][grammar]") {
  auto model = ember::test::LoadCModelOrFail();
  ember_model_info info;
  REQUIRE(ember_model_get_info(model.get(), &info) == EMBER_OK);
  const ember_sampler_spec specs[] = {ember_sampler_spec_default(EMBER_SAMPLER_TEMPERATURE),
                                      ember_sampler_spec_default(EMBER_SAMPLER_GREEDY)};
  ember_sampler* raw = nullptr;
  REQUIRE(ember_sampler_create_grammar(model.get(), specs, 2, "root ::= \"Hello\" \" world\"",
                                       nullptr, 1, &raw) == EMBER_OK);
  SamplerPtr s(raw);
  // The grammar decides, whatever the logits.
  std::vector<float> logits(static_cast<size_t>(info.n_vocab), 0.0f);
  const std::vector<int32_t> world = Tokenize(model.get(), " world");
  logits[static_cast<size_t>(world[0])] = 50.0f;
  int32_t token = -1;
  REQUIRE(ember_sampler_sample(s.get(), logits.data(), info.n_vocab, true, &token) == EMBER_OK);
  CHECK(token != world[0]);
  // The trace shows the grammar stage first (before temperature).
  REQUIRE(ember_sampler_trace_stages(s.get()) == 3);
  const char* name = nullptr;
  size_t n = 0;
  ember_sampler_trace(s.get(), 0, &name, nullptr, 0, &n);
  CHECK(std::string(name) == "grammar");
  // A token the grammar does not allow is refused, and nothing changes.
  CHECK(ember_sampler_accept(s.get(), world[0]) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(std::string(ember_last_error()).find("not allowed by the grammar") != std::string::npos);
  for (const int32_t t : Tokenize(model.get(), "Hello world")) {
    CHECK(ember_sampler_accept(s.get(), t) == EMBER_OK);
  }
  // Complete: only end-of-generation tokens are left.
  REQUIRE(ember_sampler_sample(s.get(), logits.data(), info.n_vocab, false, &token) == EMBER_OK);
  CHECK(token == info.eos_token);
  REQUIRE(ember_sampler_accept(s.get(), token) == EMBER_OK);
  // After the end, nothing: token -1.
  REQUIRE(ember_sampler_sample(s.get(), logits.data(), info.n_vocab, false, &token) == EMBER_OK);
  CHECK(token == -1);
  // Reset starts the grammar over.
  ember_sampler_reset(s.get());
  REQUIRE(ember_sampler_sample(s.get(), logits.data(), info.n_vocab, false, &token) == EMBER_OK);
  CHECK(token >= 0);
  CHECK(std::string(ember_finish_reason_str(EMBER_FINISH_GRAMMAR)) == "grammar");
}

TEST_CASE("c_api grammar: from params, and generation's finish reason", "[c_api][grammar]") {
  auto model = ember::test::LoadCModelOrFail();
  ember_sampling_params p = ember_sampling_default_params();
  p.temperature = 0.0f;
  ember_sampler* raw = nullptr;
  REQUIRE(ember_sampler_from_params_grammar(model.get(), &p, "root ::= \"ab\"", nullptr, &raw) ==
          EMBER_OK);
  SamplerPtr s(raw);
  ember_session_params sp = ember_session_default_params();
  sp.n_ctx = 64;
  sp.n_threads = 1;
  ember_session* session_raw = nullptr;
  REQUIRE(ember_session_create(model.get(), &sp, &session_raw) == EMBER_OK);
  ember::test::CSessionPtr session(session_raw);
  ember_generate_params gp = ember_generate_default_params();
  gp.sampler = s.get();
  gp.n_predict = 10;
  gp.ignore_eos = true;  // the end-of-generation token is then text; next, nothing is left
  const std::vector<int32_t> prompt = Tokenize(model.get(), "Once");
  ember_generate_stats stats;
  REQUIRE(ember_generate(session.get(), prompt.data(), prompt.size(), &gp, nullptr, nullptr,
                         &stats) == EMBER_OK);
  CHECK(stats.finish_reason == EMBER_FINISH_GRAMMAR);
  // Each call starts the grammar over: the same reply again.
  ember_session_reset(session.get());
  gp.ignore_eos = false;
  REQUIRE(ember_generate(session.get(), prompt.data(), prompt.size(), &gp, nullptr, nullptr,
                         &stats) == EMBER_OK);
  CHECK(stats.finish_reason == EMBER_FINISH_EOS);
}

TEST_CASE("c_api grammar: bad input", "[c_api][grammar]") {
  auto model = ember::test::LoadCModelOrFail();
  const ember_sampler_spec greedy = ember_sampler_spec_default(EMBER_SAMPLER_GREEDY);
  ember_sampler* raw = nullptr;
  CHECK(ember_sampler_create_grammar(nullptr, &greedy, 1, "root ::= \"a\"", nullptr, 0, &raw) ==
        EMBER_ERR_INVALID_ARGUMENT);
  CHECK(raw == nullptr);
  CHECK(ember_sampler_create_grammar(model.get(), &greedy, 1, "root ::= \"a", nullptr, 0, &raw) ==
        EMBER_ERR_INVALID_ARGUMENT);
  CHECK(std::string(ember_last_error()) ==
        "grammar: line 1, column 10: unterminated string literal");
  CHECK(ember_sampler_create_grammar(model.get(), &greedy, 1, "start ::= \"a\"", "begin", 0,
                                     &raw) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(std::string(ember_last_error()).find("no start rule 'begin'") != std::string::npos);
  // A grammar spec without the grammar's text.
  const ember_sampler_spec specs[] = {ember_sampler_spec_default(EMBER_SAMPLER_GRAMMAR), greedy};
  CHECK(ember_sampler_create(model.get(), 0, specs, 2, 0, &raw) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(std::string(ember_last_error()).find("ember_sampler_create_grammar") != std::string::npos);
  // ... which ember_sampler_create_grammar accepts as the stage's place.
  REQUIRE(ember_sampler_create_grammar(model.get(), specs, 2, "root ::= \"a\"", nullptr, 0, &raw) ==
          EMBER_OK);
  ember_sampler_free(raw);
}

TEST_CASE("c_api grammar: JSON schema to grammar", "[c_api][grammar]") {
  size_t n = 0;
  REQUIRE(ember_json_schema_to_grammar("{\"type\": \"boolean\"}", nullptr, 0, &n) ==
          EMBER_ERR_BUFFER_TOO_SMALL);
  std::string g(n, '\0');
  REQUIRE(ember_json_schema_to_grammar("{\"type\": \"boolean\"}", g.data(), g.size(), &n) ==
          EMBER_OK);
  CHECK(n == g.size());
  CHECK(std::strncmp(g.c_str(), "root ::= boolean\n", 17) == 0);
  CHECK(ember_json_schema_to_grammar("{\"not\": {}}", nullptr, 0, &n) == EMBER_ERR_UNSUPPORTED);
  CHECK(std::string(ember_last_error()) == "unsupported JSON schema keyword 'not' at #");
  CHECK(ember_json_schema_to_grammar("{oops", nullptr, 0, &n) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(ember_json_schema_to_grammar(nullptr, nullptr, 0, &n) == EMBER_ERR_INVALID_ARGUMENT);
}
