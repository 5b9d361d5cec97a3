// `ember template`: renderings of a template file and of a model's own
// template, the conversation file's two shapes, and bad input (one line
// "ember: error: ..." naming the template line).
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/cli_runner.h"
#include "support/model_builder.h"
#include "support/skip.h"
#include "support/test_paths.h"

namespace {

using ember::test::RequireCleanError;
using ember::test::ShellQuote;
using Result = ember::test::CliResult;
using json = nlohmann::ordered_json;

Result Ember(const std::string& args) { return ember::test::RunEmber(args); }

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string p = ember::test::TempPath(name);
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

const char* kTemplate =
    "{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}{{ eos_token }}\n"
    "{% endfor %}{% if tools is defined %}tools: {{ tools|tojson }}\n{% endif %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}"
    "{% if enable_thinking is defined %} thinking={{ enable_thinking }}{% endif %}"
    " {{ strftime_now('%d %b %Y') }}";

const char* kMessages =
    R"([{"role": "user", "content": "Hi ☕"}, {"role": "assistant", "content": "Hello"}])";

}  // namespace

TEST_CASE("ember template: renders a template file", "[cli][chat]") {
  const std::string t = WriteTemp("t.jinja", kTemplate);
  const std::string m = WriteTemp("m.json", kMessages);
  Result r = Ember("template --template " + t + " --messages " + m +
                   " --bos '<s>' --eos '</s>' --now 1752494400");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "<s><user>Hi ☕</s>\n<assistant>Hello</s>\n<assistant> 14 Jul 2025");

  // The options, and an object with "messages" and "tools" (a request's shape).
  const std::string req =
      WriteTemp("req.json", std::string(R"({"messages": )") + kMessages +
                                R"(, "tools": [{"name": "f"}], "add_generation_prompt": false})");
  r = Ember("template --template " + t + " --messages " + req + " --enable-thinking 0 --now 0");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out ==
        "<user>Hi ☕\n<assistant>Hello\ntools: [{\"name\": \"f\"}]\n thinking=False 01 Jan 1970");
  const std::string tools = WriteTemp("tools.json", R"([{"name": "g"}])");
  r = Ember("template --template " + t + " --messages " + req + " --tools " + tools +
            " --no-generation-prompt --now 0");
  CHECK(r.out == "<user>Hi ☕\n<assistant>Hello\ntools: [{\"name\": \"g\"}]\n 01 Jan 1970");

  r = Ember("template --help");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("usage: ember template (-m MODEL | --template FILE)"));
}

TEST_CASE("ember template: a model's own template renders as jinja2 does", "[cli][chat]") {
  const std::string model = ember::test::ModelPath("SmolLM2-135M-Instruct.Q4_1.gguf");
  if (model.empty()) EMBER_SKIP("SmolLM2-135M-Instruct.Q4_1.gguf is not in the model cache");
  const std::string data = ember::test::SourceDir() + "/tests/data/chat";
  const json expected =
      json::parse(ember::test::ReadFile(data + "/expected/model-SmolLM2-135M-Instruct.Q4_1.json"));
  Result r = Ember("template -m " + model + " --messages " + data +
                   "/cases/basic.json --bos '<s>' --eos '</s>' --now 1752494400");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == expected["cases"]["basic"]["output"].get<std::string>());
}

TEST_CASE("ember template: bad input is one clear error", "[cli][chat]") {
  const std::string t = WriteTemp("t.jinja", kTemplate);
  const std::string m = WriteTemp("m.json", kMessages);
  RequireCleanError(Ember("template --messages " + m),
                    "give exactly one of -m MODEL and --template");
  RequireCleanError(Ember("template --template " + t), "--messages FILE.json is required");
  RequireCleanError(Ember("template --template " + t + " --name x --messages " + m),
                    "--name selects a model's named template");
  RequireCleanError(Ember("template --template /no/such.jinja --messages " + m), "/no/such.jinja");
  RequireCleanError(
      Ember("template --template " + t + " --messages " + WriteTemp("bad.json", "[{")),
      "parse error");
  RequireCleanError(
      Ember("template --template " + t + " --messages " + WriteTemp("obj.json", "{\"x\": 1}")),
      "an object needs a \"messages\" array");
  RequireCleanError(
      Ember("template --template " + t + " --messages " + WriteTemp("num.json", "[1]")),
      "message 0 is not a JSON object");
  RequireCleanError(Ember("template --template " + t + " --messages " + m + " --enable-thinking 2"),
                    "--enable-thinking");
  // Template errors name the template file and the line (and the column when parsing).
  const std::string raises =
      WriteTemp("raise.jinja",
                "ok\n{% if messages[0].role == 'user' %}"
                "{{ raise_exception('Conversations must start with a system message.\nReally.') }}"
                "{% endif %}");
  RequireCleanError(Ember("template --template " + raises + " --messages " + m),
                    raises +
                        ":2: raise_exception: Conversations must start with a system "
                        "message. Really.");
  const std::string broken = WriteTemp("broken.jinja", "a\n\n{% for m in messages %}{{ m }");
  RequireCleanError(Ember("template --template " + broken + " --messages " + m),
                    broken + ":3:29: unexpected '}'");
  // A model without a template whose vocabulary has none of the built-in
  // templates' markers (the tiny model's GPT-2 vocabulary).
  RequireCleanError(Ember("template -m " + ember::test::DefaultTinyModel() + " --messages " + m),
                    "has no chat template (tokenizer.chat_template)");
  RequireCleanError(Ember("template --template " + t + " --messages " + m + " --json"),
                    "--json needs --print-template");
}

TEST_CASE("template cli: a model without a template gets the built-in one of its markers",
          "[cli][chat]") {
  const std::string gemma = ember::test::ModelPath("gemma-3-270m-q4_k_m.gguf");
  if (gemma.empty()) EMBER_SKIP("gemma-3-270m-q4_k_m.gguf is not in the model cache");
  // The Gemma 3 270M file is the base model and carries no template: ember
  // renders Gemma's turn format (its <start_of_turn> tokens), not ChatML.
  const std::string m = WriteTemp(
      "m.json",
      R"([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}])");
  const Result r = Ember("template -m " + gemma + " --messages " + m);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n");
  const Result info = Ember("template -m " + gemma + " --print-template --json");
  REQUIRE(info.exit_code == 0);
  const auto j = nlohmann::ordered_json::parse(info.out);
  CHECK(j["builtin"] == true);
  CHECK(j["bos_token"] == "<bos>");
  CHECK(j["add_bos"] == true);
  CHECK(j["template"].get<std::string>().find("<start_of_turn>") != std::string::npos);
}
