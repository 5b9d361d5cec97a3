#include "serve/openai_request.h"

#include <cmath>
#include <random>

#include "serve/api_error.h"

namespace serve {
namespace {

using json = nlohmann::json;

const json* Field(const json& body, const char* name) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return nullptr;  // null means "not given"
  return &*it;
}

double Number(const json& body, const char* name, double fallback, double lo, double hi) {
  const json* v = Field(body, name);
  if (!v) return fallback;
  if (!v->is_number()) throw BadRequest(std::string("'") + name + "' must be a number", name);
  const double x = v->get<double>();
  if (!(x >= lo && x <= hi)) {
    char msg[160];
    std::snprintf(msg, sizeof(msg), "'%s' must be between %g and %g, got %g", name, lo, hi, x);
    throw BadRequest(msg, name);
  }
  return x;
}

int64_t Integer(const json& body, const char* name, int64_t fallback, int64_t lo, int64_t hi) {
  const json* v = Field(body, name);
  if (!v) return fallback;
  if (!v->is_number_integer()) {
    throw BadRequest(std::string("'") + name + "' must be an integer", name);
  }
  const int64_t x =
      v->is_number_unsigned() && v->get<uint64_t>() > INT64_MAX ? INT64_MAX : v->get<int64_t>();
  if (x < lo || x > hi) {
    throw BadRequest(std::string("'") + name + "' must be between " + std::to_string(lo) + " and " +
                         std::to_string(hi) + ", got " + std::to_string(x),
                     name);
  }
  return x;
}

bool Bool(const json& body, const char* name, bool fallback) {
  const json* v = Field(body, name);
  if (!v) return fallback;
  if (!v->is_boolean()) throw BadRequest(std::string("'") + name + "' must be a boolean", name);
  return v->get<bool>();
}

std::vector<std::string> Stops(const json& body) {
  const json* v = Field(body, "stop");
  std::vector<std::string> out;
  if (!v) return out;
  if (v->is_string()) {
    out.push_back(v->get<std::string>());
  } else if (v->is_array()) {
    for (const json& s : *v) {
      if (!s.is_string())
        throw BadRequest("'stop' must be a string or an array of strings", "stop");
      out.push_back(s.get<std::string>());
    }
  } else {
    throw BadRequest("'stop' must be a string or an array of strings", "stop");
  }
  if (out.size() > 16) throw BadRequest("'stop' holds at most 16 strings", "stop");
  for (const std::string& s : out) {
    if (s.empty()) throw BadRequest("'stop' strings must not be empty", "stop");
  }
  return out;
}

// A message's content: a string, null (an assistant turn with tool calls) or
// an array of parts of which ember reads the text ones.
std::string Content(const json& msg, size_t i) {
  const std::string param = "messages[" + std::to_string(i) + "].content";
  auto it = msg.find("content");
  if (it == msg.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (!it->is_array()) throw BadRequest("'" + param + "' must be a string or an array", param);
  std::string text;
  for (const json& part : *it) {
    if (!part.is_object() || !part.contains("type") || part["type"] != "text" ||
        !part.contains("text") || !part["text"].is_string()) {
      throw BadRequest("'" + param + "': only text parts are supported", param);
    }
    text += part["text"].get<std::string>();
  }
  return text;
}

// The prompt's tokens; with `rendered`, also its text.
std::vector<int32_t> ChatPromptTokens(const ember_model* model, const json& body,
                                      std::string* rendered) {
  const json* msgs = Field(body, "messages");
  if (!msgs) throw BadRequest("'messages' is required", "messages");
  if (!msgs->is_array()) throw BadRequest("'messages' must be an array", "messages");
  if (msgs->empty()) throw BadRequest("'messages' must not be empty", "messages");
  std::vector<std::string> roles, contents;
  for (size_t i = 0; i < msgs->size(); ++i) {
    const json& m = (*msgs)[i];
    const std::string param = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) throw BadRequest("'" + param + "' must be an object", param);
    auto role = m.find("role");
    if (role == m.end() || !role->is_string()) {
      throw BadRequest("'" + param + ".role' must be a string", param + ".role");
    }
    std::string r = role->get<std::string>();
    if (r == "developer") r = "system";  // OpenAI's newer name for the system message
    if (r != "system" && r != "user" && r != "assistant" && r != "tool") {
      throw BadRequest("'" + param + ".role': unknown role '" + r +
                           "' (system, developer, user, assistant or tool)",
                       param + ".role");
    }
    roles.push_back(r);
    contents.push_back(Content(m, i));
  }
  std::vector<ember_chat_message> cm(roles.size());
  for (size_t i = 0; i < cm.size(); ++i) cm[i] = {roles[i].c_str(), contents[i].c_str()};
  size_t n = 0;
  ember_status s =
      ember_chat_prompt_tokens(model, nullptr, nullptr, cm.data(), cm.size(), true, nullptr, 0, &n);
  if (s != EMBER_OK && s != EMBER_ERR_BUFFER_TOO_SMALL) {
    throw BadRequest(std::string("chat template: ") + ember_last_error(), "messages");
  }
  std::vector<int32_t> ids(n);
  s = ember_chat_prompt_tokens(model, nullptr, nullptr, cm.data(), cm.size(), true, ids.data(),
                               ids.size(), &n);
  if (s != EMBER_OK)
    throw BadRequest(std::string("chat template: ") + ember_last_error(), "messages");
  ids.resize(n);
  if (rendered) {
    size_t needed = 0;
    s = ember_chat_apply_template(model, nullptr, nullptr, cm.data(), cm.size(), true, nullptr, 0,
                                  &needed);
    if (s == EMBER_ERR_BUFFER_TOO_SMALL) {
      std::string text(needed, '\0');
      if (ember_chat_apply_template(model, nullptr, nullptr, cm.data(), cm.size(), true,
                                    text.data(), text.size(), &needed) == EMBER_OK) {
        text.resize(needed - 1);
        *rendered = std::move(text);
      }
    }
  }
  return ids;
}

std::vector<int32_t> CompletionPromptTokens(const ember_model* model, int32_t n_vocab,
                                            const json& body, std::string* text) {
  const json* p = Field(body, "prompt");
  if (!p) throw BadRequest("'prompt' is required", "prompt");
  const json* one = p;
  if (p->is_array()) {
    // OpenAI also takes token ids, or several prompts (one choice set each).
    if (!p->empty() && (*p)[0].is_number_integer()) {
      std::vector<int32_t> ids;
      for (const json& t : *p) {
        if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= n_vocab) {
          throw BadRequest("'prompt': token ids must be integers below " + std::to_string(n_vocab),
                           "prompt");
        }
        ids.push_back(t.get<int32_t>());
      }
      *text = DetokenizeIds(model, ids);
      return ids;
    }
    if (p->size() != 1) {
      throw BadRequest("'prompt': one prompt per request (an array of exactly one string)",
                       "prompt");
    }
    one = &(*p)[0];
  }
  if (!one->is_string()) throw BadRequest("'prompt' must be a string", "prompt");
  *text = one->get<std::string>();
  if (text->empty()) throw BadRequest("'prompt' must not be empty", "prompt");
  return TokenizeText(model, *text, true);
}

std::string SchemaGrammar(const std::string& schema) {
  size_t n = 0;
  ember_status s = ember_json_schema_to_grammar(schema.c_str(), nullptr, 0, &n);
  if (s != EMBER_OK && s != EMBER_ERR_BUFFER_TOO_SMALL) {
    throw BadRequest(std::string("response_format: ") + ember_last_error(), "response_format");
  }
  std::string g(n, '\0');
  if (ember_json_schema_to_grammar(schema.c_str(), g.data(), g.size(), &n) != EMBER_OK) {
    throw BadRequest(std::string("response_format: ") + ember_last_error(), "response_format");
  }
  g.resize(n - 1);
  return g;
}

std::string GrammarOf(const json& body) {
  const json* rf = Field(body, "response_format");
  const json* gbnf = Field(body, "grammar");  // llama-server's extension
  if (rf && gbnf) throw BadRequest("give 'response_format' or 'grammar', not both", "grammar");
  if (gbnf) {
    if (!gbnf->is_string()) throw BadRequest("'grammar' must be a string (GBNF)", "grammar");
    return gbnf->get<std::string>();
  }
  if (!rf) return "";
  if (!rf->is_object() || !rf->contains("type") || !(*rf)["type"].is_string()) {
    throw BadRequest("'response_format' must be an object with a 'type'", "response_format");
  }
  const std::string type = (*rf)["type"].get<std::string>();
  if (type == "text") return "";
  if (type == "json_object") return SchemaGrammar("{\"type\": \"object\"}");
  if (type == "json_schema") {
    auto js = rf->find("json_schema");
    if (js == rf->end() || !js->is_object() || !js->contains("schema") ||
        !((*js)["schema"].is_object() || (*js)["schema"].is_boolean())) {
      throw BadRequest("'response_format.json_schema.schema' must be a JSON schema object",
                       "response_format");
    }
    return SchemaGrammar((*js)["schema"].dump());
  }
  throw BadRequest(
      "'response_format.type' must be text, json_object or json_schema, got '" + type + "'",
      "response_format");
}

}  // namespace

json ParseBody(const std::string& body) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::exception& e) {
    // parse_error, and out_of_range for a number beyond a double (1e400).
    throw BadRequest(std::string("the body is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw BadRequest("the body must be a JSON object");
  return j;
}

json TokenizeRequest(const json& body, const RequestDefaults& defaults) {
  auto c = body.find("content");
  if (c == body.end() || !c->is_string()) throw BadRequest("'content' must be a string", "content");
  bool add_special = false;
  if (auto a = body.find("add_special"); a != body.end()) {
    if (!a->is_boolean()) throw BadRequest("'add_special' must be a boolean", "add_special");
    add_special = a->get<bool>();
  }
  return {{"tokens", TokenizeText(defaults.model, c->get<std::string>(), add_special)}};
}

json DetokenizeRequest(const json& body, const RequestDefaults& defaults) {
  auto t = body.find("tokens");
  if (t == body.end() || !t->is_array()) {
    throw BadRequest("'tokens' must be an array of token ids", "tokens");
  }
  std::vector<int32_t> ids;
  for (const json& v : *t) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= defaults.n_vocab) {
      throw BadRequest("'tokens': ids must be integers below " + std::to_string(defaults.n_vocab),
                       "tokens");
    }
    ids.push_back(v.get<int32_t>());
  }
  return {{"content", DetokenizeIds(defaults.model, ids)}};
}

std::vector<int32_t> TokenizeText(const ember_model* model, const std::string& text,
                                  bool add_special) {
  size_t n = 0;
  ember_status s =
      ember_tokenize(model, text.data(), text.size(), add_special, true, nullptr, 0, &n);
  if (s != EMBER_OK && s != EMBER_ERR_BUFFER_TOO_SMALL) {
    throw BadRequest(std::string("tokenizing: ") + ember_last_error());
  }
  std::vector<int32_t> ids(n);
  s = ember_tokenize(model, text.data(), text.size(), add_special, true, ids.data(), ids.size(),
                     &n);
  if (s != EMBER_OK) throw BadRequest(std::string("tokenizing: ") + ember_last_error());
  ids.resize(n);
  return ids;
}

std::string DetokenizeIds(const ember_model* model, const std::vector<int32_t>& ids) {
  size_t needed = 0;
  ember_status s = ember_detokenize(model, ids.data(), ids.size(), false, nullptr, 0, &needed);
  if (s != EMBER_OK && s != EMBER_ERR_BUFFER_TOO_SMALL) {
    throw BadRequest(std::string("detokenizing: ") + ember_last_error(), "tokens");
  }
  std::string text(needed, '\0');
  s = ember_detokenize(model, ids.data(), ids.size(), false, text.data(), text.size(), &needed);
  if (s != EMBER_OK) throw BadRequest(std::string("detokenizing: ") + ember_last_error(), "tokens");
  text.resize(needed - 1);
  return text;
}

GenerationRequest ParseGenerationRequest(const json& body, bool chat, const RequestDefaults& d) {
  GenerationRequest r;
  r.chat = chat;
  std::string rendered;
  r.prompt = chat ? ChatPromptTokens(d.model, body, d.think ? &rendered : nullptr)
                  : CompletionPromptTokens(d.model, d.n_vocab, body, &r.prompt_text);
  if (chat && d.think) {
    r.split_reasoning = true;
    r.starts_in_reasoning = PromptOpensThink(d.model, rendered);
  }
  const int64_t n_prompt = static_cast<int64_t>(r.prompt.size());
  if (n_prompt >= d.n_ctx) {
    throw BadRequest("the prompt is " + std::to_string(n_prompt) + " tokens; the context holds " +
                         std::to_string(d.n_ctx) + " (with room for at least one generated token)",
                     chat ? "messages" : "prompt", "context_length_exceeded");
  }
  // max_completion_tokens is the newer name; it wins when both are given.
  const char* max_name =
      Field(body, "max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
  const int64_t room = d.n_ctx - n_prompt;
  const int64_t max_tokens = Integer(body, max_name, room, 1, INT32_MAX);
  if (max_tokens > room) {
    throw BadRequest("this server's context is " + std::to_string(d.n_ctx) + " tokens, but " +
                         std::to_string(n_prompt + max_tokens) + " were requested (" +
                         std::to_string(n_prompt) + " in the prompt, " +
                         std::to_string(max_tokens) + " for the completion)",
                     max_name, "context_length_exceeded");
  }
  r.n_predict = static_cast<int32_t>(max_tokens);

  r.sampling = d.sampling;
  ember_sampling_params& p = r.sampling;
  p.temperature = static_cast<float>(Number(body, "temperature", p.temperature, 0, 2));
  p.top_p = static_cast<float>(Number(body, "top_p", p.top_p, 0, 1));
  if (p.top_p <= 0) throw BadRequest("'top_p' must be above 0", "top_p");
  p.top_k = static_cast<int32_t>(Integer(body, "top_k", p.top_k, 0, d.n_vocab));
  p.min_p = static_cast<float>(Number(body, "min_p", p.min_p, 0, 1));
  p.presence_penalty =
      static_cast<float>(Number(body, "presence_penalty", p.presence_penalty, -2, 2));
  p.frequency_penalty =
      static_cast<float>(Number(body, "frequency_penalty", p.frequency_penalty, -2, 2));
  p.repeat_penalty = static_cast<float>(Number(body, "repeat_penalty", p.repeat_penalty, 0.01, 10));
  r.samplers = d.samplers;
  r.bias_ids = d.bias_ids;
  r.bias_values = d.bias_values;
  if (const json* lb = Field(body, "logit_bias")) {
    if (!lb->is_object()) {
      throw BadRequest("'logit_bias' must be an object of token id -> bias", "logit_bias");
    }
    r.bias_ids.clear();
    r.bias_values.clear();
    for (auto it = lb->begin(); it != lb->end(); ++it) {
      const std::string& key = it.key();
      char* end = nullptr;
      const long id = std::strtol(key.c_str(), &end, 10);
      if (key.empty() || *end != '\0' || id < 0 || id >= d.n_vocab) {
        throw BadRequest(
            "'logit_bias': '" + key + "' is not a token id below " + std::to_string(d.n_vocab),
            "logit_bias");
      }
      if (!it.value().is_number() || !(std::fabs(it.value().get<double>()) <= 100)) {
        throw BadRequest("'logit_bias': biases must be numbers in [-100, 100]", "logit_bias");
      }
      r.bias_ids.push_back(static_cast<int32_t>(id));
      // OpenAI: -100 bans the token, 100 makes it the only choice.
      const double v = it.value().get<double>();
      r.bias_values.push_back(v <= -100  ? -INFINITY
                              : v >= 100 ? static_cast<float>(1e4)
                                         : static_cast<float>(v));
    }
  }
  if (const json* seed = Field(body, "seed")) {
    if (!seed->is_number_integer()) throw BadRequest("'seed' must be an integer", "seed");
    r.seed = seed->is_number_unsigned() ? seed->get<uint64_t>()
                                        : static_cast<uint64_t>(seed->get<int64_t>());
  } else if (d.seed_given) {
    r.seed = d.seed;
  } else {
    r.seed = std::random_device{}();
  }
  r.stop = Stops(body);
  r.n = static_cast<int>(Integer(body, "n", 1, 1, d.max_n));
  r.stream = Bool(body, "stream", false);
  if (const json* so = Field(body, "stream_options")) {
    if (!so->is_object()) throw BadRequest("'stream_options' must be an object", "stream_options");
    r.include_usage = Bool(*so, "include_usage", false);
  }
  if (chat) {
    const bool lp = Bool(body, "logprobs", false);
    const int64_t top = Integer(body, "top_logprobs", 0, 0, 20);
    if (Field(body, "top_logprobs") && !lp) {
      throw BadRequest("'top_logprobs' needs 'logprobs': true", "top_logprobs");
    }
    r.n_top_logprobs = lp ? static_cast<int32_t>(top) : -1;
  } else {
    r.n_top_logprobs = static_cast<int32_t>(Integer(body, "logprobs", -1, 0, 5));
    r.echo = Bool(body, "echo", false);
  }
  r.ignore_eos = Bool(body, "ignore_eos", false);  // llama-server's extension
  r.grammar = GrammarOf(body);
  return r;
}

SamplerPtr MakeSampler(const GenerationRequest& req, const RequestDefaults& d, int index) {
  ember_sampling_params p = req.sampling;
  p.logit_bias_ids = req.bias_ids.data();
  p.logit_bias_values = req.bias_values.data();
  p.n_logit_bias = req.bias_ids.size();
  p.samplers = req.samplers.empty() ? nullptr : req.samplers.c_str();
  p.seed = req.seed + static_cast<uint64_t>(index);
  ember_sampler* s = nullptr;
  const ember_status st = req.grammar.empty() ? ember_sampler_from_params(d.model, 0, &p, &s)
                                              : ember_sampler_from_params_grammar(
                                                    d.model, &p, req.grammar.c_str(), nullptr, &s);
  if (st != EMBER_OK) {
    throw BadRequest(std::string("sampling: ") + ember_last_error(),
                     req.grammar.empty() ? "" : "response_format");
  }
  return SamplerPtr(s);
}

}  // namespace serve
