// A session: one conversation's state over a shared, read-only Model — the
// KV cache (rows placed by a KvRing), the tokens it holds, scratch buffers and
// the last logits.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "platform/memory_info.h"
#include "platform/status.h"
#include "runtime/kv/kv_cache.h"
#include "runtime/kv/kv_ring.h"
#include "runtime/kv/window_ring.h"
#include "runtime/model/decoder.h"
#include "runtime/model/model.h"
#include "runtime/session/batcher.h"

namespace ember {

// Tokens kept at the start of the context by default when it shifts.
constexpr int64_t kDefaultKeep = 4;

struct SessionParams {
  int64_t n_ctx = 0;  // 0: min(training context, 4096)
  // 0 is auto (platform/scheduler.h): decode on the fewest big cores that reach
  // 95% of the measured peak read bandwidth; prefill on all big cores, or on
  // n_threads threads when n_threads was given (as llama.cpp's -t).
  int n_threads = 0;        // decode threads (one token per step)
  int n_threads_batch = 0;  // prefill threads (chunks of several tokens)
  // Prompt tokens per forward chunk. 256 rather than 512: half the activation
  // buffers (TinyLlama: ~23 MiB less peak RSS) and as fast or faster for
  // prefill here (a chunk's activations stay closer to the caches).
  int64_t n_batch = 256;
  KvType kv_type = KvType::kF16;
  // Context shift: when a token does not fit, keep the first n_keep tokens,
  // drop the older half of the rest and go on. Off: a full context is an error.
  bool context_shift = true;
  // < n_ctx. The default keeps the first tokens, which models attend to
  // heavily whatever they are ("attention sinks"): dropping them doubles
  // SmolLM2's perplexity across shifts (docs/KV.md).
  int64_t n_keep = kDefaultKeep;
  // Models with sliding-window layers (Gemma 3): false (default) gives those
  // layers caches of about the window's size (n_keep + window + n_batch rows)
  // when that is smaller than the context; true gives them the whole context
  // like the other layers (as llama.cpp's --swa-full), which beam search needs.
  bool swa_full = false;
  // The most bytes the session may allocate (SessionPlan::total_bytes); 0:
  // what the machine has available now (platform/memory_info.h). Create
  // checks it before allocating anything.
  uint64_t max_memory = 0;
};

// What a session of given parameters gets and allocates, worked out before
// anything is allocated.
struct SessionPlan {
  int64_t n_ctx = 0;             // params.n_ctx, or the default
  std::vector<int64_t> kv_rows;  // [n_layer] cache rows of each layer
  bool window_ring = false;      // windowed layers have rings of their own
  int64_t window_capacity = 0;   // their rows after n_keep (window + n_batch)
  int n_threads = 1, n_threads_batch = 1;
  uint64_t kv_bytes = 0;  // the KV cache (as KvCache::bytes will be)
  // The rest: the buffers of a forward pass over n_batch tokens (at most the
  // context) on the session's threads, and its logits. An upper bound.
  uint64_t scratch_bytes = 0;
  uint64_t total_bytes() const { return kv_bytes + scratch_bytes; }
};

// How Session::Embed makes one vector of a sequence's rows.
enum class Pooling {
  kModel,  // the file's <arch>.pooling_type if mean, first or last; else mean
  kMean,   // the average of the rows
  kFirst,  // the first row (llama.cpp's "cls")
  kLast,   // the last row (llama.cpp's "last": causal embedding models)
  kNone,   // every row
};

class Session {
 public:
  // Checks the parameters and the memory the session needs against
  // params.max_memory (or what the machine has), then allocates. Nothing is
  // allocated when it fails: an invalid parameter, or Code::kOutOfMemory
  // with the bytes needed and the limit.
  static Status Create(const Model& model, const SessionParams& params,
                       std::unique_ptr<Session>* out);
  // Create's checks of the parameters and what it would allocate, without
  // the memory check.
  static Status Plan(const Model& model, const SessionParams& params, SessionPlan* out);
  // The memory check: plan.total_bytes() against max_memory if not 0, else
  // against `machine` (AvailableMemory()), and against the address space.
  static Status CheckMemory(const SessionPlan& plan, uint64_t max_memory,
                            const MemoryBudget& machine);

  // Appends tokens to the context and computes the logits of the last one
  // (all_logits: of every token, [n, n_vocab], instead). When the context is
  // full it shifts (see SessionParams) or, with the shift off, fails. Fails
  // without changing the session on invalid ids or overflow.
  Status Decode(const std::vector<int32_t>& tokens, std::vector<float>* all_logits = nullptr);

  // Makes the context `prompt` reusing the cache: the longest common prefix of
  // prompt and tokens() is kept, the rest of the cache is dropped, and only
  // the remaining tokens are computed (at least one, for fresh logits).
  // *n_reused (may be null) receives the number of tokens not recomputed.
  Status DecodeReusing(const std::vector<int32_t>& prompt, int64_t* n_reused);

  // For decode strategies that keep several sequences in the cache (beam
  // search): runs `tokens` at explicit places (every slot < n_ctx) and returns
  // the logits of every token [n, n_vocab]. tokens() is not changed: call
  // SetTokens when the strategy has arranged the cache. The cache must be
  // linear (call Linearize first).
  Status DecodePlaced(const std::vector<int32_t>& tokens, const std::vector<TokenPlace>& places,
                      std::vector<float>* logits);
  // Moves the rows so that token i is in row i (undoes the ring's rotation
  // after context shifts; copies the cache once). No-op when already linear.
  void Linearize();
  // Moves runs of n cache rows from src[i] to dst[i] (see KvCache::CopyRuns).
  void CopyKvRuns(const std::vector<int64_t>& src, const std::vector<int64_t>& dst, int64_t n) {
    kv_.CopyRuns(src, dst, n);
  }
  // Declares that rows 0..size-1 of a linear cache hold `tokens` (a prefix of
  // what was decoded there), and that `logits` are the next-token logits.
  void SetTokens(std::vector<int32_t> tokens, const float* logits);
  // Forgets the tokens from n on (n <= n_past); the logits are stale until
  // the next Decode. Returns n_past afterwards: n, or less when the caches of
  // sliding-window layers no longer hold what token n would see (they then
  // start again after the first n_keep tokens).
  int64_t Truncate(int64_t n);

  // Session state files: the cached tokens, their keys and values and the
  // last logits, with the model's fingerprint and a checksum. Load refuses
  // another model's state, another KV type, a file that does not fit the
  // context, and truncated or corrupted files, leaving the session unchanged.
  Status SaveState(const std::string& path) const;
  Status LoadState(const std::string& path);

  // Logits [n_vocab] after the last Decode.
  const std::vector<float>& logits() const { return logits_; }
  bool has_logits() const { return has_logits_; }
  const std::vector<int32_t>& tokens() const { return tokens_; }
  int64_t n_past() const { return static_cast<int64_t>(tokens_.size()); }
  int64_t n_ctx() const { return ring_.n_ctx(); }
  int64_t n_keep() const { return ring_.n_keep(); }
  bool context_shift() const { return context_shift_; }
  KvType kv_type() const { return kv_.type(); }
  size_t kv_bytes() const { return kv_.bytes(); }
  // The cache and the row of token i (for tests and tools that inspect it).
  const KvCache& kv_cache() const { return kv_; }
  int64_t SlotOfToken(int64_t i) const { return ring_.SlotOf(i); }
  // Tokens dropped by context shifts so far, and how many shifts.
  int64_t n_dropped() const { return n_dropped_; }
  int64_t n_shifts() const { return n_shifts_; }
  int n_threads() const { return n_threads_; }
  int n_threads_batch() const { return n_threads_batch_; }
  // Threads for a forward pass over n tokens: decode steps are bound by memory
  // bandwidth and prefill by arithmetic, so they may use different counts.
  int ThreadsFor(int64_t n) const { return n > 1 ? n_threads_batch_ : n_threads_; }
  const Model& model() const { return model_; }
  // Debugging aid: every later forward pass reports its intermediate
  // activations to `trace` (see DecoderScratch::trace); empty to stop.
  void SetTrace(decltype(DecoderScratch::trace) trace) { scratch_.trace = std::move(trace); }
  // True when the sliding-window layers' caches are rings of about the
  // window's size (see SessionParams::swa_full).
  bool window_ring() const { return window_.has_value(); }

  // Cancellation from another thread: Decode stops between chunks (the
  // tokens decoded so far stay) with Code::kCancelled, and Generate ends with
  // FinishReason::kCancelled. Cleared by the caller at the start of a request.
  void RequestCancel() { cancel_.store(true, std::memory_order_relaxed); }
  void ClearCancel() { cancel_.store(false, std::memory_order_relaxed); }
  bool cancel_requested() const { return cancel_.load(std::memory_order_relaxed); }

  // Continuous batching (runtime/session/batcher.h): from now on this
  // session's forward passes run in `batcher`'s shared passes (null: alone
  // again). The batcher must be of this session's model; --numerics ggml
  // cannot batch (its arithmetic depends on the batch).
  Status SetBatcher(std::shared_ptr<Batcher> batcher);
  const std::shared_ptr<Batcher>& batcher() const { return batcher_; }
  // A generation (decode loop) starts / ends: a batcher waits briefly for
  // the next step of a session that generates. Nothing without a batcher.
  void EnterGeneration() {
    if (batcher_) batcher_->Enter(this);
  }
  void LeaveGeneration() {
    if (batcher_) batcher_->Leave(this);
  }

  // The embedding of `tokens` (session_embed.cpp): the context is cleared,
  // the tokens run in batches as Decode's but without logits, and the final
  // norm's rows are pooled into *out: [n_embd] (kMean, kFirst, kLast) or
  // [n, n_embd] (kNone); kModel takes the file's pooling_type, mean when it
  // has none. normalize: each vector scaled to unit length (L2, as OpenAI's
  // and llama-server's). The context is cleared again after. Errors: no
  // tokens, more than the context holds (every token must be seen: no
  // shift), rank pooling (a reranker's head), a cancel.
  Status Embed(const std::vector<int32_t>& tokens, Pooling pooling, bool normalize,
               std::vector<float>* out);
  // Embed of several inputs, (*out)[i] for inputs[i], the same vectors as one
  // Embed each: inputs that fit together in a batch go through one forward
  // pass, each token attending only to its own input's rows (packing: many
  // short texts cost about what one text of their total length does). Every
  // input is checked before any runs; on an error *out is unchanged.
  Status EmbedMany(const std::vector<std::vector<int32_t>>& inputs, Pooling pooling, bool normalize,
                   std::vector<std::vector<float>>* out);

  void Reset() {
    tokens_.clear();
    ring_.Reset();
    if (window_) window_->Reset();
    has_logits_ = false;
  }

 private:
  Session(const Model& model, const SessionParams& params, const SessionPlan& plan);
  Status CheckIds(const std::vector<int32_t>& tokens) const;
  // Drops tokens [n_keep, n_keep + n) and re-rotates the keys of the tokens
  // after them, whose positions move down by n.
  void Shift(int64_t n);
  // Fills the rows of tokens first..first+n-1 (about to be decoded) into
  // places: the full layers' from ring_, the windowed layers' from window_
  // or, without it, the same rows cut to the window.
  void PlaceTokens(int64_t first, int64_t n, TokenPlace* places) const;
  // The window fields of places whose full fields are set (shared layout).
  void SetWindowRows(TokenPlace* p) const;
  // Layers whose rows ring_ places: all, or the full ones with a window ring.
  std::vector<bool> RingLayers() const;
  // One forward pass over this session's cache: alone, or in the batcher's
  // next shared pass.
  void RunForward(const int32_t* tokens, const TokenPlace* places, int64_t n, LogitsFor which,
                  float* logits);

  const Model& model_;
  KvCache kv_;
  KvRing ring_;                       // rows of the full layers (all layers without window_)
  std::optional<WindowRing> window_;  // rows of the windowed layers, when they have their own
  int64_t max_window_ = 0;            // the windowed layers' window (0: none)
  bool context_shift_;
  int n_threads_;
  int n_threads_batch_;
  int64_t n_batch_;
  DecoderScratch scratch_;
  std::vector<float> logits_;
  bool has_logits_ = false;
  std::vector<int32_t> tokens_;
  int64_t n_dropped_ = 0;
  int64_t n_shifts_ = 0;
  std::atomic<bool> cancel_{false};
  std::shared_ptr<Batcher> batcher_;
};

// Marks a generation of `session` for its batcher for the scope's lifetime.
class GenerationScope {
 public:
  explicit GenerationScope(Session& session) : session_(session) { session_.EnterGeneration(); }
  ~GenerationScope() { session_.LeaveGeneration(); }
  GenerationScope(const GenerationScope&) = delete;
  GenerationScope& operator=(const GenerationScope&) = delete;

 private:
  Session& session_;
};

}  // namespace ember
