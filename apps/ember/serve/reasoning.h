// Reasoning ("thinking") sections of a chat reply, split off into OpenAI's
// `reasoning_content` (the field DeepSeek's API and llama-server use).
//
// The C API splits reasoning only inside ember_chat (a conversation kept in
// one session), which a stateless server cannot use: each request brings its
// own messages. So the server splits the reply text itself, for the one
// convention most open reasoning models share: <think> ... </think> (Qwen3,
// QwQ, DeepSeek-R1, SmolLM3), recognised when the model's chat template
// contains both markers. A section is recognised at the start of the reply
// (after whitespace), or from the start when the rendered prompt left it open
// (`<|im_start|>assistant\n<think>\n`). Markers and the whitespace around
// them are not emitted. A reply that ends inside its reasoning leaves all of
// it in the reasoning channel.
#pragma once

#include <string>

namespace serve {

struct ThinkMarkers {
  std::string open = "<think>";
  std::string close = "</think>";
};

// The markers when `template_source` uses them, else false.
bool TemplateHasThinkMarkers(const std::string& template_source, ThinkMarkers* out);

// Whether a rendered prompt ends inside a reasoning section.
bool PromptOpensThink(const std::string& prompt, const ThinkMarkers& m);

class ThinkSplitter {
 public:
  ThinkSplitter(ThinkMarkers markers, bool starts_inside);
  // Feeds the next piece of the reply; appends what is decided to the
  // channels. Text that could still be (part of) a marker is held back, cut
  // only between UTF-8 characters.
  void Feed(const std::string& piece, std::string* reasoning, std::string* content);
  // The reply ended: what was held back goes to its channel.
  void Finish(std::string* reasoning, std::string* content);

 private:
  enum class State { kStart, kReasoning, kContent };
  void Step(std::string* reasoning, std::string* content);

  ThinkMarkers m_;
  State state_;
  std::string pending_;
  bool strip_leading_ = true;  // whitespace right after a marker is not emitted
};

}  // namespace serve
