// Every architecture against the plain-float reference forward
// (tests/support/reference_forward.h): a tiny model of each, random weights
// and the real vocabulary of its family, built here; ember's logits at every
// position of a sequence longer than Gemma's test window must give the
// reference's next-token distributions. Plus what each config reads from its
// keys.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "runtime/model/model.h"
#include "runtime/session/session.h"
#include "support/loaders.h"
#include "support/model_builder.h"
#include "support/reference_forward.h"
#include "support/skip.h"
#include "support/test_paths.h"

using namespace ember;

namespace {

double Kl(const float* p_logits, const float* q_logits, int64_t n) {  // KL(p || q)
  double pm = -1e300, qm = -1e300;
  for (int64_t i = 0; i < n; ++i) {
    pm = std::max(pm, static_cast<double>(p_logits[i]));
    qm = std::max(qm, static_cast<double>(q_logits[i]));
  }
  double ps = 0, qs = 0;
  for (int64_t i = 0; i < n; ++i) {
    ps += std::exp(p_logits[i] - pm);
    qs += std::exp(q_logits[i] - qm);
  }
  double kl = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double lp = p_logits[i] - pm - std::log(ps), lq = q_logits[i] - qm - std::log(qs);
    kl += std::exp(lp) * (lp - lq);
  }
  return kl;
}

int64_t Argmax(const float* x, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i) best = x[i] > x[best] ? i : best;
  return best;
}

}  // namespace

TEST_CASE("architectures: each config reads its family's keys", "[arch]") {
  if (!test::FileExists(test::SharedDir() + "/vocab/ggml-vocab-qwen2.gguf")) {
    EMBER_SKIP("no test vocabularies");
  }
  {
    auto m = test::LoadModelOrFail(test::BuildArchModel("qwen2"));
    const ModelConfig& c = m->config();
    CHECK(c.arch == "qwen2");
    CHECK(c.ropes[0].mode == RopeMode::kNeox);
    CHECK(c.layer(0).attn_bias);
    CHECK_FALSE(c.layer(0).qk_norm);
    CHECK(m->weights().layers[1].bk.size() == static_cast<size_t>(c.kv_dim()));
  }
  {
    auto m = test::LoadModelOrFail(test::BuildArchModel("qwen3"));
    const ModelConfig& c = m->config();
    CHECK(c.head_dim == 32);
    CHECK(c.q_dim() == 128);
    CHECK(c.layer(1).qk_norm);
    CHECK_FALSE(c.layer(1).attn_bias);
  }
  {
    auto m = test::LoadModelOrFail(test::BuildArchModel("gemma3"));
    const ModelConfig& c = m->config();
    CHECK(c.embd_scale == std::sqrt(64.0f));
    REQUIRE(c.ropes.size() == 2);
    CHECK(c.ropes[0].freq_base == 1000000.0f);  // global layers
    CHECK(c.ropes[1].freq_base == 10000.0f);    // local layers: rope.freq_base_swa's default
    for (int64_t l = 0; l < 6; ++l) {
      INFO("layer " << l);
      CHECK(c.layer(l).window == (l == 5 ? 0 : 8));
      CHECK(c.layer(l).rope == (l == 5 ? 0 : 1));
      CHECK(c.layer(l).ffn == FfnKind::kGeGlu);
      CHECK(c.layer(l).post_attn_norm);
      CHECK(c.layer(l).post_ffn_norm);
      CHECK(c.layer(l).attn_scale == 1.0f / std::sqrt(32.0f));
    }
  }
  {
    auto m = test::LoadModelOrFail(test::BuildArchModel("llama3"));
    const ModelConfig& c = m->config();
    CHECK(c.ropes[0].mode == RopeMode::kNormal);
    CHECK(c.ropes[0].freq_factors);
    CHECK(m->weights().rope_freqs.size() == 8);
    CHECK(m->weights().rope_freqs.back() == 32.0f);  // the longest wavelength: `factor`
  }
}

TEST_CASE("architectures: logits at every position follow the reference forward", "[arch]") {
  if (!test::FileExists(test::SharedDir() + "/vocab/ggml-vocab-qwen2.gguf")) {
    EMBER_SKIP("no test vocabularies");
  }
  for (const char* which : {"llama", "llama3", "llama-factors", "qwen2", "qwen3", "gemma3"}) {
    INFO(which);
    auto m = test::LoadModelOrFail(test::BuildArchModel(which));
    const int64_t V = m->config().n_vocab;
    const std::vector<int32_t> ids = test::RandomTokens(40, 7);  // 5 x Gemma's test window
    std::vector<float> want;
    REQUIRE(test::ReferenceForward(*m, ids, &want).ok());
    // Prompt chunks and single tokens (prefill and decode paths), at 2 threads.
    SessionParams sp;
    sp.n_ctx = 128;
    sp.n_batch = 16;
    sp.n_threads = 2;
    sp.n_threads_batch = 2;
    auto s = test::CreateSessionOrFail(*m, sp);
    std::vector<float> got;
    REQUIRE(s->Decode(std::vector<int32_t>(ids.begin(), ids.begin() + 30), &got).ok());
    for (size_t t = 30; t < ids.size(); ++t) {
      REQUIRE(s->Decode({ids[t]}).ok());
      got.insert(got.end(), s->logits().begin(), s->logits().end());
    }
    double kl_sum = 0, kl_max = 0;
    int agree = 0;
    for (size_t t = 0; t < ids.size(); ++t) {
      const float* r = &want[t * V];
      const float* e = &got[t * V];
      const double kl = Kl(r, e, V);
      kl_sum += kl;
      kl_max = std::max(kl_max, kl);
      agree += Argmax(r, V) == Argmax(e, V);
    }
    const double kl_mean = kl_sum / static_cast<double>(ids.size());
    INFO("mean KL " << kl_mean << ", max KL " << kl_max << ", top-1 " << agree << "/"
                    << ids.size());
    // ember's arithmetic: int8 activations (0.4% of a group's max), f16 keys
    // and values; the reference's: doubles. A wrong mask, norm, bias, RoPE
    // base or scale moves these by orders of magnitude.
    CHECK(kl_mean < 2e-4);
    CHECK(kl_max < 5e-4);
    CHECK(agree >= static_cast<int>(ids.size()) - 4);  // near-ties of flat distributions
  }
}

TEST_CASE("architectures: bad metadata and missing tensors give clear errors", "[arch][bad]") {
  if (!test::FileExists(test::SharedDir() + "/vocab/ggml-vocab-qwen2.gguf")) {
    EMBER_SKIP("no test vocabularies");
  }
  struct Case {
    const char* what;
    const char* arch;
    std::function<void(test::TinyModelSpec&)> edit;
    Code code;
    const char* needle;
  };
  const std::vector<Case> cases = {
      {"a missing tensor of the architecture", "gemma3",
       [](test::TinyModelSpec& s) { s.omit.insert("blk.3.post_ffw_norm.weight"); },
       Code::kBadFormat, "tensor 'blk.3.post_ffw_norm.weight' is missing"},
      {"a missing bias", "qwen2",
       [](test::TinyModelSpec& s) { s.omit.insert("blk.1.attn_k.bias"); }, Code::kBadFormat,
       "tensor 'blk.1.attn_k.bias' is missing"},
      {"a missing q norm", "qwen3",
       [](test::TinyModelSpec& s) { s.omit.insert("blk.0.attn_q_norm.weight"); }, Code::kBadFormat,
       "tensor 'blk.0.attn_q_norm.weight' is missing"},
      {"a missing key", "qwen2", [](test::TinyModelSpec& s) { s.omit.insert("qwen2.block_count"); },
       Code::kBadFormat, "GGUF key 'qwen2.block_count' is missing"},
      {"heads that do not divide", "llama",
       [](test::TinyModelSpec& s) { s.uint_keys["llama.attention.head_count_kv"] = 3; },
       Code::kBadFormat, "is not a multiple of 'llama.attention.head_count_kv' = 3"},
      {"a sliding window larger than the context", "gemma3",
       [](test::TinyModelSpec& s) { s.uint_keys["gemma3.attention.sliding_window"] = 100000; },
       Code::kBadFormat, "'gemma3.attention.sliding_window' = 100000 is larger than the training"},
      {"an unknown RoPE scaling", "qwen2",
       [](test::TinyModelSpec& s) { s.string_keys["qwen2.rope.scaling.type"] = "yarn"; },
       Code::kUnsupported, "'qwen2.rope.scaling.type' = 'yarn'"},
      {"an unknown pre-tokenizer", "qwen2",
       [](test::TinyModelSpec& s) { s.string_keys["tokenizer.ggml.pre"] = "no-such-pre"; },
       Code::kUnsupported, "tokenizer.ggml.pre 'no-such-pre'"},
      {"a key of the wrong type", "gemma3",
       [](test::TinyModelSpec& s) { s.string_keys["gemma3.attention.sliding_window"] = "wide"; },
       Code::kBadFormat, "gemma3.attention.sliding_window"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    test::TinyModelSpec spec = test::ArchSpec(c.arch);
    c.edit(spec);
    const std::string path = test::TempPath(std::string("bad_") + c.arch + ".gguf");
    REQUIRE(test::BuildTinyModel(spec, path).ok());
    std::unique_ptr<Model> m;
    const Status s = Model::Load(path, nullptr, &m);
    INFO(s.message());
    CHECK(s.code() == c.code);
    CHECK(s.message().find(c.needle) != std::string::npos);
    CHECK(m == nullptr);
  }
}
