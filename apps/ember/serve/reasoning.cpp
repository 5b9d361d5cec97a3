#include "serve/reasoning.h"

namespace serve {
namespace {

struct Channels {
  std::string* reasoning;
  std::string* content;
};

void Append(bool reasoning, const char* text, size_t len, void* user_data) {
  Channels* c = static_cast<Channels*>(user_data);
  (reasoning ? c->reasoning : c->content)->append(text, len);
}

ember_reasoning* Create(const ember_model* model) {
  ember_reasoning* r = nullptr;
  return ember_reasoning_create(model, nullptr, &r) == EMBER_OK ? r : nullptr;
}

}  // namespace

bool ModelHasThinkMarkers(const ember_model* model) {
  ember_reasoning* r = Create(model);
  ember_reasoning_free(r);
  return r != nullptr;
}

bool PromptOpensThink(const ember_model* model, const std::string& prompt) {
  ember_reasoning* r = Create(model);
  const bool opens = ember_reasoning_prompt_opens(r, prompt.c_str());
  ember_reasoning_free(r);
  return opens;
}

ThinkSplitter::ThinkSplitter(const ember_model* model, bool starts_inside) : r_(Create(model)) {
  ember_reasoning_begin(r_.get(), starts_inside);
}

void ThinkSplitter::Feed(const std::string& piece, std::string* reasoning, std::string* content) {
  if (!r_) {
    content->append(piece);
    return;
  }
  Channels c{reasoning, content};
  ember_reasoning_feed(r_.get(), piece.data(), piece.size(), Append, &c);
}

void ThinkSplitter::Finish(std::string* reasoning, std::string* content) {
  if (!r_) return;
  Channels c{reasoning, content};
  ember_reasoning_finish(r_.get(), Append, &c);
}

}  // namespace serve
