// Golden end-to-end test on the real SmolLM2-135M-Instruct Q4_1 file against
// what llama.cpp produced from the same file (bench/peer/peer_tool, llama.cpp
// 0c1e57098 from llama-cpp-python 0.3.36; docs/VALIDATION.md):
//  - the prompt tokens are identical;
//  - greedy tokens are identical wherever the choice is clear: at every step
//    where ember's top-2 logit margin is at least kTieMargin, ember's token
//    must be llama.cpp's. At the first near-tie the comparison stops: a 1e-6
//    change anywhere flips an int8 activation rounding and such ties go either
//    way — llama.cpp's own two attention configurations (default, and
//    --fa off --kv f32) part ways at them too (docs/VALIDATION.md);
//  - the top-10 logits of one prompt are within 1.0 of llama.cpp's, same argmax.
// Skipped when the model is not in the cache.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <cmath>

#include "runtime/generate.h"
#include "runtime/model.h"
#include "runtime/session.h"
#include "support/test_paths.h"

using namespace ember;

namespace {

struct Golden {
  const char* prompt;
  std::vector<int32_t> prompt_tokens;
  std::vector<int32_t> greedy;  // llama.cpp default, 32 tokens
  const char* text;
  size_t n_stable;  // tokens llama.cpp's default and precise configurations share
};

// A top-2 logit margin below this is a tie either engine may break. Measured:
// on these prompts every divergence from llama.cpp happened at a margin below
// 0.1, and ember agreed with llama.cpp at every step with a larger margin.
constexpr float kTieMargin = 0.1f;

const Golden kGolden[] = {
    {"The capital of France is",
     {504, 3575, 282, 4649, 314},
     {7042, 30, 198, 198, 504, 1797, 1918, 553, 253, 2155, 282, 4723, 216, 35, 34, 33,
      2215, 701, 30, 198, 198, 504, 1797, 1918, 553, 253, 2155, 282, 4723, 216, 35, 33},
     " Paris.\n\nThe United States has a population of approximately 321 million people.\n\nThe "
     "United States has a population of approximately 31",
     5},
    {"def fibonacci(n):",
     {1604, 3987, 46477, 24, 94, 727},
     {472, 585, 304, 1758, 216, 32, 42, 448, 1003, 216, 33, 472, 1003, 2822, 24, 38572,
      46477, 24, 94, 731, 216, 33, 25, 1232, 216, 33, 28, 304, 25, 198, 198, 19},
     "\n    if n == 0:\n        return 1\n    return max(fibonacci(n - 1) + 1, n)\n\n#",
     13},
    {"<|im_start|>user\nWhat is the boiling point of water?<|im_end|>\n<|im_start|>assistant\n",
     {1, 4093, 198, 1780, 314, 260, 16891, 1225, 282, 913, 47, 2, 198, 1, 520, 9531, 198},
     {504, 16891, 1225, 282, 913, 314, 4723, 216, 33, 32, 32, 4742, 51, 365, 34, 33,
      34, 4742, 54, 595, 669, 314, 253, 4959, 3501, 282, 511, 2631, 28, 284, 357, 506},
     "The boiling point of water is approximately 100°C (212°F). This is a fundamental property "
     "of all matter, and it's",
     32},
};

}  // namespace

TEST_CASE("golden: SmolLM2 greedy continuations equal llama.cpp's", "[golden][model]") {
  const std::string path = test::ModelPath("SmolLM2-135M-Instruct.Q4_1.gguf");
  if (path.empty()) EMBER_SKIP("SmolLM2-135M-Instruct.Q4_1.gguf not in the model cache");
  std::unique_ptr<Model> model;
  Status s = Model::Load(path, nullptr, &model);
  INFO(s.message());
  REQUIRE(s.ok());
  size_t total_compared = 0;
  for (const Golden& g : kGolden) {
    INFO("prompt: " << g.prompt);
    std::vector<int32_t> ids = model->tokenizer().Encode(g.prompt, true, true);
    CHECK(ids == g.prompt_tokens);
    SessionParams sp;
    sp.n_ctx = 256;
    std::unique_ptr<Session> session;
    REQUIRE(Session::Create(*model, sp, &session).ok());
    REQUIRE(session->Decode(g.prompt_tokens).ok());
    size_t compared = 0;
    for (size_t i = 0; i < g.greedy.size(); ++i) {
      const std::vector<float>& l = session->logits();
      std::vector<float> sorted(l);
      std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<float>());
      if (sorted[0] - sorted[1] < kTieMargin) break;  // a near-tie: either token is right
      const int32_t id = static_cast<int32_t>(std::max_element(l.begin(), l.end()) - l.begin());
      INFO("generated token " << i);
      REQUIRE(id == g.greedy[i]);
      ++compared;
      REQUIRE(session->Decode({id}).ok());
    }
    // Each prompt must get past its first few tokens, or the check means little.
    CHECK(compared >= 4);
    total_compared += compared;
  }
  CHECK(total_compared >= 30);

  // llama.cpp's top-10 last-position logits for "The capital of France is".
  const std::vector<int32_t> top_ids = {7042, 260, 4528, 1315, 2250, 5145, 216, 3692, 441, 253};
  const std::vector<float> top_logits = {17.739f, 15.233f, 13.703f, 13.404f, 13.364f,
                                         13.271f, 13.254f, 12.963f, 12.849f, 12.479f};
  SessionParams sp;
  sp.n_ctx = 64;
  std::unique_ptr<Session> session;
  REQUIRE(Session::Create(*model, sp, &session).ok());
  REQUIRE(session->Decode(kGolden[0].prompt_tokens).ok());
  const std::vector<float>& logits = session->logits();
  CHECK(std::max_element(logits.begin(), logits.end()) - logits.begin() == top_ids[0]);
  for (size_t i = 0; i < top_ids.size(); ++i) {
    INFO("token " << top_ids[i]);
    CHECK(std::fabs(logits[top_ids[i]] - top_logits[i]) < 1.0f);
  }
}
