#include "runtime/decoding/speculative.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "platform/clock.h"
#include "runtime/decoding/generate_parts.h"

namespace ember {
namespace {

using Clock = std::chrono::steady_clock;

bool IsSpecial(const VocabData& v, size_t id) {
  const TokenType t = v.token_types[id];
  return t == TokenType::kControl || t == TokenType::kUserDefined || t == TokenType::kUnknown;
}

// The draft length that maximises expected tokens per second (speculative.h),
// from running estimates of the acceptance rate and of the time of a verify
// pass per batch size and of a drafted token.
class DraftLength {
 public:
  // Steps between probes while drafting is off: 32, doubled after each probe
  // that accepted nothing (up to 256), back to 32 when one accepts.
  static constexpr int kProbeEvery = 32;
  static constexpr int kProbeEveryMax = 256;
  static constexpr int kMeasureEvery = 64;  // steps between plain steps that time one token
  // Verify passes of m tokens are predicted as t1 * (1 + kSlope (m - 1))
  // until measured; small-M passes read the weights once (docs/PERFORMANCE.md).
  static constexpr double kSlope = 0.05;

  // costly: the source's drafts cost real work (DraftSource::costly).
  DraftLength(const SpeculativeParams& p, bool costly)
      : p_(p), costly_(costly), verify_(static_cast<size_t>(p.draft_max) + 2) {}

  int32_t Next(int64_t step) {
    probing_ = false;
    if (!p_.adaptive) return p_.draft_max;
    // Learn the acceptance first: 4 rounds at draft_max, or 2 when both
    // accepted nothing (a draft that fails should cost as little as it can).
    // A costly source first passes a probe: rounds at draft_max only once it
    // has had a draft accepted.
    const bool learning = n_rounds_ < 4 && !(n_rounds_ >= 2 && accepted_ == 0);
    if (learning && (!costly_ || accepted_ > 0)) return p_.draft_max;
    // A plain step now and then keeps the cost of one token measured.
    if (verify_[1].n == 0 || step % kMeasureEvery == 0) return 0;
    const double t1 = verify_[1].mean;
    const double a = std::clamp(accepted_ / std::max(1.0, trials_), 0.0, 0.99);
    int32_t best = 0;
    double best_rate = 1.0 / t1;
    // Nothing accepted yet: a pass can only yield its one token, whatever a
    // noisy timing of a short verify pass says.
    for (int32_t k = std::max(1, p_.draft_min); a > 0 && k <= p_.draft_max; ++k) {
      const double tokens = (1.0 - std::pow(a, k + 1)) / (1.0 - a);
      const double time = VerifyTime(k + 1, t1) + k * draft_per_token_;
      if (tokens / time > best_rate * 1.02) {  // a clear gain over the best so far
        best = k;
        best_rate = tokens / time;
      }
    }
    if (best == 0 && step >= next_probe_ && !given_up_) {
      probing_ = true;
      next_probe_ = step + probe_every_;
      return std::max(2, p_.draft_min);
    }
    return best;
  }

  // A step verified m drafts (pass of m + 1 tokens) and accepted `accepted`.
  void Record(int32_t m, int32_t accepted, double verify_s, double draft_s) {
    if (static_cast<size_t>(m + 1) < verify_.size())
      verify_[static_cast<size_t>(m) + 1].Add(verify_s);
    if (m == 0) return;
    ++n_rounds_;
    if (probing_) {
      // A costly source whose probe failed at the longest back-off is given up.
      given_up_ = costly_ && accepted == 0 && probe_every_ == kProbeEveryMax;
      probe_every_ =
          accepted > 0 ? kProbeEvery : std::min<int64_t>(2 * probe_every_, kProbeEveryMax);
    }
    // Acceptance per drafted token: a run of `accepted` successes, then one
    // failure unless the whole draft was accepted (decayed running sums).
    constexpr double kDecay = 0.95;
    accepted_ = kDecay * accepted_ + accepted;
    trials_ = kDecay * trials_ + accepted + (accepted < m ? 1 : 0);
    const double per_token = draft_s / m;
    draft_per_token_ = draft_samples_++ == 0 ? per_token : 0.9 * draft_per_token_ + 0.1 * per_token;
  }

 private:
  struct Mean {
    double mean = 0;
    int64_t n = 0;
    void Add(double x) {
      mean = n == 0 ? x : 0.8 * mean + 0.2 * x;
      ++n;
    }
  };
  double VerifyTime(int32_t m, double t1) const {
    const Mean& v = verify_[static_cast<size_t>(m)];
    return v.n > 0 ? v.mean : t1 * (1.0 + kSlope * (m - 1));
  }

  SpeculativeParams p_;
  bool costly_;
  bool given_up_ = false;     // a costly source that never paid: no more probes
  std::vector<Mean> verify_;  // [m]: seconds of a verify pass of m tokens
  double accepted_ = 0, trials_ = 0;
  double draft_per_token_ = 0;
  int64_t draft_samples_ = 0;
  int64_t n_rounds_ = 0;
  bool probing_ = false;  // the length Next gave last was a probe
  int64_t probe_every_ = kProbeEvery;
  int64_t next_probe_ = 0;
};

uint64_t HashTokens(const int32_t* t, int64_t n) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the ids' bytes
  for (int64_t i = 0; i < n; ++i) {
    uint32_t v = static_cast<uint32_t>(t[i]);
    for (int b = 0; b < 4; ++b) {
      h ^= (v >> (8 * b)) & 0xff;
      h *= 1099511628211ull;
    }
  }
  return h;
}

}  // namespace

Status DraftModel::Create(Session* draft, const Tokenizer& target,
                          std::unique_ptr<DraftModel>* out) {
  if (draft == nullptr) return InvalidArgument("no draft session");
  const VocabData& d = draft->model().tokenizer().vocab();
  const VocabData& t = target.vocab();
  std::vector<int32_t> map(d.tokens.size(), -1);
  for (size_t i = 0; i < d.tokens.size(); ++i) {
    const bool in_target = i < t.tokens.size();
    if (in_target && d.tokens[i] == t.tokens[i]) {
      map[i] = static_cast<int32_t>(i);
    } else if (!IsSpecial(d, i) && !(in_target && IsSpecial(t, i))) {
      return InvalidArgument(
          "the draft model has another vocabulary: token " + std::to_string(i) + " is '" +
          std::string(d.tokens[i]) + "' there and " +
          (in_target ? "'" + std::string(t.tokens[i]) + "'" : std::string("missing")) +
          " in the target");
    }
  }
  if (t.tokens.size() > d.tokens.size()) {
    for (size_t i = d.tokens.size(); i < t.tokens.size(); ++i) {
      if (!IsSpecial(t, i)) {
        return InvalidArgument("the draft model has another vocabulary: the target's token " +
                               std::to_string(i) + " '" + std::string(t.tokens[i]) +
                               "' is not in it");
      }
    }
  }
  out->reset(new DraftModel(draft, std::move(map)));
  return Status::Ok();
}

const std::vector<int32_t>& DraftModel::Seen(const std::vector<int32_t>& context) {
  if (whole_context_ || context.size() <= kProbeWindow) return context;
  window_.assign(context.end() - static_cast<std::ptrdiff_t>(kProbeWindow), context.end());
  return window_;
}

void DraftModel::Verified(int32_t drafted, int32_t accepted) {
  (void)drafted;
  if (accepted > 0) whole_context_ = true;
}

Status DraftModel::Follow(const std::vector<int32_t>& context) {
  const std::vector<int32_t>& seen = Seen(context);
  if (seen.empty() || static_cast<int64_t>(seen.size()) >= draft_->n_ctx()) return Status::Ok();
  return draft_->DecodeReusing(seen, nullptr);
}

Status DraftModel::Draft(const std::vector<int32_t>& context_in, int32_t k,
                         std::vector<int32_t>* out) {
  out->clear();
  const std::vector<int32_t>& context = Seen(context_in);
  if (k <= 0 || context.empty()) return Status::Ok();
  // The draft's cache follows the context: what matches stays, the rest (the
  // rows of drafts the target rejected) is dropped and the new tokens computed.
  if (static_cast<int64_t>(context.size()) + k > draft_->n_ctx()) return Status::Ok();
  EMBER_RETURN_IF_ERROR(draft_->DecodeReusing(context, nullptr));
  const int64_t n_vocab = draft_->model().config().n_vocab;
  for (int32_t i = 0; i < k; ++i) {
    const std::vector<float>& logits = draft_->logits();
    // Greedy, ties to the lowest id (as the greedy sampler).
    const int32_t id = static_cast<int32_t>(
        std::max_element(logits.begin(), logits.begin() + n_vocab) - logits.begin());
    const int32_t mapped = static_cast<size_t>(id) < to_target_.size() ? to_target_[id] : -1;
    if (mapped < 0 || draft_->model().tokenizer().IsEndOfGeneration(id)) break;
    out->push_back(mapped);
    if (i + 1 < k) EMBER_RETURN_IF_ERROR(draft_->Decode({id}));
  }
  return Status::Ok();
}

Status LookupDraft::Draft(const std::vector<int32_t>& context, int32_t k,
                          std::vector<int32_t>* out) {
  out->clear();
  if (k <= 0 || context.empty()) return Status::Ok();
  // The index covers a prefix of the context; a context that is not an
  // extension of what was indexed (a context shift, a new conversation) is
  // indexed again.
  const bool extends = context.size() >= context_.size() &&
                       std::equal(context_.begin(), context_.end(), context.begin());
  if (!extends) {
    for (auto& m : index_) m.clear();
    context_.clear();
    indexed_ = 0;
  }
  context_.assign(context.begin(), context.end());
  const int64_t len = static_cast<int64_t>(context_.size());
  // Index every n-gram that ends before the last token (its continuation is known).
  for (; indexed_ < len - 1; ++indexed_) {
    const int64_t end = indexed_ + 1;  // the n-gram is context_[end - n, end)
    for (int32_t n = 1; n <= n_max_ && n <= end; ++n) {
      index_[static_cast<size_t>(n) - 1][HashTokens(context_.data() + end - n, n)] = end;
    }
  }
  for (int32_t n = std::min<int64_t>(n_max_, len); n >= 1; --n) {
    const auto& m = index_[static_cast<size_t>(n) - 1];
    const auto it = m.find(HashTokens(context_.data() + len - n, n));
    if (it == m.end()) continue;
    const int64_t from = it->second;
    // A hash match is checked against the tokens themselves.
    if (!std::equal(context_.begin() + from - n, context_.begin() + from, context_.end() - n)) {
      continue;
    }
    for (int64_t i = from; i < len && static_cast<int32_t>(out->size()) < k; ++i) {
      out->push_back(context_[static_cast<size_t>(i)]);
    }
    break;
  }
  return Status::Ok();
}

Status GenerateSpeculative(Session& session, DraftSource& draft, const std::vector<int32_t>& prompt,
                           const GenerateParams& params, const SpeculativeParams& spec,
                           const PieceFn& on_piece, const TokenFn& on_token, GenerateResult* result,
                           SpeculativeStats* stats) {
  const GenerationScope batching(session);  // batched passes wait for its steps
  if (params.beams > 0) return Unsupported("beam search is not speculative");
  if (spec.draft_max < 1 || spec.draft_max > 32) {
    return InvalidArgument("draft-max must be in [1, 32] (got " + std::to_string(spec.draft_max) +
                           ")");
  }
  if (spec.draft_min < 0 || spec.draft_min > spec.draft_max) {
    return InvalidArgument("draft-min must be in [0, draft-max] (got " +
                           std::to_string(spec.draft_min) + ")");
  }
  if (session.model().numerics() == Numerics::kGgml) {
    return Unsupported(
        "speculative decoding needs ember's numerics (--numerics ggml computes a batch "
        "differently from single tokens)");
  }
  std::unique_ptr<SamplerChain> own_chain;
  SamplerChain* chain = nullptr;
  EMBER_RETURN_IF_ERROR(SetUpGenerate(session, prompt, params, &own_chain, &chain));
  const Tokenizer& tok = session.model().tokenizer();
  const int64_t n_vocab = session.model().config().n_vocab;
  *result = GenerateResult();
  *stats = SpeculativeStats();
  result->n_prompt = static_cast<int64_t>(prompt.size());

  bool cancelled = false;
  EMBER_RETURN_IF_ERROR(Prefill(session, prompt, params, result, &cancelled));
  if (cancelled) return Status::Ok();
  const auto t1 = Clock::now();
  chain->AcceptPrompt(prompt);  // penalties see the prompt, a grammar starts over, as in Generate

  TokenEmitter emitter(tok, n_vocab, params, on_piece, on_token, result);
  DraftLength length(spec, draft.costly());
  int64_t n_gen = 0;
  Status accepted_ok;
  // Chooses the token after logits[n_vocab]; false when generation ends.
  // *committed: the token was emitted (not an end-of-generation token, not a
  // cancel before sampling). A grammar in the chain checks the drafts too: a
  // draft is accepted only if the chain, grammar included, picks it.
  auto choose = [&](const float* logits, int32_t* id, bool* committed) {
    *committed = false;
    if (session.cancel_requested()) {
      result->finish = FinishReason::kCancelled;
      return false;
    }
    *id = chain->Sample(logits);
    if (*id < 0) {  // a grammar admits no token here
      result->finish = FinishReason::kGrammar;
      return false;
    }
    if (!params.ignore_eos && tok.IsEndOfGeneration(*id)) {
      result->finish = FinishReason::kEos;
      return false;
    }
    accepted_ok = chain->Accept(*id);
    if (!accepted_ok.ok()) return false;
    ++n_gen;
    *committed = true;
    return emitter.Commit(*id, logits) && n_gen < params.n_predict;
  };

  int32_t pending = -1;  // chosen and emitted, not yet in the cache
  bool committed = false;
  bool going = params.n_predict > 0 && choose(session.logits().data(), &pending, &committed);
  std::vector<int32_t> context, drafts, batch;
  std::vector<float> rows;
  while (going) {
    if (session.n_past() >= session.n_ctx() && !session.context_shift()) break;  // "length"
    // Room for the batch without a context shift in the middle of it (a
    // shift would move the rows a rollback refers to).
    const int64_t room = session.n_ctx() - session.n_past() - 1;
    const int64_t k =
        std::min<int64_t>({length.Next(stats->n_steps), params.n_predict - n_gen, room, 64 - 1});
    drafts.clear();
    auto td = Clock::now();
    if (k > 0) {
      context.assign(session.tokens().begin(), session.tokens().end());
      context.push_back(pending);
      EMBER_RETURN_IF_ERROR(draft.Follow(context));
      const auto tf = Clock::now();
      stats->draft_seconds += SecondsBetween(td, tf);  // counted, but not per drafted token
      td = tf;
      EMBER_RETURN_IF_ERROR(draft.Draft(context, static_cast<int32_t>(k), &drafts));
      if (static_cast<int32_t>(drafts.size()) < spec.draft_min) drafts.clear();
      if (static_cast<int64_t>(drafts.size()) > k) drafts.resize(static_cast<size_t>(k));
    }
    batch.assign(1, pending);
    batch.insert(batch.end(), drafts.begin(), drafts.end());
    const int64_t n0 = session.n_past();
    const auto tv = Clock::now();
    EMBER_RETURN_IF_ERROR(session.Decode(batch, &rows));
    const auto te = Clock::now();
    ++stats->n_steps;
    stats->draft_seconds += SecondsBetween(td, tv);
    stats->verify_seconds += SecondsBetween(tv, te);

    // Verify: the chain samples after each row; a draft equal to the sampled
    // token is accepted, the first other token becomes the next pending one.
    const int32_t m = static_cast<int32_t>(drafts.size());
    int32_t accepted = 0, next = -1;
    for (int32_t i = 0; i <= m; ++i) {
      int32_t id = -1;
      going = choose(rows.data() + static_cast<size_t>(i) * static_cast<size_t>(n_vocab), &id,
                     &committed);
      const bool matches = committed && i < m && id == drafts[static_cast<size_t>(i)];
      if (matches) ++accepted;  // its row is already right
      if (going && matches) continue;
      next = id;
      break;
    }
    stats->n_drafted += m;
    stats->n_accepted += accepted;
    length.Record(m, accepted, SecondsBetween(tv, te), SecondsBetween(td, tv));
    if (m > 0) draft.Verified(m, accepted);
    // Roll back the rows of rejected drafts (and, when generation ends, of
    // drafts after the last token chosen).
    const int64_t keep = n0 + 1 + accepted;
    if (keep < session.n_past()) {
      const std::vector<int32_t> kept(session.tokens().begin(), session.tokens().begin() + keep);
      const int64_t n = session.Truncate(keep);
      if (n < keep) {  // a window ring could not keep them: compute them again
        EMBER_RETURN_IF_ERROR(
            session.Decode(std::vector<int32_t>(kept.begin() + n, kept.begin() + keep)));
      }
    }
    pending = next;
  }
  EMBER_RETURN_IF_ERROR(accepted_ok);
  if (result->finish != FinishReason::kCancelled) emitter.Flush();
  result->decode_seconds = SecondsSince(t1);
  // Decode tok/s counts tokens, as plain decoding's passes do (one per token
  // after the first); the passes themselves are stats->n_steps.
  result->n_decode_evals = std::max<int64_t>(0, static_cast<int64_t>(result->tokens.size()) - 1);
  return Status::Ok();
}

}  // namespace ember
