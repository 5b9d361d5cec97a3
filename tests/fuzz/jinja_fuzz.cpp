// libFuzzer target: the chat template engine on hostile templates.
//
// Input: a template's source, optionally followed by a NUL byte and a JSON
// array of messages. The template is parsed and, if it parses, rendered for
// the given messages (when they are valid JSON) and for a few fixed
// conversations (a system message, a tool call, an empty list). Any outcome
// is fine except a crash, a sanitizer report, a leak or a hang: errors are
// statuses, and the engine's bounds (docs/CHAT.md) stop runaway loops and
// output.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "runtime/chat/chat_template.h"

namespace {

using json = nlohmann::ordered_json;

const json& Conversations() {
  static const json c = json::parse(R"([
    [{"role": "system", "content": "You are terse."},
     {"role": "user", "content": "Hi"},
     {"role": "assistant", "content": "<think>\nhm\n</think>\n\nHello."},
     {"role": "user", "content": "2+2?"}],
    [{"role": "user", "content": "weather?"},
     {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function":
       {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
     {"role": "tool", "content": "{\"temp\": 21}"}],
    []
  ])");
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t nul = in.find('\0');
  ember::ChatTemplate tmpl;
  if (!ember::ChatTemplate::Parse(std::string(in.substr(0, nul)), "fuzz", &tmpl).ok()) return 0;
  ember::ChatTemplateOptions o;
  o.bos_token = "<s>";
  o.eos_token = "</s>";
  o.now_unix = 0;
  o.tools = json::parse(R"([{"type": "function", "function": {"name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}])");
  std::string out;
  if (nul != std::string_view::npos) {
    const json given = json::parse(in.substr(nul + 1), nullptr, /*allow_exceptions=*/false);
    if (!given.is_discarded()) (void)tmpl.Apply(given, o, &out);
  }
  for (const json& messages : Conversations()) {
    (void)tmpl.Apply(messages, o, &out);
    o.add_generation_prompt = !o.add_generation_prompt;
  }
  return 0;
}
