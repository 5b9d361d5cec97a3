#include "runtime/decoding/generate.h"

#include <chrono>
#include <cmath>
#include <memory>

#include "platform/clock.h"
#include "runtime/decoding/beam_search.h"
#include "runtime/decoding/generate_parts.h"
#include "runtime/text/stop_stream.h"
#include "sampling/logprobs.h"

namespace ember {
namespace {

// Log-probability of `id` and the top candidates under softmax(logits).
void RecordProbs(const float* logits, int64_t n_vocab, int32_t id, int32_t n_probs,
                 GenerateResult* r) {
  const double lse = LogSumExp(logits, n_vocab);
  const double lp = static_cast<double>(logits[id]) - lse;
  r->logprob += lp;
  r->token_logprobs.push_back(static_cast<float>(lp));
  if (n_probs > 0) {
    std::vector<TokenProb> top;
    for (const TokenLogprob& t : TopLogprobs(logits, n_vocab, n_probs, lse)) {
      top.push_back({t.id, static_cast<float>(std::exp(t.logprob))});
    }
    r->top_probs.push_back(std::move(top));
  }
}

}  // namespace

TokenEmitter::TokenEmitter(const Tokenizer& tok, int64_t n_vocab, const GenerateParams& params,
                           const PieceFn& on_piece, const TokenFn& on_token, GenerateResult* result)
    : tok_(tok),
      n_vocab_(n_vocab),
      params_(params),
      on_piece_(on_piece),
      on_token_(on_token),
      result_(result),
      stream_(params.stop) {}

bool TokenEmitter::Emit(const std::string& piece, int32_t token) {
  if (piece.empty()) return true;
  result_->text += piece;
  return !on_piece_ || on_piece_(piece, token);
}

bool TokenEmitter::Commit(int32_t id, const float* logits) {
  if (params_.logprobs || params_.n_probs > 0) {
    RecordProbs(logits, n_vocab_, id, params_.n_probs, result_);
  }
  result_->tokens.push_back(id);
  if ((on_token_ && !on_token_(id)) || !Emit(stream_.Push(tok_.TokenToPiece(id, false)), id)) {
    result_->finish = FinishReason::kCancelled;
    ended_ = true;
    return false;
  }
  if (stream_.stopped()) {
    result_->finish = FinishReason::kStop;
    result_->stop = stream_.stop_string();
    ended_ = true;
    return false;
  }
  return true;
}

void TokenEmitter::Flush() {
  if (!ended_) Emit(stream_.Flush(), result_->tokens.empty() ? -1 : result_->tokens.back());
}

namespace {

// Hands text to the caller; false when the caller asked to stop.
bool Emit(const std::string& piece, int32_t token, const PieceFn& on_piece, GenerateResult* r) {
  if (piece.empty()) return true;
  r->text += piece;
  return !on_piece || on_piece(piece, token);
}

// The grammar beam search follows: the chain's grammar stage, or the
// settings' grammar (compiled for the model), or none.
Status BeamGrammar(Session& session, const GenerateParams& params,
                   std::shared_ptr<const grammar::MaskTables>* out) {
  out->reset();
  if (params.chain != nullptr) {
    for (const SamplerSpec& s : params.chain->specs()) {
      if (s.kind == SamplerKind::kGrammar) *out = s.grammar_tables;
    }
    return Status::Ok();
  }
  if (params.sampling.grammar.empty()) return Status::Ok();
  return session.model().grammar_cache().Tables(params.sampling.grammar,
                                                params.sampling.grammar_root, out);
}

Status RunBeams(Session& session, const GenerateParams& params, const PieceFn& on_piece,
                const TokenFn& on_token, GenerateResult* result) {
  BeamParams bp;
  bp.beams = params.beams;
  bp.length_penalty = params.length_penalty;
  bp.n_predict = params.n_predict;
  bp.ignore_eos = params.ignore_eos;
  EMBER_RETURN_IF_ERROR(BeamGrammar(session, params, &bp.grammar));
  BeamResult br;
  EMBER_RETURN_IF_ERROR(BeamSearch(session, bp, &br));
  result->n_decode_evals = br.n_steps;
  result->finish = br.cancelled          ? FinishReason::kCancelled
                   : br.ended_by_eos     ? FinishReason::kEos
                   : br.ended_by_grammar ? FinishReason::kGrammar
                                         : FinishReason::kLength;
  result->logprob = br.logprob;  // per-token log-probabilities are not kept by the search
  const Tokenizer& tok = session.model().tokenizer();
  StopStream stream(params.stop);
  for (const int32_t id : br.tokens) {
    result->tokens.push_back(id);
    if (on_token && !on_token(id)) {
      result->finish = FinishReason::kCancelled;
      return Status::Ok();
    }
    if (!Emit(stream.Push(tok.TokenToPiece(id, false)), id, on_piece, result)) {
      result->finish = FinishReason::kCancelled;
      return Status::Ok();
    }
    if (stream.stopped()) {
      result->finish = FinishReason::kStop;
      result->stop = stream.stop_string();
      return Status::Ok();
    }
  }
  Emit(stream.Flush(), br.tokens.empty() ? -1 : br.tokens.back(), on_piece, result);
  return Status::Ok();
}

}  // namespace

const char* FinishReasonName(FinishReason r) {
  switch (r) {
    case FinishReason::kLength:
      return "length";
    case FinishReason::kEos:
      return "eos";
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kCancelled:
      return "cancelled";
    case FinishReason::kGrammar:
      return "grammar";
  }
  return "unknown";
}

Status SetUpGenerate(const Session& session, const std::vector<int32_t>& prompt,
                     const GenerateParams& params, std::unique_ptr<SamplerChain>* own,
                     SamplerChain** chain) {
  if (params.n_predict < 0) {
    return InvalidArgument("n_predict must be >= 0 (got " + std::to_string(params.n_predict) + ")");
  }
  if (params.n_probs < 0 || params.n_probs > 1000) {
    return InvalidArgument("n-probs must be in [0, 1000] (got " + std::to_string(params.n_probs) +
                           ")");
  }
  if (params.beams < 0) {
    return InvalidArgument("beams must be >= 1 (got " + std::to_string(params.beams) + ")");
  }
  if (params.beams > 0 && params.n_probs > 0) {
    return Status(Code::kUnsupported, "n-probs is not available with beam search");
  }
  if (prompt.empty()) return InvalidArgument("the prompt has no tokens");
  const int64_t n_prompt = static_cast<int64_t>(prompt.size());
  const int64_t need =
      params.reuse_prefix || session.context_shift() ? n_prompt : session.n_past() + n_prompt;
  if (need > session.n_ctx()) {
    return Status(Code::kContextOverflow, "the prompt (" + std::to_string(prompt.size()) +
                                              " tokens) does not fit in the context of " +
                                              std::to_string(session.n_ctx()) + " tokens");
  }
  // Build (and so validate) the chain before any work.
  const Tokenizer& tok = session.model().tokenizer();
  *chain = params.chain;
  if (*chain == nullptr && params.beams == 0) {
    std::vector<SamplerSpec> specs;
    EMBER_RETURN_IF_ERROR(SpecsFromParams(params.sampling, &specs));
    EMBER_RETURN_IF_ERROR(session.model().grammar_cache().Attach(&specs));
    SamplerContext ctx;
    ctx.n_vocab = static_cast<int32_t>(session.model().config().n_vocab);
    ctx.token_piece = [&tok](int32_t t) { return tok.pieces()[static_cast<size_t>(t)]; };
    EMBER_RETURN_IF_ERROR(SamplerChain::Create(specs, ctx, params.sampling.seed, own));
    *chain = own->get();
  }
  return Status::Ok();
}

Status Prefill(Session& session, const std::vector<int32_t>& prompt, const GenerateParams& params,
               GenerateResult* result, bool* cancelled) {
  const auto t0 = std::chrono::steady_clock::now();
  const Status s = params.reuse_prefix ? session.DecodeReusing(prompt, &result->n_reused)
                                       : session.Decode(prompt);
  result->prefill_seconds = SecondsSince(t0);
  *cancelled = s.code() == Code::kCancelled;  // from another thread (Session::RequestCancel)
  if (*cancelled) {
    result->finish = FinishReason::kCancelled;
    return Status::Ok();
  }
  return s;
}

Status Generate(Session& session, const std::vector<int32_t>& prompt, const GenerateParams& params,
                const PieceFn& on_piece, const TokenFn& on_token, GenerateResult* result) {
  const GenerationScope batching(session);  // batched passes wait for its steps
  std::unique_ptr<SamplerChain> own_chain;
  SamplerChain* chain = nullptr;
  EMBER_RETURN_IF_ERROR(SetUpGenerate(session, prompt, params, &own_chain, &chain));
  const Tokenizer& tok = session.model().tokenizer();
  const int64_t n_vocab = session.model().config().n_vocab;
  *result = GenerateResult();
  result->n_prompt = static_cast<int64_t>(prompt.size());

  bool cancelled = false;
  EMBER_RETURN_IF_ERROR(Prefill(session, prompt, params, result, &cancelled));
  if (cancelled) return Status::Ok();
  const auto t1 = std::chrono::steady_clock::now();
  if (params.beams > 0) {
    Status s = RunBeams(session, params, on_piece, on_token, result);
    result->decode_seconds = SecondsSince(t1);
    return s;
  }
  // Penalties see the prompt as history, as in llama.cpp; a grammar starts over.
  chain->AcceptPrompt(prompt);

  TokenEmitter emitter(tok, n_vocab, params, on_piece, on_token, result);
  for (int64_t i = 0; i < params.n_predict; ++i) {
    if (session.cancel_requested()) {
      result->finish = FinishReason::kCancelled;
      break;
    }
    const float* logits = session.logits().data();
    const int32_t id = chain->Sample(logits);
    if (id < 0) {  // a grammar admits no token here
      result->finish = FinishReason::kGrammar;
      break;
    }
    if (!params.ignore_eos && tok.IsEndOfGeneration(id)) {
      result->finish = FinishReason::kEos;
      break;
    }
    EMBER_RETURN_IF_ERROR(chain->Accept(id));
    if (!emitter.Commit(id, logits)) break;
    if (i + 1 == params.n_predict) break;  // the last token needs no forward pass
    if (session.n_past() >= session.n_ctx() && !session.context_shift()) {
      break;  // context full: finish as "length"
    }
    EMBER_RETURN_IF_ERROR(session.Decode({id}));
    ++result->n_decode_evals;
  }
  if (result->finish != FinishReason::kCancelled) emitter.Flush();
  result->decode_seconds = SecondsSince(t1);
  return Status::Ok();
}

}  // namespace ember
