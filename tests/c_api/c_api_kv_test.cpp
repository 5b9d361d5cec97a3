// The C API's KV cache controls: kv_type, context_shift and n_keep in the
// session params, ember_session_save/load, and reuse_prefix in generation.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ember.h"
#include "support/loaders.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

namespace {

using ModelPtr = ember::test::CModelPtr;
using SessionPtr = ember::test::CSessionPtr;

ModelPtr LoadTiny() { return ember::test::LoadCModelOrFail(); }

SessionPtr NewSession(const ember_model* m, int32_t n_ctx, ember_kv_type type = EMBER_KV_F16,
                      int32_t keep = 0, bool shift = true) {
  ember_session_params p = ember_session_default_params();
  p.n_ctx = n_ctx;
  p.n_threads = 1;
  p.kv_type = type;
  p.n_keep = keep;
  p.context_shift = shift;
  ember_session* s = nullptr;
  const ember_status st = ember_session_create(m, &p, &s);
  INFO(ember_last_error());
  REQUIRE(st == EMBER_OK);
  return SessionPtr(s);
}

std::vector<int32_t> Ids(size_t n, int32_t start) {
  std::vector<int32_t> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = start + static_cast<int32_t>((i * 37) % 3000);
  return ids;
}

std::vector<float> Logits(const ember_model* m, const ember_session* s) {
  const float* l = ember_session_logits(s);
  REQUIRE(l != nullptr);
  ember_model_info info;
  REQUIRE(ember_model_get_info(m, &info) == EMBER_OK);
  return std::vector<float>(l, l + info.n_vocab);
}

ember_generate_params Greedy(int32_t n) {
  ember_generate_params g = ember_generate_default_params();
  g.n_predict = n;
  g.temperature = 0.0f;
  g.ignore_eos = true;
  return g;
}

}  // namespace

TEST_CASE("c_api kv: defaults are f16 with context shift keeping 4 tokens", "[c_api][kv]") {
  const ember_session_params p = ember_session_default_params();
  CHECK(p.kv_type == EMBER_KV_F16);
  CHECK(p.context_shift);
  CHECK(p.n_keep == 4);
}

TEST_CASE("c_api kv: q8 holds about half the bytes, shift runs past the context", "[c_api][kv]") {
  auto m = LoadTiny();
  auto f16 = NewSession(m.get(), 64, EMBER_KV_F16);
  auto q8 = NewSession(m.get(), 64, EMBER_KV_Q8);
  // Per element 1 byte instead of 2, plus a 4-byte scale per head_dim elements.
  ember_model_info info;
  REQUIRE(ember_model_get_info(m.get(), &info) == EMBER_OK);
  const size_t hd = static_cast<size_t>(info.head_dim);
  CHECK(ember_session_kv_bytes(q8.get()) * 2 * hd == ember_session_kv_bytes(f16.get()) * (hd + 4));

  auto ring = NewSession(m.get(), 32, EMBER_KV_Q8, 4);
  const std::vector<int32_t> prompt = Ids(10, 200);
  const ember_generate_params g = Greedy(100);
  ember_generate_stats st;
  REQUIRE(ember_generate(ring.get(), prompt.data(), prompt.size(), &g, nullptr, nullptr, &st) ==
          EMBER_OK);
  CHECK(st.n_gen == 100);
  CHECK(st.finish_reason == EMBER_FINISH_LENGTH);
  CHECK(ember_session_n_dropped(ring.get()) > 0);
  CHECK(ember_session_n_past(ring.get()) <= 32);

  // Without shift the same run stops at the full context.
  auto fixed = NewSession(m.get(), 32, EMBER_KV_F16, 0, false);
  REQUIRE(ember_generate(fixed.get(), prompt.data(), prompt.size(), &g, nullptr, nullptr, &st) ==
          EMBER_OK);
  CHECK(st.finish_reason == EMBER_FINISH_LENGTH);
  CHECK(st.n_gen < 100);
  CHECK(ember_session_n_dropped(fixed.get()) == 0);
}

TEST_CASE("c_api kv: bad kv_type and n_keep are argument errors", "[c_api][kv][bad-input]") {
  auto m = LoadTiny();
  ember_session_params p = ember_session_default_params();
  p.n_ctx = 16;
  ember_session* s = reinterpret_cast<ember_session*>(0x1);
  p.kv_type = static_cast<ember_kv_type>(7);
  CHECK(ember_session_create(m.get(), &p, &s) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(s == nullptr);
  CHECK(std::strstr(ember_last_error(), "kv_type") != nullptr);
  p.kv_type = EMBER_KV_F16;
  for (int32_t keep : {-1, 16, 100}) {
    p.n_keep = keep;
    CHECK(ember_session_create(m.get(), &p, &s) == EMBER_ERR_INVALID_ARGUMENT);
    CHECK(s == nullptr);
    CHECK(std::strstr(ember_last_error(), "keep") != nullptr);
  }
}

TEST_CASE("c_api kv: save and load restore the logits and the continuation", "[c_api][kv]") {
  auto m = LoadTiny();
  auto a = NewSession(m.get(), 64);
  const std::vector<int32_t> prompt = Ids(20, 300);
  REQUIRE(ember_session_eval(a.get(), prompt.data(), prompt.size()) == EMBER_OK);
  const std::string path = ember::test::TempPath("c_api.emberkv");
  REQUIRE(ember_session_save(a.get(), path.c_str()) == EMBER_OK);

  auto b = NewSession(m.get(), 64);
  REQUIRE(ember_session_load(b.get(), path.c_str()) == EMBER_OK);
  CHECK(ember_session_n_past(b.get()) == 20);
  CHECK(Logits(m.get(), b.get()) == Logits(m.get(), a.get()));
  const std::vector<int32_t> next = {77, 78};
  const ember_generate_params g = Greedy(6);
  std::vector<int32_t> ta, tb;
  auto collect = [](int32_t t, void* u) {
    static_cast<std::vector<int32_t>*>(u)->push_back(t);
    return true;
  };
  ember_generate_params ga = g, gb = g;
  ga.on_token = collect;
  gb.on_token = collect;
  REQUIRE(ember_generate(a.get(), next.data(), next.size(), &ga, nullptr, &ta, nullptr) ==
          EMBER_OK);
  REQUIRE(ember_generate(b.get(), next.data(), next.size(), &gb, nullptr, &tb, nullptr) ==
          EMBER_OK);
  CHECK(ta.size() == 6);
  CHECK(ta == tb);

  // Refusals leave the session as it was.
  const int32_t before = ember_session_n_past(b.get());
  auto q8 = NewSession(m.get(), 64, EMBER_KV_Q8);
  CHECK(ember_session_load(q8.get(), path.c_str()) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(std::strstr(ember_last_error(), "q8") != nullptr);
  auto small = NewSession(m.get(), 16);
  CHECK(ember_session_load(small.get(), path.c_str()) == EMBER_ERR_CONTEXT_OVERFLOW);
  {
    std::string bytes = ember::test::ReadFile(path);
    bytes.resize(bytes.size() / 2);
    const std::string cut = ember::test::TempPath("cut.emberkv");
    std::FILE* f = std::fopen(cut.c_str(), "wb");
    REQUIRE(f != nullptr);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
    CHECK(ember_session_load(b.get(), cut.c_str()) == EMBER_ERR_BAD_FORMAT);
    CHECK(std::strstr(ember_last_error(), "cut.emberkv") != nullptr);
    std::remove(cut.c_str());
  }
  CHECK(ember_session_load(b.get(), "/nonexistent/ember.kv") == EMBER_ERR_IO);
  CHECK(ember_session_n_past(b.get()) == before);
  CHECK(ember_session_save(b.get(), "/nonexistent/ember.kv") == EMBER_ERR_IO);
  std::remove(path.c_str());
}

TEST_CASE("c_api kv: NULL handles and paths are argument errors", "[c_api][kv][bad-input]") {
  auto m = LoadTiny();
  auto s = NewSession(m.get(), 16);
  CHECK(ember_session_save(nullptr, "x") == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(ember_session_save(s.get(), nullptr) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(ember_session_save(s.get(), "") == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(ember_session_load(nullptr, "x") == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(ember_session_load(s.get(), nullptr) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(ember_session_n_dropped(nullptr) == 0);
  CHECK(ember_session_kv_bytes(nullptr) == 0);
}

TEST_CASE("c_api kv: reuse_prefix computes only the new part of a conversation", "[c_api][kv]") {
  auto m = LoadTiny();
  auto s = NewSession(m.get(), 128);
  auto fresh = NewSession(m.get(), 128);
  std::vector<int32_t> turn = Ids(30, 400);
  ember_generate_params g = Greedy(5);
  g.reuse_prefix = true;
  std::vector<int32_t> out;
  g.on_token = [](int32_t t, void* u) {
    static_cast<std::vector<int32_t>*>(u)->push_back(t);
    return true;
  };
  ember_generate_stats st;
  REQUIRE(ember_generate(s.get(), turn.data(), turn.size(), &g, nullptr, &out, &st) == EMBER_OK);
  CHECK(st.n_reused == 0);
  // The second turn: everything so far (prompt + reply) plus new tokens.
  turn.insert(turn.end(), out.begin(), out.end());
  const std::vector<int32_t> more = Ids(7, 900);
  turn.insert(turn.end(), more.begin(), more.end());
  out.clear();
  REQUIRE(ember_generate(s.get(), turn.data(), turn.size(), &g, nullptr, &out, &st) == EMBER_OK);
  // The last reply token was generated but never evaluated, so it is new too.
  CHECK(st.n_reused == 34);
  CHECK(st.n_prompt == static_cast<int32_t>(turn.size()));
  std::vector<int32_t> fresh_out;
  ember_generate_params gf = g;
  gf.reuse_prefix = false;
  REQUIRE(ember_generate(fresh.get(), turn.data(), turn.size(), &gf, nullptr, &fresh_out,
                         nullptr) == EMBER_OK);
  CHECK(out == fresh_out);
}
