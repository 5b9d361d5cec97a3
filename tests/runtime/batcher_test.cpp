// Continuous batching (runtime/session/batcher.h): sessions generating at
// the same time on their own threads share forward passes, and each one's
// output is token for token, logit for logit, what it gives alone — on every
// architecture, greedy and sampled, through prompt chunking, context shifts
// and sliding-window rings.
#include "runtime/session/batcher.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runtime/decoding/generate.h"
#include "runtime/session/session.h"
#include "support/loaders.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

using namespace ember;

namespace {

struct Run {
  std::vector<int32_t> tokens;
  std::vector<float> logits;  // the session's last logits
  FinishReason finish = FinishReason::kLength;
};

std::unique_ptr<Session> NewSession(const Model& m, int64_t n_ctx) {
  SessionParams p;
  p.n_ctx = n_ctx;
  p.n_threads = 1;
  p.n_threads_batch = 2;
  return test::CreateSessionOrFail(m, p);
}

GenerateParams Params(int64_t n, float temperature, uint64_t seed) {
  GenerateParams g;
  g.n_predict = n;
  g.ignore_eos = true;
  g.sampling.temperature = temperature;
  g.sampling.seed = seed;
  return g;
}

// Generates with each prompt's own params; with a batcher, every prompt on
// its own thread and session at the same time.
std::vector<Run> GenerateAll(const Model& m, const std::vector<std::vector<int32_t>>& prompts,
                             const std::vector<GenerateParams>& params, int64_t n_ctx,
                             std::shared_ptr<Batcher> batcher) {
  std::vector<Run> runs(prompts.size());
  std::vector<std::unique_ptr<Session>> sessions;
  for (size_t i = 0; i < prompts.size(); ++i) {
    sessions.push_back(NewSession(m, n_ctx));
    if (batcher) REQUIRE(sessions.back()->SetBatcher(batcher).ok());
  }
  std::vector<Status> status(prompts.size(), Status::Ok());
  auto one = [&](size_t i) {
    GenerateResult r;
    status[i] = Generate(*sessions[i], prompts[i], params[i], nullptr, nullptr, &r);
    runs[i].tokens = r.tokens;
    runs[i].finish = r.finish;
    runs[i].logits = sessions[i]->logits();
  };
  if (batcher) {
    std::vector<std::thread> threads;
    for (size_t i = 0; i < prompts.size(); ++i) threads.emplace_back(one, i);
    for (std::thread& t : threads) t.join();
  } else {
    for (size_t i = 0; i < prompts.size(); ++i) one(i);
  }
  for (const Status& s : status) {
    INFO(s.message());
    REQUIRE(s.ok());
  }
  return runs;
}

void RequireSame(const std::vector<Run>& alone, const std::vector<Run>& batched) {
  REQUIRE(alone.size() == batched.size());
  for (size_t i = 0; i < alone.size(); ++i) {
    INFO("sequence " << i);
    CHECK(alone[i].tokens == batched[i].tokens);
    REQUIRE(alone[i].logits.size() == batched[i].logits.size());
    // Bit for bit: a row's arithmetic does not depend on the others.
    CHECK(std::memcmp(alone[i].logits.data(), batched[i].logits.data(),
                      alone[i].logits.size() * sizeof(float)) == 0);
  }
}

std::shared_ptr<Batcher> NewBatcher(const Model& m) {
  BatcherParams bp;
  bp.prefill_chunk = 16;
  // Long enough that every generating session is back in time for the next
  // pass even on a loaded machine (the test checks that passes are shared).
  bp.min_wait = std::chrono::milliseconds(200);
  return std::make_shared<Batcher>(m, bp);
}

}  // namespace

TEST_CASE("batched sessions generate exactly what each generates alone, on every architecture",
          "[batcher]") {
  for (const char* arch : {"llama", "qwen2", "qwen3", "gemma3"}) {
    DYNAMIC_SECTION(arch) {
      const std::string path = test::BuildArchModel(arch);
      REQUIRE(!path.empty());
      auto model = test::LoadModelOrFail(path);
      // Prompts of different lengths: the long ones go in chunks of 16 while
      // the others decode, so passes mix prompt chunks and single tokens.
      const std::vector<std::vector<int32_t>> prompts = {
          test::RandomTokens(3, 1), test::RandomTokens(40, 2), test::RandomTokens(21, 3)};
      const std::vector<GenerateParams> params = {Params(20, 0.0f, 1), Params(24, 0.9f, 7),
                                                  Params(16, 0.7f, 3)};
      const std::vector<Run> alone = GenerateAll(*model, prompts, params, 256, nullptr);
      auto batcher = NewBatcher(*model);
      const std::vector<Run> batched = GenerateAll(*model, prompts, params, 256, batcher);
      RequireSame(alone, batched);
      const BatcherStats st = batcher->stats();
      INFO("passes " << st.passes << ", sequence steps " << st.sequences << ", rows " << st.rows);
      CHECK(st.max_sequences >= 2);        // passes were shared
      CHECK(st.passes < st.sequences);     // fewer passes than steps
      CHECK(st.rows >= 3 + 40 + 21 + 57);  // every prompt token and every step's token
    }
  }
}

TEST_CASE("batched sessions that shift their contexts (and Gemma's window rings) stay exact",
          "[batcher]") {
  for (const char* arch : {"llama", "gemma3"}) {
    DYNAMIC_SECTION(arch) {
      const std::string path = test::BuildArchModel(arch);
      REQUIRE(!path.empty());
      auto model = test::LoadModelOrFail(path);
      // A 48-token context: 30 prompt tokens + 40 generated shift twice or so.
      const std::vector<std::vector<int32_t>> prompts = {test::RandomTokens(30, 11),
                                                         test::RandomTokens(9, 12)};
      const std::vector<GenerateParams> params = {Params(40, 0.0f, 1), Params(45, 0.8f, 2)};
      const std::vector<Run> alone = GenerateAll(*model, prompts, params, 48, nullptr);
      const std::vector<Run> batched = GenerateAll(*model, prompts, params, 48, NewBatcher(*model));
      RequireSame(alone, batched);
    }
  }
}

TEST_CASE("a session cannot join another model's batcher, nor batch with ggml numerics",
          "[batcher]") {
  auto a = test::LoadModelOrFail(test::BuildArchModel("llama"));
  auto b = test::LoadModelOrFail(test::BuildArchModel("qwen2"));
  auto batcher = std::make_shared<Batcher>(*b, BatcherParams());
  auto s = NewSession(*a, 64);
  Status st = s->SetBatcher(batcher);
  CHECK(st.code() == Code::kInvalidArgument);
  CHECK(s->batcher() == nullptr);

  std::unique_ptr<Model> ggml;
  REQUIRE(Model::Load(test::BuildArchModel("llama"), nullptr, &ggml, false, Numerics::kGgml).ok());
  auto g = NewSession(*ggml, 64);
  st = g->SetBatcher(std::make_shared<Batcher>(*ggml, BatcherParams()));
  CHECK(st.code() == Code::kUnsupported);
  CHECK(st.message().find("ggml") != std::string::npos);
}

TEST_CASE("a batched session alone runs its passes without waiting for anyone", "[batcher]") {
  auto model = test::LoadModelOrFail(test::BuildArchModel("llama"));
  auto batcher = NewBatcher(*model);  // 200 ms waits, were anyone a regular
  auto s = NewSession(*model, 128);
  REQUIRE(s->SetBatcher(batcher).ok());
  GenerateResult r;
  REQUIRE(Generate(*s, test::RandomTokens(5, 4), Params(12, 0.0f, 1), nullptr, nullptr, &r).ok());
  CHECK(r.tokens.size() == 12);
  const BatcherStats st = batcher->stats();
  CHECK(st.passes >= 12);
  CHECK(st.max_sequences == 1);
  CHECK(st.late == 0);  // no pass waited out its time for a session that was already there
}

TEST_CASE("batched float weights: a sequence's output does not depend on what shares its passes",
          "[batcher]") {
  // F16 matrices: a float library (oneDNN, from 32 rows) would sum in its own
  // order, so batched passes keep to ember's own kernel. Each prompt alone in
  // a batcher and all of them in one give the same tokens and logits.
  test::TinyModelSpec spec = test::ArchSpec("qwen2");
  spec.weight_type = GgmlType::kF16;
  const std::string path = test::TempPath("batcher_f16.gguf");
  REQUIRE(test::BuildTinyModel(spec, path).ok());
  auto model = test::LoadModelOrFail(path);
  const std::vector<std::vector<int32_t>> prompts = {
      test::RandomTokens(70, 21), test::RandomTokens(3, 22), test::RandomTokens(40, 23)};
  const std::vector<GenerateParams> params = {Params(12, 0.0f, 1), Params(20, 0.0f, 1),
                                              Params(16, 0.9f, 5)};
  std::vector<Run> alone;
  for (size_t i = 0; i < prompts.size(); ++i) {
    alone.push_back(GenerateAll(*model, {prompts[i]}, {params[i]}, 256, NewBatcher(*model))[0]);
  }
  const std::vector<Run> together = GenerateAll(*model, prompts, params, 256, NewBatcher(*model));
  RequireSame(alone, together);
}
