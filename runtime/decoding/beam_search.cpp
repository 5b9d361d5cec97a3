#include "runtime/decoding/beam_search.h"

#include <algorithm>
#include <cmath>

#include "sampling/grammar/matcher.h"
#include "sampling/logprobs.h"

namespace ember {
namespace {

struct Beam {
  std::vector<int32_t> tokens;
  double logprob = 0;
  std::vector<float> logits;                       // next-token logits after `tokens`
  std::unique_ptr<grammar::GrammarMatcher> parse;  // with a grammar: where the beam stands in it
};

struct Hypothesis {
  std::vector<int32_t> tokens;
  double logprob;
  double score;
  bool eos;
};

struct Continuation {
  int32_t beam;
  int32_t id;
  double logprob;  // the beam's total plus this token's
};

double Score(double logprob, size_t length, float alpha) {
  return alpha == 0.0f ? logprob : logprob / std::pow(static_cast<double>(length), alpha);
}

}  // namespace

Status BeamSearch(Session& session, const BeamParams& params, BeamResult* result) {
  const GenerationScope batching(session);  // batched passes wait for its steps
  if (params.beams < 1 || params.beams > 64) {
    return InvalidArgument("beams must be in [1, 64] (got " + std::to_string(params.beams) + ")");
  }
  if (!(params.length_penalty >= 0.0f && params.length_penalty <= 10.0f)) {
    return InvalidArgument("length-penalty must be in [0, 10] (got " +
                           std::to_string(params.length_penalty) + ")");
  }
  if (params.n_predict < 0) return InvalidArgument("n_predict must be >= 0");
  if (session.n_past() == 0) return InvalidArgument("beam search needs a prompt in the session");
  const int64_t B = params.beams, N = params.n_predict, P = session.n_past();
  const int64_t rows = P + B * N;
  if (rows > session.n_ctx()) {
    return Status(Code::kContextOverflow, "beam search needs " + std::to_string(rows) +
                                              " cache rows (prompt " + std::to_string(P) + " + " +
                                              std::to_string(B) + " beams x " + std::to_string(N) +
                                              " tokens); the context has " +
                                              std::to_string(session.n_ctx()) + " (raise -c)");
  }
  *result = BeamResult();
  if (N == 0) return Status::Ok();
  session.Linearize();  // the prompt in rows [0, P), beams after it
  const Tokenizer& tok = session.model().tokenizer();
  const int64_t n_vocab = session.model().config().n_vocab;
  const std::vector<int32_t> prefix = session.tokens();
  const std::vector<float> prefix_logits = session.logits();

  std::vector<Beam> live(1);
  live[0].logits = prefix_logits;
  if (params.grammar) live[0].parse = std::make_unique<grammar::GrammarMatcher>(params.grammar);
  std::vector<uint64_t> mask;
  std::vector<float> masked;
  std::vector<Hypothesis> done;
  std::vector<float> batch_logits;
  for (int64_t step = 0; step < N && !live.empty(); ++step) {
    if (session.cancel_requested()) {  // Session::RequestCancel, from any thread
      result->cancelled = true;
      for (const Beam& b : live) {
        if (b.tokens.empty()) continue;
        done.push_back(
            {b.tokens, b.logprob, Score(b.logprob, b.tokens.size(), params.length_penalty), false});
      }
      break;
    }
    // Every live beam's 2B best next tokens: enough for B survivors even if
    // B of them end the sequence.
    std::vector<Continuation> cands;
    for (size_t b = 0; b < live.size(); ++b) {
      const float* lg = live[b].logits.data();
      const double lse = LogSumExp(lg, n_vocab);  // the model's distribution, grammar or not
      if (live[b].parse) {                        // only the tokens the beam's grammar allows next
        live[b].parse->FillMask(&mask);
        masked.assign(lg, lg + n_vocab);
        for (int64_t t = 0; t < n_vocab; ++t) {
          if (!((mask[static_cast<size_t>(t) >> 6] >> (t & 63)) & 1)) masked[t] = -INFINITY;
        }
        lg = masked.data();
      }
      for (const TokenLogprob& t : TopLogprobs(lg, n_vocab, 2 * B, lse)) {
        if (std::isinf(t.logprob)) continue;  // masked out
        cands.push_back({static_cast<int32_t>(b), t.id, live[b].logprob + t.logprob});
      }
    }
    // Best first; ties by beam, then id (B = 1: exactly greedy's choice).
    std::stable_sort(cands.begin(), cands.end(), [](const Continuation& a, const Continuation& b) {
      return a.logprob > b.logprob;
    });
    std::vector<Beam> next;
    std::vector<int32_t> parent;
    for (size_t r = 0; r < cands.size() && static_cast<int64_t>(next.size()) < B; ++r) {
      const Continuation& c = cands[r];
      const Beam& from = live[static_cast<size_t>(c.beam)];
      const bool eos = !params.ignore_eos && tok.IsEndOfGeneration(c.id);
      if (eos) {
        // Only the first B ranks may finish a sequence (as in the usual formulation).
        if (static_cast<int64_t>(r) < B) {
          done.push_back({from.tokens, c.logprob,
                          Score(c.logprob, from.tokens.size() + 1, params.length_penalty), true});
        }
        continue;
      }
      Beam nb;
      nb.tokens = from.tokens;
      nb.tokens.push_back(c.id);
      nb.logprob = c.logprob;
      if (from.parse) {
        nb.parse = std::make_unique<grammar::GrammarMatcher>(*from.parse);
        if (!nb.parse->Accept(c.id)) return Status(Code::kInternal, "beam search: grammar mask");
      }
      next.push_back(std::move(nb));
      parent.push_back(c.beam);
    }
    if (step + 1 == N) {  // the length limit: the survivors finish as they are
      for (Beam& b : next) {
        done.push_back(
            {b.tokens, b.logprob, Score(b.logprob, b.tokens.size(), params.length_penalty), false});
      }
      break;
    }
    // Stop when B sequences have finished and none of the live ones scores
    // better now (with alpha > 0 a longer sequence could still gain; this is
    // the common heuristic).
    if (static_cast<int64_t>(done.size()) >= B && !next.empty()) {
      std::vector<double> scores;
      for (const Hypothesis& h : done) scores.push_back(h.score);
      std::sort(scores.rbegin(), scores.rend());
      const double worst_kept = scores[static_cast<size_t>(B - 1)];
      double best_live = -INFINITY;
      for (const Beam& b : next) {
        best_live = std::max(best_live, Score(b.logprob, b.tokens.size(), params.length_penalty));
      }
      if (worst_kept >= best_live) break;
    }
    if (next.empty()) {
      result->ended_by_grammar = params.grammar != nullptr && done.empty();
      break;
    }
    // Beam j continues beam parent[j]: its rows must hold the parent's `step`
    // generated tokens. Copy only the rows that move.
    std::vector<int64_t> src, dst;
    for (size_t j = 0; j < next.size(); ++j) {
      if (parent[j] != static_cast<int32_t>(j)) {
        src.push_back(P + parent[j] * N);
        dst.push_back(P + static_cast<int64_t>(j) * N);
      }
    }
    session.CopyKvRuns(src, dst, step);
    // Decode the B new tokens as one batch.
    std::vector<int32_t> ids;
    std::vector<TokenPlace> places;
    for (size_t j = 0; j < next.size(); ++j) {
      const int64_t own = P + static_cast<int64_t>(j) * N;
      ids.push_back(next[j].tokens.back());
      places.push_back({P + step, own + step, {{0, P}, {own, step + 1}, {0, 0}}, 2});
    }
    EMBER_RETURN_IF_ERROR(session.DecodePlaced(ids, places, &batch_logits));
    ++result->n_steps;
    for (size_t j = 0; j < next.size(); ++j) {
      next[j].logits.assign(batch_logits.begin() + static_cast<int64_t>(j) * n_vocab,
                            batch_logits.begin() + static_cast<int64_t>(j + 1) * n_vocab);
    }
    live = std::move(next);
  }
  if (done.empty()) {  // every continuation was cut (cannot happen with N >= 1; be safe)
    session.SetTokens(prefix, prefix_logits.data());
    return Status::Ok();
  }
  const Hypothesis* best = &done[0];
  for (const Hypothesis& h : done) {
    if (h.score > best->score) best = &h;  // strict: the earlier one wins a tie
  }
  result->tokens = best->tokens;
  result->logprob = best->logprob;
  result->ended_by_eos = best->eos;
  // Leave the session as greedy generation would: prompt + sequence minus its
  // last token (re-decoded in place; the beams' rows are scratch). A
  // cancelled search returns at once, with the prompt alone in the context.
  session.SetTokens(prefix, prefix_logits.data());
  if (result->cancelled) return Status::Ok();
  const size_t keep = best->eos ? best->tokens.size() : best->tokens.size() - 1;
  if (keep > 0) {
    EMBER_RETURN_IF_ERROR(
        session.Decode(std::vector<int32_t>(best->tokens.begin(), best->tokens.begin() + keep)));
  }
  return Status::Ok();
}

}  // namespace ember
