// Decode steps at a long context, where a step's few attention blocks are
// split over threads (rows of the scores, dims of the values:
// runtime/model/attention.cpp AttendSplit), give the bits of one thread and
// of the same tokens in one prefill.
#include <catch2/catch.hpp>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "runtime/model/model.h"
#include "runtime/session/session.h"
#include "support/loaders.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

using namespace ember;

namespace {

constexpr int64_t kPrompt = 290, kSteps = 10;  // rows >= 256: the steps split

std::unique_ptr<Model> Load(const test::TinyModelSpec& spec, const std::string& name) {
  const std::string path = test::TempPath(name);
  Status st = test::BuildTinyModel(spec, path);
  INFO(st.message());
  REQUIRE(st.ok());
  return test::LoadModelOrFail(path);
}

std::vector<int32_t> Ids() {
  std::vector<int32_t> ids(kPrompt + kSteps);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 7919 + 13) % 30000);
  return ids;
}

// The logits after each of the last kSteps tokens, decoded one by one after a
// prefill of the first kPrompt.
std::vector<std::vector<float>> Steps(const Model& m, int threads) {
  SessionParams p;
  p.n_ctx = 512;
  p.n_threads = threads;
  p.n_threads_batch = threads;
  auto s = test::CreateSessionOrFail(m, p);
  const std::vector<int32_t> ids = Ids();
  REQUIRE(s->Decode(std::vector<int32_t>(ids.begin(), ids.begin() + kPrompt)).ok());
  std::vector<std::vector<float>> out;
  for (int64_t t = kPrompt; t < kPrompt + kSteps; ++t) {
    REQUIRE(s->Decode({ids[t]}).ok());
    out.push_back(s->logits());
  }
  return out;
}

std::vector<float> Prefill(const Model& m) {
  SessionParams p;
  p.n_ctx = 512;
  p.n_threads = 1;
  p.n_threads_batch = 1;
  auto s = test::CreateSessionOrFail(m, p);
  REQUIRE(s->Decode(Ids()).ok());
  return s->logits();
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

void Check(const Model& m) {
  const auto one = Steps(m, 1);
  for (int threads : {2, 3, 4}) {
    const auto got = Steps(m, threads);
    for (int64_t i = 0; i < kSteps; ++i) {
      INFO("threads " << threads << " step " << i);
      REQUIRE(SameBits(got[i], one[i]));
    }
  }
  CHECK(SameBits(Prefill(m), one.back()));
  CHECK(!SameBits(one[0], one[1]));  // the steps see their tokens
}

}  // namespace

TEST_CASE("attention split: 3 KV heads decode with the bits of one thread", "[attention]") {
  test::TinyModelSpec s;  // SmolLM2's grouping: 3 KV heads of 3 query heads (split at 4 threads)
  s.n_embd = 192;
  s.n_head = 9;
  s.n_head_kv = 3;
  s.head_dim = 64;
  s.n_ctx_train = 1024;
  Check(*Load(s, "split_llama.gguf"));
}

TEST_CASE("attention split: one KV head with sliding windows decodes with the bits of one thread",
          "[attention]") {
  test::TinyModelSpec s;  // Gemma 3's: one KV head of 4, local layers whose ring wraps
  s.arch = "gemma3";
  s.vocab_file = "ggml-vocab-llama-spm.gguf";
  s.n_embd = 128;
  s.n_layer = 6;
  s.n_head = 4;
  s.n_head_kv = 1;
  s.head_dim = 128;  // the values split in two runs of 64 dims
  s.sliding_window = 270;
  s.n_ctx_train = 1024;
  Check(*Load(s, "split_gemma3.gguf"));
}
