#include "runtime/session/session.h"

#include <algorithm>
#include <thread>

#include "ops/attention.h"
#include "ops/kernels.h"
#include "ops/rope.h"
#include "platform/mapped_file.h"
#include "platform/scheduler.h"

namespace ember {

Session::Session(const Model& model, const SessionParams& params, const SessionPlan& plan)
    : model_(model),
      kv_(plan.kv_rows, model.config().n_head_kv, model.config().head_dim, params.kv_type),
      ring_(plan.n_ctx, params.n_keep),
      max_window_(model.config().max_window()),
      context_shift_(params.context_shift),
      n_threads_(plan.n_threads),
      n_threads_batch_(plan.n_threads_batch),
      n_batch_(params.n_batch),
      logits_(static_cast<size_t>(model.config().n_vocab)) {}

namespace {

// Saturating 64-bit arithmetic for sizes: UINT64_MAX stands for "too many".
uint64_t Mul(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}
uint64_t Add(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}
uint64_t U(int64_t v) { return v > 0 ? static_cast<uint64_t>(v) : 0; }

}  // namespace

Status Session::Plan(const Model& model, const SessionParams& params, SessionPlan* out) {
  const ModelConfig& c = model.config();
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
  SessionPlan plan;
  plan.n_ctx = params.n_ctx > 0 ? params.n_ctx : std::min<int64_t>(c.n_ctx_train, 4096);
  const int64_t n_ctx = plan.n_ctx;
  if (params.n_keep < 0 || params.n_keep >= n_ctx) {
    return InvalidArgument("keep: " + std::to_string(params.n_keep) +
                           " tokens do not leave room in a context of " + std::to_string(n_ctx) +
                           " (the context must be larger than keep)");
  }
  // Sliding-window layers get a ring of n_keep + window + n_batch rows when
  // that is smaller than the context (WindowRing): a chunk of n_batch tokens
  // is stored while the window of its first token is still held.
  const int64_t window = c.max_window();
  const int64_t capacity = window + params.n_batch;
  plan.window_capacity = capacity;
  plan.window_ring = window > 0 && !params.swa_full && params.n_keep + capacity < n_ctx;
  plan.kv_rows.assign(static_cast<size_t>(c.n_layer), n_ctx);
  for (int64_t l = 0; l < c.n_layer; ++l) {
    if (plan.window_ring && c.layer(l).window > 0) {
      plan.kv_rows[static_cast<size_t>(l)] = params.n_keep + capacity;
    }
  }
  // 0 is auto: the scheduler's choice for this machine (platform/scheduler.h).
  const ThreadChoice threads = ChooseHostThreads(params.n_threads, params.n_threads_batch);
  plan.n_threads = threads.n_threads;
  plan.n_threads_batch = threads.n_threads_batch;

  // The KV cache, as KvCache allocates it.
  uint64_t rows = 0, max_rows = 0;
  for (const int64_t r : plan.kv_rows) {
    rows = Add(rows, U(r));
    max_rows = std::max(max_rows, U(r));
  }
  const uint64_t elems = Mul(rows, U(c.kv_dim()));
  switch (params.kv_type) {
    case KvType::kF16:
      plan.kv_bytes = Mul(elems, 2 * 2);
      break;
    case KvType::kF32:
      plan.kv_bytes = Mul(elems, 2 * 4);
      break;
    case KvType::kQ8:
      plan.kv_bytes = Add(Mul(elems, 2), Mul(Mul(rows, U(c.n_head_kv)), 2 * 4));
      break;
  }
  // A forward pass over n tokens (DecoderScratch, sized in ForwardMany): the
  // residual stream [n, E]; the sub-layer buffers xn, q, k, v, att, gate, up
  // of a sub-chunk (at most n tokens); the attention scratch of each thread;
  // the RoPE tables; the quantized activations (1 byte per element, scales
  // per 16 and 32: under 2); and the logits [n_vocab].
  const uint64_t n = U(std::min(params.n_batch, n_ctx));
  const uint64_t E = U(c.n_embd), Q = U(c.q_dim()), KV = U(c.kv_dim()), F = U(c.n_ff);
  const uint64_t per_token = Add(Mul(2, E), Mul(2, Add(Q, Add(KV, F))));
  const uint64_t attention = std::max(
      Mul(2, max_rows),
      U(AttendBlockScratch(static_cast<int64_t>(std::min<uint64_t>(max_rows, uint64_t{1} << 40)),
                           static_cast<int>(c.head_dim))));
  uint64_t n_rot = 0;
  for (const RopeConfig& r : c.ropes) n_rot = std::max<uint64_t>(n_rot, U(r.n_rot));
  uint64_t floats = Mul(n, per_token);
  floats = Add(floats, Mul(U(std::max(plan.n_threads, plan.n_threads_batch)), attention));
  floats = Add(floats, Mul(Mul(c.ropes.size(), n), n_rot));
  floats = Add(floats, U(c.n_vocab));
  plan.scratch_bytes = Add(Mul(floats, 4), Mul(Mul(n, std::max({E, Q, F})), 2));
  *out = std::move(plan);
  return Status::Ok();
}

Status Session::CheckMemory(const SessionPlan& plan, uint64_t max_memory,
                            const MemoryBudget& machine) {
  const uint64_t needed = plan.total_bytes();
  const uint64_t limit = max_memory != 0 ? max_memory : machine.bytes;
  const std::string what = "a context of " + std::to_string(plan.n_ctx) + " tokens needs " +
                           FormatBytes(needed) + " (" + std::to_string(needed) +
                           " bytes: KV cache " + FormatBytes(plan.kv_bytes) + ", scratch " +
                           FormatBytes(plan.scratch_bytes) + ")";
  if (needed > kAddressSpaceLimit) {
    return Status(Code::kOutOfMemory, what + ", more than this process can address (" +
                                          std::to_string(kAddressSpaceLimit) + " bytes)");
  }
  if (needed <= limit) return Status::Ok();
  const std::string source =
      max_memory != 0 ? "the limit given as max_memory (--max-memory)" : machine.source;
  return Status(Code::kOutOfMemory, what + ", more than the " + FormatBytes(limit) + " (" +
                                        std::to_string(limit) + " bytes) it may take: " + source +
                                        "; a smaller context or a q8 KV cache needs less");
}

Status Session::Create(const Model& model, const SessionParams& params,
                       std::unique_ptr<Session>* out) {
  SessionPlan plan;
  EMBER_RETURN_IF_ERROR(Plan(model, params, &plan));
  EMBER_RETURN_IF_ERROR(CheckMemory(plan, params.max_memory,
                                    params.max_memory != 0 ? MemoryBudget{} : AvailableMemory()));
  out->reset(new Session(model, params, plan));
  if (plan.window_ring) {
    (*out)->window_.emplace(model.config().max_window(), params.n_keep, plan.window_capacity);
  }
  return Status::Ok();
}

std::vector<bool> Session::RingLayers() const {
  const ModelConfig& c = model_.config();
  std::vector<bool> mask(static_cast<size_t>(c.n_layer), true);
  if (window_) {
    for (int64_t l = 0; l < c.n_layer; ++l) mask[static_cast<size_t>(l)] = c.layer(l).window == 0;
  }
  return mask;
}

void Session::SetWindowRows(TokenPlace* p) const {
  // The same rows, cut to the last max_window_ in context order (the rows of
  // a place are consecutive positions, the last one the token's own).
  p->win_slot = p->slot;
  int64_t skip = RowsOf(*p) - max_window_;
  p->n_win_rows = 0;
  for (int r = 0; r < p->n_rows; ++r) {
    RowRange rr = p->rows[r];
    const int64_t cut = std::min(std::max<int64_t>(skip, 0), rr.n);
    skip -= cut;
    rr.begin += cut;
    rr.n -= cut;
    if (rr.n > 0) p->win_rows[p->n_win_rows++] = rr;
  }
}

void Session::PlaceTokens(int64_t first, int64_t n, TokenPlace* places) const {
  for (int64_t t = 0; t < n; ++t) {
    const int64_t i = first + t;
    TokenPlace& pl = places[t];
    pl.pos = i;
    pl.slot = ring_.SlotOf(i);
    pl.n_rows = ring_.RowsUpTo(i, pl.rows);
    if (window_) {
      pl.win_slot = window_->SlotOf(i);
      pl.n_win_rows = window_->RowsOf(i, pl.win_rows);
    } else if (max_window_ > 0) {
      SetWindowRows(&pl);
    }
  }
}

Status Session::CheckIds(const std::vector<int32_t>& tokens) const {
  if (tokens.empty()) return InvalidArgument("no tokens to decode");
  const int64_t n_vocab = model_.config().n_vocab;
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
  const int64_t n_vocab = model_.config().n_vocab;
  if (all_logits) all_logits->resize(static_cast<size_t>(n * n_vocab));
  // A chunk that needs a shift must fit in the ring region once older tokens
  // are dropped; one that fits in the free rows may be a whole batch (as
  // llama.cpp's micro-batches fill a context exactly, which --numerics ggml
  // follows: its attention depends on the batch size).
  std::vector<TokenPlace> places(static_cast<size_t>(std::min(n_batch_, n)));
  for (int64_t done = 0; done < n;) {
    // While other sessions generate in the same batched passes, a prompt
    // goes in small chunks so their next tokens do not wait for all of it.
    const int64_t n_batch =
        batcher_ && n - done > batcher_->prefill_chunk() && batcher_->OthersActive(this)
            ? std::min(n_batch_, batcher_->prefill_chunk())
            : n_batch_;
    const int64_t ring_chunk = std::min(n_batch, n_ctx() - n_keep());
    if (done > 0 && cancel_requested()) {
      has_logits_ = false;  // the chunks decoded so far stay; the logits are older
      return Status(Code::kCancelled, "cancelled after " + std::to_string(done) + " of " +
                                          std::to_string(n) + " tokens");
    }
    const int64_t chunk =
        n - done <= ring_.n_free() ? std::min(n_batch, n - done) : std::min(ring_chunk, n - done);
    if (chunk > ring_.n_free()) {
      // Drop the older half of the tokens after n_keep (as llama.cpp's context
      // shift), or more if the chunk needs it.
      const int64_t after_keep = ring_.n_used() - n_keep();
      Shift(std::max(after_keep / 2, chunk - ring_.n_free()));
    }
    if (window_) window_->Reserve(chunk);
    PlaceTokens(ring_.n_used(), chunk, places.data());
    const bool last = done + chunk == n;
    LogitsFor which = all_logits ? LogitsFor::kAll : last ? LogitsFor::kLast : LogitsFor::kNone;
    float* out = all_logits ? all_logits->data() + done * n_vocab : logits_.data();
    RunForward(tokens.data() + done, places.data(), chunk, which, out);
    ring_.Append(chunk);
    if (window_) window_->Append(chunk);
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
  if (window_) window_->Drop(n);
  tokens_.erase(tokens_.begin() + n_keep(), tokens_.begin() + n_keep() + n);
  n_dropped_ += n;
  ++n_shifts_;
  // Keys carry their position as a rotation (RoPE); rotating by -n moves a
  // key from position p to p - n, as if it had been computed there, with each
  // layer's own RoPE. Values carry no position. The whole cache is touched
  // once, no row moves.
  const ModelConfig& c = model_.config();
  const float* factors = model_.weights().rope_freqs.data();
  std::vector<std::vector<float>> rot(c.ropes.size());
  for (size_t r = 0; r < c.ropes.size(); ++r) {
    const RopeConfig& rc = c.ropes[r];
    rot[r].resize(static_cast<size_t>(rc.n_rot));
    RopeCache(rot[r].data(), -n, rc.n_rot, rc.freq_base, rc.freq_scale,
              rc.freq_factors ? factors : nullptr);
  }
  const int64_t end = ring_.n_used();
  const int threads = static_cast<int>(std::min<int64_t>(n_threads_batch_, c.n_layer));
  const RopeApplyFn rope_apply = Active().rope_apply;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    std::vector<float> k(static_cast<size_t>(kv_.kv_dim()));
#pragma omp for schedule(static)
    for (int64_t l = 0; l < c.n_layer; ++l) {
      const RopeConfig& rc = c.rope_of(l);
      const float* rl = rot[static_cast<size_t>(c.layer(l).rope)].data();
      const bool windowed = window_ && c.layer(l).window > 0;
      const int64_t first = windowed ? std::max(n_keep(), window_->first_held()) : n_keep();
      for (int64_t i = first; i < end; ++i) {
        const int64_t slot = windowed ? window_->SlotOf(i) : ring_.SlotOf(i);
        kv_.LoadK(l, slot, k.data());
        for (int64_t h = 0; h < c.n_head_kv; ++h) {
          rope_apply(&k[static_cast<size_t>(h * c.head_dim)], rl, rc.n_rot, rc.mode);
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
  common = Truncate(common);
  if (n_reused) *n_reused = common;
  return Decode(std::vector<int32_t>(prompt.begin() + common, prompt.end()));
}

int64_t Session::Truncate(int64_t n) {
  n = std::clamp<int64_t>(n, 0, n_past());
  if (n == n_past()) return n;
  if (window_) n = window_->Truncate(n);
  tokens_.resize(static_cast<size_t>(n));
  ring_.Truncate(n);
  has_logits_ = false;
  return n;
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
  kv_.CopyRuns(src, dst, 1, RingLayers());
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
  if (window_) {
    return Unsupported(
        "this session keeps the sliding-window layers' keys and values in rings of the window's "
        "size, which several sequences (beam search) cannot share: create it with swa_full "
        "(ember run --swa-full)");
  }
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
  std::vector<TokenPlace> placed = places;
  if (max_window_ > 0) {
    for (TokenPlace& p : placed) SetWindowRows(&p);
  }
  logits->resize(static_cast<size_t>(n * model_.config().n_vocab));
  RunForward(tokens.data(), placed.data(), n, LogitsFor::kAll, logits->data());
  return Status::Ok();
}

void Session::RunForward(const int32_t* tokens, const TokenPlace* places, int64_t n,
                         LogitsFor which, float* logits) {
  if (batcher_) {
    batcher_->Run(this, ForwardSeq{&kv_, tokens, places, n, which, logits}, ThreadsFor(n));
  } else {
    Forward(model_, kv_, scratch_, tokens, places, n, ThreadsFor(n), which, logits);
  }
}

Status Session::SetBatcher(std::shared_ptr<Batcher> batcher) {
  if (batcher && &batcher->model() != &model_) {
    return InvalidArgument("the batcher is of another model than the session's");
  }
  if (batcher && model_.numerics() == Numerics::kGgml) {
    return Unsupported(
        "numerics ggml cannot batch sessions: llama.cpp's arithmetic depends on the batch, so "
        "a sequence's output would depend on the others'");
  }
  batcher_ = std::move(batcher);
  return Status::Ok();
}

void Session::SetTokens(std::vector<int32_t> tokens, const float* logits) {
  // Only after DecodePlaced, which a session with a window ring refuses.
  tokens_ = std::move(tokens);
  ring_.Reset();
  ring_.Append(n_past());
  std::copy(logits, logits + logits_.size(), logits_.begin());
  has_logits_ = true;
}

}  // namespace ember
