// Models loaded with ggml numerics (runtime/model/model.h, ops/ggml_numerics.h):
// what they refuse, and properties their sessions keep. That their results are
// llama.cpp's, bit for bit, is tests/golden/smollm2_ggml_test.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ember.h"
#include "runtime/model/model.h"
#include "runtime/session/session.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

using namespace ember;

namespace {

std::string TinyModel(GgmlType type, const std::string& name) {
  test::TinyModelSpec spec;
  spec.weight_type = type;
  const std::string path = test::TempPath(name);
  REQUIRE(test::BuildTinyModel(spec, path).ok());
  return path;
}

std::vector<float> Logits(const Model& model, const std::vector<int32_t>& ids, int threads) {
  SessionParams sp;
  sp.n_ctx = 128;
  sp.n_threads = sp.n_threads_batch = threads;
  sp.n_batch = 512;
  std::unique_ptr<Session> session;
  REQUIRE(Session::Create(model, sp, &session).ok());
  REQUIRE(session->Decode(ids).ok());
  std::vector<float> out = session->logits();
  // and one decoded token after the prompt
  REQUIRE(session->Decode({ids[0]}).ok());
  out.insert(out.end(), session->logits().begin(), session->logits().end());
  return out;
}

}  // namespace

TEST_CASE("numerics ggml: weight types whose llama.cpp path is not reproduced are refused at load",
          "[numerics][model]") {
  const std::string path = TinyModel(GgmlType::kF16, "ggml_f16.gguf");
  std::unique_ptr<Model> model;
  const Status s = Model::Load(path, nullptr, &model, false, Numerics::kGgml);
  CHECK(s.code() == Code::kUnsupported);
  CHECK(s.message().find("tensor 'token_embd.weight'") != std::string::npos);  // the first read
  CHECK(s.message().find("F16") != std::string::npos);
  CHECK(s.message().find("--numerics ggml") != std::string::npos);
  CHECK(model == nullptr);
  // The same file loads with ember's own kernels.
  CHECK(Model::Load(path, nullptr, &model).ok());
}

TEST_CASE("numerics ggml: q8 and f32 KV caches are refused at session creation",
          "[numerics][model]") {
  std::unique_ptr<Model> model;
  REQUIRE(Model::Load(TinyModel(GgmlType::kQ8_0, "ggml_q8_0.gguf"), nullptr, &model, false,
                      Numerics::kGgml)
              .ok());
  for (KvType type : {KvType::kQ8, KvType::kF32}) {
    SessionParams sp;
    sp.n_ctx = 64;
    sp.kv_type = type;
    std::unique_ptr<Session> session;
    const Status s = Session::Create(*model, sp, &session);
    INFO(s.message());
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(s.message().find(KvTypeName(type)) != std::string::npos);
  }
}

TEST_CASE(
    "numerics ggml: the logits compute the same model as ember's kernels, and do not "
    "depend on the thread count",
    "[numerics][model]") {
  for (GgmlType type : {GgmlType::kQ8_0, GgmlType::kQ4_1}) {
    const std::string path =
        TinyModel(type, std::string("ggml_") + GgmlTypeName(type) + "_logits.gguf");
    std::unique_ptr<Model> ggml, own;
    REQUIRE(Model::Load(path, nullptr, &ggml, false, Numerics::kGgml).ok());
    REQUIRE(Model::Load(path, nullptr, &own).ok());
    const std::vector<int32_t> ids =
        ggml->tokenizer().Encode("Hello there, how are you?", true, true);
    const std::vector<float> a = Logits(*ggml, ids, 1), b = Logits(*ggml, ids, 2);
    INFO(GgmlTypeName(type));
    CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
    const std::vector<float> c = Logits(*own, ids, 2);
    float max_diff = 0.0f, max_abs = 0.0f;
    for (size_t i = 0; i < a.size(); ++i) {
      max_diff = std::max(max_diff, std::fabs(a[i] - c[i]));
      max_abs = std::max(max_abs, std::fabs(c[i]));
    }
    // Int8 activations and f16 attention on both sides, summed in other orders.
    CHECK(max_diff <= 0.02f * max_abs + 1e-3f);
    CHECK(max_diff > 0.0f);  // and not the same code path
  }
}

TEST_CASE("numerics ggml: the C API defaults", "[numerics][c_api]") {
  const ember_model_params mp = ember_model_default_params();
  CHECK(mp.numerics == EMBER_NUMERICS_EMBER);
  // n_batch 0: the model's default (256, or llama.cpp's 512 in ggml mode).
  CHECK(ember_session_default_params().n_batch == 0);
}
