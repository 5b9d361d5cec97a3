// Beam search: a decode strategy above the sampler chain (docs/DESIGN.md
// §7). Keeps the B best partial sequences by total log-probability under the
// model (no samplers), finishes a sequence at an end-of-generation token, and
// returns the finished sequence with the best length-normalised score
// logprob / length^alpha (length counts the generated tokens, EOS included).
//
// The beams share the prompt's KV cache: the prompt sits once in rows
// [0, P); beam b's own tokens in rows P + b * n_predict + [0, n). Each step
// decodes the B new tokens as one batch (one pass over the weights). When a
// beam continues another, only the generated rows are copied, never the
// prompt. Beam 0's rows follow the prompt's, so with B = 1 every forward pass
// is the one greedy decoding runs: --beams 1 gives greedy's tokens.
//
// With a grammar, each beam carries its own parse (a GrammarMatcher) and is
// extended only by tokens the grammar allows it next (ranked by the model's
// log-probability, as without one); end-of-generation tokens only where its
// grammar may end. A beam whose grammar allows nothing is dropped; when none
// is left and none has finished, the search ends with ended_by_grammar.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "platform/status.h"
#include "runtime/session/session.h"
#include "sampling/grammar/mask_tables.h"

namespace ember {

struct BeamParams {
  int32_t beams = 4;            // B >= 1
  float length_penalty = 1.0f;  // alpha; 0 ranks by total log-probability
  int64_t n_predict = 128;      // tokens per sequence at most
  bool ignore_eos = false;
  std::shared_ptr<const grammar::MaskTables> grammar;  // optional: beams follow it
};

struct BeamResult {
  std::vector<int32_t> tokens;  // the best sequence (without its EOS token)
  double logprob = 0;           // its total log-probability (EOS included if it ended so)
  bool ended_by_eos = false;
  bool ended_by_grammar = false;  // no beam could go on and none had finished
  int64_t n_steps = 0;            // batched forward passes after the prompt
  // Session::RequestCancel stopped the search: tokens is the best live
  // sequence so far (possibly empty) and the context holds the prompt alone.
  bool cancelled = false;
};

// `session` must already hold the prompt (its logits are the first step's).
// Needs n_past + B * n_predict cache rows. Afterwards the session holds the
// prompt followed by the best sequence minus its last token, as after greedy
// generation.
Status BeamSearch(Session& session, const BeamParams& params, BeamResult* result);

}  // namespace ember
