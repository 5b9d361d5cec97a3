// Continuous batching: sessions of one model that decode at the same time
// share forward passes (docs/BATCHING.md).
//
// Decode reads every weight once per token, and a pass over a few tokens
// reads them once too (ForwardMany). A server with N clients therefore runs
// one pass for all of them instead of N. Each session keeps its own thread
// and its own generation loop (sampler, stop strings, grammar, speculation):
// only the forward pass is shared. A session attached to a Batcher hands its
// pass (tokens, places, its cache, where its logits go) to Run, which blocks
// until the batcher's one worker thread has run it together with whatever the
// other sessions handed in meanwhile.
//
//   session threads:   Run(A: 1 token)   Run(B: 1 token)   Run(C: 32 prompt tokens)
//   worker thread:     ForwardMany([A | B | C])  ->  rows 0, 1, 2..33
//
// Which passes wait for whom: a session inside a generation (Enter..Leave)
// that was in the last pass is a regular; the worker waits, at most
// max(min_wait (1 ms), half the last pass's time), for every regular's next step before
// it runs a pass. A session that misses that wait (a client that reads
// slowly, a long sampling step) runs in the next pass and is waited for again
// once it is back in step. Rows are computed exactly as alone (ForwardMany),
// so a sequence's output never depends on what it was batched with.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/model/decoder.h"
#include "runtime/model/model.h"

namespace ember {

struct BatcherParams {
  // Prompt tokens per pass for a session while others are generating: a
  // long prompt goes in chunks of this many, so the other sequences' next
  // tokens never wait for a whole prompt.
  int64_t prefill_chunk = 32;
  // The least time a pass waits for the regulars' next steps (it waits up to
  // the larger of this and half the last pass's time).
  std::chrono::microseconds min_wait{1000};
};

struct BatcherStats {
  int64_t passes = 0;
  int64_t rows = 0;       // tokens computed
  int64_t sequences = 0;  // sequence steps (a pass of 3 sessions counts 3)
  int64_t max_sequences = 0;
  int64_t late = 0;  // passes that went when their wait ran out, without a regular
};

class Batcher {
 public:
  Batcher(const Model& model, const BatcherParams& params);
  ~Batcher();  // finishes the passes handed in, then stops the worker
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  const Model& model() const { return model_; }

  // Runs `seq` (a pass of the session `owner`, over the owner's cache) in the
  // next pass with n_threads threads (the largest count asked for by its
  // sequences), and returns when its rows are computed.
  void Run(const void* owner, const ForwardSeq& seq, int n_threads);

  // owner starts / ends a generation: while it generates, passes wait
  // briefly for its next step (see above).
  void Enter(const void* owner);
  void Leave(const void* owner);
  // True when sessions other than owner are generating.
  bool OthersActive(const void* owner) const;

  int64_t prefill_chunk() const { return params_.prefill_chunk; }
  BatcherStats stats() const;

 private:
  struct Request {
    const void* owner;
    ForwardSeq seq;
    int n_threads;
    bool done = false;
  };
  void Work();
  // True when every regular that is still generating has a request waiting.
  bool RegularsReady() const;

  const Model& model_;
  const BatcherParams params_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // the worker: requests arrived, or stop
  std::condition_variable done_cv_;  // the sessions: a pass finished
  std::vector<Request*> pending_;
  std::vector<const void*> active_;    // owners generating (Enter..Leave)
  std::vector<const void*> regulars_;  // owners of the last pass still generating
  std::chrono::steady_clock::duration last_pass_{};
  BatcherStats stats_;
  bool stop_ = false;
  DecoderScratch scratch_;  // the worker's (one pass at a time)
  std::thread worker_;
};

}  // namespace ember
