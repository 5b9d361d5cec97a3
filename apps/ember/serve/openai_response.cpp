#include "serve/openai_response.h"

namespace serve {

using json = nlohmann::json;

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

const char* FinishReason(const ember_generate_stats& stats) {
  return stats.finish_reason == EMBER_FINISH_LENGTH ? "length" : "stop";
}

namespace {

json Bytes(const std::string& s) {
  json b = json::array();
  for (unsigned char c : s) b.push_back(static_cast<int>(c));
  return b;
}

}  // namespace

json ChatLogprobs(const std::vector<TokenLogprob>& tokens, size_t from, size_t to) {
  json content = json::array();
  for (size_t i = from; i < to && i < tokens.size(); ++i) {
    const TokenLogprob& t = tokens[i];
    json top = json::array();
    for (const TopLogprob& c : t.top) {
      top.push_back({{"token", c.piece}, {"logprob", c.logprob}, {"bytes", Bytes(c.piece)}});
    }
    content.push_back({{"token", t.piece},
                       {"logprob", t.logprob},
                       {"bytes", Bytes(t.piece)},
                       {"top_logprobs", std::move(top)}});
  }
  return json{{"content", std::move(content)}};
}

json CompletionLogprobs(const std::vector<TokenLogprob>& tokens, size_t from, size_t to,
                        size_t offset0) {
  json toks = json::array(), lps = json::array(), tops = json::array(), offs = json::array();
  size_t offset = offset0;
  for (size_t i = from; i < to && i < tokens.size(); ++i) {
    const TokenLogprob& t = tokens[i];
    toks.push_back(t.piece);
    lps.push_back(t.logprob);
    json top = json::object();
    for (const TopLogprob& c : t.top) top[c.piece] = c.logprob;
    tops.push_back(std::move(top));
    offs.push_back(offset);
    offset += t.piece.size();
  }
  return json{{"tokens", std::move(toks)},
              {"token_logprobs", std::move(lps)},
              {"top_logprobs", std::move(tops)},
              {"text_offset", std::move(offs)}};
}

json Usage(int64_t prompt_tokens, int64_t completion_tokens) {
  return json{{"prompt_tokens", prompt_tokens},
              {"completion_tokens", completion_tokens},
              {"total_tokens", prompt_tokens + completion_tokens}};
}

json FullResponse(const ResponseMeta& meta, const std::vector<const Job*>& jobs,
                  int64_t prompt_tokens, const std::string& echo_text) {
  json choices = json::array();
  int64_t completion = 0;
  for (const Job* j : jobs) {
    completion += j->stats.n_gen;
    json c = {{"index", j->index}};
    json lp = nullptr;
    if (j->n_top_logprobs >= 0) {
      lp = meta.chat ? ChatLogprobs(j->tokens, 0, j->tokens.size())
                     : CompletionLogprobs(j->tokens, 0, j->tokens.size(), echo_text.size());
    }
    if (meta.chat && meta.split_reasoning) {
      std::string reasoning, content;
      ThinkSplitter split(meta.engine_model, meta.starts_in_reasoning);
      split.Feed(j->text, &reasoning, &content);
      split.Finish(&reasoning, &content);
      c["message"] = {{"role", "assistant"}, {"content", content}};
      if (!reasoning.empty()) c["message"]["reasoning_content"] = reasoning;
    } else if (meta.chat) {
      c["message"] = {{"role", "assistant"}, {"content", j->text}};
    } else {
      c["text"] = echo_text + j->text;
    }
    c["logprobs"] = std::move(lp);
    c["finish_reason"] = FinishReason(j->stats);
    choices.push_back(std::move(c));
  }
  return json{{"id", meta.id},
              {"object", meta.chat ? "chat.completion" : "text_completion"},
              {"created", meta.created},
              {"model", meta.model},
              {"choices", std::move(choices)},
              {"usage", Usage(prompt_tokens, completion)}};
}

json StreamChunk(const ResponseMeta& meta, int index, const std::string& text,
                 const std::string& reasoning, bool first, const json& logprobs,
                 const std::string& finish_reason, bool with_usage_null) {
  json c = {{"index", index}};
  if (meta.chat) {
    json delta = json::object();
    if (first) delta["role"] = "assistant";
    if (!text.empty() || (first && finish_reason.empty())) delta["content"] = text;
    if (!reasoning.empty()) delta["reasoning_content"] = reasoning;
    c["delta"] = std::move(delta);
  } else {
    c["text"] = text;
  }
  c["logprobs"] = logprobs;
  c["finish_reason"] = finish_reason.empty() ? json(nullptr) : json(finish_reason);
  json chunk = {{"id", meta.id},
                {"object", meta.chat ? "chat.completion.chunk" : "text_completion"},
                {"created", meta.created},
                {"model", meta.model},
                {"choices", json::array({std::move(c)})}};
  if (with_usage_null) chunk["usage"] = nullptr;
  return chunk;
}

json UsageChunk(const ResponseMeta& meta, int64_t prompt_tokens, int64_t completion_tokens) {
  return json{{"id", meta.id},
              {"object", meta.chat ? "chat.completion.chunk" : "text_completion"},
              {"created", meta.created},
              {"model", meta.model},
              {"choices", json::array()},
              {"usage", Usage(prompt_tokens, completion_tokens)}};
}

}  // namespace serve
