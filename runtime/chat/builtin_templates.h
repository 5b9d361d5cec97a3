// Chat templates for models whose GGUF carries none.
//
// Some GGUF conversions drop tokenizer.chat_template (the Gemma 3 270M
// Q4_K_M file we test with has none). llama.cpp then falls back to ChatML
// for every model, which a Gemma or Llama 3 model has never seen. ember
// picks the format the vocabulary's own control tokens spell instead:
// <start_of_turn> (Gemma), <|start_header_id|> (Llama 3), <|im_start|>
// (ChatML: Qwen, SmolLM, ...). The templates are written here from each
// family's documented prompt format, as Jinja, and rendered like any other.
#pragma once

#include <string>

#include "runtime/text/tokenizer.h"

namespace ember {

struct BuiltinTemplate {
  const char* name;    // "gemma", "llama3", "chatml"
  const char* source;  // Jinja
};

// The built-in template whose markers the vocabulary has as special tokens,
// or nullptr when none fits.
const BuiltinTemplate* BuiltinTemplateFor(const Tokenizer& tok);

}  // namespace ember
