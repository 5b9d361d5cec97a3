#include "runtime/model/model.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>

#include "runtime/decoding/generate.h"
#include "runtime/gguf/gguf_writer.h"
#include "runtime/kv/kv_cache.h"
#include "runtime/model/decoder.h"
#include "runtime/session/session.h"
#include "support/loaders.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

using namespace ember;
using ember::test::BuildTinyModel;
using ember::test::TinyModelSpec;

namespace {

Status LoadSpec(const TinyModelSpec& spec, std::unique_ptr<Model>* out) {
  std::string path = test::TempPath("spec.gguf");
  Status s = BuildTinyModel(spec, path);
  REQUIRE(s.ok());
  return Model::Load(path, nullptr, out);
}

std::unique_ptr<Model> LoadTiny() { return test::LoadModelOrFail(); }

std::vector<float> Logits(const Model& m, const std::vector<int32_t>& ids, int threads,
                          bool one_by_one, int64_t n_ctx = 64) {
  SessionParams p;
  p.n_ctx = n_ctx;
  p.n_threads = threads;
  std::unique_ptr<Session> s;
  REQUIRE(Session::Create(m, p, &s).ok());
  if (one_by_one) {
    for (int32_t id : ids) REQUIRE(s->Decode({id}).ok());
  } else {
    REQUIRE(s->Decode(ids).ok());
  }
  return s->logits();
}

}  // namespace

TEST_CASE("model: loads a tiny llama with its hyper-parameters", "[model]") {
  auto m = LoadTiny();
  const ModelConfig& hp = m->config();
  CHECK(hp.arch == "llama");
  CHECK(hp.n_embd == 64);
  CHECK(hp.n_layer == 2);
  CHECK(hp.n_head == 4);
  CHECK(hp.n_head_kv == 2);
  CHECK(hp.head_dim == 16);
  CHECK(hp.n_vocab == 50257);
  CHECK(hp.tied_output);
}

TEST_CASE("model: logits are finite, deterministic and thread-count independent", "[model]") {
  auto m = LoadTiny();
  std::vector<int32_t> ids = {464, 2068, 7586, 21831, 18045, 625, 262, 16931, 3290, 13};
  auto a = Logits(*m, ids, 1, false);
  auto b = Logits(*m, ids, 2, false);
  auto c = Logits(*m, ids, 2, true);
  REQUIRE(a.size() == 50257);
  for (float x : a) REQUIRE(std::isfinite(x));
  // Fixed reduction order: bit-identical across thread counts and between a
  // batched prefill and token-by-token decoding.
  CHECK(std::memcmp(a.data(), b.data(), a.size() * 4) == 0);
  CHECK(std::memcmp(a.data(), c.data(), a.size() * 4) == 0);
  // Different context -> different logits (the model is not ignoring its input).
  auto d = Logits(*m, {464, 2068, 7586}, 1, false);
  CHECK(std::memcmp(a.data(), d.data(), a.size() * 4) != 0);
}

TEST_CASE("model: a chunk goes through the layers in sub-chunks with the same bits", "[model]") {
  // 150 tokens in one chunk of n_batch 256 take sub-chunks of 64, 64 and 22
  // tokens per layer (the tiny model's weights give the minimum, 64): the
  // logits must be those of token-by-token decoding, at 1 and 2 threads.
  auto m = LoadTiny();
  std::vector<int32_t> ids(150);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 7919 + 13) % 50000);
  auto whole = Logits(*m, ids, 1, false, 256);
  auto whole2 = Logits(*m, ids, 2, false, 256);
  auto steps = Logits(*m, ids, 1, true, 256);
  CHECK(std::memcmp(whole.data(), steps.data(), whole.size() * 4) == 0);
  CHECK(std::memcmp(whole2.data(), steps.data(), whole.size() * 4) == 0);
}

TEST_CASE("model: a batch whose tokens see later tokens' rows is not split", "[model]") {
  // 100 tokens that all see rows 0..99 (not causal: token 0 sees the keys
  // token 99 writes). Split into sub-chunks, early tokens would read rows not
  // yet written; whole (as a traced pass always goes) they read them all.
  auto m = LoadTiny();
  const ModelConfig& hp = m->config();
  const int64_t n = 100;
  std::vector<int32_t> ids(n);
  std::vector<TokenPlace> places(n);
  for (int64_t t = 0; t < n; ++t) {
    ids[t] = static_cast<int32_t>((t * 7919 + 13) % 50000);
    places[t] = TokenPlace{t, t, {{0, n}, {}, {}}, 1};
  }
  auto run = [&](bool traced) {
    KvCache kv(hp.n_layer, 128, hp.n_head_kv, hp.head_dim, KvType::kF16);
    DecoderScratch s;
    if (traced) s.trace = [](const char*, int64_t, const float*, int64_t, int64_t) {};
    std::vector<float> logits(static_cast<size_t>(n * hp.n_vocab));
    Forward(*m, kv, s, ids.data(), places.data(), n, 1, LogitsFor::kAll, logits.data());
    return logits;
  };
  const auto plain = run(false), whole = run(true);
  CHECK(std::memcmp(plain.data(), whole.data(), plain.size() * 4) == 0);
}

TEST_CASE("model: every supported weight type loads and runs", "[model]") {
  for (GgmlType t : {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ8_0,
                     GgmlType::kQ4_0, GgmlType::kQ4_1}) {
    TinyModelSpec spec;
    spec.weight_type = t;
    spec.tied_output = t == GgmlType::kQ4_1;  // separate output for the others
    std::unique_ptr<Model> m;
    Status s = LoadSpec(spec, &m);
    INFO(GgmlTypeName(t) << ": " << s.message());
    REQUIRE(s.ok());
    auto l = Logits(*m, {1, 2, 3}, 2, false);
    for (float x : l) REQUIRE(std::isfinite(x));
  }
}

namespace {

// Where the offset field of tensor `name`'s info lies in a GGUF file's bytes:
// after its name, n_dims (u32), the dims (u64 each) and the type (u32).
size_t OffsetFieldAt(const std::string& bytes, const std::string& name) {
  const size_t at = bytes.find(name);
  REQUIRE(at != std::string::npos);
  uint32_t n_dims = 0;
  std::memcpy(&n_dims, &bytes[at + name.size()], 4);
  return at + name.size() + 4 + 8 * n_dims + 4;
}

}  // namespace

TEST_CASE("model: bad models give clear errors", "[model][bad-input]") {
  std::unique_ptr<Model> m;
  SECTION("wrong tensor shape") {
    TinyModelSpec spec;
    spec.dims_override["blk.1.attn_k.weight"] = {64, 48};
    Status s = LoadSpec(spec, &m);
    CHECK(s.code() == Code::kBadFormat);
    CHECK_THAT(s.message(), Catch::Contains("tensor 'blk.1.attn_k.weight' has shape [64, 48], "
                                            "expected [64, 32]"));
  }
  SECTION("missing tensor") {
    TinyModelSpec spec;
    spec.n_layer = 1;
    std::string path = test::TempPath("missing.gguf");
    REQUIRE(BuildTinyModel(spec, path).ok());
    // Claim two layers in a file that has one: rebuild with a lying block count.
    std::unique_ptr<GgufFile> f;
    REQUIRE(GgufFile::Open(path, &f).ok());
    GgufWriter w;
    for (const GgufKv& kv : f->kvs()) {
      if (kv.key == "llama.block_count") {
        w.SetUint32("llama.block_count", 2);
      } else {
        w.CopyKv(kv);
      }
    }
    for (const GgufTensorInfo& t : f->tensors()) {
      std::vector<uint64_t> dims(t.ne, t.ne + t.n_dims);
      REQUIRE(w.AddTensor(t.name, t.type, dims, t.data, t.n_bytes).ok());
    }
    std::string path2 = test::TempPath("missing2.gguf");
    REQUIRE(w.WriteFile(path2).ok());
    Status s = Model::Load(path2, nullptr, &m);
    CHECK_THAT(s.message(), Catch::Contains("tensor 'blk.1.attn_norm.weight' is missing"));
  }
  SECTION("unknown tensor type") {
    TinyModelSpec spec;
    spec.type_override["blk.0.ffn_up.weight"] = 99;
    Status s = LoadSpec(spec, &m);
    CHECK(s.code() == Code::kUnsupported);
    CHECK_THAT(s.message(), Catch::Contains("unknown tensor type 99"));
  }
  SECTION("a type ember cannot multiply") {
    TinyModelSpec spec;
    spec.n_embd = 256;
    spec.n_head = 4;
    spec.type_override["blk.0.attn_q.weight"] = 16;  // IQ2_XXS
    Status s = LoadSpec(spec, &m);
    CHECK(s.code() == Code::kUnsupported);
    CHECK_THAT(s.message(), Catch::Contains("'blk.0.attn_q.weight' has type IQ2_XXS"));
  }
  SECTION("a retired native type says what to do") {
    // EMBER_Q6x16 (0x4505), Q6_K's native layout until Q6Kx16; the Q5 layouts
    // with the high bits of each vector in a row (0x4503, 0x4504, 0x4508).
    const struct {
      uint32_t id;
      const char* name;
    } retired[] = {{0x4505, "EMBER_Q6x16"},
                   {0x4503, "EMBER_Q5x16_RETIRED"},
                   {0x4504, "EMBER_Q5x16_MIN_RETIRED"},
                   {0x4508, "EMBER_Q5Kx16_RETIRED"}};
    for (const auto& r : retired) {
      INFO(r.name);
      TinyModelSpec spec;
      spec.n_embd = 256;
      spec.n_head = 4;
      spec.type_override["blk.0.attn_q.weight"] = r.id;
      Status s = LoadSpec(spec, &m);
      CHECK(s.code() == Code::kUnsupported);
      CHECK_THAT(s.message(),
                 Catch::Contains(std::string("'blk.0.attn_q.weight' has type ") + r.name + ","));
      CHECK_THAT(s.message(), Catch::Contains("ember quantize --type native"));
    }
  }
  SECTION("weights that are not finite name their tensor") {
    // Q8_0 bytes read as Q2_K: some fp16 scales are NaN.
    TinyModelSpec spec;
    spec.n_embd = 256;
    spec.n_head = 4;
    spec.type_override["blk.0.attn_q.weight"] = 10;  // Q2_K
    Status s = LoadSpec(spec, &m);
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK_THAT(s.message(), Catch::Contains("tensor 'blk.0.attn_q.weight': a weight is"));
  }
  SECTION("unsupported architecture") {
    TinyModelSpec spec;
    spec.arch = "gptneox";
    Status s = LoadSpec(spec, &m);
    CHECK(s.code() == Code::kUnsupported);
    CHECK_THAT(s.message(), Catch::Contains("unsupported architecture 'gptneox'"));
  }
  SECTION("two tensors at one address with different shapes") {
    // ffn_down's tensor info patched to ffn_gate's offset (the same bytes,
    // transposed shapes): the packed matrix of one must not serve the other.
    std::string bytes = test::ReadFile(test::DefaultTinyModel());
    const size_t gate = OffsetFieldAt(bytes, "blk.0.ffn_gate.weight"),
                 down = OffsetFieldAt(bytes, "blk.0.ffn_down.weight");
    bytes.replace(down, 8, bytes.substr(gate, 8));
    std::string path = test::TempPath("aliased.gguf");
    std::ofstream(path, std::ios::binary).write(bytes.data(), bytes.size());
    Status s = Model::Load(path, nullptr, &m);
    CHECK(s.code() == Code::kBadFormat);
    CHECK_THAT(s.message(), Catch::Contains("two tensors share the data of "
                                            "'blk.0.ffn_gate.weight' in the file with different "
                                            "types or shapes"));
  }
  SECTION("two tensors whose bytes overlap") {
    // ffn_down's offset patched to 32 bytes (the file's alignment) past
    // ffn_gate's: each would read part of the other's bytes.
    std::string bytes = test::ReadFile(test::DefaultTinyModel());
    const size_t gate = OffsetFieldAt(bytes, "blk.0.ffn_gate.weight"),
                 down = OffsetFieldAt(bytes, "blk.0.ffn_down.weight");
    uint64_t offset = 0;
    std::memcpy(&offset, &bytes[gate], 8);
    offset += 32;
    std::memcpy(&bytes[down], &offset, 8);
    std::string path = test::TempPath("overlapping.gguf");
    std::ofstream(path, std::ios::binary).write(bytes.data(), bytes.size());
    Status s = Model::Load(path, nullptr, &m);
    CHECK(s.code() == Code::kBadFormat);
    CHECK_THAT(s.message(), Catch::Contains("the data of tensors 'blk.0.ffn_gate.weight' and "
                                            "'blk.0.ffn_down.weight' overlap in the file"));
  }
  SECTION("truncated file") {
    std::string bytes = test::ReadFile(test::DefaultTinyModel());
    std::string path = test::TempPath("truncated.gguf");
    std::ofstream(path, std::ios::binary).write(bytes.data(), bytes.size() / 2);
    Status s = Model::Load(path, nullptr, &m);
    CHECK(s.code() == Code::kBadFormat);
    CHECK_THAT(s.message(), Catch::Contains("past the end of the file"));
  }
  CHECK(m == nullptr);
}

TEST_CASE("session: bad tokens and overflow leave the session unchanged", "[session][bad-input]") {
  auto m = LoadTiny();
  SessionParams p;
  p.n_ctx = 8;
  p.n_threads = 1;
  p.context_shift = false;  // a full context is an error (the shift has its own tests)
  std::unique_ptr<Session> s;
  REQUIRE(Session::Create(*m, p, &s).ok());
  REQUIRE(s->Decode({1, 2, 3}).ok());
  auto before = s->logits();

  Status bad = s->Decode({5, 50257});
  CHECK(bad.code() == Code::kInvalidArgument);
  CHECK_THAT(bad.message(), Catch::Contains("token id 50257 at index 1"));
  Status over = s->Decode({1, 2, 3, 4, 5, 6});
  CHECK(over.code() == Code::kContextOverflow);
  CHECK(s->n_past() == 3);
  CHECK(s->logits() == before);
  CHECK(s->Decode({4, 5, 6, 7, 8}).ok());
  CHECK(s->n_past() == 8);

  SessionParams bad_params;
  bad_params.n_ctx = -1;
  std::unique_ptr<Session> s2;
  CHECK(Session::Create(*m, bad_params, &s2).code() == Code::kInvalidArgument);
}

TEST_CASE("generate: greedy is deterministic, n_predict and cancellation hold", "[generate]") {
  auto m = LoadTiny();
  auto run = [&](const GenerateParams& gp, const PieceFn& fn) {
    SessionParams p;
    p.n_ctx = 64;
    p.n_threads = 2;
    std::unique_ptr<Session> s;
    REQUIRE(Session::Create(*m, p, &s).ok());
    GenerateResult r;
    REQUIRE(Generate(*s, {464, 2068}, gp, fn, nullptr, &r).ok());
    return r;
  };
  GenerateParams gp;
  gp.n_predict = 12;
  gp.ignore_eos = true;
  gp.sampling.temperature = 0.0f;
  GenerateResult a = run(gp, nullptr);
  GenerateResult b = run(gp, nullptr);
  CHECK(a.tokens.size() == 12);
  CHECK(a.tokens == b.tokens);
  CHECK(a.finish == FinishReason::kLength);

  gp.sampling.temperature = 1.0f;
  gp.sampling.seed = 42;
  GenerateResult c = run(gp, nullptr);
  GenerateResult d = run(gp, nullptr);
  CHECK(c.tokens == d.tokens);  // same seed, same draw

  int calls = 0;
  gp.sampling.temperature = 0.0f;
  GenerateResult e = run(gp, [&](std::string_view, int32_t) { return ++calls < 3; });
  CHECK(e.finish == FinishReason::kCancelled);
  CHECK(calls == 3);

  SessionParams p;
  p.n_ctx = 4;
  p.n_keep = 0;  // the default keeps 4, which a 4-token context cannot
  std::unique_ptr<Session> s;
  REQUIRE(Session::Create(*m, p, &s).ok());
  GenerateResult r;
  Status over = Generate(*s, {1, 2, 3, 4, 5}, gp, nullptr, nullptr, &r);
  CHECK(over.code() == Code::kContextOverflow);
  gp.n_predict = -1;
  CHECK(Generate(*s, {1}, gp, nullptr, nullptr, &r).code() == Code::kInvalidArgument);
}
