// C API: continuous batching (ember_batcher_*, ember_session_set_batcher;
// runtime/session/batcher.h).
#include <chrono>
#include <memory>

#include "runtime/capi/c_api_internal.h"
#include "runtime/session/batcher.h"

// Shared with the sessions attached, so freeing the handle first is safe.
struct ember_batcher {
  std::shared_ptr<ember::Batcher> batcher;
};

using ember::capi::Fail;
using ember::capi::Guard;
using ember::capi::Report;

ember_batcher_params ember_batcher_default_params(void) {
  const ember::BatcherParams d;
  ember_batcher_params p{};
  p.prefill_chunk = static_cast<int32_t>(d.prefill_chunk);
  p.min_wait_us = static_cast<int32_t>(d.min_wait.count());
  return p;
}

ember_status ember_batcher_create(const ember_model* model, const ember_batcher_params* params,
                                  ember_batcher** out) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(out != nullptr, "ember_batcher_create: out is NULL");
    *out = nullptr;
    EMBER_REQUIRE_ARG(model != nullptr, "ember_batcher_create: model is NULL");
    const ember_batcher_params p = params ? *params : ember_batcher_default_params();
    if (p.prefill_chunk < 1) {
      return Fail(EMBER_ERR_INVALID_ARGUMENT,
                  "ember_batcher_create: prefill_chunk must be >= 1 (got " +
                      std::to_string(p.prefill_chunk) + ")");
    }
    if (p.min_wait_us < 0 || p.min_wait_us > 1000000) {
      return Fail(EMBER_ERR_INVALID_ARGUMENT,
                  "ember_batcher_create: min_wait_us must be in [0, 1000000] (got " +
                      std::to_string(p.min_wait_us) + ")");
    }
    if (model->model->vocab_only()) {
      return Fail(EMBER_ERR_INVALID_ARGUMENT,
                  "ember_batcher_create: the model was loaded for its vocabulary only");
    }
    ember::BatcherParams bp;
    bp.prefill_chunk = p.prefill_chunk;
    bp.min_wait = std::chrono::microseconds(p.min_wait_us);
    auto b = std::make_unique<ember_batcher>();
    b->batcher = std::make_shared<ember::Batcher>(*model->model, bp);
    *out = b.release();
    return EMBER_OK;
  });
}

void ember_batcher_free(ember_batcher* batcher) { delete batcher; }

ember_status ember_session_set_batcher(ember_session* session, ember_batcher* batcher) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(session != nullptr, "ember_session_set_batcher: session is NULL");
    return Report(session->session->SetBatcher(batcher ? batcher->batcher : nullptr));
  });
}

ember_status ember_batcher_get_stats(const ember_batcher* batcher, ember_batcher_stats* out) {
  return Guard([&]() -> ember_status {
    EMBER_REQUIRE_ARG(batcher != nullptr && out != nullptr,
                      "ember_batcher_get_stats: batcher or out is NULL");
    const ember::BatcherStats s = batcher->batcher->stats();
    *out = ember_batcher_stats{s.passes, s.rows, s.sequences, s.max_sequences, s.late};
    return EMBER_OK;
  });
}
