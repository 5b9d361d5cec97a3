// Conversations (runtime/chat/conversation.h) on tiny models with real
// vocabularies and chat templates: prefix reuse per turn, whole turns
// dropped when the context fills, reasoning budgets, bad input.
#include "runtime/chat/conversation.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "runtime/chat/chat_template.h"
#include "support/loaders.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

using namespace ember;
using json = nlohmann::ordered_json;

namespace {

// ChatML with the reasoning opened by the generation prompt, as
// DeepSeek-R1's and QwQ's templates do.
// Earlier replies are rendered without their reasoning (the text after
// </think>), as those templates do.
const char* kThinkingChatml =
    "{% for m in messages %}<|im_start|>{{ m.role }}\n"
    "{% if m.role == 'assistant' %}{{ m.content.split('</think>')[-1] }}"
    "{% else %}{{ m.content }}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n{% endif %}";

struct Fixture {
  std::unique_ptr<Model> model;
  std::unique_ptr<Session> session;
  ChatTemplate tmpl;
  std::unique_ptr<Conversation> chat;

  // The tiny qwen2 model carries Qwen2's ChatML template (from the qwen2
  // vocabulary file) unless `source` is given.
  explicit Fixture(int64_t n_ctx, const std::string& source = "",
                   const std::string& system = "You are terse.", int64_t budget = -1) {
    const std::string path = test::BuildArchModel("qwen2");
    REQUIRE(!path.empty());
    model = test::LoadModelOrFail(path);
    SessionParams sp;
    sp.n_ctx = n_ctx;
    sp.n_threads = 1;
    sp.n_threads_batch = 1;
    sp.context_shift = false;
    session = test::CreateSessionOrFail(*model, sp);
    std::string text = source;
    if (text.empty()) {
      const GgufValue* v = model->gguf().Find("tokenizer.chat_template");
      REQUIRE(v != nullptr);
      text = v->str;
    }
    const Status parsed = ChatTemplate::Parse(text, "test template", &tmpl);
    INFO(parsed.message());
    REQUIRE(parsed.ok());
    ConversationParams cp;
    cp.system = system;
    cp.reasoning_budget = budget;
    const Status created = Conversation::Create(session.get(), &tmpl, cp, &chat);
    INFO(created.message());
    REQUIRE(created.ok());
  }

  ChatTurn Send(const std::string& message, int64_t n_predict, bool ignore_eos = false) {
    GenerateParams g;
    g.n_predict = n_predict;
    g.sampling.temperature = 0;  // greedy
    g.ignore_eos = ignore_eos;
    ChatTurn turn;
    const Status s = chat->Send(message, g, nullptr, &turn);
    INFO(s.message());
    REQUIRE(s.ok());
    return turn;
  }
};

}  // namespace

TEST_CASE("chat: each turn computes only what the cache does not hold", "[chat]") {
  Fixture f(512);
  const ChatTurn t1 = f.Send("Hello there.", 6, true);
  CHECK(t1.n_reused == 0);
  CHECK(t1.gen.tokens.size() == 6);
  REQUIRE(f.chat->messages().size() == 3);  // system, user, assistant
  CHECK(f.chat->messages()[2]["role"] == "assistant");
  CHECK(f.chat->messages()[2]["content"] == t1.content);

  const ChatTurn t2 = f.Send("And now?", 6, true);
  // The first turn's prompt and reply come from the cache: what is computed
  // is the end of the reply as the template renders it, the new message and
  // the markers around it.
  CHECK(t2.n_reused >= t1.n_prompt);
  const int64_t n_message =
      static_cast<int64_t>(f.model->tokenizer().Encode("And now?", false, false).size());
  CHECK(t2.n_prompt - t2.n_reused <= n_message + 12);
  CHECK(t2.n_prompt > t1.n_prompt + static_cast<int64_t>(t1.gen.tokens.size()));

  // The reused cache gives the reply a fresh session gives from the same prompt.
  std::string rendered;
  json upto = f.chat->messages();
  upto.erase(upto.end() - 1);  // without the second reply
  REQUIRE(f.chat->Render(upto, true, &rendered).ok());
  const std::vector<int32_t> prompt = f.chat->Tokenize(rendered);
  CHECK(static_cast<int64_t>(prompt.size()) == t2.n_prompt);
  SessionParams sp;
  sp.n_ctx = 512;
  sp.n_threads = 1;
  sp.n_threads_batch = 1;
  auto fresh = test::CreateSessionOrFail(*f.model, sp);
  GenerateParams g;
  g.n_predict = 6;
  g.sampling.temperature = 0;
  g.ignore_eos = true;
  GenerateResult r;
  REQUIRE(Generate(*fresh, prompt, g, nullptr, nullptr, &r).ok());
  CHECK(r.tokens == t2.gen.tokens);
}

TEST_CASE("chat: the oldest whole turns go when the context fills", "[chat]") {
  Fixture f(96);
  int64_t dropped = 0;
  for (int i = 0; i < 8; ++i) {
    const ChatTurn t = f.Send("Tell me item number " + std::to_string(i) + " please.", 12, true);
    dropped += t.n_dropped_messages;
    CHECK(t.n_prompt + 12 <= 96);
    const json& m = f.chat->messages();
    CHECK(m[0]["role"] == "system");  // never dropped
    // system, then user/assistant pairs: never half a turn.
    REQUIRE(m.size() % 2 == 1);
    for (size_t k = 1; k < m.size(); ++k) {
      CHECK(m[k]["role"] == (k % 2 == 1 ? "user" : "assistant"));
    }
    CHECK(m[m.size() - 2]["content"] == "Tell me item number " + std::to_string(i) + " please.");
  }
  CHECK(dropped > 0);
  CHECK(dropped % 2 == 0);
}

TEST_CASE("chat: bad messages leave the conversation and its cache as they were",
          "[chat][bad-input]") {
  Fixture f(128);
  f.Send("Hi.", 4, true);
  const json before = f.chat->messages();
  const int64_t n_past = f.session->n_past();
  GenerateParams g;
  g.n_predict = 4;
  ChatTurn turn;

  const Status utf8 = f.chat->Send("bad \xff\xfe bytes", g, nullptr, &turn);
  CHECK(utf8.code() == Code::kInvalidArgument);
  CHECK(utf8.message().find("UTF-8") != std::string::npos);

  const Status huge = f.chat->Send(std::string(3000, 'x') + " y", g, nullptr, &turn);
  CHECK(huge.code() == Code::kContextOverflow);

  const Status beams = [&] {
    GenerateParams b = g;
    b.beams = 2;
    return f.chat->Send("Hi.", b, nullptr, &turn);
  }();
  CHECK(beams.code() == Code::kUnsupported);

  CHECK(f.chat->messages() == before);
  CHECK(f.session->n_past() == n_past);

  CHECK(f.chat->SetMessages(json::parse(R"([{"role": "wizard", "content": "x"}])")).code() ==
        Code::kInvalidArgument);
  CHECK(f.chat->SetMessages(json::parse(R"([{"role": "user"}])")).code() == Code::kInvalidArgument);
  CHECK(f.chat->SetMessages(json::parse(R"({"role": "user"})")).code() == Code::kInvalidArgument);
  CHECK(f.chat->messages() == before);

  // A good conversation replaces the messages; the next turn reuses what matches.
  const json loaded = json::parse(
      R"([{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Hi."}])");
  REQUIRE(f.chat->SetMessages(loaded).ok());
  CHECK(f.chat->messages() == loaded);
  f.chat->Reset();
  CHECK(f.chat->messages().size() == 1);
}

TEST_CASE("chat: a reasoning budget closes the thinking and lets the model answer",
          "[chat][reasoning]") {
  Fixture f(512, kThinkingChatml, "", /*budget=*/3);
  REQUIRE(f.chat->thinking_markers().has_value());
  std::string seen_reasoning, seen_content;
  GenerateParams g;
  g.n_predict = 10;
  g.sampling.temperature = 0;
  g.ignore_eos = true;
  ChatTurn t;
  REQUIRE(f.chat
              ->Send(
                  "Think about it.", g,
                  [&](ReplyChannel ch, std::string_view p) {
                    (ch == ReplyChannel::kReasoning ? seen_reasoning : seen_content).append(p);
                    return true;
                  },
                  &t)
              .ok());
  CHECK(t.budget_hit);
  CHECK(t.n_reasoning == 3);
  CHECK(seen_reasoning == t.reasoning);
  CHECK(seen_content == t.content);
  // 3 reasoning tokens, then 7 of the answer (n_predict counts both).
  REQUIRE(t.gen.tokens.size() == 10);
  // The context: the prompt, the 3 reasoning tokens, the forced close marker,
  // then the answer (its last token is not decoded yet).
  const Tokenizer& tok = f.model->tokenizer();
  const std::vector<int32_t> close = tok.Encode("\n</think>\n\n", false, true);
  std::vector<int32_t> expect(f.session->tokens().begin(),
                              f.session->tokens().begin() + t.n_prompt);
  expect.insert(expect.end(), t.gen.tokens.begin(), t.gen.tokens.begin() + 3);
  expect.insert(expect.end(), close.begin(), close.end());
  expect.insert(expect.end(), t.gen.tokens.begin() + 3, t.gen.tokens.end() - 1);
  CHECK(f.session->tokens() == expect);
  CHECK(tok.Decode({t.gen.tokens.begin(), t.gen.tokens.begin() + 3}).find(t.reasoning) !=
        std::string::npos);
  // The reply in the conversation keeps the two apart.
  const json& reply = f.chat->messages().back();
  CHECK(reply["content"] == t.content);
  CHECK(reply.value("reasoning_content", "") == t.reasoning);
}

TEST_CASE("chat: a zero budget answers without thinking", "[chat][reasoning]") {
  Fixture f(512, kThinkingChatml, "", /*budget=*/0);
  const ChatTurn t = f.Send("Quick.", 5, true);
  CHECK(t.budget_hit);
  CHECK(t.n_reasoning == 0);
  CHECK(t.reasoning.empty());
  CHECK(t.gen.tokens.size() == 5);
}
