// Chat templates: a model's tokenizer.chat_template rendered by ember's own
// Jinja engine (docs/CHAT.md), with the variables and settings Hugging Face
// transformers renders them with, so that the prompt equals what Python's
// jinja2 gives, byte for byte.
//
// Variables the template sees: messages, add_generation_prompt, bos_token,
// eos_token, tools (only when given: otherwise undefined), enable_thinking
// (only when set) and every key of `extra`; the functions raise_exception(msg)
// and strftime_now(format). Environment: trim_blocks, lstrip_blocks, the
// loop-controls extension (break, continue), {% generation %}, tojson without
// ASCII escaping, and the immutable sandbox (templates cannot modify the
// messages: list.append and dict.update are errors, as in jinja2).
//
// A ChatTemplate is immutable once parsed: Apply may run on several threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "platform/status.h"

namespace ember {

namespace jinja {
struct Template;
}

struct ChatTemplateOptions {
  bool add_generation_prompt = true;
  std::string bos_token, eos_token;
  nlohmann::ordered_json tools;         // null: variable `tools` undefined
  std::optional<bool> enable_thinking;  // unset: undefined in the template
  nlohmann::ordered_json extra =
      nlohmann::ordered_json::object();  // more variables (chat_template_kwargs)
  int64_t now_unix = -1;                 // strftime_now's clock (UTC); -1: the current time
};

class ChatTemplate {
 public:
  // Parses once; errors (kBadFormat) name `name`, the line and the column.
  static Status Parse(std::string source, std::string name, ChatTemplate* out);

  // messages: a JSON array of objects {role, content, ...} (content a string, or null; also
  // tool_calls, reasoning_content, name, tool_call_id pass through as the template reads them).
  // Errors name the template line: raise_exception(msg) gives kInvalidArgument with
  // "raise_exception: msg"; other template errors and exceeded bounds (output size, steps,
  // nesting) kInvalidArgument or kUnsupported with the reason. *out is empty on error.
  Status Apply(const nlohmann::ordered_json& messages, const ChatTemplateOptions& opts,
               std::string* out) const;

  const std::string& source() const { return source_; }
  const std::string& name() const { return name_; }

 private:
  std::string source_, name_;
  std::shared_ptr<const jinja::Template> parsed_;
};

}  // namespace ember
