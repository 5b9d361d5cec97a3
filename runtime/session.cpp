#include "runtime/session.h"

#include <algorithm>
#include <thread>

#include "ops/kernels.h"

namespace ember {

Session::Session(const Model& model, int64_t n_ctx, int n_threads, int64_t n_batch)
    : model_(model),
      kv_(model.hparams().n_layer, n_ctx, model.hparams().kv_dim()),
      n_threads_(n_threads),
      n_batch_(n_batch),
      logits_(static_cast<size_t>(model.hparams().n_vocab)) {}

Status Session::Create(const Model& model, const SessionParams& params,
                       std::unique_ptr<Session>* out) {
  const Hparams& hp = model.hparams();
  if (params.n_ctx < 0 || params.n_ctx > (int64_t{1} << 24)) {
    return InvalidArgument("context size " + std::to_string(params.n_ctx) + " is out of range");
  }
  if (params.n_threads < 0 || params.n_threads > 1024) {
    return InvalidArgument("thread count " + std::to_string(params.n_threads) + " is out of range");
  }
  if (params.n_batch <= 0) return InvalidArgument("batch size must be positive");
  const Kernels* kernels = nullptr;
  EMBER_RETURN_IF_ERROR(ActiveKernels(&kernels));  // a bad EMBER_ISA is reported here
  int64_t n_ctx = params.n_ctx > 0 ? params.n_ctx : std::min<int64_t>(hp.n_ctx_train, 4096);
  int n_threads = params.n_threads > 0
                      ? params.n_threads
                      : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  out->reset(new Session(model, n_ctx, n_threads, params.n_batch));
  return Status::Ok();
}

Status Session::CheckIds(const std::vector<int32_t>& tokens) const {
  if (tokens.empty()) return InvalidArgument("no tokens to decode");
  const int64_t n_vocab = model_.hparams().n_vocab;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= n_vocab) {
      return InvalidArgument("token id " + std::to_string(tokens[i]) + " at index " +
                             std::to_string(i) + " is outside the vocabulary (0.." +
                             std::to_string(n_vocab - 1) + ")");
    }
  }
  return Status::Ok();
}

Status Session::Decode(const std::vector<int32_t>& tokens) {
  EMBER_RETURN_IF_ERROR(CheckIds(tokens));
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n_past() + n > n_ctx()) {
    return Status(Code::kContextOverflow, std::to_string(n_past() + n) +
                                              " tokens do not fit in the context of " +
                                              std::to_string(n_ctx()) + " tokens");
  }
  std::vector<TokenPlace> places(static_cast<size_t>(std::min(n_batch_, n)));
  for (int64_t done = 0; done < n;) {
    const int64_t chunk = std::min(n_batch_, n - done);
    const bool last = done + chunk == n;
    for (int64_t t = 0; t < chunk; ++t) {
      const int64_t p = n_past() + done + t;
      places[static_cast<size_t>(t)] = {p, p, 0, 0};
    }
    LlamaForward(model_, kv_, scratch_, tokens.data() + done, places.data(), chunk, n_threads_,
                 last ? LogitsFor::kLast : LogitsFor::kNone, logits_.data());
    done += chunk;
  }
  tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
  return Status::Ok();
}

Status Session::DecodePlaced(const std::vector<int32_t>& tokens,
                             const std::vector<TokenPlace>& places, std::vector<float>* logits) {
  EMBER_RETURN_IF_ERROR(CheckIds(tokens));
  if (places.size() != tokens.size()) {
    return InvalidArgument("DecodePlaced: " + std::to_string(places.size()) + " places for " +
                           std::to_string(tokens.size()) + " tokens");
  }
  if (static_cast<int64_t>(tokens.size()) > n_batch_) {
    return InvalidArgument("DecodePlaced: more tokens than the batch size");
  }
  for (const TokenPlace& p : places) {
    if (p.slot < 0 || p.slot >= n_ctx() || p.pos < 0 || p.prefix_end < 0 || p.own_begin < 0 ||
        p.own_begin > p.slot || p.prefix_end > p.slot) {
      return Status(Code::kContextOverflow, "cache row " + std::to_string(p.slot) +
                                                " is outside the context of " +
                                                std::to_string(n_ctx()) + " tokens");
    }
  }
  const int64_t n = static_cast<int64_t>(tokens.size());
  logits->resize(static_cast<size_t>(n * model_.hparams().n_vocab));
  LlamaForward(model_, kv_, scratch_, tokens.data(), places.data(), n, n_threads_, LogitsFor::kAll,
               logits->data());
  return Status::Ok();
}

void Session::SetTokens(std::vector<int32_t> tokens, const float* logits) {
  tokens_ = std::move(tokens);
  std::copy(logits, logits + logits_.size(), logits_.begin());
}

}  // namespace ember
