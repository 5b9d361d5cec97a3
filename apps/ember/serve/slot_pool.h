// Slots: N sessions of one model, each with its own worker thread running
// ember_generate, and a bounded FIFO queue of jobs in front of them.
//
// Which slot takes a job: the idle slot where the prompt shares the longest
// prefix with the cached tokens, less the cached tokens it would overwrite
// (score = shared - (cached - shared)). A client resending its conversation
// (every chat client does) so lands where its history is already computed and
// pays only for the new tokens (ember_generate's reuse_prefix), while a new
// client that only shares the system prompt goes to an empty or less-used
// slot instead of evicting someone's conversation. Ties go to the slot idle
// the longest.
//
// With several slots, their sessions share one batcher (continuous batching,
// docs/BATCHING.md): each slot's worker runs ember_generate as alone, and the
// engine runs the slots' forward passes together, each weight read once for
// all of them. A slot's output does not depend on the others'.
//
// Speculative decoding (--draft-model, --lookup): each slot generates with
// ember_generate_speculative, its output unchanged. With a draft model every
// slot has a session of it too (sharing a batcher of their own when the
// slots' sessions share one). Requests that ask for logprobs are generated
// plainly (the speculative path does not report them).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ember.h"
#include "serve/job.h"
#include "serve/metrics.h"

namespace serve {

// How the slots speculate: off, prompt lookup, or a draft model (borrowed;
// it must outlive the pool). params.draft is set per slot by the pool.
struct Speculation {
  bool on = false;
  const ember_model* draft_model = nullptr;
  ember_speculative_params params{};
};

class SlotPool {
 public:
  enum class SubmitResult { kOk, kQueueFull, kStopping };

  // batching: with several slots, their sessions share forward passes
  // (continuous batching, ember_batcher).
  SlotPool(const ember_model* model, const ember_session_params& params, int n_slots,
           size_t max_queue, bool batching, Metrics* metrics,
           const Speculation& speculation = Speculation());
  ~SlotPool();  // Shutdown()
  SlotPool(const SlotPool&) = delete;
  SlotPool& operator=(const SlotPool&) = delete;

  // The most memory each slot's session may take (ember_session_limits;
  // 0: what the machine has). Before Start.
  void set_max_memory(uint64_t bytes) { max_memory_ = bytes; }

  // Creates the sessions and starts the workers; on failure returns the
  // status (ember_last_error() has the message) and starts nothing.
  ember_status Start();

  // Queues all jobs of a request, or none: kQueueFull when they do not fit in
  // the queue's free places, kStopping after Shutdown began.
  SubmitResult Submit(const std::vector<std::shared_ptr<Job>>& jobs);

  // Stops a job wherever it is: a queued job is taken out and finished as
  // cancelled, a running one gets ember_session_cancel. Any thread.
  void Cancel(const std::shared_ptr<Job>& job);

  // Refuses new jobs, cancels queued and running ones and joins the workers.
  void Shutdown();

  int n_slots() const { return static_cast<int>(slots_.size()); }
  int32_t n_ctx() const { return n_ctx_; }
  Gauges gauges() const;

 private:
  struct Slot {
    ember_session* session = nullptr;
    ember_session* draft = nullptr;  // a session of the draft model (speculation)
    std::thread worker;
    std::shared_ptr<Job> job;     // assigned, running or about to
    std::vector<int32_t> cached;  // what the session's context holds (prompt + reply)
    uint64_t idle_since = 0;      // dispatch counter when it last became idle
  };

  void WorkerLoop(size_t i);
  void Run(Slot& slot, Job& job);
  void Embed(Slot& slot, Job& job);
  // Under mu_: hands queued jobs to idle slots.
  void Dispatch();
  static void Finish(Job& job, bool cancelled, const std::string& error);
  void FreeSessions();

  const ember_model* model_;
  ember_session_params params_;
  size_t max_queue_;
  bool batching_;
  ember_batcher* batcher_ = nullptr;  // with batching_, after Start()
  Speculation speculation_;
  ember_batcher* draft_batcher_ = nullptr;  // the draft sessions', with batching_
  Metrics* metrics_;
  int32_t n_ctx_ = 0;

  mutable std::mutex mu_;
  std::condition_variable cv_;  // workers wait here for a job or the stop
  std::deque<std::shared_ptr<Job>> queue_;
  std::vector<Slot> slots_;
  uint64_t tick_ = 0;
  bool stopping_ = false;
  bool started_ = false;
  uint64_t max_memory_ = 0;
};

// A slot's session of at most max_memory bytes (0: what the machine has),
// attached to `batcher` when it is not null.
ember_status CreateSlotSession(const ember_model* model, const ember_session_params& params,
                               uint64_t max_memory, ember_batcher* batcher, ember_session** out);

}  // namespace serve
