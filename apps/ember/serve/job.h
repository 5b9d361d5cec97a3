// One generation (one choice of one request) as it travels from an HTTP
// thread through the queue to a slot's worker and back.
//
// The HTTP thread fills the inputs, submits the job and then waits on the
// request's Channel; the worker appends text and token log-probabilities
// under the channel's mutex and notifies. A request with n choices has n jobs
// sharing one channel, so one wait covers all of them (a stream interleaves
// their chunks).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ember.h"

namespace serve {

struct Channel {
  std::mutex mu;
  std::condition_variable cv;
};

struct TopLogprob {
  std::string piece;  // the token's bytes (may be part of a UTF-8 character)
  float logprob = 0;
};

struct TokenLogprob {
  int32_t id = 0;
  std::string piece;
  float logprob = 0;
  std::vector<TopLogprob> top;
};

struct SamplerDeleter {
  void operator()(ember_sampler* s) const { ember_sampler_free(s); }
};
using SamplerPtr = std::unique_ptr<ember_sampler, SamplerDeleter>;

struct Job {
  // ---- inputs: set before Submit, read-only afterwards
  int index = 0;  // the choice's index
  std::vector<int32_t> prompt;
  int32_t n_predict = 0;
  SamplerPtr sampler;  // built (and validated) on the HTTP thread; used by the worker
  std::vector<std::string> stop;
  bool ignore_eos = false;
  int32_t n_top_logprobs = -1;  // -1: no log-probabilities; 0..20: with that many alternatives
  // Embeddings instead of a generation (/v1/embeddings): each input's
  // vector, pooled so and of unit length, into `embeddings`, one after the
  // other on one slot (a request of many inputs is one job: it never
  // outgrows the queue).
  bool embed = false;
  std::vector<std::vector<int32_t>> embed_inputs;
  ember_pooling pooling = EMBER_POOLING_MODEL;
  std::shared_ptr<Channel> channel;

  // ---- outputs: under channel->mu
  std::string text;                            // everything generated so far
  size_t text_sent = 0;                        // bytes of `text` a stream has sent
  std::vector<TokenLogprob> tokens;            // with n_top_logprobs >= 0
  std::vector<std::vector<float>> embeddings;  // an embed job's, [n_embd] each
  size_t tokens_sent = 0;
  bool done = false;
  bool cancelled = false;  // stopped by Cancel (client gone, shutdown)
  std::string error;       // set when generation failed
  ember_generate_stats stats{};

  // ---- cancellation: any thread
  std::atomic<bool> cancel_requested{false};
};

}  // namespace serve
