#include "runtime/session/session.h"

#include <algorithm>
#include <thread>

#include "ops/kernels.h"
#include "ops/rope.h"
#include "platform/scheduler.h"

namespace ember {

Session::Session(const Model& model, const SessionParams& params, int64_t n_ctx, int n_threads,
                 int n_threads_batch)
    : model_(model),
      kv_(model.hparams().n_layer, n_ctx, model.hparams().n_head_kv, model.hparams().head_dim,
          params.kv_type),
      ring_(n_ctx, params.n_keep),
      context_shift_(params.context_shift),
      n_threads_(n_threads),
      n_threads_batch_(n_threads_batch),
      n_batch_(params.n_batch),
      logits_(static_cast<size_t>(model.hparams().n_vocab)) {}

Status Session::Create(const Model& model, const SessionParams& params,
                       std::unique_ptr<Session>* out) {
  const Hparams& hp = model.hparams();
  if (model.vocab_only()) {
    return InvalidArgument(model.path() +
                           " was loaded for its vocabulary only (vocab_only): it has no weights "
                           "to run a session on");
  }
  if (params.n_ctx < 0 || params.n_ctx > (int64_t{1} << 24)) {
    return InvalidArgument("context size " + std::to_string(params.n_ctx) + " is out of range");
  }
  if (params.n_threads < 0 || params.n_threads > 1024) {
    return InvalidArgument("thread count " + std::to_string(params.n_threads) + " is out of range");
  }
  if (params.n_threads_batch < 0 || params.n_threads_batch > 1024) {
    return InvalidArgument("batch thread count " + std::to_string(params.n_threads_batch) +
                           " is out of range");
  }
  if (params.n_batch <= 0) return InvalidArgument("batch size must be positive");
  if (model.numerics() == Numerics::kGgml && params.kv_type != KvType::kF16) {
    return InvalidArgument(
        std::string("numerics ggml reproduces llama.cpp's f16 KV cache; kv type ") +
        KvTypeName(params.kv_type) + " is not supported with it");
  }
  const Kernels* kernels = nullptr;
  EMBER_RETURN_IF_ERROR(ActiveKernels(&kernels));  // a bad EMBER_ISA is reported here
  int64_t n_ctx = params.n_ctx > 0 ? params.n_ctx : std::min<int64_t>(hp.n_ctx_train, 4096);
  if (params.n_keep < 0 || params.n_keep >= n_ctx) {
    return InvalidArgument("keep: " + std::to_string(params.n_keep) +
                           " tokens do not leave room in a context of " + std::to_string(n_ctx) +
                           " (the context must be larger than keep)");
  }
  // 0 is auto: the scheduler's choice for this machine (platform/scheduler.h).
  const ThreadChoice threads = ChooseHostThreads(params.n_threads, params.n_threads_batch);
  const int n_threads = threads.n_threads;
  const int n_threads_batch = threads.n_threads_batch;
  out->reset(new Session(model, params, n_ctx, n_threads, n_threads_batch));
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

Status Session::Decode(const std::vector<int32_t>& tokens, std::vector<float>* all_logits) {
  EMBER_RETURN_IF_ERROR(CheckIds(tokens));
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (!context_shift_ && n_past() + n > n_ctx()) {
    return Status(Code::kContextOverflow, std::to_string(n_past() + n) +
                                              " tokens do not fit in the context of " +
                                              std::to_string(n_ctx()) + " tokens");
  }
  const int64_t n_vocab = model_.hparams().n_vocab;
  if (all_logits) all_logits->resize(static_cast<size_t>(n * n_vocab));
  // A chunk that needs a shift must fit in the ring region once older tokens
  // are dropped; one that fits in the free rows may be a whole batch (as
  // llama.cpp's micro-batches fill a context exactly, which --numerics ggml
  // follows: its attention depends on the batch size).
  const int64_t ring_chunk = std::min(n_batch_, n_ctx() - n_keep());
  std::vector<TokenPlace> places(static_cast<size_t>(std::min(n_batch_, n)));
  for (int64_t done = 0; done < n;) {
    if (done > 0 && cancel_requested()) {
      has_logits_ = false;  // the chunks decoded so far stay; the logits are older
      return Status(Code::kCancelled, "cancelled after " + std::to_string(done) + " of " +
                                          std::to_string(n) + " tokens");
    }
    const int64_t chunk =
        n - done <= ring_.n_free() ? std::min(n_batch_, n - done) : std::min(ring_chunk, n - done);
    if (chunk > ring_.n_free()) {
      // Drop the older half of the tokens after n_keep (as llama.cpp's context
      // shift), or more if the chunk needs it.
      const int64_t after_keep = ring_.n_used() - n_keep();
      Shift(std::max(after_keep / 2, chunk - ring_.n_free()));
    }
    for (int64_t t = 0; t < chunk; ++t) {
      const int64_t i = ring_.n_used() + t;
      TokenPlace& pl = places[static_cast<size_t>(t)];
      pl.pos = i;
      pl.slot = ring_.SlotOf(i);
      pl.n_rows = ring_.RowsUpTo(i, pl.rows);
    }
    const bool last = done + chunk == n;
    LogitsFor which = all_logits ? LogitsFor::kAll : last ? LogitsFor::kLast : LogitsFor::kNone;
    float* out = all_logits ? all_logits->data() + done * n_vocab : logits_.data();
    LlamaForward(model_, kv_, scratch_, tokens.data() + done, places.data(), chunk,
                 ThreadsFor(chunk), which, out);
    ring_.Append(chunk);
    tokens_.insert(tokens_.end(), tokens.begin() + done, tokens.begin() + done + chunk);
    done += chunk;
  }
  if (all_logits) {
    std::copy(all_logits->end() - n_vocab, all_logits->end(), logits_.begin());
  }
  has_logits_ = true;
  return Status::Ok();
}

void Session::Shift(int64_t n) {
  n = std::min(n, ring_.n_used() - n_keep());
  if (n <= 0) return;
  ring_.Drop(n);
  tokens_.erase(tokens_.begin() + n_keep(), tokens_.begin() + n_keep() + n);
  n_dropped_ += n;
  ++n_shifts_;
  // Keys carry their position as a rotation (RoPE); rotating by -n moves a
  // key from position p to p - n, as if it had been computed there. Values
  // carry no position. The whole cache is touched once, no row moves.
  const Hparams& hp = model_.hparams();
  std::vector<float> rot(static_cast<size_t>(hp.n_rot));
  const float* freq_factors =
      model_.weights().rope_freqs.empty() ? nullptr : model_.weights().rope_freqs.data();
  RopeCache(rot.data(), -n, hp.n_rot, hp.rope_freq_base, hp.rope_freq_scale, freq_factors);
  const int64_t first = n_keep(), end = ring_.n_used();
  const int threads = static_cast<int>(std::min<int64_t>(n_threads_batch_, hp.n_layer));
  const RopeApplyFn rope_apply = Active().rope_apply;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    std::vector<float> k(static_cast<size_t>(kv_.kv_dim()));
#pragma omp for schedule(static)
    for (int64_t l = 0; l < hp.n_layer; ++l) {
      for (int64_t i = first; i < end; ++i) {
        const int64_t slot = ring_.SlotOf(i);
        kv_.LoadK(l, slot, k.data());
        for (int64_t h = 0; h < hp.n_head_kv; ++h) {
          rope_apply(&k[static_cast<size_t>(h * hp.head_dim)], rot.data(), hp.n_rot, hp.rope_mode);
        }
        kv_.StoreK(l, slot, k.data());
      }
    }
  }
}

Status Session::DecodeReusing(const std::vector<int32_t>& prompt, int64_t* n_reused) {
  EMBER_RETURN_IF_ERROR(CheckIds(prompt));
  const int64_t n = static_cast<int64_t>(prompt.size());
  if (!context_shift_ && n > n_ctx()) {
    return Status(Code::kContextOverflow, std::to_string(n) +
                                              " tokens do not fit in the context of " +
                                              std::to_string(n_ctx()) + " tokens");
  }
  int64_t common = 0;
  const int64_t limit = std::min(n, n_past());
  while (common < limit &&
         tokens_[static_cast<size_t>(common)] == prompt[static_cast<size_t>(common)]) {
    ++common;
  }
  if (common == n && common == n_past() && has_logits_) {
    if (n_reused) *n_reused = common;
    return Status::Ok();
  }
  if (common == n) --common;  // the last token is decoded again for its logits
  Truncate(common);
  if (n_reused) *n_reused = common;
  return Decode(std::vector<int32_t>(prompt.begin() + common, prompt.end()));
}

void Session::Truncate(int64_t n) {
  n = std::clamp<int64_t>(n, 0, n_past());
  if (n == n_past()) return;
  tokens_.resize(static_cast<size_t>(n));
  ring_.Truncate(n);
  has_logits_ = false;
}

void Session::Linearize() {
  if (ring_.linear()) return;
  std::vector<int64_t> src, dst;
  for (int64_t i = n_keep(); i < ring_.n_used(); ++i) {
    const int64_t slot = ring_.SlotOf(i);
    if (slot != i) {
      src.push_back(slot);
      dst.push_back(i);
    }
  }
  kv_.CopyRuns(src, dst, 1);
  ring_.SetLinear();
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
  if (!ring_.linear()) return InvalidArgument("DecodePlaced: the cache is not linear");
  for (const TokenPlace& p : places) {
    bool ok = p.slot >= 0 && p.slot < n_ctx() && p.pos >= 0 && p.n_rows >= 1 && p.n_rows <= 3;
    for (int r = 0; ok && r < p.n_rows; ++r) {
      ok = p.rows[r].begin >= 0 && p.rows[r].n >= 0 && p.rows[r].begin + p.rows[r].n <= n_ctx();
    }
    if (!ok) {
      return Status(Code::kContextOverflow, "cache row " + std::to_string(p.slot) +
                                                " is outside the context of " +
                                                std::to_string(n_ctx()) + " tokens");
    }
  }
  const int64_t n = static_cast<int64_t>(tokens.size());
  logits->resize(static_cast<size_t>(n * model_.hparams().n_vocab));
  LlamaForward(model_, kv_, scratch_, tokens.data(), places.data(), n, ThreadsFor(n),
               LogitsFor::kAll, logits->data());
  return Status::Ok();
}

void Session::SetTokens(std::vector<int32_t> tokens, const float* logits) {
  tokens_ = std::move(tokens);
  ring_.Reset();
  ring_.Append(n_past());
  std::copy(logits, logits + logits_.size(), logits_.begin());
  has_logits_ = true;
}

}  // namespace ember
