// SamplerChain: samplers in order, the last one a terminal selector, with the
// chain's own RNG. Building validates the whole chain; a built chain cannot fail.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "platform/status.h"
#include "sampling/candidates.h"
#include "sampling/min_p.h"
#include "sampling/rng.h"
#include "sampling/sampler.h"
#include "sampling/top_p.h"

namespace ember {

// One stage of a trace: the candidates that survived a sampler, with their
// probabilities (softmax over the survivors' logits at that point).
struct TraceStage {
  std::string sampler;               // SamplerKindName
  std::vector<Candidate> survivors;  // sorted by p, descending
};

class SamplerChain {
 public:
  // Exactly one terminal sampler, and it is last; every spec valid.
  static Status Create(const std::vector<SamplerSpec>& specs, const SamplerContext& ctx,
                       uint64_t seed, std::unique_ptr<SamplerChain>* out);

  // Runs the chain on logits[n_vocab] and returns the chosen id, or -1 when a
  // grammar stage admits no token. Does not record it: call Accept with the
  // token actually used.
  int32_t Sample(const float* logits);
  // Same, recording each stage (slower; for `ember sample --trace`).
  int32_t SampleWithTrace(const float* logits, std::vector<TraceStage>* trace);
  // The candidates as the terminal sampler saw them (after Sample): the final
  // distribution, for --n-probs and `ember sample`.
  const Candidates& last_candidates() const;

  // Records the token used. An error, with nothing changed, when a grammar
  // stage does not allow it (a token outside its mask).
  Status Accept(int32_t token);
  // The prompt of a new generation: history for penalties and DRY; grammar
  // stages start over.
  void AcceptPrompt(const std::vector<int32_t>& prompt);
  void Reset();  // history, adaptive state, grammar; the RNG is reseeded
  // A copy with the same history, adaptive state and RNG state: it draws what
  // this chain would. Its last_candidates() is empty until it samples.
  std::unique_ptr<SamplerChain> Clone() const;

  const std::vector<SamplerSpec>& specs() const { return specs_; }
  bool has_grammar() const;
  int32_t n_vocab() const { return n_vocab_; }

 private:
  SamplerChain(std::vector<SamplerSpec> specs, uint64_t seed);

  std::vector<SamplerSpec> specs_;
  std::vector<std::unique_ptr<Sampler>> samplers_;
  uint64_t seed_;
  int32_t n_vocab_ = 0;  // logits per Sample call (SamplerContext::n_vocab)
  Rng rng_;
  // Two paths that skip building the whole vocabulary's candidate array
  // (12 bytes a token) where the chain allows; the general path (every
  // Apply in turn) runs otherwise and under a trace, and draws the same.
  // Both start with the chain's leading samplers that edit logits sparsely
  // (logit bias, penalties: Sampler::EditsLogitsSparsely), applied to a copy
  // of the logits.
  //  - greedy: those samplers, then greedy. The argmax of the copy (kept, 4
  //    bytes a token); last_candidates() builds the array from it when asked.
  //  - fused top-k: those samplers, temperature (> 0) or none, then top-k.
  //    Candidates::ResetTopK makes the k candidates at once, and the
  //    samplers from fused_next_ on run as usual.
  //  - fused top-p: those samplers, temperature (> 0) or none, then top-p
  //    (top-p without top-k). ResetTopP (top_p.h) takes the softmax and the
  //    histogram on plain arrays and makes only the survivors; where it
  //    declines (the sampler's rarer branches), the general path.
  //  - fused min-p: the same with min-p first (min-p without top-k or top-p):
  //    ResetMinP (min_p.h).
  size_t sparse_prefix_ = 0;  // samplers_[0, sparse_prefix_) edit sparsely
  bool greedy_path_ = false;
  enum class Fused { kNone, kTopK, kTopP, kMinP };
  Fused fused_ = Fused::kNone;
  size_t fused_next_ = 0;  // the first sampler after the fused ones
  float fused_temperature_ = 1.0f;
  size_t fused_k_ = 0;
  float fused_p_ = 1.0f;  // top-p's p, or min-p's
  size_t fused_min_keep_ = 1;
  TopPScratch top_p_scratch_;                // (min-p: its logits)
  std::vector<float> logits_copy_;           // the logits after the sparse samplers
  mutable bool candidates_pending_ = false;  // greedy: logits_copy_ not yet in candidates_
  mutable Candidates candidates_;
};

// llama.cpp-style sampling settings (ember run's flags, with llama.cpp's
// defaults) turned into a chain: each sampler is included only when its
// parameters make it do something, in the order `order` names (default:
// logit-bias, penalties, dry, grammar, top-n-sigma, temperature, top-k,
// typical, top-p, min-p, xtc; why: docs/SAMPLING.md), ending with dist, or
// greedy when temperature is 0, or mirostat-v2 when mirostat is 2.
struct SamplingParams {
  float temperature = 0.8f;
  int32_t top_k = 40;
  float top_p = 0.95f;
  float min_p = 0.05f;
  float typical_p = 1.0f;
  float top_n_sigma = -1.0f;  // <= 0: off
  float xtc_probability = 0.0f;
  float xtc_threshold = 0.1f;
  int32_t penalty_last_n = 64;
  float repeat_penalty = 1.0f;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  float dry_multiplier = 0.0f;
  float dry_base = 1.75f;
  int32_t dry_allowed_length = 2;
  int32_t dry_penalty_last_n = -1;
  int mirostat = 0;  // 0 off, 2 = mirostat 2.0 (1 is not implemented: an error)
  float mirostat_tau = 5.0f;
  float mirostat_eta = 0.1f;
  std::vector<std::pair<int32_t, float>> logit_bias;
  // A grammar (GBNF) the output must follow, and its start rule; empty: none.
  // The specs carry the text; the caller adds the compiled tables
  // (SamplerSpec::grammar_tables) before building the chain.
  std::string grammar;
  std::string grammar_root = "root";
  // Order of the non-terminal samplers; empty = the default order.
  std::vector<SamplerKind> order;
  uint64_t seed = 0;
};

// The specs of the chain SamplingParams describe (validated by SamplerChain::Create).
Status SpecsFromParams(const SamplingParams& params, std::vector<SamplerSpec>* out);

}  // namespace ember
