// The context shift (KV ring, DESIGN.md §6): a session that drops old tokens
// and re-rotates the surviving keys must hold what a fresh session computes
// from the surviving tokens at their new positions.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "ops/rope.h"
#include "runtime/decoding/generate.h"
#include "runtime/kv/kv_cache.h"
#include "runtime/session/session.h"
#include "support/loaders.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

using namespace ember;

namespace {

std::unique_ptr<Model> LoadTiny() { return test::LoadModelOrFail(); }

std::unique_ptr<Session> NewSession(const Model& m, int64_t n_ctx, int64_t keep,
                                    KvType type = KvType::kF16, int64_t n_batch = 512) {
  SessionParams p;
  p.n_ctx = n_ctx;
  p.n_keep = keep;
  p.n_threads = 1;
  p.kv_type = type;
  p.n_batch = n_batch;
  return test::CreateSessionOrFail(m, p);
}

using test::RandomTokens;

float MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  float m = 0.0f;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

float MaxAbs(const std::vector<float>& a) {
  float m = 0.0f;
  for (float x : a) m = std::max(m, std::fabs(x));
  return m;
}

}  // namespace

TEST_CASE(
    "context shift: many shifts keep the first tokens and the latest, at consecutive positions",
    "[kv][shift]") {
  // Layer 0's keys depend only on the token and its position, so after any
  // number of shifts and ring wraps they must equal a fresh session's keys
  // for the held tokens at positions 0..n_past-1: this checks the slot
  // bookkeeping and the accumulated rotations. (Deeper layers and logits
  // legitimately differ from a fresh decode: their rows were computed while
  // the dropped tokens were still visible.)
  auto m = LoadTiny();
  const int64_t kv_dim = m->config().kv_dim();
  for (int64_t keep : {0, 4}) {
    for (int64_t batch : {1, 512}) {  // token by token, and chunks that trigger shifts
      INFO("keep " << keep << " batch " << batch);
      auto ring = NewSession(*m, 32, keep, KvType::kF16, batch);
      const std::vector<int32_t> stream = RandomTokens(150, 7);
      // Feed 150 tokens through a 32-token context: several shifts, the ring wraps.
      for (size_t i = 0; i < stream.size(); i += 10) {
        const size_t end = std::min(stream.size(), i + 10);
        REQUIRE(ring->Decode(std::vector<int32_t>(stream.begin() + i, stream.begin() + end)).ok());
      }
      CHECK(ring->n_shifts() >= 4);
      CHECK(ring->n_past() <= 32);
      CHECK(ring->n_past() + ring->n_dropped() == 150);
      const auto& held = ring->tokens();
      REQUIRE(static_cast<int64_t>(held.size()) == ring->n_past());
      for (size_t i = 0; i < held.size(); ++i) {
        // The first `keep` are the stream's first; the rest its last ones.
        const size_t src =
            static_cast<int64_t>(i) < keep ? i : i + static_cast<size_t>(ring->n_dropped());
        CHECK(held[i] == stream[src]);
      }
      for (float x : ring->logits()) REQUIRE(std::isfinite(x));

      auto fresh = NewSession(*m, 64, 0);
      REQUIRE(fresh->Decode(held).ok());
      std::vector<float> a(kv_dim), b(kv_dim);
      float worst = 0.0f;
      for (int64_t i = 0; i < ring->n_past(); ++i) {
        ring->kv_cache().LoadK(0, ring->SlotOfToken(i), a.data());
        fresh->kv_cache().LoadK(0, fresh->SlotOfToken(i), b.data());
        for (int64_t d = 0; d < kv_dim; ++d) {
          worst = std::max(worst, std::fabs(a[d] - b[d]) / std::max(1.0f, std::fabs(b[d])));
        }
      }
      // Each shift rounds a key to f16 once more (~5e-4 relative each).
      INFO("worst relative key error " << worst << " after " << ring->n_shifts() << " shifts");
      CHECK(worst <= 1e-3f * static_cast<float>(ring->n_shifts() + 1));
    }
  }
}

TEST_CASE("context shift: values stay, kept keys stay, the other keys rotate back by the drop",
          "[kv][shift]") {
  // A 32-token ring and a 64-token session decode the same 32 tokens, so
  // their caches are equal. One more token makes the ring drop
  // (32 - keep) / 2 tokens. Then, in every layer: the value rows of the
  // survivors are bit-identical to before (no copy, no recompute), the first
  // `keep` keys are untouched, and every other surviving key is the old key
  // rotated by -n_dropped (up to one f16 rounding).
  auto m = LoadTiny();
  const ModelConfig& hp = m->config();
  const int64_t kv_dim = hp.kv_dim();
  for (int64_t keep : {0, 2, 5}) {
    INFO("keep " << keep);
    auto ring = NewSession(*m, 32, keep);
    auto wide = NewSession(*m, 64, 0);
    const std::vector<int32_t> t = RandomTokens(33, 3);
    const std::vector<int32_t> first(t.begin(), t.begin() + 32);
    REQUIRE(ring->Decode(first).ok());
    REQUIRE(wide->Decode(first).ok());
    REQUIRE(ring->Decode({t[32]}).ok());
    const int64_t dropped = (32 - keep) / 2;
    REQUIRE(ring->n_dropped() == dropped);
    REQUIRE(ring->n_past() == 33 - dropped);

    const RopeConfig& rc = hp.ropes[0];
    std::vector<float> rot(static_cast<size_t>(rc.n_rot));
    const float* ff = m->weights().rope_freqs.empty() ? nullptr : m->weights().rope_freqs.data();
    RopeCache(rot.data(), -dropped, rc.n_rot, rc.freq_base, rc.freq_scale, ff);
    const KvCache& rk = ring->kv_cache();
    const KvCache& wk = wide->kv_cache();
    std::vector<uint8_t> ra(rk.RowBytes()), wa(wk.RowBytes());
    std::vector<float> a(kv_dim), b(kv_dim);
    const size_t v_off = static_cast<size_t>(kv_dim) * sizeof(uint16_t);  // f16 rows: K then V
    for (int64_t l = 0; l < hp.n_layer; ++l) {
      for (int64_t i = 0; i < 32 - dropped; ++i) {  // the survivors, new index i
        const int64_t old = i < keep ? i : i + dropped;
        rk.ReadRow(l, ring->SlotOfToken(i), ra.data());
        wk.ReadRow(l, wide->SlotOfToken(old), wa.data());
        INFO("layer " << l << " token " << i << " (was " << old << ")");
        REQUIRE(std::memcmp(ra.data() + v_off, wa.data() + v_off, v_off) == 0);
        if (i < keep) {
          REQUIRE(std::memcmp(ra.data(), wa.data(), v_off) == 0);
          continue;
        }
        rk.LoadK(l, ring->SlotOfToken(i), a.data());
        wk.LoadK(l, wide->SlotOfToken(old), b.data());
        for (int64_t h = 0; h < hp.n_head_kv; ++h) {
          RopeApply_ref(&b[static_cast<size_t>(h * hp.head_dim)], rot.data(), rc.n_rot, rc.mode);
        }
        for (int64_t d = 0; d < kv_dim; ++d) {
          REQUIRE(std::fabs(a[d] - b[d]) <= 1e-3f * std::max(1.0f, std::fabs(b[d])));
        }
      }
    }
  }
}

TEST_CASE("context shift: off, a full context is an error and nothing changes", "[kv][shift]") {
  auto m = LoadTiny();
  SessionParams p;
  p.n_ctx = 16;
  p.n_threads = 1;
  p.context_shift = false;
  std::unique_ptr<Session> s;
  REQUIRE(Session::Create(*m, p, &s).ok());
  REQUIRE(s->Decode(RandomTokens(16, 1)).ok());
  const auto before = s->logits();
  CHECK(s->Decode({5}).code() == Code::kContextOverflow);
  CHECK(s->n_past() == 16);
  CHECK(s->logits() == before);
}

TEST_CASE("context shift: keep must leave room in the context", "[kv][shift][bad-input]") {
  auto m = LoadTiny();
  for (int64_t keep : {-1, 16, 17}) {
    SessionParams p;
    p.n_ctx = 16;
    p.n_keep = keep;
    std::unique_ptr<Session> s;
    const Status st = Session::Create(*m, p, &s);
    CHECK(st.code() == Code::kInvalidArgument);
    CHECK_THAT(st.message(), Catch::Contains("keep"));
  }
}

TEST_CASE("context shift: generation runs past the context with a flat cache", "[kv][shift]") {
  auto m = LoadTiny();
  auto s = NewSession(*m, 24, 2);
  const size_t bytes = s->kv_bytes();
  GenerateParams gp;
  gp.n_predict = 200;
  gp.ignore_eos = true;
  gp.sampling.temperature = 0.0f;
  GenerateResult r;
  REQUIRE(Generate(*s, RandomTokens(10, 4), gp, nullptr, nullptr, &r).ok());
  CHECK(r.tokens.size() == 200);
  CHECK(r.finish == FinishReason::kLength);
  CHECK(s->n_shifts() > 5);
  CHECK(s->kv_bytes() == bytes);
}

TEST_CASE("context shift: a prompt longer than the context is still an error", "[kv][shift]") {
  auto m = LoadTiny();
  auto s = NewSession(*m, 16, 0);
  GenerateParams gp;
  GenerateResult r;
  CHECK(Generate(*s, RandomTokens(17, 4), gp, nullptr, nullptr, &r).code() ==
        Code::kContextOverflow);
}

TEST_CASE("kv q8: logits stay close to the f16 cache, at about half the bytes", "[kv][q8]") {
  auto m = LoadTiny();
  auto f16 = NewSession(*m, 64, 0, KvType::kF16);
  auto q8 = NewSession(*m, 64, 0, KvType::kQ8);
  const std::vector<int32_t> t = RandomTokens(60, 9);
  REQUIRE(f16->Decode(t).ok());
  REQUIRE(q8->Decode(t).ok());
  const float diff = MaxAbsDiff(f16->logits(), q8->logits());
  INFO("max |logit diff| " << diff << " of range " << MaxAbs(f16->logits()));
  CHECK(diff > 0.0f);  // it is a different cache
  CHECK(diff < 0.05f * MaxAbs(f16->logits()));
  const int64_t hd = m->config().head_dim;
  const double want = (1.0 + 4.0 / static_cast<double>(hd)) / 2.0;
  CHECK(static_cast<double>(q8->kv_bytes()) / static_cast<double>(f16->kv_bytes()) ==
        Approx(want).epsilon(1e-9));
  // A shifted q8 cache works too.
  auto q8ring = NewSession(*m, 32, 2, KvType::kQ8);
  REQUIRE(q8ring->Decode(RandomTokens(100, 2)).ok());
  CHECK(q8ring->n_shifts() > 0);
}

TEST_CASE("kv f32: logits stay close to the f16 cache, at twice the bytes", "[kv][f32]") {
  auto m = LoadTiny();
  auto f16 = NewSession(*m, 64, 0, KvType::kF16);
  auto f32 = NewSession(*m, 64, 0, KvType::kF32);
  const std::vector<int32_t> t = RandomTokens(60, 9);
  REQUIRE(f16->Decode(t).ok());
  REQUIRE(f32->Decode(t).ok());
  const float diff = MaxAbsDiff(f16->logits(), f32->logits());
  INFO("max |logit diff| " << diff << " of range " << MaxAbs(f16->logits()));
  CHECK(diff > 0.0f);  // f16 rounds keys, values and the query
  CHECK(diff < 0.01f * MaxAbs(f16->logits()));
  CHECK(f32->kv_bytes() == 2 * f16->kv_bytes());
  // The prompt in chunks of 7 and token by token give the same bits as one
  // batch: every f32 query runs the same per-head kernel.
  auto chunked = NewSession(*m, 64, 0, KvType::kF32, 7);
  REQUIRE(chunked->Decode(t).ok());
  CHECK(chunked->logits() == f32->logits());
  // A shifted f32 cache works too.
  auto ring = NewSession(*m, 32, 2, KvType::kF32);
  REQUIRE(ring->Decode(RandomTokens(100, 2)).ok());
  CHECK(ring->n_shifts() > 0);
}

TEST_CASE("prefix reuse: only the new tokens are computed, with the same logits", "[kv][reuse]") {
  auto m = LoadTiny();
  const std::vector<int32_t> turn1 = RandomTokens(40, 11);
  std::vector<int32_t> turn2 = turn1;
  const std::vector<int32_t> more = RandomTokens(12, 12);
  turn2.insert(turn2.end(), more.begin(), more.end());

  auto s = NewSession(*m, 128, 0);
  int64_t reused = -1;
  REQUIRE(s->DecodeReusing(turn1, &reused).ok());
  CHECK(reused == 0);
  REQUIRE(s->DecodeReusing(turn2, &reused).ok());
  CHECK(reused == 40);
  auto fresh = NewSession(*m, 128, 0);
  REQUIRE(fresh->Decode(turn2).ok());
  CHECK(s->logits() == fresh->logits());  // chunking does not change results

  // A diverging history keeps only the common part.
  std::vector<int32_t> edited = turn1;
  edited[30] = 4242;
  REQUIRE(s->DecodeReusing(edited, &reused).ok());
  CHECK(reused == 30);
  CHECK(s->tokens() == edited);
  auto fresh2 = NewSession(*m, 128, 0);
  REQUIRE(fresh2->Decode(edited).ok());
  CHECK(s->logits() == fresh2->logits());
  // The same prompt again: nothing to compute.
  REQUIRE(s->DecodeReusing(edited, &reused).ok());
  CHECK(reused == 40);
  // A prefix of what is cached: its last token is decoded again for logits.
  REQUIRE(
      s->DecodeReusing(std::vector<int32_t>(edited.begin(), edited.begin() + 20), &reused).ok());
  CHECK(reused == 19);
  auto fresh3 = NewSession(*m, 128, 0);
  REQUIRE(fresh3->Decode(std::vector<int32_t>(edited.begin(), edited.begin() + 20)).ok());
  CHECK(s->logits() == fresh3->logits());
}

TEST_CASE("beam search after context shifts works on the linearized cache", "[kv][shift]") {
  auto m = LoadTiny();
  auto s = NewSession(*m, 64, 2);
  REQUIRE(s->Decode(RandomTokens(63, 5)).ok());
  REQUIRE(s->Decode(RandomTokens(4, 6)).ok());  // shifts
  REQUIRE(s->n_shifts() == 1);
  std::vector<int32_t> held = s->tokens();
  s->Truncate(s->n_past() - 4);  // the last 4 become the prompt again
  std::vector<int32_t> prompt(held.end() - 4, held.end());
  GenerateParams gp;
  gp.n_predict = 6;
  gp.beams = 1;
  gp.ignore_eos = true;
  GenerateResult beam;
  REQUIRE(Generate(*s, prompt, gp, nullptr, nullptr, &beam).ok());
  // Greedy from a session shifted the same way gives the same ids (one beam
  // is greedy); it is not linearized, so this also checks Linearize().
  auto twin = NewSession(*m, 64, 2);
  REQUIRE(twin->Decode(RandomTokens(63, 5)).ok());
  REQUIRE(twin->Decode(RandomTokens(4, 6)).ok());
  twin->Truncate(twin->n_past() - 4);
  GenerateParams gg;
  gg.n_predict = 6;
  gg.ignore_eos = true;
  gg.sampling.temperature = 0.0f;
  GenerateResult greedy;
  REQUIRE(Generate(*twin, prompt, gg, nullptr, nullptr, &greedy).ok());
  CHECK(beam.tokens == greedy.tokens);
}

TEST_CASE("cancel: a multi-chunk decode stops between chunks", "[kv][cancel]") {
  auto m = LoadTiny();
  auto s = NewSession(*m, 128, 0, KvType::kF16, 8);
  s->RequestCancel();
  const Status st = s->Decode(RandomTokens(40, 8));
  CHECK(st.code() == Code::kCancelled);
  CHECK(s->n_past() == 8);  // the first chunk ran; what ran stays consistent
  s->ClearCancel();
  REQUIRE(s->Decode(RandomTokens(4, 9)).ok());
  CHECK(s->n_past() == 12);
}
