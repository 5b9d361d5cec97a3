#include "runtime/generate.h"

#include <chrono>

#include "sampling/greedy.h"
#include "sampling/temperature_draw.h"

namespace ember {
namespace {

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

const char* FinishReasonName(FinishReason r) {
  switch (r) {
    case FinishReason::kLength: return "length";
    case FinishReason::kEos: return "eos";
    case FinishReason::kCancelled: return "cancelled";
  }
  return "unknown";
}

Status Generate(Session& session, const std::vector<int32_t>& prompt, const GenerateParams& params,
                const PieceFn& on_piece, const TokenFn& on_token, GenerateResult* result) {
  if (params.n_predict < 0) {
    return InvalidArgument("n_predict must be >= 0 (got " + std::to_string(params.n_predict) + ")");
  }
  if (!(params.temperature >= 0.0f)) {
    return InvalidArgument("temperature must be >= 0");
  }
  if (prompt.empty()) return InvalidArgument("the prompt has no tokens");
  const int64_t need = session.n_past() + static_cast<int64_t>(prompt.size());
  if (need > session.n_ctx()) {
    return Status(Code::kContextOverflow,
                  "the prompt (" + std::to_string(prompt.size()) +
                      " tokens) does not fit in the context of " +
                      std::to_string(session.n_ctx()) + " tokens");
  }
  *result = GenerateResult();
  result->n_prompt = static_cast<int64_t>(prompt.size());
  const Tokenizer& tok = session.model().tokenizer();
  const int64_t n_vocab = session.model().hparams().n_vocab;
  Rng rng(params.seed);
  Utf8Stream utf8;

  auto t0 = std::chrono::steady_clock::now();
  EMBER_RETURN_IF_ERROR(session.Decode(prompt));
  auto t1 = std::chrono::steady_clock::now();
  result->prefill_seconds = Seconds(t0, t1);

  bool cancelled = false;
  for (int64_t i = 0; i < params.n_predict; ++i) {
    const float* logits = session.logits().data();
    const int32_t id = params.temperature == 0.0f
                           ? SelectGreedy(logits, n_vocab)
                           : DrawWithTemperature(logits, n_vocab, params.temperature, rng);
    if (!params.ignore_eos && tok.IsEndOfGeneration(id)) {
      result->finish = FinishReason::kEos;
      break;
    }
    result->tokens.push_back(id);
    if (on_token && !on_token(id)) {
      cancelled = true;
      result->finish = FinishReason::kCancelled;
      break;
    }
    const std::string piece = utf8.Push(tok.TokenToPiece(id, false));
    result->text += piece;
    if (!piece.empty() && on_piece && !on_piece(piece, id)) {
      cancelled = true;
      result->finish = FinishReason::kCancelled;
      break;
    }
    if (i + 1 == params.n_predict) break;  // the last token needs no forward pass
    if (session.n_past() >= session.n_ctx()) {
      break;  // context full: finish as "length"
    }
    EMBER_RETURN_IF_ERROR(session.Decode({id}));
    ++result->n_decode_evals;
  }
  if (!cancelled) {
    const std::string rest = utf8.Flush();
    if (!rest.empty()) {
      result->text += rest;
      if (on_piece) on_piece(rest, result->tokens.empty() ? -1 : result->tokens.back());
    }
  }
  result->decode_seconds = Seconds(t1, std::chrono::steady_clock::now());
  return Status::Ok();
}

}  // namespace ember
