// Automatic thread counts through the C API: 0 means the machine's plan
// (ember_get_thread_plan), -t N also sets the prefill threads unless they are
// given, and out-of-range counts are clear errors.
#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "ember.h"
#include "support/loaders.h"
#include "support/model_builder.h"

namespace {

using ModelPtr = ember::test::CModelPtr;

ModelPtr Load() { return ember::test::LoadCModelOrFail(); }

struct Threads {
  ember_status status = EMBER_ERR_INTERNAL;
  int32_t decode = 0, batch = 0;
  std::string error;
};

Threads Create(const ember_model* m, int32_t n_threads, int32_t n_threads_batch) {
  ember_session_params sp = ember_session_default_params();
  sp.n_ctx = 64;
  sp.n_threads = n_threads;
  sp.n_threads_batch = n_threads_batch;
  ember_session* s = nullptr;
  Threads t;
  t.status = ember_session_create(m, &sp, &s);
  if (t.status == EMBER_OK) {
    t.decode = ember_session_n_threads(s);
    t.batch = ember_session_n_threads_batch(s);
  } else {
    t.error = ember_last_error();
  }
  ember_session_free(s);
  return t;
}

}  // namespace

TEST_CASE("c_api: the thread plan is consistent", "[c_api][threads]") {
  ember_thread_plan plan{};
  REQUIRE(ember_get_thread_plan(&plan) == EMBER_OK);
  CHECK(plan.n_cpus >= 1);
  CHECK(plan.n_big >= 1);
  CHECK(plan.n_big <= plan.n_cpus);
  CHECK(plan.n_threads >= 1);
  CHECK(plan.n_threads <= plan.n_big);
  CHECK(plan.n_threads_batch == plan.n_big);
  CHECK(plan.peak_read_gbps > 0);
  CHECK(plan.decode_read_gbps >= 0.95 * plan.peak_read_gbps);
  CHECK(plan.decode_read_gbps <= plan.peak_read_gbps);
  CHECK(ember_get_thread_plan(nullptr) == EMBER_ERR_INVALID_ARGUMENT);
}

TEST_CASE("c_api: thread counts of 0 are auto, others override", "[c_api][threads]") {
  ModelPtr m = Load();
  ember_thread_plan plan{};
  REQUIRE(ember_get_thread_plan(&plan) == EMBER_OK);

  const Threads a = Create(m.get(), 0, 0);
  REQUIRE(a.status == EMBER_OK);
  CHECK(a.decode == plan.n_threads);
  CHECK(a.batch == plan.n_threads_batch);

  const Threads t = Create(m.get(), 3, 0);  // -t 3: prefill too, as llama.cpp
  CHECK(t.decode == 3);
  CHECK(t.batch == 3);

  const Threads b = Create(m.get(), 0, 1);  // --threads-batch 1 alone
  CHECK(b.decode == plan.n_threads);
  CHECK(b.batch == 1);

  const Threads both = Create(m.get(), 1, 2);
  CHECK(both.decode == 1);
  CHECK(both.batch == 2);

  CHECK(ember_session_n_threads_batch(nullptr) == 0);
}

TEST_CASE("c_api: out-of-range thread counts are errors", "[c_api][threads][bad-input]") {
  ModelPtr m = Load();
  const Threads neg = Create(m.get(), -1, 0);
  CHECK(neg.status == EMBER_ERR_INVALID_ARGUMENT);
  CHECK_THAT(neg.error, Catch::Contains("thread count -1"));
  const Threads big = Create(m.get(), 0, 5000);
  CHECK(big.status == EMBER_ERR_INVALID_ARGUMENT);
  CHECK_THAT(big.error, Catch::Contains("batch thread count 5000"));
  // A bandwidth measurement with a negative count uses one thread.
  CHECK(ember_measure_read_bandwidth(-7) > 0);
}
