// The inputs the fuzz targets (tests/fuzz, docs/RELIABILITY.md "Fuzzing")
// found, replayed through the code that failed on them: each file in
// tests/data/fuzz is the exact input, named after its target and finding.
// Under the sanitizer build (scripts/test.sh --full) these also check that
// the undefined behaviour is gone.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>

#include "runtime/model/model.h"
#include "runtime/session/session.h"
#include "support/test_paths.h"

using namespace ember;

namespace {

std::string FuzzInput(const std::string& name) {
  return std::string(EMBER_SOURCE_DIR) + "/tests/data/fuzz/" + name;
}

}  // namespace

TEST_CASE("fuzz inputs: a model whose activations become infinite decodes to NaN logits",
          "[fuzz][model]") {
  // gguf_fuzz: the int8 quantization of an infinite activation overflowed the
  // AVX2 group sum (signed overflow, UB); now such groups give NaN.
  std::unique_ptr<Model> m;
  const Status s = Model::Load(FuzzInput("gguf_fuzz-nonfinite-activations.gguf"), nullptr, &m);
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
