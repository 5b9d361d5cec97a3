// Sliding-window layers (Gemma 3's local layers) in rings of the window's size
// (WindowRing) give the same bits as the same layers keeping the whole context
// (swa_full), through prefill chunks, single tokens, context shifts, state
// files and prefix reuse; beam search needs swa_full and says so.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/decoding/generate.h"
#include "runtime/session/session.h"
#include "support/loaders.h"
#include "support/model_builder.h"
#include "support/skip.h"
#include "support/test_paths.h"

using namespace ember;

namespace {

// A Gemma-3-shaped tiny model: 6 layers (5 local, window 8, 1 global).
const Model& Gemma() {
  static std::unique_ptr<Model> model = [] {
    test::TinyModelSpec s;
    s.arch = "gemma3";
    s.vocab_file = "ggml-vocab-llama-spm.gguf";
    s.n_layer = 6;
    s.head_dim = 32;
    s.n_head_kv = 1;
    s.sliding_window = 8;
    s.n_ctx_train = 4096;
    const std::string path = test::TempPath("swa_gemma3.gguf");
    Status st = test::BuildTinyModel(s, path);
    INFO(st.message());
    REQUIRE(st.ok());
    return test::LoadModelOrFail(path);
  }();
  return *model;
}

std::unique_ptr<Session> NewSession(int64_t n_ctx, bool swa_full, int64_t n_batch = 16,
                                    int64_t keep = 4) {
  SessionParams p;
  p.n_ctx = n_ctx;
  p.n_batch = n_batch;
  p.n_keep = keep;
  p.swa_full = swa_full;
  p.n_threads = 2;
  p.n_threads_batch = 2;
  return test::CreateSessionOrFail(Gemma(), p);
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Decodes ids in chunks of `chunk` and returns the last logits after each chunk.
std::vector<std::vector<float>> Run(Session& s, const std::vector<int32_t>& ids, size_t chunk) {
  std::vector<std::vector<float>> out;
  for (size_t i = 0; i < ids.size(); i += chunk) {
    const size_t end = std::min(ids.size(), i + chunk);
    Status st = s.Decode(std::vector<int32_t>(ids.begin() + i, ids.begin() + end));
    INFO(st.message());
    REQUIRE(st.ok());
    out.push_back(s.logits());
  }
  return out;
}

bool Skip() { return !test::FileExists(test::SharedDir() + "/vocab/ggml-vocab-llama-spm.gguf"); }

}  // namespace

TEST_CASE("sliding window: window rings give the bits of whole-context caches", "[swa]") {
  if (Skip()) EMBER_SKIP("no test vocabularies");
  auto ring = NewSession(256, false);
  auto full = NewSession(256, true);
  REQUIRE(ring->window_ring());
  REQUIRE_FALSE(full->window_ring());
  // 5 local layers of 4 + 8 + 16 rows instead of 256: much less memory.
  CHECK(ring->kv_bytes() * 3 < full->kv_bytes());
  const std::vector<int32_t> ids = test::RandomTokens(150, 11);
  for (size_t chunk : {size_t{1}, size_t{5}, size_t{16}, size_t{150}}) {
    INFO("chunk " << chunk);
    auto a = NewSession(256, false), b = NewSession(256, true);
    const auto ra = Run(*a, ids, chunk), rb = Run(*b, ids, chunk);
    REQUIRE(ra.size() == rb.size());
    for (size_t i = 0; i < ra.size(); ++i) CHECK(SameBits(ra[i], rb[i]));
    // The logits do not depend on the chunking either.
    CHECK(SameBits(ra.back(), Run(*ring, ids, 150).back()));
    ring->Reset();
  }
}

TEST_CASE("sliding window: context shifts re-rotate the window rings' keys", "[swa][shift]") {
  if (Skip()) EMBER_SKIP("no test vocabularies");
  // A 48-token context shifts several times over 150 tokens; the local
  // layers keep 4 + 8 + 16 rows in a ring, or all 48 with swa_full.
  auto a = NewSession(48, false), b = NewSession(48, true);
  REQUIRE(a->window_ring());
  const std::vector<int32_t> ids = test::RandomTokens(150, 12);
  const auto ra = Run(*a, ids, 7), rb = Run(*b, ids, 7);
  CHECK(a->n_shifts() > 2);
  CHECK(a->n_shifts() == b->n_shifts());
  for (size_t i = 0; i < ra.size(); ++i) {
    INFO("step " << i);
    CHECK(SameBits(ra[i], rb[i]));
  }
}

TEST_CASE("sliding window: state files and prefix reuse with window rings", "[swa][state]") {
  if (Skip()) EMBER_SKIP("no test vocabularies");
  const std::vector<int32_t> ids = test::RandomTokens(80, 13);
  const std::vector<int32_t> head(ids.begin(), ids.begin() + 60), tail(ids.begin() + 60, ids.end());
  auto a = NewSession(256, false);
  Run(*a, head, 16);
  const std::string path = test::TempPath("swa_state.bin");
  REQUIRE(a->SaveState(path).ok());
  auto b = NewSession(256, false);
  Status st = b->LoadState(path);
  INFO(st.message());
  REQUIRE(st.ok());
  CHECK(SameBits(a->logits(), b->logits()));
  CHECK(SameBits(Run(*a, tail, 20).back(), Run(*b, tail, 20).back()));
  // A session that keeps the whole context for those layers needs rows the
  // file does not have: a clear refusal, the session unchanged.
  auto c = NewSession(256, true);
  st = c->LoadState(path);
  CHECK(st.code() == Code::kInvalidArgument);
  CHECK(st.message().find("sliding-window") != std::string::npos);
  CHECK(c->n_past() == 0);
  std::remove(path.c_str());

  // Prefix reuse: a few tokens back, the ring still holds the window; far
  // back, the session starts again after the kept tokens. Either way the
  // logits are those of a fresh session.
  for (int64_t common : {int64_t{75}, int64_t{20}}) {
    INFO("common " << common);
    auto s = NewSession(256, false);
    Run(*s, ids, 16);
    std::vector<int32_t> prompt(ids.begin(), ids.begin() + common);
    const std::vector<int32_t> more = test::RandomTokens(6, 14);
    prompt.insert(prompt.end(), more.begin(), more.end());
    int64_t reused = -1;
    REQUIRE(s->DecodeReusing(prompt, &reused).ok());
    CHECK(reused == (common == 75 ? 75 : 4));
    auto fresh = NewSession(256, false);
    REQUIRE(fresh->Decode(prompt).ok());
    CHECK(SameBits(s->logits(), fresh->logits()));
  }
}

TEST_CASE("sliding window: beam search needs whole-context caches", "[swa][beams]") {
  if (Skip()) EMBER_SKIP("no test vocabularies");
  const std::vector<int32_t> prompt = test::RandomTokens(20, 15);
  GenerateParams gp;
  gp.n_predict = 6;
  gp.beams = 2;
  GenerateResult r;
  auto ring = NewSession(256, false);
  Status st = Generate(*ring, prompt, gp, nullptr, nullptr, &r);
  CHECK(st.code() == Code::kUnsupported);
  CHECK(st.message().find("swa_full") != std::string::npos);
  auto full = NewSession(256, true);
  st = Generate(*full, prompt, gp, nullptr, nullptr, &r);
  INFO(st.message());
  CHECK(st.ok());
  CHECK(r.tokens.size() == 6);
  // --beams 1 gives greedy's tokens.
  gp.beams = 1;
  GenerateResult beam1, greedy;
  auto s1 = NewSession(256, true), s2 = NewSession(256, true);
  REQUIRE(Generate(*s1, prompt, gp, nullptr, nullptr, &beam1).ok());
  gp.beams = 0;
  gp.sampling.temperature = 0;
  REQUIRE(Generate(*s2, prompt, gp, nullptr, nullptr, &greedy).ok());
  CHECK(beam1.tokens == greedy.tokens);
}
