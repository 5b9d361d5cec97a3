// Golden test of --numerics ggml on Q4_0 weights, which llama.cpp repacks at
// load on x86 into its own interleaved layout (kernels that sum each block as
// one integer): a small synthetic llama model, built here by the tests' model
// builder (fixed seed, the llama-spm vocabulary of ../shared/vocab), must give
// llama.cpp's logits bit for bit and its greedy tokens.
//
// Reference: llama.cpp 0c1e57098 (scripts/build-peer.sh, GGML_NATIVE, AMD EPYC
// with AVX-512) on the file this test writes, through bench/peer/peer_tool:
//   peer_tool logits -m FILE -p PROMPT -o OUT -t 2    (FNV-1a 64 of OUT's bytes)
//   peer_tool greedy -m FILE -p PROMPT -n 24 -t 2     (-t 1 gives the same)
// (The file's bytes depend only on the spec and seed below: the builder draws
// from mt19937 in a fixed order.)
// The model: n_embd 256, 4 layers, 4 heads of 64, 2 KV heads, n_ff 768, every
// matrix Q4_0 (the separate output too), norms F32.
#include <catch2/catch.hpp>

#include <algorithm>

#include "platform/hash.h"
#include "runtime/model/model.h"
#include "runtime/session/session.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

using namespace ember;

namespace {

std::string BuildGoldenModel() {
  test::TinyModelSpec spec;
  spec.name = "ember golden q4_0";
  spec.vocab_file = "ggml-vocab-llama-spm.gguf";
  spec.n_embd = 256;
  spec.n_layer = 4;
  spec.n_head = 4;
  spec.n_head_kv = 2;
  spec.n_ff = 768;
  spec.n_ctx_train = 2048;
  spec.weight_type = GgmlType::kQ4_0;
  spec.tied_output = false;
  spec.seed = 7;
  const std::string path = test::TempPath("golden_q4_0.gguf");
  REQUIRE(test::BuildTinyModel(spec, path).ok());
  return path;
}

uint64_t Fnv(const std::vector<float>& v) {
  Fnv1a64 h;
  h.Update(v.data(), v.size() * sizeof(float));
  return h.digest();
}

}  // namespace

TEST_CASE(
    "golden ggml: Q4_0 weights (llama.cpp's repacked kernels) give llama.cpp's logits "
    "and greedy tokens",
    "[golden][ggml]") {
  if (!test::FileExists(test::SharedDir() + "/vocab/ggml-vocab-llama-spm.gguf")) {
    EMBER_SKIP("../shared/vocab/ggml-vocab-llama-spm.gguf is missing");
  }
  const std::string path = BuildGoldenModel();
  std::unique_ptr<Model> model;
  REQUIRE(Model::Load(path, nullptr, &model, false, Numerics::kGgml).ok());
  struct Case {
    std::string prompt;
    uint64_t logits_fnv;
    std::vector<int32_t> greedy;
  };
  const std::string license = test::ReadFile("/usr/share/common-licenses/GPL-3").substr(0, 1200);
  const std::vector<Case> cases = {
      {"Once upon a time, in a quiet village,",
       0xf909b7784fdcd448ull,
       {5843,  2850,  23313, 15284, 22398, 6953,  8608, 9403,  14680, 5260,  7957, 13161,
        17704, 12711, 9174,  11422, 3862,  18516, 7042, 17987, 6827,  30655, 6787, 5542}},
      // 293 tokens: the tiled attention, then decoding past 256 cells (split).
      {license, 0xe317b221d49eee9full, {6192,  18046, 10971, 18925, 31305, 25162, 3988,  29937,
                                        31164, 20427, 29740, 28254, 15854, 543,   5384,  29264,
                                        15137, 16711, 11348, 6218,  6315,  5643,  18939, 18773}},
  };
  for (const Case& c : cases) {
    const std::vector<int32_t> ids = model->tokenizer().Encode(c.prompt, true, true);
    INFO(ids.size() << " prompt tokens");
    SessionParams sp;
    sp.n_ctx = 2048;
    sp.n_threads = sp.n_threads_batch = 2;
    sp.n_batch = 512;
    std::unique_ptr<Session> session;
    REQUIRE(Session::Create(*model, sp, &session).ok());
    REQUIRE(session->Decode(ids).ok());
    CHECK(Fnv(session->logits()) == c.logits_fnv);
    std::vector<int32_t> gen;
    while (gen.size() < c.greedy.size()) {
      const std::vector<float>& l = session->logits();
      gen.push_back(static_cast<int32_t>(std::max_element(l.begin(), l.end()) - l.begin()));
      if (gen.size() < c.greedy.size()) REQUIRE(session->Decode({gen.back()}).ok());
    }
    CHECK(gen == c.greedy);
  }
}
