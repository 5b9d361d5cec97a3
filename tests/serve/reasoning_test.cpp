// The server's <think> splitter (apps/ember/serve/reasoning.h): the same
// channels whatever the pieces the reply arrives in.
#include "serve/reasoning.h"

#include <catch2/catch.hpp>
#include <string>
#include <utility>

namespace {

std::pair<std::string, std::string> Split(const std::string& reply, bool starts_inside,
                                          size_t piece) {
  serve::ThinkSplitter s(serve::ThinkMarkers{}, starts_inside);
  std::string reasoning, content;
  for (size_t i = 0; i < reply.size(); i += piece) {
    s.Feed(reply.substr(i, piece), &reasoning, &content);
  }
  s.Finish(&reasoning, &content);
  return {reasoning, content};
}

}  // namespace

TEST_CASE("serve reasoning: split into reasoning and content, any piece size", "[serve]") {
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
      const auto [reasoning, content] = Split(c.reply, c.inside, piece);
      CHECK(reasoning == c.reasoning);
      CHECK(content == c.content);
    }
  }
}

TEST_CASE("serve reasoning: templates and prompts", "[serve]") {
  serve::ThinkMarkers m;
  CHECK(serve::TemplateHasThinkMarkers("{{ '<think>' }} ... {{ '</think>' }}", &m));
  CHECK_FALSE(serve::TemplateHasThinkMarkers("<|im_start|>{{ content }}", &m));
  CHECK(serve::PromptOpensThink("<|im_start|>assistant\n<think>\n", m));
  CHECK_FALSE(serve::PromptOpensThink("<think>a</think><|im_start|>assistant\n", m));
  CHECK_FALSE(serve::PromptOpensThink("<|im_start|>assistant\n", m));
}
