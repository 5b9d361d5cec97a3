// Counters for GET /metrics, in Prometheus' text format. Every field is an
// atomic so that HTTP threads and slot workers update them without a lock;
// the gauges (slots busy, queue length) are read from the slot pool when the
// page is rendered, so they cannot drift from the truth.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace serve {

struct Metrics {
  std::atomic<uint64_t> requests{0};         // generation requests accepted (completions + chat)
  std::atomic<uint64_t> requests_failed{0};  // answered with a 4xx/5xx error
  std::atomic<uint64_t> rejected_queue_full{0};
  std::atomic<uint64_t> cancelled{0};  // generations stopped by a disconnect or shutdown
  std::atomic<uint64_t> prompt_tokens{0};
  std::atomic<uint64_t> prompt_tokens_reused{0};  // found in a slot's cache (not computed)
  std::atomic<uint64_t> generated_tokens{0};
  std::atomic<uint64_t> drafted_tokens{0};   // speculative decoding: drafts verified
  std::atomic<uint64_t> accepted_tokens{0};  // of those, kept
};

struct Gauges {
  int slots_total = 0;
  int slots_busy = 0;
  size_t queue_length = 0;
  size_t queue_capacity = 0;
  int64_t batch_passes = 0;     // forward passes the slots shared (continuous batching)
  int64_t batch_sequences = 0;  // slot steps in them
  int64_t batch_late = 0;       // passes that went without a slot that was late
};

// The /metrics page.
std::string RenderMetrics(const Metrics& m, const Gauges& g);

}  // namespace serve
