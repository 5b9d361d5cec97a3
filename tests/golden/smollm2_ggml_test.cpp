// Golden test of --numerics ggml on the real SmolLM2-135M-Instruct Q4_1 file:
// ember must give llama.cpp's own results, bit for bit — the logits of a
// prompt's last position (compared by a hash of their bytes and the top value)
// and greedy continuations, token for token, with no tie allowance.
//
// The reference is llama.cpp 0c1e57098 (llama-cpp-python 0.3.36 sdist, built by
// scripts/build-peer.sh with GGML_NATIVE on an AMD EPYC with AVX-512), through
// bench/peer/peer_tool with its defaults (flash attention auto = on, f16 KV
// cache, the prompt in one micro-batch):
//   peer_tool logits -m MODEL -p PROMPT -o FILE      (FNV-1a 64 of FILE's bytes)
//   peer_tool greedy -m MODEL -p PROMPT -n 32 -t 2   (-t 1 gives the same)
// llama.cpp's results depend on the ISA it was built for (an AVX2-only build
// sums f16 dot products in 8 lanes and has another expf): these are the
// AVX-512 build's, which ember's emulation reproduces on any host.
// Skipped when the model is not in the cache.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>

#include "platform/hash.h"
#include "runtime/model/model.h"
#include "runtime/session/session.h"
#include "support/test_paths.h"

using namespace ember;

namespace {

struct Reference {
  const char* prompt;
  uint64_t logits_fnv;  // of the n_vocab f32 logits, little-endian bytes
  int32_t argmax;
  std::vector<int32_t> greedy;  // 32 tokens, or empty: logits only
};

const Reference kReference[] = {
    {"The capital of France is",
     0xe427776b7f8f71a5ull,
     7042,
     {7042, 30,  198, 198, 504, 1797, 1918, 553,  253, 2155, 282,  4723, 216,  35,  33, 33,
      2215, 701, 30,  198, 198, 504,  1797, 1918, 553, 253,  2155, 282,  4723, 216, 35, 33}},
    {"def fibonacci(n):", 0x311d7229d609842eull, 472, {472,   585,  304,   1758, 216,  32,   42,
                                                       448,   1003, 216,   33,   472,  1003, 304,
                                                       1672,  3987, 46477, 24,   94,   731,  216,
                                                       33,    25,   198,   198,  3272, 24,   38572,
                                                       46477, 24,   33,    32}},
    {"<|im_start|>user\nWhat is the boiling point of water?<|im_end|>\n<|im_start|>assistant\n",
     0x2a22564610c7ac98ull,
     504,
     {504, 16891, 1225, 282, 913, 314, 4723, 216,  33,   32,  32,  4742, 51, 365, 34,  33,
      34,  4742,  54,   595, 669, 314, 253,  4959, 3501, 282, 511, 2631, 28, 284, 357, 506}},
    {"Here is a list of five fruits that are high in vitamin C:\n1.",
     0x0031b5e17b558e99ull,
     12619,
     {}},
    {"<|im_start|>user\nName three planets of the solar system.<|im_end|>\n<|im_start|>assistant\n",
     0xdd99b669db459f12ull,
     33,
     {}},
    {"The quick brown fox jumps over the lazy dog. The quick brown fox",
     0x62b4e32952353319ull,
     314,
     {}},
};

uint64_t LogitsFnv(const std::vector<float>& logits) {
  Fnv1a64 h;
  h.Update(logits.data(), logits.size() * sizeof(float));
  return h.digest();
}

std::unique_ptr<Model> LoadGgml(const std::string& path) {
  std::unique_ptr<Model> model;
  Status s = Model::Load(path, nullptr, &model, false, Numerics::kGgml);
  INFO(s.message());
  REQUIRE(s.ok());
  return model;
}

std::unique_ptr<Session> NewSession(const Model& model, int threads) {
  SessionParams sp;
  sp.n_ctx = 2048;  // llama.cpp's, as peer_tool sets it
  sp.n_threads = sp.n_threads_batch = threads;
  sp.n_batch = 512;  // the prompt in one micro-batch, as peer_tool runs it
  std::unique_ptr<Session> session;
  REQUIRE(Session::Create(model, sp, &session).ok());
  return session;
}

std::vector<int32_t> Greedy(Session& session, size_t n) {
  std::vector<int32_t> out;
  while (out.size() < n) {
    const std::vector<float>& l = session.logits();
    const int32_t id = static_cast<int32_t>(std::max_element(l.begin(), l.end()) - l.begin());
    out.push_back(id);
    if (out.size() < n) REQUIRE(session.Decode({id}).ok());
  }
  return out;
}

}  // namespace

TEST_CASE("golden ggml: SmolLM2 logits and greedy tokens are llama.cpp's, bit for bit",
          "[golden][model]") {
  const std::string path = test::ModelPath("SmolLM2-135M-Instruct.Q4_1.gguf");
  if (path.empty()) EMBER_SKIP("SmolLM2-135M-Instruct.Q4_1.gguf not in the model cache");
  std::unique_ptr<Model> model = LoadGgml(path);
  for (const Reference& r : kReference) {
    INFO("prompt: " << r.prompt);
    const std::vector<int32_t> ids = model->tokenizer().Encode(r.prompt, true, true);
    std::unique_ptr<Session> session = NewSession(*model, 2);
    REQUIRE(session->Decode(ids).ok());
    const std::vector<float>& logits = session->logits();
    CHECK(std::max_element(logits.begin(), logits.end()) - logits.begin() == r.argmax);
    CHECK(LogitsFnv(logits) == r.logits_fnv);
    if (!r.greedy.empty()) CHECK(Greedy(*session, r.greedy.size()) == r.greedy);
  }
}

TEST_CASE(
    "golden ggml: a 313-token prompt (tiled attention) and decoding past 256 cells "
    "(split attention) are llama.cpp's",
    "[golden][model]") {
  const std::string path = test::ModelPath("SmolLM2-135M-Instruct.Q4_1.gguf");
  if (path.empty()) EMBER_SKIP("SmolLM2-135M-Instruct.Q4_1.gguf not in the model cache");
  const std::string license = "/usr/share/common-licenses/GPL-3";  // Debian's base-files
  if (!test::FileExists(license)) EMBER_SKIP(license + " is missing");
  std::unique_ptr<Model> model = LoadGgml(path);
  const std::string prompt = test::ReadFile(license).substr(0, 1400);
  const std::vector<int32_t> ids = model->tokenizer().Encode(prompt, true, true);
  REQUIRE(ids.size() == 313);
  // llama.cpp splits a single token's attention over its threads once the
  // KV view reaches 512 cells: its result depends on the thread count.
  for (int threads : {1, 2}) {
    INFO(threads << " threads");
    std::unique_ptr<Session> session = NewSession(*model, threads);
    REQUIRE(session->Decode(ids).ok());
    CHECK(LogitsFnv(session->logits()) == 0xcd8fb8b8259c81c9ull);
    CHECK(Greedy(*session, 12) ==
          std::vector<int32_t>{317, 3042, 429, 1015, 653, 198, 5725, 3197, 30, 216, 1046, 737});
  }
}
