// ember_chat_template_render: the size-needed protocol, the parameters, and
// errors as statuses with the template line.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>

#include "ember.h"

namespace {

const char* kMessages = R"([{"role": "user", "content": "Hi"}])";

// Renders with a size query first, as a C caller would.
ember_status Render(const char* tmpl, const char* messages, const ember_chat_template_params* p,
                    std::string* out) {
  size_t needed = 0;
  ember_status s = ember_chat_template_render(tmpl, messages, p, nullptr, 0, &needed);
  if (s != EMBER_ERR_BUFFER_TOO_SMALL) return s;
  out->assign(needed, 'x');
  s = ember_chat_template_render(tmpl, messages, p, out->data(), out->size(), &needed);
  if (s == EMBER_OK) {
    CHECK((*out)[needed - 1] == '\0');
    out->resize(needed - 1);
  }
  return s;
}

}  // namespace

TEST_CASE("c_api: chat templates render with the size-needed protocol", "[c_api][chat]") {
  const char* tmpl =
      "{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content }}{% endfor %}"
      "{% if add_generation_prompt %}[assistant]{% endif %}{{ eos_token }}"
      "{% if tools is defined %} {{ tools|length }} tools{% endif %}"
      "{% if enable_thinking is defined %} think={{ enable_thinking }}{% endif %}"
      "{{ lang|default('') }} {{ strftime_now('%Y-%m-%d') }}";
  std::string out;
  ember_chat_template_params p = ember_chat_template_default_params();
  CHECK(p.add_generation_prompt);
  CHECK(p.enable_thinking == -1);
  CHECK(p.now_unix == -1);
  p.now_unix = 86400;
  REQUIRE(Render(tmpl, kMessages, &p, &out) == EMBER_OK);
  CHECK(out == "[user] Hi[assistant] 1970-01-02");

  p.add_generation_prompt = false;
  p.bos_token = "<s>";
  p.eos_token = "</s>";
  p.tools_json = R"([{"name": "a"}, {"name": "b"}])";
  p.enable_thinking = 1;
  p.extra_json = R"({"lang": " fr"})";
  REQUIRE(Render(tmpl, kMessages, &p, &out) == EMBER_OK);
  CHECK(out == "<s>[user] Hi</s> 2 tools think=True fr 1970-01-02");

  // A buffer one byte short: nothing written, the size reported.
  char small[8];
  std::memset(small, '#', sizeof small);
  size_t needed = 0;
  CHECK(ember_chat_template_render("{{ 'abcdefgh' }}", "[]", nullptr, small, sizeof small,
                                   &needed) == EMBER_ERR_BUFFER_TOO_SMALL);
  CHECK(needed == 9);
  CHECK(small[0] == '#');
  CHECK(ember_chat_template_render("{{ 'abcdefg' }}", "[]", nullptr, small, sizeof small,
                                   &needed) == EMBER_OK);
  CHECK(std::string(small) == "abcdefg");
}

TEST_CASE("c_api: chat template errors are statuses naming the line", "[c_api][chat]") {
  std::string out;
  ember_chat_template_params p = ember_chat_template_default_params();
  p.name = "my.jinja";
  CHECK(Render("a\n{% if %}", kMessages, &p, &out) == EMBER_ERR_BAD_FORMAT);
  CHECK(std::string(ember_last_error()).rfind("my.jinja:2:7: ", 0) == 0);
  CHECK(Render("\n\n{{ raise_exception('Bad role: ' ~ messages[0].role) }}", kMessages, &p, &out) ==
        EMBER_ERR_INVALID_ARGUMENT);
  CHECK(std::string(ember_last_error()) == "my.jinja:3: raise_exception: Bad role: user");
  CHECK(Render("{{ x }}", "[{", nullptr, &out) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK_THAT(ember_last_error(), Catch::Contains("messages_json"));
  p.tools_json = "nope";
  CHECK(Render("{{ x }}", kMessages, &p, &out) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK_THAT(ember_last_error(), Catch::Contains("tools_json"));
  p = ember_chat_template_default_params();
  p.enable_thinking = 7;
  CHECK(Render("{{ x }}", kMessages, &p, &out) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK_THAT(ember_last_error(), Catch::Contains("enable_thinking must be -1, 0 or 1"));
  CHECK(ember_chat_template_render(nullptr, kMessages, nullptr, nullptr, 0, nullptr) ==
        EMBER_ERR_INVALID_ARGUMENT);
  CHECK(ember_chat_template_render("x", kMessages, nullptr, nullptr, 4, nullptr) ==
        EMBER_ERR_INVALID_ARGUMENT);
  CHECK(Render("{{ 'x' % 1 }}", kMessages, nullptr, &out) == EMBER_ERR_UNSUPPORTED);
  // After an error, a good call clears the last error.
  CHECK(Render("ok", kMessages, nullptr, &out) == EMBER_OK);
  CHECK(std::string(ember_last_error()).empty());
}
