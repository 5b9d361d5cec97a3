// Session state files (runtime/session/session_state.cpp): a saved session restores
// to the same logits and the same continuation; a file from another model,
// another KV type, a too-small context, or a truncated or corrupted file is
// refused with a clear error and leaves the session as it was.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <random>

#include "runtime/decoding/generate.h"
#include "runtime/session/session.h"
#include "support/loaders.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

using namespace ember;

namespace {

std::unique_ptr<Model> Load(const std::string& path) { return test::LoadModelOrFail(path); }

std::unique_ptr<Session> NewSession(const Model& m, int64_t n_ctx, KvType type = KvType::kF16,
                                    int64_t keep = 0) {
  SessionParams p;
  p.n_ctx = n_ctx;
  p.n_threads = 1;
  p.kv_type = type;
  p.n_keep = keep;
  return test::CreateSessionOrFail(m, p);
}

using test::RandomTokens;

std::vector<int32_t> Greedy(Session& s, int n) {
  GenerateParams gp;
  gp.n_predict = n;
  gp.ignore_eos = true;
  gp.sampling.temperature = 0.0f;
  GenerateResult r;
  const Status st = Generate(s, {42, 43}, gp, nullptr, nullptr, &r);
  INFO(st.message());
  REQUIRE(st.ok());
  return r.tokens;
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The session holds what it held: tokens and logits.
void CheckUnchanged(const Session& s, const std::vector<int32_t>& tokens,
                    const std::vector<float>& logits) {
  CHECK(s.tokens() == tokens);
  CHECK(s.n_past() == static_cast<int64_t>(tokens.size()));
  CHECK(s.logits() == logits);
}

}  // namespace

TEST_CASE("session state: save and load give the same logits and continuation", "[kv][state]") {
  auto m = Load(test::DefaultTinyModel());
  for (KvType type : {KvType::kF16, KvType::kQ8, KvType::kF32}) {
    for (bool shifted : {false, true}) {
      INFO("kv " << KvTypeName(type) << (shifted ? ", after shifts" : ""));
      // A 32-token ring fed 70 tokens has shifted and wrapped; its state is
      // written in context order and loads into a linear ring of the same
      // size, which then shifts as the original does. The unshifted state
      // loads into a session of another size.
      auto a = NewSession(*m, shifted ? 32 : 96, type, 3);
      REQUIRE(a->Decode(RandomTokens(shifted ? 70 : 40, 21)).ok());
      CHECK((a->n_shifts() > 0) == shifted);
      const std::string path = test::TempPath("state.emberkv");
      REQUIRE(a->SaveState(path).ok());

      auto b = NewSession(*m, shifted ? 32 : 64, type, 3);
      REQUIRE(b->Decode(RandomTokens(5, 99)).ok());  // something to replace
      Status st = b->LoadState(path);
      INFO(st.message());
      REQUIRE(st.ok());
      CHECK(b->tokens() == a->tokens());
      CHECK(b->logits() == a->logits());
      // Continuing both (with the same two new tokens) gives the same tokens and the same final
      // logits; the state holds everything the continuation depends on.
      CHECK(Greedy(*b, 8) == Greedy(*a, 8));
      CHECK(b->logits() == a->logits());
      std::remove(path.c_str());
    }
  }
}

TEST_CASE("session state: bad files are refused and the session is unchanged",
          "[kv][state][bad-input]") {
  auto m = Load(test::DefaultTinyModel());
  auto a = NewSession(*m, 64);
  REQUIRE(a->Decode(RandomTokens(30, 5)).ok());
  const std::string path = test::TempPath("state.emberkv");
  REQUIRE(a->SaveState(path).ok());
  const std::string good = test::ReadFile(path);
  REQUIRE(good.size() > 64);

  auto b = NewSession(*m, 64);
  REQUIRE(b->Decode(RandomTokens(7, 6)).ok());
  const std::vector<int32_t> tokens = b->tokens();
  const std::vector<float> logits = b->logits();
  const std::string bad = test::TempPath("bad.emberkv");

  SECTION("missing file") {
    const Status st = b->LoadState(test::TempPath("does-not-exist.emberkv"));
    CHECK_FALSE(st.ok());
    CHECK_THAT(st.message(), Catch::Contains("does-not-exist"));
  }
  SECTION("not a state file") {
    WriteBytes(bad, "GGUF this is not a session state file at all......");
    const Status st = b->LoadState(bad);
    CHECK(st.code() == Code::kBadFormat);
    CHECK_THAT(st.message(), Catch::Contains("not a valid ember session state"));
  }
  SECTION("truncated anywhere") {
    for (size_t cut : {size_t{0}, size_t{4}, size_t{20}, good.size() / 2, good.size() - 1}) {
      INFO("cut at " << cut << " of " << good.size());
      WriteBytes(bad, good.substr(0, cut));
      const Status st = b->LoadState(bad);
      CHECK(st.code() == Code::kBadFormat);
      CheckUnchanged(*b, tokens, logits);
    }
  }
  SECTION("one corrupted byte in the data") {
    for (size_t at : {good.size() / 3, good.size() / 2, good.size() - 9}) {
      std::string c = good;
      c[at] = static_cast<char>(c[at] ^ 0x40);
      WriteBytes(bad, c);
      const Status st = b->LoadState(bad);
      INFO("byte " << at << ": " << st.message());
      CHECK(st.code() == Code::kBadFormat);
      CheckUnchanged(*b, tokens, logits);
    }
  }
  SECTION("another KV type") {
    auto q8 = NewSession(*m, 64, KvType::kQ8);
    const Status st = q8->LoadState(path);
    CHECK(st.code() == Code::kInvalidArgument);
    CHECK_THAT(st.message(), Catch::Contains("f16") && Catch::Contains("q8"));
    CHECK(q8->n_past() == 0);
    auto f32 = NewSession(*m, 64, KvType::kF32);
    const Status st32 = f32->LoadState(path);
    CHECK(st32.code() == Code::kInvalidArgument);
    CHECK_THAT(st32.message(), Catch::Contains("holds f16") && Catch::Contains("is f32"));
    CHECK(f32->n_past() == 0);
  }
  SECTION("a context too small for the saved tokens") {
    auto small = NewSession(*m, 16);
    REQUIRE(small->Decode(RandomTokens(3, 1)).ok());
    const std::vector<int32_t> t3 = small->tokens();
    const std::vector<float> l3 = small->logits();
    const Status st = small->LoadState(path);
    CHECK(st.code() == Code::kContextOverflow);
    CHECK_THAT(st.message(), Catch::Contains("30") && Catch::Contains("16"));
    CheckUnchanged(*small, t3, l3);
  }
  SECTION("another model's state") {
    test::TinyModelSpec spec;
    spec.seed = 2;  // same shapes and vocab, other weights
    const std::string other_path = test::TempPath("other-model.gguf");
    REQUIRE(test::BuildTinyModel(spec, other_path).ok());
    auto other = Load(other_path);
    auto c = NewSession(*other, 64);
    const Status st = c->LoadState(path);
    CHECK(st.code() == Code::kInvalidArgument);
    CHECK_THAT(st.message(), Catch::Contains("another model"));
    CHECK(c->n_past() == 0);
    std::remove(other_path.c_str());
  }
  std::remove(bad.c_str());
  std::remove(path.c_str());
}

TEST_CASE("session state: saving to an unwritable path fails cleanly", "[kv][state][bad-input]") {
  auto m = Load(test::DefaultTinyModel());
  auto a = NewSession(*m, 32);
  REQUIRE(a->Decode(RandomTokens(4, 2)).ok());
  const Status st = a->SaveState("/nonexistent-dir-ember/state.emberkv");
  CHECK_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains("/nonexistent-dir-ember"));
  CHECK(a->n_past() == 4);
}
