// Response bodies and stream chunks in OpenAI's shapes, from finished (or
// partly finished) jobs. Pure functions of their inputs: the HTTP layer
// decides when to call them.
//
//   chat, whole:   {"id","object":"chat.completion","created","model",
//                   "choices":[{"index","message":{"role","content"},"logprobs","finish_reason"}],
//                   "usage":{"prompt_tokens","completion_tokens","total_tokens"}}
//   chat, chunk:   "object":"chat.completion.chunk", choices[].delta {role?, content?}
//   completions:   "object":"text_completion", choices[].text, logprobs {tokens,
//                   token_logprobs, top_logprobs, text_offset}
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/job.h"
#include "serve/reasoning.h"

namespace serve {

struct ResponseMeta {
  bool chat = false;
  bool split_reasoning = false;  // reasoning_content apart from content (chat)
  bool starts_in_reasoning = false;
  const ember_model* engine_model = nullptr;  // whose template's markers split the reasoning
  std::string id;                             // "chatcmpl-..." or "cmpl-..."
  int64_t created = 0;
  std::string model;
};

// "stop" for end of text, a stop string or a grammar's end; "length" for
// max_tokens or a full context.
const char* FinishReason(const ember_generate_stats& stats);

// Log-probabilities of tokens [from, to) of a job, in the request's shape;
// text_offset counts from `offset0` (completions).
nlohmann::json ChatLogprobs(const std::vector<TokenLogprob>& tokens, size_t from, size_t to);
nlohmann::json CompletionLogprobs(const std::vector<TokenLogprob>& tokens, size_t from, size_t to,
                                  size_t offset0);

// usage: the prompt counted once (every choice shares it), the completions summed.
nlohmann::json Usage(int64_t prompt_tokens, int64_t completion_tokens);

// The whole response of finished jobs (under their channel's lock).
// `echo_text`: completions' echo, prepended to each choice's text.
nlohmann::json FullResponse(const ResponseMeta& meta, const std::vector<const Job*>& jobs,
                            int64_t prompt_tokens, const std::string& echo_text);

// One stream chunk for one choice. `text` may be empty; `logprobs` null
// when not asked for; `finish_reason` "" while going on; `first` adds the
// chat role.
// `reasoning`: chat's reasoning_content delta ("" for none).
nlohmann::json StreamChunk(const ResponseMeta& meta, int index, const std::string& text,
                           const std::string& reasoning, bool first, const nlohmann::json& logprobs,
                           const std::string& finish_reason, bool with_usage_null);

// The usage chunk stream_options.include_usage asks for, after the last choice ends.
nlohmann::json UsageChunk(const ResponseMeta& meta, int64_t prompt_tokens,
                          int64_t completion_tokens);

// JSON text for the wire: invalid UTF-8 (a token's bytes cut inside a
// character, in logprobs) becomes U+FFFD instead of an exception.
std::string Dump(const nlohmann::json& j);

}  // namespace serve
