// The HTTP side: every route of `ember serve` on a cpp-httplib server, the
// API key check, the errors of routes and bodies in OpenAI's shape, and the
// streaming (SSE) of generations. Generation itself is the slot pool's.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include <httplib.h>

#include "serve/metrics.h"
#include "serve/openai_request.h"
#include "serve/slot_pool.h"

namespace serve {

enum class Phase { kLoading, kReady, kStopping };

struct ServerState {
  std::atomic<Phase> phase{Phase::kLoading};
  std::string api_key;   // "" for none
  std::string model_id;  // what /v1/models and responses call the model
  int64_t created = 0;   // when the model was loaded (unix seconds)
  size_t max_body = 0;   // bytes, for the 413 message
  // Set once the model is loaded (phase kReady), read-only afterwards.
  RequestDefaults defaults;
  std::atomic<SlotPool*> pool{nullptr};
  Metrics metrics;
};

// Installs the routes, the key check and the error handlers on `server`.
void InstallRoutes(httplib::Server& server, ServerState& state);

// Compares in time that depends only on the length of `expected`, so that
// the time a wrong key takes does not tell how much of it was right.
bool ConstantTimeEquals(const std::string& given, const std::string& expected);

}  // namespace serve
