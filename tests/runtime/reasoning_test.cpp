#include "runtime/chat/reasoning.h"

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "runtime/decoding/self_consistency.h"
#include "support/test_paths.h"

using namespace ember;

namespace {

const ThinkingMarkers kThink{"<think>", "</think>"};

struct Split {
  std::string reasoning, content;
  bool operator==(const Split& o) const { return reasoning == o.reasoning && content == o.content; }
};

std::ostream& operator<<(std::ostream& os, const Split& s) {
  return os << "{reasoning: '" << s.reasoning << "', content: '" << s.content << "'}";
}

// The reply fed in pieces of `step` bytes (0: all at once).
Split Run(const std::string& reply, bool starts_inside, size_t step,
          const ThinkingMarkers& m = kThink) {
  ReasoningSplitter sp(m, starts_inside);
  Split out;
  auto emit = [&](ReplyChannel ch, std::string_view t) {
    (ch == ReplyChannel::kReasoning ? out.reasoning : out.content).append(t);
  };
  if (step == 0) step = reply.size() + 1;
  for (size_t i = 0; i < reply.size(); i += step) sp.Feed(reply.substr(i, step), emit);
  sp.Finish(emit);
  return out;
}

// Every piece size gives the same split as the whole reply at once.
Split RunAllSteps(const std::string& reply, bool starts_inside, const ThinkingMarkers& m = kThink) {
  const Split whole = Run(reply, starts_inside, 0, m);
  for (size_t step = 1; step <= reply.size(); ++step) {
    INFO("piece size " << step);
    REQUIRE(Run(reply, starts_inside, step, m) == whole);
  }
  return whole;
}

std::string Template(const std::string& file) {
  return test::ReadFile(test::SharedDir() + "/templates/" + file);
}

}  // namespace

TEST_CASE("reasoning: markers of real templates", "[chat][reasoning]") {
  auto markers = [](const std::string& f) {
    const auto m = FindThinkingMarkers(Template(f));
    return m ? m->open + " " + m->close : std::string("none");
  };
  CHECK(markers("Qwen-Qwen3-0.6B.jinja") == "<think> </think>");
  CHECK(markers("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja") == "<think> </think>");
  CHECK(markers("ByteDance-Seed-OSS.jinja") == "<seed:think> </seed:think>");
  CHECK(markers("mistralai-Ministral-3-14B-Reasoning-2512.jinja") == "[THINK] [/THINK]");
  CHECK(markers("meta-llama-Llama-3.1-8B-Instruct.jinja") == "none");
  CHECK(markers("Qwen-Qwen2.5-7B-Instruct.jinja") == "none");
  CHECK(markers("google-gemma-2-2b-it.jinja") == "none");
}

TEST_CASE("reasoning: a prompt that opens the section", "[chat][reasoning]") {
  CHECK(PromptOpensReasoning("<|im_start|>assistant\n<think>\n", kThink));
  CHECK_FALSE(PromptOpensReasoning("<|im_start|>assistant\n<think>\n\n</think>\n\n", kThink));
  CHECK_FALSE(PromptOpensReasoning("<|im_start|>assistant\n", kThink));
  CHECK(PromptOpensReasoning("<think>a</think> b <think>", kThink));
}

TEST_CASE("reasoning: splits a reply at every piece size", "[chat][reasoning]") {
  CHECK(RunAllSteps("<think>\nLet me count.\n</think>\n\nThere are 3.", false) ==
        Split{"Let me count.", "There are 3."});
  // Leading whitespace before the open marker, none around the close one.
  CHECK(RunAllSteps("\n <think>a b</think>c", false) == Split{"a b", "c"});
  // Inner whitespace stays; only the ends go.
  CHECK(RunAllSteps("<think>\n\nstep 1\n\nstep 2\n\n</think>\n\nok", false) ==
        Split{"step 1\n\nstep 2", "ok"});
  // The prompt opened it: the reply starts inside.
  CHECK(RunAllSteps("Hmm, 2+2.\n</think>\n\n4", true) == Split{"Hmm, 2+2.", "4"});
  // No reasoning: everything is content, whitespace included.
  CHECK(RunAllSteps(" Hello <think> there", false) == Split{"", " Hello <think> there"});
  CHECK(RunAllSteps("Plain answer.", false) == Split{"", "Plain answer."});
  // A partial marker at the end is content (no section was opened).
  CHECK(RunAllSteps("<thi", false) == Split{"", "<thi"});
  // Cut off inside the reasoning: all of it stays reasoning.
  CHECK(RunAllSteps("<think>unfinished </thi", false) == Split{"unfinished </thi", ""});
  // An empty section (a template's thinking-off form).
  CHECK(RunAllSteps("<think>\n\n</think>\n\nHi", false) == Split{"", "Hi"});
  // A second section after the answer is content.
  CHECK(RunAllSteps("<think>x</think>y<think>z</think>", false) == Split{"x", "y<think>z</think>"});
  // Other conventions.
  const ThinkingMarkers seed{"<seed:think>", "</seed:think>"};
  CHECK(RunAllSteps("<seed:think>r</seed:think>c", false, seed) == Split{"r", "c"});
}

TEST_CASE("reasoning: the splitter's state while streaming", "[chat][reasoning]") {
  ReasoningSplitter sp(kThink, false);
  auto ignore = [](ReplyChannel, std::string_view) {};
  CHECK_FALSE(sp.in_reasoning());
  sp.Feed("  <thi", ignore);
  CHECK_FALSE(sp.saw_reasoning());
  sp.Feed("nk>abc", ignore);
  CHECK(sp.in_reasoning());
  CHECK(sp.saw_reasoning());
  sp.Feed("</think>", ignore);
  CHECK_FALSE(sp.in_reasoning());
  CHECK(sp.saw_reasoning());
}

TEST_CASE("self-consistency: final answers", "[chat][reasoning]") {
  CHECK(ExtractFinalAnswer("So the total is \\boxed{42}.") == "42");
  CHECK(ExtractFinalAnswer("\\boxed{\\frac{1}{2}} and later \\boxed{x^{2}}") == "x^{2}");
  CHECK(ExtractFinalAnswer("2 + 2 = 4, so the answer is 4.") == "4");
  CHECK(ExtractFinalAnswer("The answer is Paris. It was founded long ago.") == "paris");
  CHECK(ExtractFinalAnswer("Answer: 1,024 bytes") == "1024");
  CHECK(ExtractFinalAnswer("We get 3.50 dollars") == "3.5");
  CHECK(ExtractFinalAnswer("first 7 then 12 and finally 9") == "9");
  CHECK(ExtractFinalAnswer("It costs $-3.") == "-3");
  CHECK(ExtractFinalAnswer("x2 is a name; no numbers here\n\n  **Blue**.\n") == "blue");
  CHECK(ExtractFinalAnswer("ratio 3/4") == "3/4");
  CHECK(ExtractFinalAnswer("10.0") == "10");
  CHECK(ExtractFinalAnswer("") == "");
  CHECK(ExtractFinalAnswer("  \n \n") == "");
}
