// The C API's chat entry points (include/ember.h, "Chat"): templates (JSON or
// message arrays in, the rendered prompt or its tokens out), conversations
// over runtime/chat, and self-consistency.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "ember.h"
#include "runtime/capi/c_api_internal.h"
#include "runtime/chat/builtin_templates.h"
#include "runtime/chat/chat_template.h"
#include "runtime/chat/conversation.h"
#include "runtime/chat/reasoning.h"
#include "runtime/decoding/self_consistency.h"

using namespace ember::capi;
using json = nlohmann::ordered_json;

struct ember_chat {
  ember::ChatTemplate tmpl;
  std::unique_ptr<ember::Conversation> conversation;
  // get_message's strings, kept until the messages change.
  mutable std::vector<std::string> strings;
};

namespace {

// The template a model's file names (tokenizer.chat_template or
// tokenizer.chat_template.NAME) or, when it has none, the built-in one its
// vocabulary's markers call for; *label says which.
ember::Status ModelTemplate(const ember::Model& model, const char* name, std::string* out,
                            std::string* label) {
  const std::string key =
      name == nullptr ? "tokenizer.chat_template" : std::string("tokenizer.chat_template.") + name;
  const ember::GgufValue* v = model.gguf().Find(key);
  if (v != nullptr && v->type == ember::GgufType::kString) {
    *out = v->str;
    *label = key;
    return ember::Status::Ok();
  }
  if (name != nullptr) {
    return ember::InvalidArgument("the model has no chat template named '" + std::string(name) +
                                  "' (" + key + ")");
  }
  if (const ember::BuiltinTemplate* b = ember::BuiltinTemplateFor(model.tokenizer())) {
    *out = b->source;
    *label = std::string("ember's built-in ") + b->name + " template (the model has none)";
    return ember::Status::Ok();
  }
  return ember::InvalidArgument(
      "the model has no chat template (tokenizer.chat_template), and its vocabulary has none of "
      "the markers of ember's built-in ones; give one");
}

ember::Status ParseTemplate(const ember::Model& model, const char* source, const char* name,
                            ember::ChatTemplate* out) {
  std::string text;
  std::string label;
  if (source != nullptr) {
    text = source;
    label = "the given template";
  } else {
    EMBER_RETURN_IF_ERROR(ModelTemplate(model, name, &text, &label));
  }
  return ember::ChatTemplate::Parse(std::move(text), std::move(label), out);
}

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

// messages -> a JSON array of {role, content}, checking roles and UTF-8.
ember_status MessagesToJson(const ember_chat_message* messages, size_t n, json* out) {
  *out = json::array();
  for (size_t i = 0; i < n; ++i) {
    const ember_chat_message& m = messages[i];
    const std::string where = "message " + std::to_string(i);
    EMBER_REQUIRE_ARG(m.role != nullptr && m.content != nullptr,
                      where + ": role or content is NULL");
    const std::string role = m.role;
    if (role != "system" && role != "user" && role != "assistant" && role != "tool") {
      return Fail(EMBER_ERR_INVALID_ARGUMENT, where + " has the unknown role '" + role +
                                                  "' (system, user, assistant and tool are known)");
    }
    json msg = {{"role", role}, {"content", m.content}};
    try {
      (void)msg.dump();  // throws on invalid UTF-8
    } catch (const json::exception&) {
      return Fail(EMBER_ERR_INVALID_ARGUMENT, where + ": the content is not valid UTF-8");
    }
    out->push_back(std::move(msg));
  }
  return EMBER_OK;
}

bool PieceToC(ember_chat_piece_fn fn, void* user_data, std::string* copy,
              ember::ReplyChannel channel, std::string_view piece) {
  if (fn == nullptr) return true;
  copy->assign(piece);  // the header promises a NUL after the piece
  return fn(copy->c_str(), copy->size(), channel == ember::ReplyChannel::kReasoning, user_data);
}

// Renders messages with a model's template (or `source`) as the C API's
// template functions do; *bos / *eos get the texts the template was given.
ember_status RenderMessages(const ember_model* model, const char* source, const char* name,
                            const ember_chat_message* messages, size_t n_messages,
                            bool add_generation_prompt, std::string* text, std::string* bos,
                            std::string* eos) {
  EMBER_REQUIRE_ARG(model != nullptr, "model is NULL");
  EMBER_REQUIRE_ARG(messages != nullptr || n_messages == 0, "messages is NULL");
  const ember::Model& m = *model->model;
  ember::ChatTemplate tmpl;
  ember_status s = Report(ParseTemplate(m, source, name, &tmpl));
  if (s != EMBER_OK) return s;
  json msgs;
  s = MessagesToJson(messages, n_messages, &msgs);
  if (s != EMBER_OK) return s;
  ember::ChatTemplateOptions o;
  o.add_generation_prompt = add_generation_prompt;
  const ember::Tokenizer& tok = m.tokenizer();
  if (tok.vocab().bos_id >= 0) o.bos_token = tok.TokenToPiece(tok.vocab().bos_id, true);
  if (tok.vocab().eos_id >= 0) o.eos_token = tok.TokenToPiece(tok.vocab().eos_id, true);
  *bos = o.bos_token;
  *eos = o.eos_token;
  return Report(tmpl.Apply(msgs, o, text));
}

}  // namespace

extern "C" {

ember_status ember_chat_apply_template(const ember_model* model, const char* template_source,
                                       const char* template_name,
                                       const ember_chat_message* messages, size_t n_messages,
                                       bool add_generation_prompt, char* buf, size_t buf_size,
                                       size_t* needed) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(buf != nullptr || buf_size == 0,
                      "ember_chat_apply_template: buf is NULL but buf_size is not 0");
    std::string text, bos, eos;
    const ember_status s = RenderMessages(model, template_source, template_name, messages,
                                          n_messages, add_generation_prompt, &text, &bos, &eos);
    if (s != EMBER_OK) return s;
    if (needed) *needed = text.size() + 1;
    if (buf_size < text.size() + 1) {
      return Fail(EMBER_ERR_BUFFER_TOO_SMALL, "ember_chat_apply_template: buffer too small");
    }
    std::memcpy(buf, text.data(), text.size());
    buf[text.size()] = '\0';
    return EMBER_OK;
  });
}

ember_status ember_chat_prompt_tokens(const ember_model* model, const char* template_source,
                                      const char* template_name, const ember_chat_message* messages,
                                      size_t n_messages, bool add_generation_prompt,
                                      int32_t* tokens, size_t capacity, size_t* n_tokens) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(tokens != nullptr || capacity == 0,
                      "ember_chat_prompt_tokens: tokens is NULL but capacity is not 0");
    std::string text, bos, eos;
    const ember_status s = RenderMessages(model, template_source, template_name, messages,
                                          n_messages, add_generation_prompt, &text, &bos, &eos);
    if (s != EMBER_OK) return s;
    const std::vector<int32_t> ids =
        ember::TokenizeChatPrompt(model->model->tokenizer(), text, bos, eos);
    if (n_tokens) *n_tokens = ids.size();
    if (capacity < ids.size()) {
      return Fail(EMBER_ERR_BUFFER_TOO_SMALL, "ember_chat_prompt_tokens: buffer too small");
    }
    std::copy(ids.begin(), ids.end(), tokens);
    return EMBER_OK;
  });
}

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

ember_status ember_chat_model_template(const ember_model* model, const char* template_name,
                                       char* buf, size_t buf_size, size_t* needed, bool* builtin) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(model != nullptr, "ember_chat_model_template: model is NULL");
    EMBER_REQUIRE_ARG(buf != nullptr || buf_size == 0,
                      "ember_chat_model_template: buf is NULL but buf_size is not 0");
    std::string text, label;
    const ember_status s = Report(ModelTemplate(*model->model, template_name, &text, &label));
    if (s != EMBER_OK) return s;
    if (builtin) *builtin = label.rfind("ember's built-in", 0) == 0;
    if (needed) *needed = text.size() + 1;
    if (buf_size < text.size() + 1) {
      return Fail(EMBER_ERR_BUFFER_TOO_SMALL, "ember_chat_model_template: buffer too small");
    }
    std::memcpy(buf, text.data(), text.size());
    buf[text.size()] = '\0';
    return EMBER_OK;
  });
}

// ---- Reasoning sections ----------------------------------------------------

struct ember_reasoning {
  ember::ThinkingMarkers markers;
  ember::ReasoningSplitter splitter;
};

ember_status ember_reasoning_create(const ember_model* model, const char* template_source,
                                    ember_reasoning** out) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(out != nullptr, "ember_reasoning_create: out is NULL");
    *out = nullptr;
    std::string source;
    if (template_source != nullptr) {
      source = template_source;
    } else {
      EMBER_REQUIRE_ARG(model != nullptr,
                        "ember_reasoning_create: model and template_source are both NULL");
      std::string label;
      const ember_status s = Report(ModelTemplate(*model->model, nullptr, &source, &label));
      if (s != EMBER_OK) return s;
    }
    const std::optional<ember::ThinkingMarkers> m = ember::FindThinkingMarkers(source);
    if (!m) {
      return Fail(EMBER_ERR_UNSUPPORTED,
                  "the chat template has no known thinking markers (not a reasoning model's)");
    }
    *out = new ember_reasoning{*m, ember::ReasoningSplitter(*m, false)};
    return EMBER_OK;
  });
}

void ember_reasoning_free(ember_reasoning* reasoning) { delete reasoning; }

bool ember_reasoning_prompt_opens(const ember_reasoning* reasoning, const char* prompt) {
  if (reasoning == nullptr || prompt == nullptr) return false;
  return ember::PromptOpensReasoning(prompt, reasoning->markers);
}

void ember_reasoning_begin(ember_reasoning* reasoning, bool starts_inside) {
  if (reasoning == nullptr) return;
  reasoning->splitter = ember::ReasoningSplitter(reasoning->markers, starts_inside);
}

}  // extern "C"

namespace {  // (outside extern "C": it returns a C++ type)

ember::ReasoningSplitter::EmitFn ToEmit(ember_reasoning_fn fn, void* user_data) {
  return [fn, user_data](ember::ReplyChannel c, std::string_view text) {
    if (fn != nullptr && !text.empty()) {
      fn(c == ember::ReplyChannel::kReasoning, text.data(), text.size(), user_data);
    }
  };
}

}  // namespace

extern "C" {

ember_status ember_reasoning_feed(ember_reasoning* reasoning, const char* piece, size_t len,
                                  ember_reasoning_fn fn, void* user_data) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(reasoning != nullptr, "ember_reasoning_feed: reasoning is NULL");
    EMBER_REQUIRE_ARG(piece != nullptr || len == 0, "ember_reasoning_feed: piece is NULL");
    reasoning->splitter.Feed(std::string_view(piece == nullptr ? "" : piece, len),
                             ToEmit(fn, user_data));
    return EMBER_OK;
  });
}

ember_status ember_reasoning_finish(ember_reasoning* reasoning, ember_reasoning_fn fn,
                                    void* user_data) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(reasoning != nullptr, "ember_reasoning_finish: reasoning is NULL");
    reasoning->splitter.Finish(ToEmit(fn, user_data));
    return EMBER_OK;
  });
}

ember_chat_params ember_chat_default_params(void) {
  ember_chat_params p;
  std::memset(&p, 0, sizeof(p));
  p.reasoning_budget = -1;
  p.enable_thinking = -1;
  return p;
}

ember_status ember_chat_create(ember_session* session, const ember_chat_params* params,
                               ember_chat** out) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(out != nullptr, "ember_chat_create: out is NULL");
    *out = nullptr;
    EMBER_REQUIRE_ARG(session != nullptr, "ember_chat_create: session is NULL");
    const ember_chat_params p = params ? *params : ember_chat_default_params();
    EMBER_REQUIRE_ARG(p.reasoning_budget >= -1,
                      "ember_chat_create: reasoning_budget must be >= 0, or -1 for none");
    EMBER_REQUIRE_ARG(p.enable_thinking >= -1 && p.enable_thinking <= 1,
                      "ember_chat_create: enable_thinking must be -1, 0 or 1");
    auto chat = std::make_unique<ember_chat>();
    ember::Session& s = *session->session;
    ember_status st =
        Report(ParseTemplate(s.model(), p.template_source, p.template_name, &chat->tmpl));
    if (st != EMBER_OK) return st;
    ember::ConversationParams cp;
    if (p.system != nullptr) cp.system = p.system;
    cp.reasoning_budget = p.reasoning_budget;
    if (p.enable_thinking >= 0) cp.template_options.enable_thinking = p.enable_thinking == 1;
    st = Report(ember::Conversation::Create(&s, &chat->tmpl, std::move(cp), &chat->conversation));
    if (st != EMBER_OK) return st;
    *out = chat.release();
    return EMBER_OK;
  });
}

void ember_chat_free(ember_chat* chat) { delete chat; }

const char* ember_chat_template_name(const ember_chat* chat) {
  return chat == nullptr ? "" : chat->tmpl.name().c_str();
}

ember_status ember_chat_send(ember_chat* chat, const char* user_message,
                             const ember_generate_params* params, ember_chat_piece_fn on_piece,
                             void* user_data, ember_chat_stats* stats) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(chat != nullptr, "ember_chat_send: chat is NULL");
    EMBER_REQUIRE_ARG(user_message != nullptr, "ember_chat_send: user_message is NULL");
    ember_generate_params p = params ? *params : ember_generate_default_params();
    p.beams = 0;
    ember::GenerateParams gp;
    ember_status s = GenerateParamsFromC(p, &gp);
    if (s != EMBER_OK) return s;
    std::string copy;
    ember::ChatTurn turn;
    s = Report(chat->conversation->Send(
        user_message, gp,
        [&](ember::ReplyChannel ch, std::string_view piece) {
          return PieceToC(on_piece, user_data, &copy, ch, piece);
        },
        &turn));
    chat->strings.clear();
    if (s != EMBER_OK) return s;
    if (stats) {
      StatsToC(turn.gen, gp.stop, &stats->gen);
      stats->gen.n_prompt = static_cast<int32_t>(turn.n_prompt);
      stats->gen.n_reused = static_cast<int32_t>(turn.n_reused);
      stats->n_reasoning = static_cast<int32_t>(turn.n_reasoning);
      stats->reasoning_budget_hit = turn.budget_hit;
      stats->n_dropped_messages = static_cast<int32_t>(turn.n_dropped_messages);
      stats->first_token_seconds = turn.first_token_seconds;
      SpeculativeStatsToC(turn.spec, static_cast<int64_t>(turn.gen.tokens.size()), &stats->spec);
    }
    return EMBER_OK;
  });
}

ember_status ember_chat_last_prompt(const ember_chat* chat, int32_t* tokens, size_t capacity,
                                    size_t* n_tokens) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(chat != nullptr, "ember_chat_last_prompt: chat is NULL");
    EMBER_REQUIRE_ARG(tokens != nullptr || capacity == 0,
                      "ember_chat_last_prompt: tokens is NULL but capacity is not 0");
    const std::vector<int32_t>& p = chat->conversation->last_prompt();
    if (n_tokens) *n_tokens = p.size();
    if (capacity < p.size()) {
      return Fail(EMBER_ERR_BUFFER_TOO_SMALL, "ember_chat_last_prompt: buffer too small");
    }
    std::copy(p.begin(), p.end(), tokens);
    return EMBER_OK;
  });
}

ember_status ember_chat_set_speculative(ember_chat* chat, const ember_speculative_params* spec) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(chat != nullptr, "ember_chat_set_speculative: chat is NULL");
    if (spec == nullptr) {
      chat->conversation->SetSpeculative(nullptr, ember::SpeculativeParams());
      return EMBER_OK;
    }
    std::unique_ptr<ember::DraftSource> draft;
    ember::SpeculativeParams sp;
    const ember_status s =
        DraftSourceFromC(*spec, chat->conversation->session().model().tokenizer(), &draft, &sp);
    if (s != EMBER_OK) return s;
    chat->conversation->SetSpeculative(std::move(draft), sp);
    return EMBER_OK;
  });
}

void ember_chat_reset(ember_chat* chat) {
  if (chat == nullptr) return;
  chat->conversation->Reset();
  chat->strings.clear();
}

size_t ember_chat_n_messages(const ember_chat* chat) {
  return chat == nullptr ? 0 : chat->conversation->messages().size();
}

ember_status ember_chat_get_message(const ember_chat* chat, size_t i, const char** role,
                                    const char** content, const char** reasoning) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(chat != nullptr, "ember_chat_get_message: chat is NULL");
    const json& msgs = chat->conversation->messages();
    EMBER_REQUIRE_ARG(i < msgs.size(), "ember_chat_get_message: no message " + std::to_string(i));
    // Three strings per message, built on first use; the vector is sized
    // once so that earlier pointers stay valid.
    if (chat->strings.size() != 3 * msgs.size()) {
      chat->strings.assign(3 * msgs.size(), std::string());
      for (size_t k = 0; k < msgs.size(); ++k) {
        chat->strings[3 * k] = msgs[k].value("role", "");
        chat->strings[3 * k + 1] = msgs[k].value("content", "");
        chat->strings[3 * k + 2] = msgs[k].value("reasoning_content", "");
      }
    }
    if (role) *role = chat->strings[3 * i].c_str();
    if (content) *content = chat->strings[3 * i + 1].c_str();
    if (reasoning) *reasoning = chat->strings[3 * i + 2].c_str();
    return EMBER_OK;
  });
}

ember_status ember_chat_save(const ember_chat* chat, const char* path) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(chat != nullptr && path != nullptr, "ember_chat_save: chat or path is NULL");
    const std::string text = json{{"messages", chat->conversation->messages()}}.dump(2) + "\n";
    const std::string tmp = std::string(path) + ".tmp";
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (f == nullptr) return Fail(EMBER_ERR_IO, "cannot write " + tmp);
    const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    const bool closed = std::fclose(f) == 0;
    if (!written || !closed || std::rename(tmp.c_str(), path) != 0) {
      std::remove(tmp.c_str());
      return Fail(EMBER_ERR_IO, std::string("cannot write ") + path);
    }
    return EMBER_OK;
  });
}

ember_status ember_chat_load(ember_chat* chat, const char* path) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(chat != nullptr && path != nullptr, "ember_chat_load: chat or path is NULL");
    std::ifstream in(path, std::ios::binary);
    if (!in) return Fail(EMBER_ERR_IO, std::string("cannot read ") + path);
    std::stringstream ss;
    ss << in.rdbuf();
    json doc = json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("messages")) {
      return Fail(EMBER_ERR_BAD_FORMAT,
                  std::string(path) + " is not a saved chat ({\"messages\": [...]})");
    }
    const ember_status s = Report(chat->conversation->SetMessages(std::move(doc["messages"])));
    chat->strings.clear();
    return s;
  });
}

ember_status ember_self_consistency(ember_session* session, const int32_t* prompt, size_t n_prompt,
                                    const ember_generate_params* params, int32_t k,
                                    ember_consistency_fn on_sample, void* user_data, char* answer,
                                    size_t answer_size, size_t* needed, int32_t* votes) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(session != nullptr, "ember_self_consistency: session is NULL");
    EMBER_REQUIRE_ARG(prompt != nullptr && n_prompt > 0,
                      "ember_self_consistency: the prompt is empty");
    EMBER_REQUIRE_ARG(k >= 1, "ember_self_consistency: k must be >= 1");
    EMBER_REQUIRE_ARG(answer != nullptr || answer_size == 0,
                      "ember_self_consistency: answer is NULL but answer_size is not 0");
    const ember_generate_params p = params ? *params : ember_generate_default_params();
    EMBER_REQUIRE_ARG(p.beams == 0, "ember_self_consistency: beams are not allowed");
    ember::Session& s = *session->session;
    s.ClearCancel();
    ember::SelfConsistencyParams sc;
    sc.k = k;
    ember_status st = GenerateParamsFromC(p, &sc.gen);
    if (st != EMBER_OK) return st;
    sc.gen.sampling.seed = p.seed;
    const ember::Model& model = s.model();
    if (const ember::GgufValue* t = model.gguf().Find("tokenizer.chat_template");
        t != nullptr && t->type == ember::GgufType::kString) {
      sc.markers = ember::FindThinkingMarkers(t->str);
    }
    std::vector<int32_t> ids(prompt, prompt + n_prompt);
    if (sc.markers) {
      sc.prompt_opens_reasoning =
          ember::PromptOpensReasoning(model.tokenizer().Decode(ids, true), *sc.markers);
    }
    ember::SelfConsistencyResult r;
    st = Report(ember::SelfConsistency(
        s, ids, sc,
        [&](int32_t i, const ember::ConsistencySample& c) {
          if (on_sample == nullptr) return true;
          const ember_consistency_sample cs{i,
                                            c.reasoning.c_str(),
                                            c.content.c_str(),
                                            c.answer.c_str(),
                                            static_cast<ember_finish_reason>(c.finish),
                                            static_cast<int32_t>(c.n_gen)};
          return on_sample(&cs, user_data);
        },
        &r));
    if (st != EMBER_OK) return st;
    const std::string best = r.votes.empty() ? "" : r.votes[0].answer;
    if (votes) *votes = r.votes.empty() ? 0 : r.votes[0].votes;
    if (needed) *needed = best.size() + 1;
    if (answer_size < best.size() + 1) {
      return Fail(EMBER_ERR_BUFFER_TOO_SMALL, "ember_self_consistency: answer buffer too small");
    }
    std::memcpy(answer, best.data(), best.size());
    answer[best.size()] = '\0';
    return EMBER_OK;
  });
}

}  // extern "C"
