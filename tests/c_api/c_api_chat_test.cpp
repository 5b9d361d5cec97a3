// The chat C API: ember_chat_template_render (the size-needed protocol, the
// parameters, errors as statuses with the template line), a model's template
// and its tokens, conversations (ember_chat_*) and self-consistency.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "ember.h"
#include "support/loaders.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

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

// ---- Conversations and templates with a model ---------------------------

namespace {

// The tiny qwen2 model: Qwen2's ChatML template comes with its vocabulary.
ember::test::CModelPtr ChatModel() {
  const std::string path = ember::test::BuildArchModel("qwen2");
  REQUIRE(!path.empty());
  return ember::test::LoadCModelOrFail(path);
}

ember::test::CSessionPtr ChatSession(ember_model* model, int32_t n_ctx) {
  ember_session_params sp = ember_session_default_params();
  sp.n_ctx = n_ctx;
  sp.n_threads = 1;
  sp.n_threads_batch = 1;
  sp.context_shift = false;
  ember_session* s = nullptr;
  REQUIRE(ember_session_create(model, &sp, &s) == EMBER_OK);
  return ember::test::CSessionPtr(s);
}

struct ChatDeleter {
  void operator()(ember_chat* c) const { ember_chat_free(c); }
};
using ChatPtr = std::unique_ptr<ember_chat, ChatDeleter>;

bool Collect(const char* piece, size_t len, bool reasoning, void* user_data) {
  auto* out = static_cast<std::string*>(user_data);
  if (reasoning) out->append("[r]");
  out->append(piece, len);
  return true;
}

}  // namespace

TEST_CASE("c_api: a model's template renders messages, and their tokens as a chat feeds them",
          "[c_api][chat]") {
  auto model = ChatModel();
  const ember_chat_message msgs[] = {{"system", "Be brief."}, {"user", "Hi"}};
  size_t needed = 0;
  REQUIRE(ember_chat_apply_template(model.get(), nullptr, nullptr, msgs, 2, true, nullptr, 0,
                                    &needed) == EMBER_ERR_BUFFER_TOO_SMALL);
  std::string text(needed, 'x');
  REQUIRE(ember_chat_apply_template(model.get(), nullptr, nullptr, msgs, 2, true, text.data(),
                                    text.size(), &needed) == EMBER_OK);
  text.resize(needed - 1);
  CHECK(text ==
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\n");
  // The tokens: the rendering with its special tokens parsed.
  size_t n = 0;
  REQUIRE(ember_chat_prompt_tokens(model.get(), nullptr, nullptr, msgs, 2, true, nullptr, 0, &n) ==
          EMBER_ERR_BUFFER_TOO_SMALL);
  std::vector<int32_t> ids(n);
  REQUIRE(ember_chat_prompt_tokens(model.get(), nullptr, nullptr, msgs, 2, true, ids.data(),
                                   ids.size(), &n) == EMBER_OK);
  std::vector<int32_t> expect(64);
  size_t n_expect = 0;
  REQUIRE(ember_tokenize(model.get(), text.data(), text.size(), true, true, expect.data(),
                         expect.size(), &n_expect) == EMBER_OK);
  expect.resize(n_expect);
  CHECK(ids == expect);
  // A template given as source.
  const char* src = "{% for m in messages %}{{ m.role }}={{ m.content }};{% endfor %}";
  std::string small(64, 'x');
  REQUIRE(ember_chat_apply_template(model.get(), src, nullptr, msgs, 2, false, small.data(),
                                    small.size(), &needed) == EMBER_OK);
  CHECK(std::string(small.c_str()) == "system=Be brief.;user=Hi;");
  // The model's template source, as a chat would use it.
  bool builtin = true;
  REQUIRE(ember_chat_model_template(model.get(), nullptr, nullptr, 0, &needed, &builtin) ==
          EMBER_ERR_BUFFER_TOO_SMALL);
  CHECK_FALSE(builtin);
}

TEST_CASE("c_api: chat template bad input", "[c_api][chat][bad-input]") {
  auto model = ChatModel();
  std::string buf(256, 'x');
  size_t needed = 0;
  const ember_chat_message wizard[] = {{"wizard", "x"}};
  CHECK(ember_chat_apply_template(model.get(), nullptr, nullptr, wizard, 1, true, buf.data(),
                                  buf.size(), &needed) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(std::string(ember_last_error()).find("unknown role 'wizard'") != std::string::npos);
  const ember_chat_message bad_utf8[] = {{"user", "a\xff"}};
  CHECK(ember_chat_apply_template(model.get(), nullptr, nullptr, bad_utf8, 1, true, buf.data(),
                                  buf.size(), &needed) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(std::string(ember_last_error()).find("UTF-8") != std::string::npos);
  const ember_chat_message null_content[] = {{"user", nullptr}};
  CHECK(ember_chat_apply_template(model.get(), nullptr, nullptr, null_content, 1, true, buf.data(),
                                  buf.size(), &needed) == EMBER_ERR_INVALID_ARGUMENT);
  const ember_chat_message ok[] = {{"user", "x"}};
  CHECK(ember_chat_apply_template(model.get(), "{% if %}", nullptr, ok, 1, true, buf.data(),
                                  buf.size(), &needed) == EMBER_ERR_BAD_FORMAT);
  CHECK(ember_chat_apply_template(model.get(), nullptr, "tool_use", ok, 1, true, buf.data(),
                                  buf.size(), &needed) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(std::string(ember_last_error()).find("tokenizer.chat_template.tool_use") !=
        std::string::npos);
  // No template and no known markers (GPT-2's vocabulary).
  auto plain = ember::test::LoadCModelOrFail();
  CHECK(ember_chat_apply_template(plain.get(), nullptr, nullptr, ok, 1, true, buf.data(),
                                  buf.size(), &needed) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(ember_chat_apply_template(nullptr, nullptr, nullptr, ok, 1, true, buf.data(), buf.size(),
                                  &needed) == EMBER_ERR_INVALID_ARGUMENT);
}

TEST_CASE("c_api: a chat keeps the conversation, saves and loads it", "[c_api][chat]") {
  auto model = ChatModel();
  auto session = ChatSession(model.get(), 512);
  ember_chat_params cp = ember_chat_default_params();
  cp.system = "Be brief.";
  ember_chat* raw = nullptr;
  REQUIRE(ember_chat_create(session.get(), &cp, &raw) == EMBER_OK);
  ChatPtr chat(raw);
  CHECK(std::string(ember_chat_template_name(chat.get())) == "tokenizer.chat_template");
  ember_generate_params gp = ember_generate_default_params();
  gp.n_predict = 5;
  gp.temperature = 0;
  gp.ignore_eos = true;
  std::string reply1, reply2;
  ember_chat_stats st1{}, st2{};
  REQUIRE(ember_chat_send(chat.get(), "Hello.", &gp, Collect, &reply1, &st1) == EMBER_OK);
  REQUIRE(ember_chat_send(chat.get(), "Again.", &gp, Collect, &reply2, &st2) == EMBER_OK);
  CHECK(st1.gen.n_gen == 5);
  CHECK(st1.gen.n_reused == 0);
  CHECK(st2.gen.n_reused >= st1.gen.n_prompt);
  CHECK(st2.first_token_seconds > 0);
  REQUIRE(ember_chat_n_messages(chat.get()) == 5);
  const char *role = nullptr, *content = nullptr, *reasoning = nullptr;
  REQUIRE(ember_chat_get_message(chat.get(), 4, &role, &content, &reasoning) == EMBER_OK);
  CHECK(std::string(role) == "assistant");
  CHECK(std::string(content) == reply2);
  CHECK(std::string(reasoning).empty());
  CHECK(ember_chat_get_message(chat.get(), 5, &role, &content, &reasoning) ==
        EMBER_ERR_INVALID_ARGUMENT);
  // The last prompt's tokens.
  size_t n = 0;
  REQUIRE(ember_chat_last_prompt(chat.get(), nullptr, 0, &n) == EMBER_ERR_BUFFER_TOO_SMALL);
  CHECK(static_cast<int32_t>(n) == st2.gen.n_prompt);

  // Save, reset, load: the messages come back.
  const std::string path = ember::test::TempPath("chat.json");
  REQUIRE(ember_chat_save(chat.get(), path.c_str()) == EMBER_OK);
  ember_chat_reset(chat.get());
  CHECK(ember_chat_n_messages(chat.get()) == 1);
  REQUIRE(ember_chat_load(chat.get(), path.c_str()) == EMBER_OK);
  CHECK(ember_chat_n_messages(chat.get()) == 5);
  // Bad files leave the chat as it is.
  const std::string bad = ember::test::TempPath("bad_chat.json");
  std::ofstream(bad) << R"({"messages": [{"role": "wizard", "content": "x"}]})";
  CHECK(ember_chat_load(chat.get(), bad.c_str()) == EMBER_ERR_INVALID_ARGUMENT);
  std::ofstream(bad, std::ios::trunc) << "{not json";
  CHECK(ember_chat_load(chat.get(), bad.c_str()) == EMBER_ERR_BAD_FORMAT);
  CHECK(ember_chat_load(chat.get(), "/no/such/chat.json") == EMBER_ERR_IO);
  CHECK(ember_chat_n_messages(chat.get()) == 5);
  // A message that is not UTF-8 is refused and changes nothing.
  CHECK(ember_chat_send(chat.get(), "\xc3", &gp, Collect, &reply1, nullptr) ==
        EMBER_ERR_INVALID_ARGUMENT);
  CHECK(ember_chat_n_messages(chat.get()) == 5);
  // Bad parameters.
  ember_chat* other = nullptr;
  ember_chat_params bad_params = ember_chat_default_params();
  bad_params.reasoning_budget = -2;
  CHECK(ember_chat_create(session.get(), &bad_params, &other) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(other == nullptr);
  bad_params = ember_chat_default_params();
  bad_params.template_source = "{% for %}";
  CHECK(ember_chat_create(session.get(), &bad_params, &other) == EMBER_ERR_BAD_FORMAT);
  CHECK(ember_chat_send(nullptr, "x", &gp, nullptr, nullptr, nullptr) ==
        EMBER_ERR_INVALID_ARGUMENT);
}

TEST_CASE("c_api: self-consistency samples k answers and votes", "[c_api][chat][reasoning]") {
  auto model = ChatModel();
  auto session = ChatSession(model.get(), 256);
  std::vector<int32_t> prompt(32);
  size_t n = 0;
  const std::string text = "Question: what is 2 + 2? Answer:";
  REQUIRE(ember_tokenize(model.get(), text.data(), text.size(), true, false, prompt.data(),
                         prompt.size(), &n) == EMBER_OK);
  prompt.resize(n);
  ember_generate_params gp = ember_generate_default_params();
  gp.n_predict = 6;
  gp.temperature = 1.0f;
  gp.seed = 7;
  gp.ignore_eos = true;
  struct Seen {
    std::vector<std::string> answers;
  } seen;
  auto on_sample = [](const ember_consistency_sample* s, void* user_data) {
    auto* out = static_cast<Seen*>(user_data);
    CHECK(s->index == static_cast<int32_t>(out->answers.size()));
    CHECK(s->n_gen == 6);
    out->answers.emplace_back(s->answer);
    return true;
  };
  char answer[256];
  size_t needed = 0;
  int32_t votes = -1;
  REQUIRE(ember_self_consistency(session.get(), prompt.data(), prompt.size(), &gp, 5, on_sample,
                                 &seen, answer, sizeof answer, &needed, &votes) == EMBER_OK);
  REQUIRE(seen.answers.size() == 5);
  // The winner has the most votes among the answers given (empty ones do not vote).
  int32_t best = 0;
  for (const std::string& a : seen.answers) {
    if (a.empty()) continue;
    best = std::max<int32_t>(
        best, static_cast<int32_t>(std::count(seen.answers.begin(), seen.answers.end(), a)));
  }
  CHECK(votes == best);
  if (best > 0) {
    CHECK(std::count(seen.answers.begin(), seen.answers.end(), std::string(answer)) == votes);
  }
  // The same seed gives the same samples; the samples are not all one.
  Seen again;
  REQUIRE(ember_self_consistency(session.get(), prompt.data(), prompt.size(), &gp, 5, on_sample,
                                 &again, answer, sizeof answer, &needed, &votes) == EMBER_OK);
  CHECK(again.answers == seen.answers);
  CHECK(std::count(seen.answers.begin(), seen.answers.end(), seen.answers[0]) < 5);
  // Bad input.
  CHECK(ember_self_consistency(session.get(), prompt.data(), prompt.size(), &gp, 0, nullptr,
                               nullptr, answer, sizeof answer, &needed,
                               &votes) == EMBER_ERR_INVALID_ARGUMENT);
  gp.beams = 2;
  CHECK(ember_self_consistency(session.get(), prompt.data(), prompt.size(), &gp, 2, nullptr,
                               nullptr, answer, sizeof answer, &needed,
                               &votes) == EMBER_ERR_INVALID_ARGUMENT);
}
