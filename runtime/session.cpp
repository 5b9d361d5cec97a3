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
    return InvalidArgument("thread count " + std::to_string(params.n_threads) +
                           " is out of range");
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

Status Session::Decode(const std::vector<int32_t>& tokens) {
  if (tokens.empty()) return InvalidArgument("no tokens to decode");
  const int64_t n_vocab = model_.hparams().n_vocab;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= n_vocab) {
      return InvalidArgument("token id " + std::to_string(tokens[i]) + " at index " +
                             std::to_string(i) + " is outside the vocabulary (0.." +
                             std::to_string(n_vocab - 1) + ")");
    }
  }
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n_past() + n > n_ctx()) {
    return Status(Code::kContextOverflow,
                  std::to_string(n_past() + n) + " tokens do not fit in the context of " +
                      std::to_string(n_ctx()) + " tokens");
  }
  for (int64_t done = 0; done < n;) {
    const int64_t chunk = std::min(n_batch_, n - done);
    const bool last = done + chunk == n;
    LlamaForward(model_, kv_, scratch_, tokens.data() + done, chunk, n_past() + done, n_threads_,
                 last ? logits_.data() : nullptr);
    done += chunk;
  }
  tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
  return Status::Ok();
}

}  // namespace ember
