// The decode loop: prefill the prompt, then choose token by token (a sampler
// chain, or beam search), streaming text to a callback through the streaming
// detokenizer (complete UTF-8 only, stop strings never emitted).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "platform/status.h"
#include "runtime/session/session.h"
#include "sampling/chain.h"

namespace ember {

struct GenerateParams {
  int64_t n_predict = 128;  // tokens to generate at most (>= 0)
  bool ignore_eos = false;
  std::vector<std::string> stop;  // stop strings: generation ends where one begins
  int32_t n_probs = 0;            // per token, report this many most likely candidates
  // Compute log-probabilities (a log-sum-exp over the vocabulary per token,
  // ~0.4 ms at 49k); off, logprob and token_logprobs stay empty/0.
  bool logprobs = true;
  // How tokens are chosen: `chain` if set (borrowed; its history and RNG
  // advance), else a chain built from `sampling` (llama.cpp's defaults).
  SamplerChain* chain = nullptr;
  SamplingParams sampling;
  // beams >= 1: beam search instead of sampling (samplers are not applied,
  // except a grammar -- the chain's grammar stage or sampling.grammar -- which
  // every beam follows; --beams 1 gives greedy's tokens). The text is emitted
  // when the search ends.
  int32_t beams = 0;
  float length_penalty = 1.0f;
  // The prompt is the whole context (a chat's full history, say) rather than
  // a continuation: the cached common prefix is kept and only the rest is
  // computed (Session::DecodeReusing).
  bool reuse_prefix = false;
};

// kGrammar: a grammar stage admitted no token (the grammar was complete and
// the vocabulary has no end-of-generation token it could use, or no token's
// bytes continue the grammar).
enum class FinishReason { kLength, kEos, kStop, kCancelled, kGrammar };
const char* FinishReasonName(FinishReason r);

struct TokenProb {
  int32_t id;
  float p;  // probability under the model (softmax of the raw logits)
};

struct GenerateResult {
  std::vector<int32_t> tokens;  // generated ids (with the one that completed a stop string)
  std::string text;             // generated text (without the stop string)
  int64_t n_prompt = 0;
  int64_t n_reused = 0;  // prompt tokens taken from the cache (reuse_prefix)
  FinishReason finish = FinishReason::kLength;
  std::string stop;  // the stop string, when finish == kStop
  // Log-probability of the generated tokens under the model's distribution
  // (softmax of the raw logits, before samplers): total and per token.
  double logprob = 0;
  std::vector<float> token_logprobs;
  std::vector<std::vector<TokenProb>> top_probs;  // [n_gen][n_probs] when n_probs > 0
  double prefill_seconds = 0;
  double decode_seconds = 0;   // from the first chosen token to the end
  int64_t n_decode_evals = 0;  // forward passes after the prompt (for tok/s)
};

// Called with each piece of text as it becomes safe to emit and the id of the
// token that completed it; return false to stop (finish = kCancelled).
using PieceFn = std::function<bool(std::string_view piece, int32_t token)>;
// Called with each generated id before its text; return false to stop.
using TokenFn = std::function<bool(int32_t token)>;

// Runs the prompt through `session` (appending to what it already holds, or
// replacing it with reuse_prefix) and generates. The prompt must be non-empty
// and fit in the context. When the context fills up, the session shifts it
// (SessionParams::context_shift) or generation ends with kLength.
Status Generate(Session& session, const std::vector<int32_t>& prompt, const GenerateParams& params,
                const PieceFn& on_piece, const TokenFn& on_token, GenerateResult* result);

}  // namespace ember
