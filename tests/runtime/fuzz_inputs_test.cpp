// The inputs the fuzz targets (tests/fuzz, docs/RELIABILITY.md "Fuzzing")
// found, replayed through the code that failed on them. Text inputs are kept
// as found in tests/data/fuzz (named after target and finding); a model that
// a finding needs is rebuilt here by the GGUF writer with the property the
// fuzzer gave it (no model files in the repository). Under the sanitizer
// build (scripts/test.sh --full) these also check that the undefined
// behaviour is gone.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>

#include "runtime/model/model.h"
#include "runtime/session/session.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

using namespace ember;

TEST_CASE("fuzz inputs: a model whose activations become infinite decodes to NaN logits",
          "[fuzz][model]") {
  // gguf_fuzz: the int8 quantization of an infinite activation overflowed the
  // AVX2 group sum (signed overflow, UB) and the dot products came out finite;
  // now such groups give NaN. The fuzzer's file was a mutated tiny qwen2 whose
  // first layer's activations overflowed; here the first attention norm's
  // weights are infinite, so the Q/K/V matmuls quantize infinite activations.
  test::TinyModelSpec spec = test::ArchSpec("qwen2");
  spec.value_scale["blk.0.attn_norm.weight"] = INFINITY;
  const std::string path = test::TempPath("fuzz-nonfinite-activations.gguf");
  REQUIRE(test::BuildTinyModel(spec, path).ok());
  std::unique_ptr<Model> m;
  const Status s = Model::Load(path, nullptr, &m);
  INFO(s.message());
  REQUIRE(s.ok());
  SessionParams p;
  p.n_ctx = 8;
  p.n_threads = 1;
  p.n_threads_batch = 1;
  p.n_batch = 8;
  p.n_keep = 1;
  std::unique_ptr<Session> session;
  REQUIRE(Session::Create(*m, p, &session).ok());
  const int32_t n_vocab = m->tokenizer().n_vocab();
  REQUIRE(session->Decode({0, n_vocab - 1}).ok());
  REQUIRE(session->logits().size() == static_cast<size_t>(n_vocab));
  for (const float x : session->logits()) CHECK(std::isnan(x));
}
