// The decode loop: prefill the prompt, then sample token by token, streaming
// text pieces (complete UTF-8 only) to a callback.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "platform/status.h"
#include "runtime/session.h"

namespace ember {

struct GenerateParams {
  int64_t n_predict = 128;   // tokens to generate at most (>= 0)
  float temperature = 0.0f;  // 0: greedy
  uint64_t seed = 0;
  bool ignore_eos = false;
};

enum class FinishReason { kLength, kEos, kCancelled };
const char* FinishReasonName(FinishReason r);

struct GenerateResult {
  std::vector<int32_t> tokens;  // generated ids
  std::string text;             // generated text
  int64_t n_prompt = 0;
  FinishReason finish = FinishReason::kLength;
  double prefill_seconds = 0;
  double decode_seconds = 0;  // from the first sampled token to the end
  int64_t n_decode_evals = 0;  // forward passes of one token (for tok/s)
};

// Called with each piece of text as it becomes complete and the id of the
// token that completed it; return false to stop (finish = kCancelled).
using PieceFn = std::function<bool(std::string_view piece, int32_t token)>;
// Called with each generated id before its text; return false to stop.
using TokenFn = std::function<bool(int32_t token)>;

// Runs the prompt through `session` (appending to what it already holds) and
// generates. The prompt must be non-empty and fit, with n_predict tokens, in the context.
Status Generate(Session& session, const std::vector<int32_t>& prompt, const GenerateParams& params,
                const PieceFn& on_piece, const TokenFn& on_token, GenerateResult* result);

}  // namespace ember
