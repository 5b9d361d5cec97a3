// The grammar flags of `ember run`, `ember chat` and `ember sample`
// (--grammar, --grammar-file, --json-schema, --json-object), their output and
// their errors.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "support/cli_runner.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

namespace {

using Result = ember::test::CliResult;
using ember::test::RequireCleanError;
using ember::test::ShellQuote;
Result Ember(const std::string& args) { return ember::test::RunEmber(args); }

std::string Run(const std::string& flags) {
  return "run -m " + ShellQuote(ember::test::DefaultTinyModel()) + " -p Hello -t 1 " + flags;
}

std::string QwenVocab() {
  const std::string p = ember::test::SharedDir() + "/vocab/ggml-vocab-qwen2.gguf";
  return ember::test::FileExists(p) ? p : "";
}

}  // namespace

TEST_CASE("ember run: output follows --grammar and --json-schema", "[cli][grammar]") {
  Result r = Ember(Run("-n 30 --temp 1 --seed 4 --json --grammar " +
                       ShellQuote("root ::= (\"yes\" | \"no\") \" \" [0-9]{2} \"!\"")));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto out = nlohmann::json::parse(r.out);
  const std::string text = out["text"];
  CHECK(text.size() == 6 + (text[0] == 'y'));
  CHECK((text.rfind("yes ", 0) == 0 || text.rfind("no ", 0) == 0));
  CHECK(text.back() == '!');
  CHECK(out["finish_reason"] == "eos");

  const std::string schema = ember::test::TempPath("schema.json");
  {
    FILE* f = std::fopen(schema.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs(R"({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1,
        "maximum": 9}, "s": {"enum": ["a", "b"]}}, "required": ["n", "s"],
        "additionalProperties": false})",
               f);
    std::fclose(f);
  }
  for (const std::string& arg : {ShellQuote(schema), ShellQuote(ember::test::ReadFile(schema))}) {
    r = Ember(Run("-n 200 --temp 1 --seed 2 --json-schema " + arg));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto doc = nlohmann::json::parse(r.out);
    CHECK(doc["n"].get<int>() >= 1);
    CHECK(doc["n"].get<int>() <= 9);
    CHECK((doc["s"] == "a" || doc["s"] == "b"));
    CHECK(doc.size() == 2);
  }
  // --json-object: a prefix of an object (the random model rarely closes it).
  r = Ember(Run("-n 12 --temp 0 --json-object"));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("{", 0) == 0);
  // Beam search follows the grammar too.
  r = Ember(Run("-n 20 -c 128 --beams 3 --grammar " + ShellQuote("root ::= [a-c]{3} \".\"")));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.size() == 5);  // 4 characters and a newline
  CHECK(r.out[3] == '.');
}

TEST_CASE("ember run: grammar errors", "[cli][grammar]") {
  RequireCleanError(Ember(Run("--grammar " + ShellQuote("root ::= \"a\"\nx ::= [b"))),
                    "sampling: grammar: line 2, column 7: unterminated character class");
  RequireCleanError(Ember(Run("--grammar " + ShellQuote("root ::= item"))),
                    "undefined rule 'item'");
  RequireCleanError(Ember(Run("--grammar " + ShellQuote("root ::= root \"x\" | \"y\""))),
                    "left recursion: root -> root");
  RequireCleanError(
      Ember(Run("--json-schema " + ShellQuote("{\"type\": \"object\", \"minProperties\": 2}"))),
      "--json-schema: unsupported JSON schema keyword 'minProperties' at #");
  RequireCleanError(Ember(Run("--grammar-file /no/such/file.gbnf")), "/no/such/file.gbnf");
  RequireCleanError(Ember(Run("--json-object --grammar " + ShellQuote("root ::= \"a\""))),
                    "give at most one of --grammar, --grammar-file, --json-schema, --json-object");
  // A grammar that admits nothing: the finish reason says so.
  Result r = Ember(Run("-n 5 --json --grammar " + ShellQuote("root ::= [^\\x00-\\U0010FFFF]")));
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["finish_reason"] == "grammar");
}

TEST_CASE("ember chat: every reply follows the grammar", "[cli][grammar]") {
  const std::string model = ember::test::BuildArchModel("qwen2");  // (it has a chat template)
  REQUIRE(!model.empty());
  const std::string input = ember::test::TempPath("grammar_chat.txt");
  {
    FILE* f = std::fopen(input.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs("hi\nagain\n", f);
    std::fclose(f);
  }
  Result r = Ember("chat -m " + ShellQuote(model) + " -t 1 --temp 1 -n 40 --json --grammar " +
                   ShellQuote("root ::= \"ok \" [0-9]") + " < " + input);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // Two replies, each "ok" and a digit: the grammar starts over for each.
  int replies = 0;
  for (size_t at = 0; at < r.out.size();) {
    const size_t end = r.out.find('\n', at);
    const auto reply = nlohmann::json::parse(r.out.substr(at, end - at));
    const std::string content = reply["content"];
    INFO(content);
    CHECK(content.size() == 4);
    CHECK(content.rfind("ok ", 0) == 0);
    ++replies;
    at = end + 1;
  }
  CHECK(replies == 2);
}

TEST_CASE("ember sample: a grammar over a model's vocabulary", "[cli][grammar]") {
  const std::string vocab = QwenVocab();
  if (vocab.empty()) EMBER_SKIP("no ../shared/vocab/ggml-vocab-qwen2.gguf");
  const std::string base = "sample -m " + ShellQuote(vocab) + " --logits 0 --fill 151935=0 ";
  const std::string g = "--grammar " + ShellQuote("root ::= \"yes\" | \"no\"");
  Result r = Ember(base + g);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("\"chain\": [\"grammar\", \"dist\"]"));
  CHECK_THAT(r.out, Catch::Contains("\"pieces\":[\"n\",\"y\",\"no\",\"ye\",\"yes\"]"));
  // --history advances the grammar: after "ye" only "s".
  r = Ember(base + g + " --history 9011");
  CHECK_THAT(r.out, Catch::Contains("\"final\": {\"n\":1,\"ids\":[82],\"pieces\":[\"s\"]"));
  RequireCleanError(Ember(base + g + " --history 82"),
                    "--history: token 82 is not allowed by the grammar here");
  RequireCleanError(Ember("sample --logits 1,2 " + g),
                    "a grammar needs the tokens' text: give -m MODEL");
  RequireCleanError(Ember("sample -m " + ShellQuote(vocab) + " --logits 1,2 " + g),
                    "the model has 151936 tokens but 2 logits are given");
}
