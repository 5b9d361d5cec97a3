// Threads and the C API: one model serving two sessions on two threads at
// once gives what the sessions give one after the other (the model is
// read-only), and ember_session_cancel stops a generation from another thread.
// No test here depends on timing: the threads synchronise explicitly.
#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ember.h"
#include "support/loaders.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

namespace {

using ModelPtr = ember::test::CModelPtr;
using SessionPtr = ember::test::CSessionPtr;

ModelPtr Load(const std::string& path) { return ember::test::LoadCModelOrFail(path); }

SessionPtr NewSession(const ember_model* m, int32_t n_threads) {
  ember_session_params sp = ember_session_default_params();
  sp.n_ctx = 256;
  sp.n_threads = n_threads;
  ember_session* s = nullptr;
  REQUIRE(ember_session_create(m, &sp, &s) == EMBER_OK);
  return SessionPtr(s);
}

// What one greedy generation produced.
struct Run {
  ember_status status = EMBER_ERR_INTERNAL;
  std::string error;
  std::vector<int32_t> tokens;
  std::string text;
  std::vector<float> logits;  // the session's logits afterwards
  ember_generate_stats stats{};
};

bool CollectPiece(const char* piece, size_t len, int32_t, void* user_data) {
  static_cast<Run*>(user_data)->text.append(piece, len);
  return true;
}

bool CollectToken(int32_t token, void* user_data) {
  static_cast<Run*>(user_data)->tokens.push_back(token);
  return true;
}

// Greedy generation in a fresh session. No Catch2 assertion here: it runs on
// worker threads, and Catch2 2 is not thread-safe; the caller checks `Run`.
Run Greedy(const ember_model* model, const char* prompt, int32_t n_predict, int32_t n_threads) {
  Run r;
  ember_session_params sp = ember_session_default_params();
  sp.n_ctx = 256;
  sp.n_threads = n_threads;
  ember_session* s = nullptr;
  r.status = ember_session_create(model, &sp, &s);
  if (r.status != EMBER_OK) {
    r.error = ember_last_error();
    return r;
  }
  ember_generate_params gp = ember_generate_default_params();
  gp.n_predict = n_predict;
  gp.temperature = 0.0f;
  gp.ignore_eos = true;
  gp.on_token = CollectToken;
  r.status = ember_generate_text(s, prompt, &gp, CollectPiece, &r, &r.stats);
  r.error = ember_last_error();
  if (const float* l = ember_session_logits(s)) {
    ember_model_info info;
    ember_model_get_info(model, &info);
    r.logits.assign(l, l + info.n_vocab);
  }
  ember_session_free(s);
  return r;
}

void RequireSame(const Run& serial, const Run& concurrent) {
  INFO(concurrent.error);
  REQUIRE(serial.status == EMBER_OK);
  REQUIRE(concurrent.status == EMBER_OK);
  CHECK(concurrent.tokens == serial.tokens);
  CHECK(concurrent.text == serial.text);
  REQUIRE(concurrent.logits.size() == serial.logits.size());
  CHECK(std::memcmp(concurrent.logits.data(), serial.logits.data(),
                    serial.logits.size() * sizeof(float)) == 0);
}

// Two prompts one after the other, then at the same time on two threads.
void CheckConcurrentEqualsSerial(const ember_model* model, int32_t n_predict, int32_t n_threads) {
  const char* prompt_a = "Once upon a time, in a small village,";
  const char* prompt_b = "The three primary colors are";
  const Run serial_a = Greedy(model, prompt_a, n_predict, n_threads);
  const Run serial_b = Greedy(model, prompt_b, n_predict, n_threads);
  REQUIRE(serial_a.tokens.size() == static_cast<size_t>(n_predict));
  REQUIRE(serial_a.tokens != serial_b.tokens);

  Run concurrent_a, concurrent_b;
  std::thread ta([&] { concurrent_a = Greedy(model, prompt_a, n_predict, n_threads); });
  std::thread tb([&] { concurrent_b = Greedy(model, prompt_b, n_predict, n_threads); });
  ta.join();
  tb.join();
  RequireSame(serial_a, concurrent_a);
  RequireSame(serial_b, concurrent_b);
}

// Another thread asking to cancel `session` again and again, from its start
// (the constructor returns once it runs) until Stop: for calls that clear
// the request when they begin, so that one of the requests lands inside.
class SpinningCanceller {
 public:
  explicit SpinningCanceller(ember_session* session)
      : thread_([this, session] {
          while (running_.load()) {
            spinning_.store(true);
            ember_session_cancel(session);
            std::this_thread::yield();
          }
        }) {
    while (!spinning_.load()) std::this_thread::yield();
  }
  ~SpinningCanceller() { Stop(); }
  void Stop() {
    running_.store(false);
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::atomic<bool> running_{true}, spinning_{false};
  std::thread thread_;
};

}  // namespace

TEST_CASE("c_api threads: two sessions of one model on two threads equal serial runs",
          "[c_api][threads]") {
  ModelPtr m = Load(ember::test::DefaultTinyModel());
  // Two OpenMP threads per session: each std::thread drives its own team.
  CheckConcurrentEqualsSerial(m.get(), 24, 2);
}

TEST_CASE("c_api threads: two sessions of SmolLM2 on two threads equal serial runs",
          "[c_api][threads][real]") {
  const std::string path = ember::test::ModelPath("SmolLM2-135M-Instruct.Q4_1.gguf");
  if (path.empty()) EMBER_SKIP("SmolLM2-135M-Instruct.Q4_1.gguf is not in the model cache");
  ModelPtr m = Load(path);
  CheckConcurrentEqualsSerial(m.get(), 16, 1);
}

namespace {

// The generating thread and the one that cancels it, in lock step: the piece
// callback announces the first piece, then waits until the other thread has
// called ember_session_cancel, so the cancel lands during the generation.
struct CancelHandshake {
  std::mutex mu;
  std::condition_variable cv;
  bool started = false;
  bool cancelled = false;
  int pieces = 0;
};

bool PieceThenWaitForCancel(const char*, size_t, int32_t, void* user_data) {
  auto* h = static_cast<CancelHandshake*>(user_data);
  std::unique_lock<std::mutex> lock(h->mu);
  ++h->pieces;
  if (!h->started) {
    h->started = true;
    h->cv.notify_all();
    h->cv.wait(lock, [h] { return h->cancelled; });
  }
  return true;  // keep going: only the cancel stops it
}

}  // namespace

TEST_CASE("c_api threads: ember_session_cancel stops a generation from another thread",
          "[c_api][threads]") {
  ModelPtr m = Load(ember::test::DefaultTinyModel());
  SessionPtr s = NewSession(m.get(), 1);
  const std::vector<int32_t> prompt = {464, 2068, 7586};

  CancelHandshake h;
  std::thread canceller([&] {
    std::unique_lock<std::mutex> lock(h.mu);
    h.cv.wait(lock, [&] { return h.started; });
    ember_session_cancel(s.get());
    h.cancelled = true;
    h.cv.notify_all();
  });
  ember_generate_params gp = ember_generate_default_params();
  gp.n_predict = 10000;  // far more than it will get to (the context shifts when full)
  gp.temperature = 0.0f;
  gp.ignore_eos = true;
  ember_generate_stats st;
  const ember_status status =
      ember_generate(s.get(), prompt.data(), prompt.size(), &gp, PieceThenWaitForCancel, &h, &st);
  canceller.join();
  INFO(ember_last_error());
  REQUIRE(status == EMBER_OK);
  CHECK(st.finish_reason == EMBER_FINISH_CANCELLED);
  CHECK(h.pieces == 1);  // checked right after the token whose piece saw the cancel
  CHECK(st.n_gen >= 1);
  CHECK(st.n_gen < 100);
  CHECK(ember_session_n_past(s.get()) <= static_cast<int32_t>(prompt.size()) + st.n_gen);
  CHECK(ember_session_logits(s.get()) != nullptr);

  // The next call starts afresh: the request was cleared.
  gp.n_predict = 4;
  REQUIRE(ember_generate(s.get(), prompt.data(), prompt.size(), &gp, nullptr, nullptr, &st) ==
          EMBER_OK);
  CHECK(st.finish_reason == EMBER_FINISH_LENGTH);
  CHECK(st.n_gen == 4);

  // A cancel while nothing runs has no effect on the next call.
  ember_session_cancel(s.get());
  REQUIRE(ember_generate(s.get(), prompt.data(), prompt.size(), &gp, nullptr, nullptr, &st) ==
          EMBER_OK);
  CHECK(st.finish_reason == EMBER_FINISH_LENGTH);
  const int32_t more[1] = {11};
  CHECK(ember_session_eval(s.get(), more, 1) == EMBER_OK);
}

TEST_CASE("c_api threads: a callback may cancel its own session", "[c_api][threads]") {
  ModelPtr m = Load(ember::test::DefaultTinyModel());
  SessionPtr s = NewSession(m.get(), 1);
  struct State {
    ember_session* session;
    int tokens = 0;
  } state{s.get()};
  ember_generate_params gp = ember_generate_default_params();
  gp.n_predict = 50;
  gp.temperature = 0.0f;
  gp.ignore_eos = true;
  gp.on_token = [](int32_t, void* user_data) {
    auto* st = static_cast<State*>(user_data);
    if (++st->tokens == 3) ember_session_cancel(st->session);
    return true;
  };
  const int32_t prompt[3] = {464, 2068, 7586};
  ember_generate_stats st;
  REQUIRE(ember_generate(s.get(), prompt, 3, &gp, nullptr, &state, &st) == EMBER_OK);
  CHECK(st.finish_reason == EMBER_FINISH_CANCELLED);
  CHECK(st.n_gen == 3);
  CHECK(state.tokens == 3);
}

TEST_CASE("c_api threads: ember_session_cancel during a long prompt", "[c_api][threads]") {
  // The prompt runs in chunks of one token, and another thread keeps asking
  // to cancel until the eval returns. Where the cancel lands depends on the
  // scheduler, so the eval is repeated until one was cancelled mid-prompt
  // (the first, in practice); then its state is checked.
  ModelPtr m = Load(ember::test::DefaultTinyModel());
  ember_session_params sp = ember_session_default_params();
  sp.n_ctx = 256;
  sp.n_threads = 1;
  sp.n_batch = 1;
  std::vector<int32_t> prompt(200);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>(100 + i);

  bool seen = false;
  for (int attempt = 0; attempt < 50 && !seen; ++attempt) {
    ember_session* raw = nullptr;
    REQUIRE(ember_session_create(m.get(), &sp, &raw) == EMBER_OK);
    SessionPtr s(raw);
    SpinningCanceller canceller(s.get());
    const ember_status status = ember_session_eval(s.get(), prompt.data(), prompt.size());
    canceller.Stop();
    if (status == EMBER_OK) continue;  // every chunk ran before a cancel landed
    INFO(ember_last_error());
    REQUIRE(status == EMBER_ERR_CANCELLED);
    seen = true;
    // The chunks computed so far stay; there are no logits until the next eval.
    const int32_t n_past = ember_session_n_past(s.get());
    CHECK(n_past >= 1);
    CHECK(n_past < static_cast<int32_t>(prompt.size()));
    CHECK(ember_session_logits(s.get()) == nullptr);
    CHECK(ember_session_eval(s.get(), prompt.data() + n_past, prompt.size() - n_past) == EMBER_OK);
    CHECK(ember_session_n_past(s.get()) == static_cast<int32_t>(prompt.size()));
    CHECK(ember_session_logits(s.get()) != nullptr);
  }
  CHECK(seen);
}

TEST_CASE("c_api threads: ember_session_cancel stops a beam search", "[c_api][threads][beam]") {
  // The search emits nothing until it ends, so another thread keeps asking
  // to cancel until ember_generate returns; a search of 2000 steps cannot end
  // before one of the requests lands.
  ModelPtr m = Load(ember::test::DefaultTinyModel());
  ember_session_params sp = ember_session_default_params();
  sp.n_ctx = 8300;
  sp.n_threads = 1;
  ember_session* raw = nullptr;
  REQUIRE(ember_session_create(m.get(), &sp, &raw) == EMBER_OK);
  SessionPtr s(raw);
  const std::vector<int32_t> prompt = {464, 2068, 7586};
  ember_generate_params gp = ember_generate_default_params();
  gp.n_predict = 2000;
  gp.beams = 4;
  gp.ignore_eos = true;
  SpinningCanceller canceller(s.get());
  ember_generate_stats st;
  const ember_status status =
      ember_generate(s.get(), prompt.data(), prompt.size(), &gp, nullptr, nullptr, &st);
  canceller.Stop();
  INFO(ember_last_error());
  REQUIRE(status == EMBER_OK);
  CHECK(st.finish_reason == EMBER_FINISH_CANCELLED);
  CHECK(st.n_gen < 2000);
  // A cancelled search leaves the prompt alone in the context, with its logits.
  CHECK(ember_session_n_past(s.get()) == static_cast<int32_t>(prompt.size()));
  CHECK(ember_session_logits(s.get()) != nullptr);
}
