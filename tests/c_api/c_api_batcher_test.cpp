// Continuous batching through the C API (ember_batcher_*): sessions on their
// own threads, attached to one batcher, generate the text each generates
// alone while sharing passes; bad arguments are refused; the batcher handle
// may be freed before the sessions.
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "ember.h"
#include "support/loaders.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

namespace {

struct Run {
  ember_status status = EMBER_ERR_INTERNAL;
  std::string error;
  std::string text;
  ember_generate_stats stats{};
};

bool Collect(const char* piece, size_t len, int32_t, void* user_data) {
  static_cast<Run*>(user_data)->text.append(piece, len);
  return true;
}

// Generates in `s` (no Catch2 assertion here: it runs on worker threads).
Run Generate(ember_session* s, const std::string& prompt, int32_t n, float temperature) {
  Run r;
  ember_generate_params gp = ember_generate_default_params();
  gp.n_predict = n;
  gp.temperature = temperature;
  gp.seed = 42;
  gp.ignore_eos = true;
  r.status = ember_generate_text(s, prompt.c_str(), &gp, Collect, &r, &r.stats);
  r.error = ember_last_error();
  return r;
}

ember::test::CSessionPtr NewSession(const ember_model* m) {
  ember_session_params sp = ember_session_default_params();
  sp.n_ctx = 256;
  sp.n_threads = 1;
  sp.n_threads_batch = 2;
  ember_session* s = nullptr;
  REQUIRE(ember_session_create(m, &sp, &s) == EMBER_OK);
  return ember::test::CSessionPtr(s);
}

// Each prompt alone, then all at once on threads through one batcher: the
// same texts. Returns the batcher's stats.
ember_batcher_stats CheckSameTexts(const ember_model* m, const std::vector<std::string>& prompts,
                                   const std::vector<float>& temperatures, int32_t n) {
  std::vector<Run> alone;
  for (size_t i = 0; i < prompts.size(); ++i) {
    auto s = NewSession(m);
    alone.push_back(Generate(s.get(), prompts[i], n, temperatures[i]));
  }
  ember_batcher_params bp = ember_batcher_default_params();
  bp.min_wait_us = 200000;  // everyone back in time for the next pass, even on a loaded host
  ember_batcher* b = nullptr;
  REQUIRE(ember_batcher_create(m, &bp, &b) == EMBER_OK);
  std::vector<ember::test::CSessionPtr> sessions;
  for (size_t i = 0; i < prompts.size(); ++i) {
    sessions.push_back(NewSession(m));
    REQUIRE(ember_session_set_batcher(sessions.back().get(), b) == EMBER_OK);
  }
  std::vector<Run> batched(prompts.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < prompts.size(); ++i) {
    threads.emplace_back(
        [&, i] { batched[i] = Generate(sessions[i].get(), prompts[i], n, temperatures[i]); });
  }
  for (std::thread& t : threads) t.join();
  ember_batcher_stats st{};
  REQUIRE(ember_batcher_get_stats(b, &st) == EMBER_OK);
  ember_batcher_free(b);  // the sessions still hold it
  for (size_t i = 0; i < prompts.size(); ++i) {
    INFO("prompt " << i << ": " << batched[i].error);
    REQUIRE(alone[i].status == EMBER_OK);
    REQUIRE(batched[i].status == EMBER_OK);
    CHECK(batched[i].text == alone[i].text);
    CHECK(batched[i].stats.n_gen == n);
  }
  // The sessions go on alone after the handle is freed.
  Run more = Generate(sessions[0].get(), "and then", 4, 0.0f);
  CHECK(more.status == EMBER_OK);
  return st;
}

}  // namespace

TEST_CASE("C API: batched sessions generate each one's own text", "[c_api][batcher]") {
  auto m = ember::test::LoadCModelOrFail(ember::test::BuildArchModel("qwen2"));
  const ember_batcher_stats st = CheckSameTexts(
      m.get(),
      {"Hello there", "A much longer prompt, with several words in it", "x", "Numbers: 1 2 3 4"},
      {0.0f, 0.8f, 0.0f, 1.0f}, 16);
  INFO("passes " << st.passes << " sequences " << st.sequences);
  CHECK(st.max_sequences >= 2);
  CHECK(st.passes < st.sequences);
}

TEST_CASE("C API: batched sessions on the real SmolLM2 give each one's own text",
          "[c_api][batcher][real]") {
  const std::string path = ember::test::ModelPath("SmolLM2-135M-Instruct.Q4_1.gguf");
  if (path.empty()) EMBER_SKIP("SmolLM2-135M-Instruct.Q4_1.gguf is not in the model cache");
  auto m = ember::test::LoadCModelOrFail(path);
  const ember_batcher_stats st = CheckSameTexts(
      m.get(),
      {"The capital of France is", "def fibonacci(n):", "Once upon a time, in a small village,",
       "List three colours:"},
      {0.0f, 0.0f, 0.0f, 0.7f}, 32);
  CHECK(st.max_sequences >= 2);
}

TEST_CASE("C API: batcher arguments are checked", "[c_api][batcher]") {
  auto m = ember::test::LoadCModelOrFail(ember::test::BuildArchModel("llama"));
  auto other = ember::test::LoadCModelOrFail(ember::test::BuildArchModel("qwen2"));
  ember_batcher* b = nullptr;
  CHECK(ember_batcher_create(nullptr, nullptr, &b) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(ember_batcher_create(m.get(), nullptr, nullptr) == EMBER_ERR_INVALID_ARGUMENT);
  ember_batcher_params bp = ember_batcher_default_params();
  CHECK(bp.prefill_chunk == 32);
  bp.prefill_chunk = 0;
  CHECK(ember_batcher_create(m.get(), &bp, &b) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(std::string(ember_last_error()).find("prefill_chunk") != std::string::npos);
  bp = ember_batcher_default_params();
  bp.min_wait_us = -1;
  CHECK(ember_batcher_create(m.get(), &bp, &b) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(b == nullptr);

  REQUIRE(ember_batcher_create(other.get(), nullptr, &b) == EMBER_OK);
  auto s = NewSession(m.get());
  CHECK(ember_session_set_batcher(s.get(), b) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(ember_session_set_batcher(nullptr, b) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(ember_session_set_batcher(s.get(), nullptr) == EMBER_OK);  // detaching is always fine
  ember_batcher_stats st{};
  CHECK(ember_batcher_get_stats(b, nullptr) == EMBER_ERR_INVALID_ARGUMENT);
  REQUIRE(ember_batcher_get_stats(b, &st) == EMBER_OK);
  CHECK(st.passes == 0);
  ember_batcher_free(b);
  ember_batcher_free(nullptr);
}
