// ember_generate_speculative: the tokens of ember_generate, with a draft model
// session or prompt lookup; the stats; bad parameters.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "ember.h"
#include "support/loaders.h"
#include "support/model_builder.h"

namespace {

ember::test::CSessionPtr NewSession(ember_model* m) {
  ember_session_params sp = ember_session_default_params();
  sp.n_ctx = 512;
  sp.n_threads = 1;
  sp.n_threads_batch = 1;
  ember_session* s = nullptr;
  REQUIRE(ember_session_create(m, &sp, &s) == EMBER_OK);
  return ember::test::CSessionPtr(s);
}

bool Collect(int32_t token, void* user_data) {
  static_cast<std::vector<int32_t>*>(user_data)->push_back(token);
  return true;
}

}  // namespace

TEST_CASE("c_api: speculative generation gives ember_generate's tokens", "[c_api][speculative]") {
  const std::string path = ember::test::BuildArchModel("qwen2");
  REQUIRE(!path.empty());
  auto model = ember::test::LoadCModelOrFail(path);
  // Text that the tiny model's greedy continuation comes back to (as the
  // runtime's speculative test uses), so lookup finds drafts.
  std::vector<int32_t> prompt(64);
  size_t n = 0;
  const std::string text =
      "def add(a, b):\n    return a + b\n\ndef add(a, b):\n    return a + b\n\ndef add(";
  REQUIRE(ember_tokenize(model.get(), text.data(), text.size(), true, false, prompt.data(),
                         prompt.size(), &n) == EMBER_OK);
  prompt.resize(n);
  ember_generate_params gp = ember_generate_default_params();
  gp.n_predict = 80;
  gp.temperature = 0;
  gp.ignore_eos = true;
  gp.on_token = Collect;
  std::vector<int32_t> plain, spec;
  auto s1 = NewSession(model.get());
  REQUIRE(ember_generate(s1.get(), prompt.data(), prompt.size(), &gp, nullptr, &plain, nullptr) ==
          EMBER_OK);
  auto s2 = NewSession(model.get());
  auto draft = NewSession(model.get());
  for (const bool use_draft : {false, true}) {
    spec.clear();
    ember_session_reset(s2.get());
    ember_speculative_params sp = ember_speculative_default_params();
    if (use_draft) {
      sp.draft = draft.get();
    } else {
      sp.lookup = 3;
    }
    ember_generate_stats stats{};
    ember_speculative_stats ss{};
    REQUIRE(ember_generate_speculative(s2.get(), prompt.data(), prompt.size(), &gp, &sp, nullptr,
                                       &spec, &stats, &ss) == EMBER_OK);
    CHECK(spec == plain);
    CHECK(stats.n_gen == 80);
    CHECK(ss.n_drafted > 0);
    CHECK(ss.n_steps < 80);
    CHECK(ss.tokens_per_step == Approx(80.0 / ss.n_steps));
    if (use_draft) CHECK(ss.acceptance == 1.0);  // its own draft
  }
  // Bad parameters.
  ember_speculative_params none = ember_speculative_default_params();
  CHECK(ember_generate_speculative(s2.get(), prompt.data(), prompt.size(), &gp, &none, nullptr,
                                   nullptr, nullptr, nullptr) == EMBER_ERR_INVALID_ARGUMENT);
  none.lookup = 9;
  CHECK(ember_generate_speculative(s2.get(), prompt.data(), prompt.size(), &gp, &none, nullptr,
                                   nullptr, nullptr, nullptr) == EMBER_ERR_INVALID_ARGUMENT);
  CHECK(ember_generate_speculative(s2.get(), prompt.data(), prompt.size(), &gp, nullptr, nullptr,
                                   nullptr, nullptr, nullptr) == EMBER_ERR_INVALID_ARGUMENT);
}
