// A session: one conversation's state over a shared, read-only Model — the
// KV cache, the tokens it holds, scratch buffers and the last logits.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "platform/status.h"
#include "runtime/kv_cache.h"
#include "runtime/model.h"
#include "runtime/models/llama.h"

namespace ember {

struct SessionParams {
  int64_t n_ctx = 0;      // 0: min(training context, 4096)
  int n_threads = 0;      // 0: all online cores
  int64_t n_batch = 512;  // prompt tokens per forward chunk
};

class Session {
 public:
  static Status Create(const Model& model, const SessionParams& params,
                       std::unique_ptr<Session>* out);

  // Appends tokens to the context and computes the logits of the last one.
  // Fails without changing the session on invalid ids or context overflow.
  Status Decode(const std::vector<int32_t>& tokens);

  // For decode strategies that keep several sequences in the cache (beam
  // search): runs `tokens` at explicit places (every slot < n_ctx) and returns
  // the logits of every token [n, n_vocab]. tokens() is not changed: call
  // SetTokens when the strategy has arranged the cache.
  Status DecodePlaced(const std::vector<int32_t>& tokens, const std::vector<TokenPlace>& places,
                      std::vector<float>* logits);
  // Moves runs of n cache rows from src[i] to dst[i] (see KvCache::CopyRuns).
  void CopyKvRuns(const std::vector<int64_t>& src, const std::vector<int64_t>& dst, int64_t n) {
    kv_.CopyRuns(src, dst, n);
  }
  // Declares that rows 0..size-1 of the cache hold `tokens` (a prefix of what
  // was decoded there), and that `logits` are the next-token logits after them.
  void SetTokens(std::vector<int32_t> tokens, const float* logits);

  // Logits [n_vocab] after the last Decode.
  const std::vector<float>& logits() const { return logits_; }
  const std::vector<int32_t>& tokens() const { return tokens_; }
  int64_t n_past() const { return static_cast<int64_t>(tokens_.size()); }
  int64_t n_ctx() const { return kv_.n_ctx(); }
  int n_threads() const { return n_threads_; }
  const Model& model() const { return model_; }
  void Reset() { tokens_.clear(); }

 private:
  Status CheckIds(const std::vector<int32_t>& tokens) const;
  Session(const Model& model, int64_t n_ctx, int n_threads, int64_t n_batch);

  const Model& model_;
  KvCache kv_;
  int n_threads_;
  int64_t n_batch_;
  LlamaScratch scratch_;
  std::vector<float> logits_;
  std::vector<int32_t> tokens_;
};

}  // namespace ember
