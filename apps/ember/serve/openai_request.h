// An OpenAI request body (/v1/completions, /v1/chat/completions) checked and
// turned into what ember_generate needs: prompt tokens, a sampler per choice,
// stop strings, limits. Every problem is an ApiError (400) naming the field,
// raised before anything is queued, so a bad request never reaches a slot.
// Fields OpenAI defines that are not listed here are ignored, as OpenAI
// ignores unknown ones (docs/SERVER.md names them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ember.h"
#include "serve/job.h"
#include "serve/reasoning.h"

namespace serve {

// Server-wide defaults and facts a request is checked against.
struct RequestDefaults {
  const ember_model* model = nullptr;
  int32_t n_vocab = 0;
  int32_t n_ctx = 0;
  int32_t n_embd = 0;
  ember_pooling pooling = EMBER_POOLING_MODEL;  // --pooling, for /v1/embeddings
  ember_sampling_params sampling{};             // from the command line's sampling flags
  std::vector<int32_t> bias_ids;  // --logit-bias (a request's logit_bias replaces them)
  std::vector<float> bias_values;
  std::string samplers;  // --samplers, "" for the default order
  bool seed_given = false;
  uint64_t seed = 0;
  int max_n = 16;      // choices per request
  bool think = false;  // the chat template marks reasoning sections (serve/reasoning.h)
};

struct GenerationRequest {
  bool chat = false;
  std::vector<int32_t> prompt;
  int32_t n_predict = 0;
  ember_sampling_params sampling{};  // logit_bias_* and samplers are set by MakeSampler
  std::vector<int32_t> bias_ids;
  std::vector<float> bias_values;
  std::string samplers;
  std::string grammar;  // GBNF from response_format / grammar, "" for none
  uint64_t seed = 0;
  std::vector<std::string> stop;
  int n = 1;
  bool stream = false;
  bool include_usage = false;
  int32_t n_top_logprobs = -1;  // -1: no logprobs
  bool ignore_eos = false;
  bool echo = false;                 // completions: the prompt's text before the reply
  std::string prompt_text;           // completions' prompt, for echo
  bool split_reasoning = false;      // chat with a reasoning template
  bool starts_in_reasoning = false;  // its prompt left a <think> section open
};

// Parses and checks a body; throws ApiError.
GenerationRequest ParseGenerationRequest(const nlohmann::json& body, bool chat,
                                         const RequestDefaults& defaults);

// The sampler chain of choice `index` (seed + index); throws ApiError (400)
// when ember refuses the parameters.
SamplerPtr MakeSampler(const GenerationRequest& req, const RequestDefaults& defaults, int index);

// Tokens of a text as prompts are tokenized (BOS as the model says, special
// tokens parsed), and the text of ids, for /tokenize and /detokenize. Throw
// ApiError on bad input.
std::vector<int32_t> TokenizeText(const ember_model* model, const std::string& text,
                                  bool add_special);
std::string DetokenizeIds(const ember_model* model, const std::vector<int32_t>& ids);

// /tokenize {"content": TEXT, "add_special": BOOL} -> {"tokens": [...]} and
// /detokenize {"tokens": [...]} -> {"content": TEXT}: the body checked and the
// answer. Throw ApiError.
nlohmann::json TokenizeRequest(const nlohmann::json& body, const RequestDefaults& defaults);
nlohmann::json DetokenizeRequest(const nlohmann::json& body, const RequestDefaults& defaults);

// Reads the body as JSON (an ApiError for anything else).
nlohmann::json ParseBody(const std::string& body);

}  // namespace serve
