// Speculative decoding: a cheap guess of the next tokens, verified by the
// model in one small-batch forward pass (Leviathan et al. 2023; Chen et al.
// 2023). Decode reads every weight once per pass, so a pass over the pending
// token and k drafted ones costs little more than one token, and every draft
// the model agrees with is a token for free.
//
// Cache layout, per step (n0 = tokens in the target's cache before it):
//   rows n0 .. n0+k      the batch [pending, d_1 .. d_k]: `pending` is the last
//                        token chosen (its text already emitted, not yet in
//                        the cache), d_i the drafts. One Decode computes all
//                        k + 1 rows and the logits after each.
//   verification         the chain samples from the logits after `pending`;
//                        if that token is d_1, it is accepted (its row is
//                        already right) and the chain samples from the logits
//                        after d_1, and so on. The first token that differs
//                        from the draft (or the one after the last draft)
//                        becomes the next `pending`.
//   rollback             the rows of rejected drafts are dropped
//                        (Session::Truncate to n0 + 1 + accepted); rings and
//                        sliding-window rings follow, and rows a window ring
//                        could not keep are computed again.
// The draft source keeps its own state: a draft model's session follows the
// context with DecodeReusing (its rows of rejected drafts are dropped there).
//
// Why the output is exactly the target's: at every position the chain samples
// from the same logits, in the same order, with the same RNG draws as plain
// decoding would (a draft is accepted only when the sampled token equals it;
// for a draft that proposes one token, this is rejection sampling with a point
// mass q: accept with probability p(d), else a draw from p without d). So with
// batch-invariant logits (ember's kernels compute a batch's rows as single
// tokens would: tests/runtime/speculative_test.cpp checks it), greedy and
// sampled output are token for token those of Generate with the same seed.
//
// The draft length adapts: it picks the k that maximises the expected tokens
// per second, (1 - a^(k+1)) / (1 - a) tokens over the measured time of a
// verify pass of k + 1 tokens plus k drafted ones, a being the measured
// acceptance rate; k = 0 (plain decoding) when drafting does not pay, with a
// probe every kProbeEvery steps to notice when it starts to. A draft model
// (DraftSource::costly) is probed before it drafts at length, on a short tail
// of the context, and given up when its probes keep failing.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "platform/status.h"
#include "runtime/decoding/generate.h"
#include "runtime/session/session.h"

namespace ember {

struct SpeculativeParams {
  int32_t draft_max = 8;  // tokens drafted per step at most (1 .. 32)
  int32_t draft_min = 0;  // a draft shorter than this is not verified (llama.cpp's --draft-min)
  bool adaptive = true;   // adapt the length to the acceptance and cost; off: always draft_max
};

// Where drafts come from.
class DraftSource {
 public:
  virtual ~DraftSource() = default;
  virtual const char* name() const = 0;  // "draft model", "lookup"
  // Up to k tokens that may continue `context` (every token chosen so far,
  // the last one not yet computed by the target). May give fewer, or none.
  virtual Status Draft(const std::vector<int32_t>& context, int32_t k,
                       std::vector<int32_t>* out) = 0;
  // Brings the source up to `context` before Draft (a draft model computes
  // what its cache lacks: the prompt, the tokens of steps it did not draft).
  // Timed apart from Draft: the draft length weighs the cost per drafted
  // token, which a one-time catch-up (a 300-token prompt) would swamp.
  virtual Status Follow(const std::vector<int32_t>& context) {
    (void)context;
    return Status::Ok();
  }
  // Whether trying a draft costs real work (a draft model's passes) rather
  // than nothing (lookup). Such a source is tried with short probes before any
  // round at draft_max, and given up for the rest of the generation when the
  // probes' back-off reaches its end without one accepted token.
  virtual bool costly() const { return false; }
  // What verification made of the last draft: `accepted` of `drafted` tokens.
  virtual void Verified(int32_t drafted, int32_t accepted) {
    (void)drafted;
    (void)accepted;
  }
};

// A smaller model of the same vocabulary: greedy drafts from its own session.
class DraftModel final : public DraftSource {
 public:
  // Borrows `draft` (a session of the draft model). Checks the vocabularies:
  // every token that is not a special one must be the same text at the same
  // id in both; special tokens may differ (the draft stops at one the target
  // does not have). Errors name the first token that differs.
  static Status Create(Session* draft, const Tokenizer& target, std::unique_ptr<DraftModel>* out);
  const char* name() const override { return "draft model"; }
  Status Draft(const std::vector<int32_t>& context, int32_t k, std::vector<int32_t>* out) override;
  Status Follow(const std::vector<int32_t>& context) override;
  bool costly() const override { return true; }
  void Verified(int32_t drafted, int32_t accepted) override;

  // Until a draft of it is accepted, the draft model reads only the last
  // kProbeWindow tokens of the context, not all of it: whether it can guess
  // at all shows on a short context too, and a draft that cannot then never
  // pays for reading a long prompt (bench/speculative_compare.sh's failing
  // draft: the 327-token prompt was half of what trying it cost).
  static constexpr size_t kProbeWindow = 32;

 private:
  DraftModel(Session* draft, std::vector<int32_t> to_target)
      : draft_(draft), to_target_(std::move(to_target)) {}
  // The part of `context` the draft reads: all of it once a draft was
  // accepted, its last kProbeWindow tokens before.
  const std::vector<int32_t>& Seen(const std::vector<int32_t>& context);

  Session* draft_;
  std::vector<int32_t> to_target_;  // draft id -> target id, -1: none
  bool whole_context_ = false;      // a draft was accepted: read the whole context
  std::vector<int32_t> window_;     // Seen's tail of the context
};

// Prompt lookup: the tokens that followed the most recent earlier occurrence
// of the context's last n tokens, for the longest n in [1, n_max] that has
// one. Free to compute; pays where the output repeats the input (code edits,
// quotes, structured data).
class LookupDraft final : public DraftSource {
 public:
  explicit LookupDraft(int32_t n_max) : n_max_(n_max), index_(static_cast<size_t>(n_max)) {}
  const char* name() const override { return "lookup"; }
  Status Draft(const std::vector<int32_t>& context, int32_t k, std::vector<int32_t>* out) override;

 private:
  int32_t n_max_;
  // index_[n - 1]: hash of an n-gram -> the position right after its latest
  // occurrence (whose continuation is known), over context_[0, indexed_).
  std::vector<std::unordered_map<uint64_t, int64_t>> index_;
  std::vector<int32_t> context_;  // what the index was built over
  int64_t indexed_ = 0;
};

struct SpeculativeStats {
  int64_t n_steps = 0;    // target passes after the prompt
  int64_t n_drafted = 0;  // drafted tokens verified
  int64_t n_accepted = 0;
  double draft_seconds = 0;
  double verify_seconds = 0;
  double acceptance() const {
    return n_drafted > 0 ? static_cast<double>(n_accepted) / static_cast<double>(n_drafted) : 0;
  }
};

// Generate (runtime/decoding/generate.h) with drafts from `draft`. Beam search
// is not speculative (params.beams must be 0). The result's tokens, text and
// finish reason are those Generate gives with the same parameters.
Status GenerateSpeculative(Session& session, DraftSource& draft, const std::vector<int32_t>& prompt,
                           const GenerateParams& params, const SpeculativeParams& spec,
                           const PieceFn& on_piece, const TokenFn& on_token, GenerateResult* result,
                           SpeculativeStats* stats);

}  // namespace ember
