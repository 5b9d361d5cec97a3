// The C API's resource limits: ember_session_memory_needed, max_memory in
// ember_session_limits (ember_session_create_ex), the default check against
// the machine's memory, and ember_model_params.mmap_mode.
#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "ember.h"
#include "platform/memory_info.h"
#include "support/loaders.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

namespace {

using ModelPtr = ember::test::CModelPtr;
using SessionPtr = ember::test::CSessionPtr;

ember_session_params Params(int32_t n_ctx) {
  ember_session_params p = ember_session_default_params();
  p.n_ctx = n_ctx;
  p.n_threads = 1;
  p.n_threads_batch = 1;
  return p;
}

}  // namespace

TEST_CASE("c api limits: memory_needed is what the session allocates", "[c_api][limits]") {
  ModelPtr m = ember::test::LoadCModelOrFail();
  for (ember_kv_type type : {EMBER_KV_F16, EMBER_KV_Q8, EMBER_KV_F32}) {
    ember_session_params p = Params(300);
    p.kv_type = type;
    uint64_t kv = 0, scratch = 0;
    REQUIRE(ember_session_memory_needed(m.get(), &p, &kv, &scratch) == EMBER_OK);
    ember_session* s = nullptr;
    REQUIRE(ember_session_create(m.get(), &p, &s) == EMBER_OK);
    SessionPtr session(s);
    CHECK(kv == ember_session_kv_bytes(s));
    CHECK(scratch > 0);
  }
  CHECK(ember_session_memory_needed(m.get(), nullptr, nullptr, nullptr) == EMBER_OK);
  CHECK(ember_session_memory_needed(nullptr, nullptr, nullptr, nullptr) ==
        EMBER_ERR_INVALID_ARGUMENT);
  ember_session_params bad = Params(-1);
  CHECK(ember_session_memory_needed(m.get(), &bad, nullptr, nullptr) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(std::string(ember_last_error()) == "context size -1 is out of range");
}

TEST_CASE("c api limits: max_memory below the need is EMBER_ERR_OUT_OF_MEMORY, nothing made",
          "[c_api][limits]") {
  ModelPtr m = ember::test::LoadCModelOrFail();
  const ember_session_params p = Params(2048);
  uint64_t kv = 0, scratch = 0;
  REQUIRE(ember_session_memory_needed(m.get(), &p, &kv, &scratch) == EMBER_OK);
  ember_session_limits limits = ember_session_limits_default();
  CHECK(limits.max_memory == 0);
  limits.max_memory = kv + scratch - 1;
  ember_session* s = reinterpret_cast<ember_session*>(&limits);  // must be reset to NULL
  CHECK(ember_session_create_ex(m.get(), &p, &limits, &s) == EMBER_ERR_OUT_OF_MEMORY);
  CHECK(s == nullptr);
  const std::string e = ember_last_error();
  CHECK(e.find("a context of 2048 tokens needs ") == 0);
  CHECK(e.find("(" + std::to_string(kv + scratch) + " bytes: KV cache ") != std::string::npos);
  CHECK(e.find("(" + std::to_string(kv + scratch - 1) +
               " bytes) it may take: the limit given "
               "as max_memory (--max-memory)") != std::string::npos);
  limits.max_memory = kv + scratch;
  REQUIRE(ember_session_create_ex(m.get(), &p, &limits, &s) == EMBER_OK);
  SessionPtr ok(s);
  CHECK(ember_session_n_ctx(s) == 2048);
  // NULL limits: the defaults.
  ember_session* t = nullptr;
  CHECK(ember_session_create_ex(m.get(), &p, nullptr, &t) == EMBER_OK);
  ember_session_free(t);
}

TEST_CASE("c api limits: a context beyond the machine's memory fails before allocating",
          "[c_api][limits]") {
  ember::test::TinyModelSpec spec;  // 32 KiB of f16 KV cache per token
  spec.n_head = 8;
  spec.n_head_kv = 8;
  spec.head_dim = 512;
  const std::string path = ember::test::TempPath("c_api_wide_kv.gguf");
  REQUIRE(ember::test::BuildTinyModel(spec, path).ok());
  ModelPtr m = ember::test::LoadCModelOrFail(path);
  const ember_session_params p = Params(1000000);
  uint64_t kv = 0, scratch = 0;
  REQUIRE(ember_session_memory_needed(m.get(), &p, &kv, &scratch) == EMBER_OK);
  CHECK(kv == uint64_t{1000000} * 2 * 2 * 8 * 512 * 2);
  const ember::MemoryBudget machine = ember::AvailableMemory();
  if (machine.bytes >= kv + scratch) EMBER_SKIP("this machine has " + machine.source);
  ember_session* s = nullptr;
  CHECK(ember_session_create(m.get(), &p, &s) == EMBER_ERR_OUT_OF_MEMORY);
  CHECK(s == nullptr);
  const std::string e = ember_last_error();
  CHECK(e.find("a context of 1000000 tokens needs 30.") == 0);
  CHECK(e.find(std::to_string(kv + scratch) + " bytes") != std::string::npos);
  CHECK(e.find(machine.source) != std::string::npos);
}

TEST_CASE("c api limits: mmap_mode", "[c_api][limits]") {
  CHECK(ember_model_default_params().mmap_mode == EMBER_MMAP_AUTO);
  ember_model_params mp = ember_model_default_params();
  mp.mmap_mode = 3;
  ember_model* raw = nullptr;
  CHECK(ember_model_load(ember::test::DefaultTinyModel().c_str(), &mp, &raw) ==
        EMBER_ERR_INVALID_ARGUMENT);
  CHECK(std::string(ember_last_error()) ==
        "ember_model_load: mmap_mode 3 is not an ember_mmap_mode value");
  CHECK(raw == nullptr);

  // Read into memory, the model generates on after its file is truncated.
  const std::string path = ember::test::TempPath("c_api_no_mmap.gguf");
  std::ofstream(path, std::ios::binary) << ember::test::ReadFile(ember::test::DefaultTinyModel());
  for (uint8_t mode : {EMBER_MMAP_OFF, EMBER_MMAP_ON}) {
    mp.mmap_mode = mode;
    REQUIRE(ember_model_load(path.c_str(), &mp, &raw) == EMBER_OK);
    ModelPtr m(raw);
    if (mode == EMBER_MMAP_ON) continue;  // (truncating it would make it SIGBUS)
    REQUIRE(truncate(path.c_str(), 0) == 0);
    const ember_session_params p = Params(64);
    ember_session* s = nullptr;
    REQUIRE(ember_session_create(m.get(), &p, &s) == EMBER_OK);
    SessionPtr session(s);
    ember_generate_params gp = ember_generate_default_params();
    gp.n_predict = 8;
    gp.temperature = 0;
    gp.ignore_eos = true;
    ember_generate_stats st{};
    const int32_t prompt[] = {100, 200, 300};
    REQUIRE(ember_generate(s, prompt, 3, &gp, nullptr, nullptr, &st) == EMBER_OK);
    CHECK(st.n_gen == 8);
    char buf[64];
    size_t needed = 0;
    CHECK(ember_model_meta_string(m.get(), "general.architecture", buf, sizeof buf, &needed) ==
          EMBER_OK);
    CHECK(std::string(buf) == "llama");
    // Restore the file for the next mode.
    std::ofstream(path, std::ios::binary) << ember::test::ReadFile(ember::test::DefaultTinyModel());
  }
}
