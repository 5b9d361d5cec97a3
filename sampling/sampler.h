// One sampler: a step of the chain over Candidates (docs/DESIGN.md §7).
//
// Each kind has its own file (sampling/<kind>.cpp) with a factory; SamplerSpec
// names a kind and carries every parameter, so a chain can be described as
// data (CLI flags, the C API) and validated before it runs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "platform/status.h"
#include "sampling/candidates.h"
#include "sampling/rng.h"

namespace ember {

namespace grammar {
class MaskTables;
}

enum class SamplerKind {
  kLogitBias,    // add a bias to given ids (-inf bans)
  kPenalties,    // repetition (CTRL), presence and frequency (OpenAI) over the last N tokens
  kDry,          // DRY: "don't repeat yourself" n-gram penalty
  kTemperature,  // logits / T (T = 0: keep only the maximum)
  kTopK,
  kTopP,  // nucleus
  kMinP,
  kTypicalP,   // locally typical sampling
  kTopNSigma,  // keep logits >= max - n * sigma
  kXtc,        // exclude top choices
  kGrammar,    // keep the tokens a grammar allows next (GBNF; docs/GRAMMAR.md)
  // Terminal selectors: exactly one, last.
  kGreedy,      // largest logit, ties to the lowest id
  kDist,        // seeded random draw from softmax(logits)
  kMirostatV2,  // mirostat 2.0: truncate by surprise, draw, update mu
};

// Lower-case names as on the command line and in --samplers lists
// ("logit-bias", "penalties", "dry", "temperature", "top-k", "top-p", "min-p",
// "typical", "top-n-sigma", "xtc", "grammar", "greedy", "dist", "mirostat-v2").
const char* SamplerKindName(SamplerKind kind);
// Accepts the names above and llama.cpp's aliases ("temp", "top_k", "top_p",
// "min_p", "typ_p", "typical_p", "top_n_sigma", "penalties", ...).
Status ParseSamplerKind(std::string_view name, SamplerKind* out);
bool IsTerminal(SamplerKind kind);

struct SamplerSpec {
  SamplerKind kind = SamplerKind::kGreedy;

  float temperature = 0.8f;      // kTemperature: >= 0
  int32_t top_k = 40;            // kTopK: >= 0; 0 = keep all
  float top_p = 0.95f;           // kTopP: in (0, 1]
  float min_p = 0.05f;           // kMinP: in [0, 1]
  float typical_p = 1.0f;        // kTypicalP: in (0, 1]
  float top_n_sigma = 1.0f;      // kTopNSigma: > 0
  float xtc_probability = 0.0f;  // kXtc: in [0, 1]
  float xtc_threshold = 0.1f;    // kXtc: in [0, 1]
  size_t min_keep = 1;           // truncating samplers keep at least this many

  // kPenalties
  int32_t penalty_last_n = 64;  // -1: the whole history; 0: off
  float repeat_penalty = 1.0f;  // > 0; 1 = off
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;

  // kDry
  float dry_multiplier = 0.0f;      // >= 0; 0 = off
  float dry_base = 1.75f;           // > 1 (when multiplier > 0)
  int32_t dry_allowed_length = 2;   // >= 0
  int32_t dry_penalty_last_n = -1;  // -1: whole history
  std::vector<std::string> dry_sequence_breakers = {"\n", ":", "\"", "*"};

  // kLogitBias: (id, bias); ids must be < n_vocab
  std::vector<std::pair<int32_t, float>> logit_bias;

  // kMirostatV2
  float mirostat_tau = 5.0f;  // target surprise, > 0
  float mirostat_eta = 0.1f;  // learning rate, > 0

  // kGrammar: the GBNF text and its start rule, and that grammar compiled
  // with its mask tables for the chain's vocabulary (BuildGrammarTables in
  // sampling/grammar/matcher.h; the runtime builds them from the model's
  // tokens). The stage needs the tables; chains built from the same specs
  // share them.
  std::string grammar;
  std::string grammar_root = "root";
  std::shared_ptr<const grammar::MaskTables> grammar_tables;
};

// What samplers may need from the model: the vocabulary size and, for DRY,
// each token's text.
struct SamplerContext {
  int32_t n_vocab = 0;
  // Token t's text, for t in [0, n_vocab); empty when there is none (then no
  // token is a DRY sequence breaker). A function, so the vocabulary may keep
  // its texts however it likes (the tokenizer: one pool, runtime/text/string_table.h).
  std::function<std::string_view(int32_t)> token_piece;
};

class Sampler {
 public:
  virtual ~Sampler() = default;
  virtual SamplerKind kind() const = 0;
  // Transforms the candidates; a terminal sampler sets c.selected. rng is the
  // chain's generator (only random samplers draw from it).
  virtual void Apply(Candidates& c, Rng& rng) = 0;
  // Whether the sampler only changes a few ids' logits, each as a function of
  // its own logit and the sampler's state (logit bias, penalties): then
  // ApplyToLogits makes the same change on a plain array logits[n_vocab] in id
  // order (reading NaN as -inf, as Candidates::Reset does) that Apply makes
  // on candidates still in id order, so a chain can run it before it builds
  // candidates (SamplerChain's greedy and fused top-k paths).
  virtual bool EditsLogitsSparsely() const { return false; }
  virtual void ApplyToLogits(float* /*logits*/, int64_t /*n_vocab*/) {}
  // The token that was finally chosen (history for penalties and DRY, the
  // grammar's parse). False when the sampler cannot take it: only the grammar
  // stage refuses, a token its mask excluded (its state is then unchanged).
  virtual bool Accept(int32_t /*token*/) { return true; }
  // The prompt a new generation starts from. By default the tokens are
  // accepted as history (penalties and DRY see the prompt, as in llama.cpp);
  // the grammar stage starts its grammar over instead (the prompt is not
  // generated text).
  virtual void AcceptPrompt(const std::vector<int32_t>& prompt) {
    for (const int32_t t : prompt) Accept(t);
  }
  // Forgets history and adaptive state.
  virtual void Reset() {}
  // A copy with the same state (beam search forks chains).
  virtual std::unique_ptr<Sampler> Clone() const = 0;
};

// Validates `spec` (ranges, ids within n_vocab) and builds the sampler. Errors
// name the parameter, e.g. "top-p must be in (0, 1] (got 1.5)".
Status MakeSampler(const SamplerSpec& spec, const SamplerContext& ctx,
                   std::unique_ptr<Sampler>* out);

// The factories behind MakeSampler, one per file (sampling/<kind>.cpp). They
// expect a spec that MakeSampler has validated; call MakeSampler instead.
std::unique_ptr<Sampler> NewLogitBiasSampler(const SamplerSpec& spec);
std::unique_ptr<Sampler> NewPenaltiesSampler(const SamplerSpec& spec);
std::unique_ptr<Sampler> NewDrySampler(const SamplerSpec& spec, const SamplerContext& ctx);
std::unique_ptr<Sampler> NewTemperatureSampler(const SamplerSpec& spec);
std::unique_ptr<Sampler> NewTopKSampler(const SamplerSpec& spec);
std::unique_ptr<Sampler> NewTopPSampler(const SamplerSpec& spec);
std::unique_ptr<Sampler> NewMinPSampler(const SamplerSpec& spec);
std::unique_ptr<Sampler> NewTypicalPSampler(const SamplerSpec& spec);
std::unique_ptr<Sampler> NewTopNSigmaSampler(const SamplerSpec& spec);
std::unique_ptr<Sampler> NewXtcSampler(const SamplerSpec& spec);
std::unique_ptr<Sampler> NewGrammarSampler(const SamplerSpec& spec);
std::unique_ptr<Sampler> NewGreedySampler();
std::unique_ptr<Sampler> NewDistSampler();
std::unique_ptr<Sampler> NewMirostatV2Sampler(const SamplerSpec& spec);

}  // namespace ember
