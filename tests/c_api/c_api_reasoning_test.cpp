// Reasoning splitting through the C API (ember_reasoning_*): a streamed reply
// gives the same reasoning and content whatever pieces it arrives in; the
// conventions come from the template; prompts that open a section are told
// apart; bad arguments are refused.
#include <catch2/catch.hpp>
#include <string>
#include <utility>

#include "ember.h"
#include "support/loaders.h"
#include "support/model_builder.h"

namespace {

struct Channels {
  std::string reasoning, content;
};

void Append(bool reasoning, const char* text, size_t len, void* user_data) {
  Channels* c = static_cast<Channels*>(user_data);
  (reasoning ? c->reasoning : c->content).append(text, len);
}

const char* kThinkTemplate = "{{ '<think>' }} ... {{ '</think>' }}";

Channels Split(const char* tmpl, const std::string& reply, bool starts_inside, size_t piece) {
  ember_reasoning* r = nullptr;
  REQUIRE(ember_reasoning_create(nullptr, tmpl, &r) == EMBER_OK);
  ember_reasoning_begin(r, starts_inside);
  Channels c;
  for (size_t i = 0; i < reply.size(); i += piece) {
    const std::string p = reply.substr(i, piece);
    REQUIRE(ember_reasoning_feed(r, p.data(), p.size(), Append, &c) == EMBER_OK);
  }
  REQUIRE(ember_reasoning_finish(r, Append, &c) == EMBER_OK);
  ember_reasoning_free(r);
  return c;
}

}  // namespace

TEST_CASE("C API reasoning: split into reasoning and content, any piece size",
          "[c_api][reasoning]") {
  struct Case {
    std::string reply;
    bool inside;
    std::string reasoning, content;
  };
  const Case cases[] = {
      {"<think>\nLet me think.\n</think>\n\nThe answer.", false, "Let me think.", "The answer."},
      {"  <think>x</think>y", false, "x", "y"},
      {"Let me think.\n</think>\n\nThe answer.", true, "Let me think.", "The answer."},
      {"No reasoning here <think> at all", false, "", "No reasoning here <think> at all"},
      {"<thin", false, "", "<thin"},
      {"<think>cut short by the length limit", false, "cut short by the length limit", ""},
      {"<think>\xc3\xa9t\xc3\xa9 </thi</think>\xe2\x82\xac", false, "\xc3\xa9t\xc3\xa9 </thi",
       "\xe2\x82\xac"},
  };
  for (const Case& c : cases) {
    for (size_t piece = 1; piece <= c.reply.size(); ++piece) {
      INFO(c.reply << " in pieces of " << piece);
      const Channels got = Split(kThinkTemplate, c.reply, c.inside, piece);
      CHECK(got.reasoning == c.reasoning);
      CHECK(got.content == c.content);
    }
  }
  // Another convention, from its template: ByteDance Seed's markers.
  const Channels seed = Split("{{ '<seed:think>' }}{{ '</seed:think>' }}",
                              "<seed:think>hmm</seed:think>Yes.", false, 3);
  CHECK(seed.reasoning == "hmm");
  CHECK(seed.content == "Yes.");
}

TEST_CASE("C API reasoning: templates, prompts and bad arguments", "[c_api][reasoning]") {
  ember_reasoning* r = nullptr;
  CHECK(ember_reasoning_create(nullptr, "<|im_start|>{{ content }}", &r) == EMBER_ERR_UNSUPPORTED);
  CHECK(r == nullptr);
  CHECK(ember_reasoning_create(nullptr, nullptr, &r) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(ember_reasoning_create(nullptr, kThinkTemplate, nullptr) == EMBER_ERR_INVALID_ARGUMENT);
  REQUIRE(ember_reasoning_create(nullptr, kThinkTemplate, &r) == EMBER_OK);
  CHECK(ember_reasoning_prompt_opens(r, "<|im_start|>assistant\n<think>\n"));
  CHECK_FALSE(ember_reasoning_prompt_opens(r, "<think>a</think><|im_start|>assistant\n"));
  CHECK_FALSE(ember_reasoning_prompt_opens(r, "<|im_start|>assistant\n"));
  CHECK_FALSE(ember_reasoning_prompt_opens(r, nullptr));
  CHECK(ember_reasoning_feed(nullptr, "x", 1, Append, nullptr) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(ember_reasoning_feed(r, nullptr, 1, Append, nullptr) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(ember_reasoning_finish(nullptr, Append, nullptr) == EMBER_ERR_INVALID_ARGUMENT);
  ember_reasoning_free(r);
  ember_reasoning_free(nullptr);

  // A model's own template: the tiny qwen2 model's has no thinking markers.
  auto m = ember::test::LoadCModelOrFail(ember::test::BuildArchModel("qwen2"));
  CHECK(ember_reasoning_create(m.get(), nullptr, &r) == EMBER_ERR_UNSUPPORTED);
}
