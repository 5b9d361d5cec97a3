// Reasoning ("thinking") sections of a chat reply, split off into OpenAI's
// `reasoning_content` (the field DeepSeek's API and llama-server use), by
// the engine's splitter (ember_reasoning_*, runtime/chat/reasoning.h): every
// thinking-marker convention a chat template may use (<think>, <seed:think>,
// [THINK], ...), recognised at the start of the reply or from the start when
// the rendered prompt left a section open. Markers and the whitespace around
// them are not emitted; a reply that ends inside its reasoning leaves it all
// in the reasoning channel.
#pragma once

#include <memory>
#include <string>

#include "ember.h"

namespace serve {

// Whether the model's chat template marks reasoning sections.
bool ModelHasThinkMarkers(const ember_model* model);
// Whether a rendered chat prompt of the model leaves a reasoning section open.
bool PromptOpensThink(const ember_model* model, const std::string& prompt);

// One reply's splitter: appends what is decided to the two channels.
class ThinkSplitter {
 public:
  ThinkSplitter(const ember_model* model, bool starts_inside);
  void Feed(const std::string& piece, std::string* reasoning, std::string* content);
  void Finish(std::string* reasoning, std::string* content);

 private:
  struct Free {
    void operator()(ember_reasoning* r) const { ember_reasoning_free(r); }
  };
  std::unique_ptr<ember_reasoning, Free> r_;  // null: no markers, all is content
};

}  // namespace serve
