// The parts of Generate that other decoding strategies (speculative decoding)
// share with it, so that all of them check, emit and finish identically:
// the checks and the sampler chain before any work, and what is done with a
// token once chosen (its log-probability, the callbacks, its text through the
// stop strings).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/decoding/generate.h"
#include "runtime/text/stop_stream.h"
#include "runtime/text/tokenizer.h"

namespace ember {

// Checks params and the prompt against the session (as Generate does) and
// gives the chain to sample with: params.chain, or one built from
// params.sampling into *own.
Status SetUpGenerate(const Session& session, const std::vector<int32_t>& prompt,
                     const GenerateParams& params, std::unique_ptr<SamplerChain>* own,
                     SamplerChain** chain);

// Runs the prompt (with params.reuse_prefix, the cached prefix is kept:
// result->n_reused) and times it (result->prefill_seconds). A cancel request
// that stopped it sets result->finish to kCancelled and *cancelled.
Status Prefill(Session& session, const std::vector<int32_t>& prompt, const GenerateParams& params,
               GenerateResult* result, bool* cancelled);

class TokenEmitter {
 public:
  // n_vocab: the logits' length (the model's output rows).
  TokenEmitter(const Tokenizer& tok, int64_t n_vocab, const GenerateParams& params,
               const PieceFn& on_piece, const TokenFn& on_token, GenerateResult* result);

  // Records the chosen token `id` (logits: the distribution it was chosen
  // from, [n_vocab], for its log-probability), calls on_token and emits its
  // text. Returns false when generation ends there (a stop string, or a
  // callback asked to stop); result->finish is then set.
  bool Commit(int32_t id, const float* logits);
  // Generation ended without Commit returning false: emits the text held
  // back for a possible stop string.
  void Flush();
  bool ended() const { return ended_; }

 private:
  bool Emit(const std::string& piece, int32_t token);

  const Tokenizer& tok_;
  int64_t n_vocab_;
  const GenerateParams& params_;
  const PieceFn& on_piece_;
  const TokenFn& on_token_;
  GenerateResult* result_;
  StopStream stream_;
  bool ended_ = false;
};

}  // namespace ember
