// The C API's contracts (include/ember.h, docs/API.md) on the tiny model:
// versions, statuses and the thread-local last error, caller buffers that
// report the size needed (tokenize, token_to_piece, detokenize), the load
// progress callback and its cancellation, logits access.
#include "ember.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/loaders.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

namespace {

using ModelPtr = ember::test::CModelPtr;
using SessionPtr = ember::test::CSessionPtr;

ModelPtr LoadTiny() { return ember::test::LoadCModelOrFail(); }

std::vector<int32_t> Tokenize(const ember_model* m, const std::string& text) {
  size_t n = 0;
  REQUIRE(ember_tokenize(m, text.data(), text.size(), false, false, nullptr, 0, &n) ==
          (text.empty() ? EMBER_OK : EMBER_ERR_BUFFER_TOO_SMALL));
  std::vector<int32_t> ids(n);
  REQUIRE(ember_tokenize(m, text.data(), text.size(), false, false, ids.data(), ids.size(), &n) ==
          EMBER_OK);
  REQUIRE(n == ids.size());
  return ids;
}

// Detokenizes through a buffer of the size asked for.
std::string Detokenize(const ember_model* m, const std::vector<int32_t>& ids, bool special) {
  size_t needed = 0;
  REQUIRE(ember_detokenize(m, ids.data(), ids.size(), special, nullptr, 0, &needed) ==
          EMBER_ERR_BUFFER_TOO_SMALL);
  REQUIRE(needed >= 1);
  std::vector<char> buf(needed, 'x');
  size_t again = 0;
  REQUIRE(ember_detokenize(m, ids.data(), ids.size(), special, buf.data(), buf.size(), &again) ==
          EMBER_OK);
  REQUIRE(again == needed);
  REQUIRE(buf[needed - 1] == '\0');
  return std::string(buf.data(), needed - 1);
}

}  // namespace

TEST_CASE("c_api: version macros match the library and the CMake project", "[c_api]") {
  CHECK(EMBER_API_VERSION == 1);
  CHECK(ember_api_version() == EMBER_API_VERSION);
  CHECK(std::string(ember_version()) == EMBER_VERSION_STRING);
  CHECK(std::string(EMBER_VERSION_STRING) == EMBER_PROJECT_VERSION);
  CHECK(std::string(EMBER_VERSION_STRING) == std::to_string(EMBER_VERSION_MAJOR) + "." +
                                                 std::to_string(EMBER_VERSION_MINOR) + "." +
                                                 std::to_string(EMBER_VERSION_PATCH));
}

TEST_CASE("c_api: every status and finish reason has a name", "[c_api]") {
  for (int s = EMBER_OK; s <= EMBER_ERR_INTERNAL; ++s) {
    const std::string name = ember_status_str(static_cast<ember_status>(s));
    CHECK(name.rfind("EMBER_", 0) == 0);
    CHECK(name != "EMBER_ERR_UNKNOWN");
  }
  CHECK(std::string(ember_status_str(EMBER_ERR_CANCELLED)) == "EMBER_ERR_CANCELLED");
  CHECK(std::string(ember_finish_reason_str(EMBER_FINISH_CANCELLED)) == "cancelled");
}

TEST_CASE("c_api: the last error is per thread and cleared by the next call", "[c_api]") {
  ember_model* m = nullptr;
  REQUIRE(ember_model_load("/nonexistent/a.gguf", nullptr, &m) == EMBER_ERR_IO);
  const std::string main_error = ember_last_error();
  CHECK(main_error.find("/nonexistent/a.gguf") != std::string::npos);

  std::string other_before, other_after;
  std::thread t([&] {
    other_before = ember_last_error();
    ember_model* m2 = nullptr;
    ember_model_load(nullptr, nullptr, &m2);
    other_after = ember_last_error();
  });
  t.join();
  CHECK(other_before.empty());
  CHECK(other_after.find("path is NULL") != std::string::npos);
  CHECK(std::string(ember_last_error()) == main_error);  // untouched by the other thread

  ModelPtr tiny = LoadTiny();
  CHECK(std::string(ember_last_error()).empty());  // a successful call clears it
}

TEST_CASE("c_api: tokenize reports the count needed", "[c_api]") {
  ModelPtr m = LoadTiny();
  const std::string text = "Hello world, again";
  size_t n = 0;
  REQUIRE(ember_tokenize(m.get(), text.data(), text.size(), false, false, nullptr, 0, &n) ==
          EMBER_ERR_BUFFER_TOO_SMALL);
  REQUIRE(n >= 3);
  std::vector<int32_t> ids(n + 2, -7);
  size_t n_small = 0;
  CHECK(ember_tokenize(m.get(), text.data(), text.size(), false, false, ids.data(), n - 1,
                       &n_small) == EMBER_ERR_BUFFER_TOO_SMALL);
  CHECK(n_small == n);
  CHECK(ids[0] == -7);  // nothing written
  size_t n_exact = 0;
  CHECK(ember_tokenize(m.get(), text.data(), text.size(), false, false, ids.data(), n, &n_exact) ==
        EMBER_OK);
  CHECK(n_exact == n);
  CHECK(ids[n] == -7);
  // Empty text: zero tokens, no buffer needed.
  size_t n_empty = 99;
  CHECK(ember_tokenize(m.get(), nullptr, 0, false, false, nullptr, 0, &n_empty) == EMBER_OK);
  CHECK(n_empty == 0);
}

TEST_CASE("c_api: token_to_piece reports the bytes needed", "[c_api]") {
  ModelPtr m = LoadTiny();
  const std::vector<int32_t> ids = Tokenize(m.get(), " world");
  REQUIRE(ids.size() == 1);
  size_t n = 0;
  REQUIRE(ember_token_to_piece(m.get(), ids[0], false, nullptr, 0, &n) ==
          EMBER_ERR_BUFFER_TOO_SMALL);
  REQUIRE(n == 6);
  char buf[8] = "xxxxxxx";
  CHECK(ember_token_to_piece(m.get(), ids[0], false, buf, 5, &n) == EMBER_ERR_BUFFER_TOO_SMALL);
  CHECK(buf[0] == 'x');
  CHECK(ember_token_to_piece(m.get(), ids[0], false, buf, 6, &n) == EMBER_OK);
  CHECK(std::string(buf, n) == " world");
}

TEST_CASE("c_api: detokenize round-trips text and reports the size needed", "[c_api]") {
  ModelPtr m = LoadTiny();
  const std::string text = "Hello world, h\xC3\xA9llo";
  const std::vector<int32_t> ids = Tokenize(m.get(), text);
  CHECK(Detokenize(m.get(), ids, false) == text);

  size_t needed = 0;
  REQUIRE(ember_detokenize(m.get(), ids.data(), ids.size(), false, nullptr, 0, &needed) ==
          EMBER_ERR_BUFFER_TOO_SMALL);
  CHECK(needed == text.size() + 1);

  SECTION("a buffer one byte short gets the longest prefix that fits, NUL-terminated") {
    std::vector<char> buf(needed - 1, 'x');
    size_t n = 0;
    CHECK(ember_detokenize(m.get(), ids.data(), ids.size(), false, buf.data(), buf.size(), &n) ==
          EMBER_ERR_BUFFER_TOO_SMALL);
    CHECK(n == needed);
    CHECK(std::string(buf.data()) == text.substr(0, text.size() - 1));
  }
  SECTION("a prefix never ends inside a UTF-8 character") {
    // "... h\xC3\xA9llo": a buffer that would end between \xC3 and \xA9.
    const size_t cut = text.find('\xC3') + 1;
    std::vector<char> buf(cut + 1, 'x');
    size_t n = 0;
    CHECK(ember_detokenize(m.get(), ids.data(), ids.size(), false, buf.data(), buf.size(), &n) ==
          EMBER_ERR_BUFFER_TOO_SMALL);
    CHECK(std::string(buf.data()) == text.substr(0, cut - 1));
  }
  SECTION("a one-byte buffer gets an empty string") {
    char c = 'x';
    size_t n = 0;
    CHECK(ember_detokenize(m.get(), ids.data(), ids.size(), false, &c, 1, &n) ==
          EMBER_ERR_BUFFER_TOO_SMALL);
    CHECK(c == '\0');
  }
  SECTION("no tokens: the empty string") {
    char buf[2] = {'x', 'x'};
    size_t n = 0;
    CHECK(ember_detokenize(m.get(), nullptr, 0, false, buf, 2, &n) == EMBER_OK);
    CHECK(n == 1);
    CHECK(buf[0] == '\0');
  }
}

TEST_CASE("c_api: detokenize gives the tokens' bytes exactly, partial UTF-8 included", "[c_api]") {
  ModelPtr m = LoadTiny();
  // GPT-2's byte-level vocabulary splits the emoji's four bytes over tokens.
  const std::string text =
      "a\xF0\x9F\x98\x80"
      "b";
  const std::vector<int32_t> ids = Tokenize(m.get(), text);
  REQUIRE(ids.size() >= 3);
  std::string joined;
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::string one = Detokenize(m.get(), {ids[i]}, false);
    joined += one;
    // Every prefix of the tokens gives a prefix of the bytes, even inside the emoji.
    const std::string prefix =
        Detokenize(m.get(), std::vector<int32_t>(ids.begin(), ids.begin() + i + 1), false);
    CHECK(prefix == text.substr(0, prefix.size()));
  }
  CHECK(joined == text);
}

TEST_CASE("c_api: detokenize renders special tokens only when asked", "[c_api]") {
  ModelPtr m = LoadTiny();
  ember_model_info info;
  REQUIRE(ember_model_get_info(m.get(), &info) == EMBER_OK);
  REQUIRE(info.eos_token >= 0);
  std::vector<int32_t> ids = Tokenize(m.get(), "Hi");
  ids.push_back(info.eos_token);
  CHECK(Detokenize(m.get(), ids, false) == "Hi");
  CHECK(Detokenize(m.get(), ids, true) == "Hi<|endoftext|>");

  const int32_t bad[2] = {ids[0], info.n_vocab};
  size_t needed = 0;
  char buf[16];
  CHECK(ember_detokenize(m.get(), bad, 2, false, buf, sizeof buf, &needed) ==
        EMBER_ERR_INVALID_ARGUMENT);
  CHECK(std::string(ember_last_error()).find("index 1") != std::string::npos);
}

namespace {

struct ProgressLog {
  std::vector<float> values;
  int cancel_at = -1;  // the call (0-based) that returns false; -1: none
};

bool OnProgress(float progress, void* user_data) {
  auto* log = static_cast<ProgressLog*>(user_data);
  log->values.push_back(progress);
  return static_cast<int>(log->values.size()) - 1 != log->cancel_at;
}

ember_status LoadWithProgress(ProgressLog* log, ember_model** out) {
  ember_model_params p = ember_model_default_params();
  p.progress = OnProgress;
  p.progress_user_data = log;
  return ember_model_load(ember::test::DefaultTinyModel().c_str(), &p, out);
}

}  // namespace

TEST_CASE("c_api: model loading reports progress up to 1", "[c_api]") {
  ProgressLog log;
  ember_model* m = nullptr;
  REQUIRE(LoadWithProgress(&log, &m) == EMBER_OK);
  ModelPtr owned(m);
  REQUIRE(log.values.size() >= 3);  // one per repacked matrix, then 1
  for (size_t i = 0; i < log.values.size(); ++i) {
    CHECK(log.values[i] >= 0.0f);
    CHECK(log.values[i] <= 1.0f);
    if (i > 0) CHECK(log.values[i] >= log.values[i - 1]);
  }
  CHECK(log.values.back() == 1.0f);
}

TEST_CASE("c_api: a progress callback returning false cancels loading", "[c_api]") {
  ProgressLog full;
  ember_model* m = nullptr;
  REQUIRE(LoadWithProgress(&full, &m) == EMBER_OK);
  ember_model_free(m);
  // Cancel at the first call, in the middle, and at the final 1: each time
  // EMBER_ERR_CANCELLED, no model, and (under ASan/LSan) nothing leaked.
  for (const int at :
       {0, static_cast<int>(full.values.size()) / 2, static_cast<int>(full.values.size()) - 1}) {
    ProgressLog log;
    log.cancel_at = at;
    ember_model* cancelled = reinterpret_cast<ember_model*>(&log);  // must be overwritten
    CHECK(LoadWithProgress(&log, &cancelled) == EMBER_ERR_CANCELLED);
    CHECK(cancelled == nullptr);
    CHECK(static_cast<int>(log.values.size()) == at + 1);  // no call after the "false"
    CHECK(std::string(ember_last_error()).find("cancelled") != std::string::npos);
  }
}

TEST_CASE("c_api: logits after eval and generate, none after reset", "[c_api]") {
  ModelPtr m = LoadTiny();
  ember_model_info info;
  REQUIRE(ember_model_get_info(m.get(), &info) == EMBER_OK);
  ember_session_params sp = ember_session_default_params();
  sp.n_ctx = 64;
  sp.n_threads = 1;
  ember_session *a = nullptr, *b = nullptr;
  REQUIRE(ember_session_create(m.get(), &sp, &a) == EMBER_OK);
  SessionPtr sa(a);
  REQUIRE(ember_session_create(m.get(), &sp, &b) == EMBER_OK);
  SessionPtr sb(b);
  CHECK(ember_session_logits(a) == nullptr);

  const std::vector<int32_t> ids = Tokenize(m.get(), "The cat sat on");
  REQUIRE(ember_session_eval(a, ids.data(), ids.size()) == EMBER_OK);
  const float* la = ember_session_logits(a);
  REQUIRE(la != nullptr);
  std::vector<float> first(la, la + info.n_vocab);
  for (const float x : first) REQUIRE(std::isfinite(x));
  CHECK(ember_session_n_past(a) == static_cast<int32_t>(ids.size()));

  // Each session has its own: another session's eval leaves them be, and
  // computes the same values from the same tokens.
  const std::vector<int32_t> other = Tokenize(m.get(), "Zebras");
  REQUIRE(ember_session_eval(b, other.data(), other.size()) == EMBER_OK);
  CHECK(std::memcmp(ember_session_logits(a), first.data(), first.size() * sizeof(float)) == 0);
  ember_session_reset(b);
  REQUIRE(ember_session_eval(b, ids.data(), ids.size()) == EMBER_OK);
  REQUIRE(ember_session_logits(b) != nullptr);
  CHECK(std::memcmp(ember_session_logits(b), first.data(), first.size() * sizeof(float)) == 0);

  // A failed eval leaves them as they were.
  const int32_t bad = -1;
  CHECK(ember_session_eval(a, &bad, 1) == EMBER_ERR_INVALID_ARGUMENT);
  REQUIRE(ember_session_logits(a) != nullptr);
  CHECK(std::memcmp(ember_session_logits(a), first.data(), first.size() * sizeof(float)) == 0);

  ember_session_reset(a);
  CHECK(ember_session_logits(a) == nullptr);
  CHECK(ember_session_n_past(a) == 0);

  ember_generate_params gp = ember_generate_default_params();
  gp.n_predict = 3;
  gp.temperature = 0.0f;
  gp.ignore_eos = true;
  ember_generate_stats st;
  REQUIRE(ember_generate(a, ids.data(), ids.size(), &gp, nullptr, nullptr, &st) == EMBER_OK);
  CHECK(st.n_gen == 3);
  CHECK(ember_session_logits(a) != nullptr);
}

TEST_CASE("c_api: a vocab_only model tokenizes as the full one and refuses sessions", "[c_api]") {
  ModelPtr full = LoadTiny();
  ember_model_params mp = ember_model_default_params();
  CHECK_FALSE(mp.vocab_only);
  mp.vocab_only = true;
  ember_model* raw = nullptr;
  REQUIRE(ember_model_load(ember::test::DefaultTinyModel().c_str(), &mp, &raw) == EMBER_OK);
  ModelPtr vocab(raw);
  const std::string text = "The quick brown fox, naïve café: 12345 <|im_start|>!";
  const std::vector<int32_t> ids = Tokenize(full.get(), text);
  CHECK(Tokenize(vocab.get(), text) == ids);
  CHECK(Detokenize(vocab.get(), ids, true) == Detokenize(full.get(), ids, true));
  ember_model_info a, b;
  REQUIRE(ember_model_get_info(full.get(), &a) == EMBER_OK);
  REQUIRE(ember_model_get_info(vocab.get(), &b) == EMBER_OK);
  CHECK(b.n_vocab == a.n_vocab);
  CHECK(b.n_layer == a.n_layer);
  CHECK(b.tied_output == a.tied_output);
  CHECK(b.weight_bytes == a.weight_bytes);
  CHECK(a.loaded_bytes > 0);
  CHECK(b.loaded_bytes == 0);
  ember_session* s = nullptr;
  CHECK(ember_session_create(vocab.get(), nullptr, &s) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(s == nullptr);
  CHECK_THAT(std::string(ember_last_error()), Catch::Contains("vocab_only"));
}
