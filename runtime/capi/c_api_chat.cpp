// The C API's chat templates: JSON in, the rendered prompt out (ChatTemplate).
#include <cstring>
#include <string>

#include "ember.h"
#include "runtime/capi/c_api_internal.h"
#include "runtime/chat/chat_template.h"

using namespace ember::capi;

namespace {

// Parses one JSON argument, or fails naming it.
ember_status ParseJson(const char* text, const char* what, nlohmann::ordered_json* out) {
  try {
    *out = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::ordered_json::parse_error& e) {
    return Fail(EMBER_ERR_INVALID_ARGUMENT,
                std::string("ember_chat_template_render: ") + what + ": " + e.what());
  }
  return EMBER_OK;
}

}  // namespace

ember_chat_template_params ember_chat_template_default_params(void) {
  ember_chat_template_params p;
  std::memset(&p, 0, sizeof p);
  p.add_generation_prompt = true;
  p.enable_thinking = -1;
  p.now_unix = -1;
  return p;
}

ember_status ember_chat_template_render(const char* tmpl, const char* messages_json,
                                        const ember_chat_template_params* params, char* buf,
                                        size_t buf_size, size_t* needed) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(tmpl != nullptr && messages_json != nullptr,
                      "ember_chat_template_render: tmpl or messages_json is NULL");
    EMBER_REQUIRE_ARG(buf != nullptr || buf_size == 0,
                      "ember_chat_template_render: buf is NULL but buf_size is not 0");
    const ember_chat_template_params p = params ? *params : ember_chat_template_default_params();
    EMBER_REQUIRE_ARG(p.enable_thinking >= -1 && p.enable_thinking <= 1,
                      "ember_chat_template_render: enable_thinking must be -1, 0 or 1");
    ember::ChatTemplateOptions o;
    o.add_generation_prompt = p.add_generation_prompt;
    if (p.enable_thinking >= 0) o.enable_thinking = p.enable_thinking == 1;
    if (p.bos_token) o.bos_token = p.bos_token;
    if (p.eos_token) o.eos_token = p.eos_token;
    o.now_unix = p.now_unix;
    nlohmann::ordered_json messages;
    ember_status s = ParseJson(messages_json, "messages_json", &messages);
    if (s != EMBER_OK) return s;
    if (p.tools_json) {
      s = ParseJson(p.tools_json, "tools_json", &o.tools);
      if (s != EMBER_OK) return s;
    }
    if (p.extra_json) {
      s = ParseJson(p.extra_json, "extra_json", &o.extra);
      if (s != EMBER_OK) return s;
    }
    ember::ChatTemplate t;
    ember::Status st = ember::ChatTemplate::Parse(tmpl, p.name ? p.name : "chat template", &t);
    if (!st.ok()) return Report(st);
    std::string text;
    st = t.Apply(messages, o, &text);
    if (!st.ok()) {
      // Rendering errors are the input's (the messages or the template's checks).
      return Fail(st.code() == ember::Code::kUnsupported ? EMBER_ERR_UNSUPPORTED
                                                         : EMBER_ERR_INVALID_ARGUMENT,
                  st.message());
    }
    if (needed) *needed = text.size() + 1;
    if (buf_size < text.size() + 1) {
      return Fail(EMBER_ERR_BUFFER_TOO_SMALL, "ember_chat_template_render: buffer too small");
    }
    std::memcpy(buf, text.data(), text.size());
    buf[text.size()] = '\0';
    return EMBER_OK;
  });
}
