// The features built for llama keep working on every architecture: sampled
// generation and stop strings, beam search, q8 and f32 KV caches, context
// shifts, state files, prefix reuse, automatic threads, native files
// (`ember quantize --type native`) and the C API, on each architecture's tiny
// model (tests/support/model_builder.h ArchSpec).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ember.h"
#include "runtime/decoding/generate.h"
#include "runtime/model/quantize_model.h"
#include "runtime/session/session.h"
#include "support/loaders.h"
#include "support/model_builder.h"
#include "support/skip.h"
#include "support/test_paths.h"

using namespace ember;

namespace {

const char* const kArchs[] = {"llama3", "qwen2", "qwen3", "gemma3"};

bool Skip() { return !test::FileExists(test::SharedDir() + "/vocab/ggml-vocab-qwen2.gguf"); }

SessionParams Params(int64_t n_ctx, KvType kv = KvType::kF16, bool swa_full = false) {
  SessionParams p;
  p.n_ctx = n_ctx;
  p.n_batch = 16;
  p.kv_type = kv;
  p.swa_full = swa_full;
  p.n_threads = 2;
  p.n_threads_batch = 2;
  return p;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

double Kl(const std::vector<float>& p, const std::vector<float>& q) {  // KL(p || q)
  const double pm = *std::max_element(p.begin(), p.end());
  const double qm = *std::max_element(q.begin(), q.end());
  double ps = 0, qs = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    ps += std::exp(p[i] - pm);
    qs += std::exp(q[i] - qm);
  }
  double kl = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double lp = p[i] - pm - std::log(ps), lq = q[i] - qm - std::log(qs);
    kl += std::exp(lp) * (lp - lq);
  }
  return kl;
}

GenerateResult Gen(const Model& m, const std::vector<int32_t>& prompt, GenerateParams gp,
                   const SessionParams& sp) {
  auto s = test::CreateSessionOrFail(m, sp);
  GenerateResult r;
  Status st = Generate(*s, prompt, gp, nullptr, nullptr, &r);
  INFO(st.message());
  REQUIRE(st.ok());
  return r;
}

}  // namespace

TEST_CASE("architecture features: sampling, stop strings and beams", "[arch][features]") {
  if (Skip()) EMBER_SKIP("no test vocabularies");
  for (const char* which : kArchs) {
    INFO(which);
    auto m = test::LoadModelOrFail(test::BuildArchModel(which));
    const std::vector<int32_t> prompt = test::RandomTokens(12, 21);
    GenerateParams gp;
    gp.n_predict = 24;
    gp.ignore_eos = true;
    gp.sampling.seed = 7;
    const GenerateResult a = Gen(*m, prompt, gp, Params(128));
    const GenerateResult b = Gen(*m, prompt, gp, Params(128));
    CHECK(a.tokens.size() == 24);
    CHECK(a.tokens == b.tokens);  // the same seed, the same tokens
    // A stop string taken from the middle of that text ends generation where
    // it begins, and is not part of the text.
    const std::string stop = a.text.substr(a.text.size() / 2, 3);
    if (stop.size() == 3 && stop.find('\0') == std::string::npos) {
      gp.stop = {stop};
      const GenerateResult c = Gen(*m, prompt, gp, Params(128));
      CHECK(c.finish == FinishReason::kStop);
      CHECK(c.text == a.text.substr(0, a.text.find(stop)));
      gp.stop.clear();
    }
    // Beam search (sliding-window layers keep the whole context for it); one
    // beam gives greedy's tokens.
    GenerateParams bp;
    bp.n_predict = 8;
    bp.ignore_eos = true;
    bp.beams = 1;
    const GenerateResult beam1 = Gen(*m, prompt, bp, Params(128, KvType::kF16, true));
    bp.beams = 0;
    bp.sampling.temperature = 0;
    const GenerateResult greedy = Gen(*m, prompt, bp, Params(128));
    CHECK(beam1.tokens == greedy.tokens);
    bp.beams = 3;
    CHECK(Gen(*m, prompt, bp, Params(128, KvType::kF16, true)).tokens.size() == 8);
  }
}

TEST_CASE("architecture features: KV types, shifts, states, prefix reuse", "[arch][features]") {
  if (Skip()) EMBER_SKIP("no test vocabularies");
  for (const char* which : kArchs) {
    INFO(which);
    auto m = test::LoadModelOrFail(test::BuildArchModel(which));
    const std::vector<int32_t> ids = test::RandomTokens(60, 22);
    // q8 and f32 caches: close to f16's (f32 rounds nothing, q8 to int8 per head).
    auto f16 = test::CreateSessionOrFail(*m, Params(128));
    REQUIRE(f16->Decode(ids).ok());
    for (KvType kv : {KvType::kQ8, KvType::kF32}) {
      INFO("kv " << KvTypeName(kv));
      auto s = test::CreateSessionOrFail(*m, Params(128, kv));
      REQUIRE(s->Decode(ids).ok());
      CHECK(Kl(f16->logits(), s->logits()) < 2e-3);
    }
    // Context shifts in a 32-token context: 60 tokens go through, one at a time
    // after the first chunk.
    auto shift = test::CreateSessionOrFail(*m, Params(32));
    REQUIRE(shift->Decode(std::vector<int32_t>(ids.begin(), ids.begin() + 20)).ok());
    for (size_t i = 20; i < ids.size(); ++i) REQUIRE(shift->Decode({ids[i]}).ok());
    CHECK(shift->n_shifts() > 0);
    for (float x : shift->logits()) REQUIRE(std::isfinite(x));
    // State file: saved after 40 tokens, loaded into a fresh session, the next
    // 20 give the bits of the session that went on.
    auto a = test::CreateSessionOrFail(*m, Params(128));
    REQUIRE(a->Decode(std::vector<int32_t>(ids.begin(), ids.begin() + 40)).ok());
    const std::string path = test::TempPath(std::string("features_") + which + ".state");
    REQUIRE(a->SaveState(path).ok());
    auto b = test::CreateSessionOrFail(*m, Params(128));
    REQUIRE(b->LoadState(path).ok());
    std::remove(path.c_str());
    const std::vector<int32_t> rest(ids.begin() + 40, ids.end());
    REQUIRE(a->Decode(rest).ok());
    REQUIRE(b->Decode(rest).ok());
    CHECK(SameBits(a->logits(), b->logits()));
    CHECK(SameBits(a->logits(), f16->logits()));
    // Prefix reuse: the first 50 tokens and 5 others; only those 5 are computed.
    std::vector<int32_t> prompt(ids.begin(), ids.begin() + 50);
    for (int32_t t : test::RandomTokens(5, 23)) prompt.push_back(t);
    int64_t reused = 0;
    REQUIRE(a->DecodeReusing(prompt, &reused).ok());
    CHECK(reused == 50);
    auto fresh = test::CreateSessionOrFail(*m, Params(128));
    REQUIRE(fresh->Decode(prompt).ok());
    CHECK(SameBits(a->logits(), fresh->logits()));
    // Threads chosen automatically (-t auto): the same bits.
    SessionParams autop = Params(128);
    autop.n_threads = autop.n_threads_batch = 0;
    auto at = test::CreateSessionOrFail(*m, autop);
    REQUIRE(at->Decode(prompt).ok());
    CHECK(SameBits(at->logits(), fresh->logits()));
  }
}

TEST_CASE("architecture features: native files and the C API", "[arch][features]") {
  if (Skip()) EMBER_SKIP("no test vocabularies");
  for (const char* which : kArchs) {
    INFO(which);
    const std::string src = test::BuildArchModel(which);
    auto m = test::LoadModelOrFail(src);
    const std::vector<int32_t> ids = test::RandomTokens(30, 24);
    auto s = test::CreateSessionOrFail(*m, Params(128));
    REQUIRE(s->Decode(ids).ok());
    // ember quantize --type native: the same layouts, mapped: the same bits.
    const std::string native = test::TempPath(std::string("native_") + which + ".gguf");
    QuantizeReport report;
    QuantizeOptions native_options;
    native_options.native = true;
    Status st = QuantizeModel(src, native, native_options, nullptr, &report);
    INFO(st.message());
    REQUIRE(st.ok());
    auto mn = test::LoadModelOrFail(native);
    auto sn = test::CreateSessionOrFail(*mn, Params(128));
    REQUIRE(sn->Decode(ids).ok());
    CHECK(SameBits(s->logits(), sn->logits()));
    std::remove(native.c_str());
    // Through the C API: greedy tokens equal the runtime's.
    test::CModelPtr cm = test::LoadCModelOrFail(src);
    ember_session_params sp = ember_session_default_params();
    sp.n_ctx = 128;
    ember_session* raw = nullptr;
    REQUIRE(ember_session_create(cm.get(), &sp, &raw) == EMBER_OK);
    test::CSessionPtr cs(raw);
    std::vector<int32_t> got;
    ember_generate_params gp = ember_generate_default_params();
    gp.n_predict = 8;
    gp.temperature = 0;
    gp.ignore_eos = true;
    gp.on_token = [](int32_t t, void* u) {
      static_cast<std::vector<int32_t>*>(u)->push_back(t);
      return true;
    };
    REQUIRE(ember_generate(cs.get(), ids.data(), ids.size(), &gp, nullptr, &got, nullptr) ==
            EMBER_OK);  // user_data reaches on_token
    GenerateParams rp;
    rp.n_predict = 8;
    rp.ignore_eos = true;
    rp.sampling.temperature = 0;
    CHECK(got == Gen(*m, ids, rp, Params(128)).tokens);
  }
}
