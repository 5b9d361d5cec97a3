// Whole models whose matrices are Q5_0, Q5_1, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS,
// F16 or BF16 load (quantized ones repacked into the native layouts, float ones
// used as stored (copied out of the file), or requantized to int8 when asked) and give logits close
// to the same model's F32 weights (the builder draws the same values for every type), and embedding
// lookups stay exact.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "ops/fgemm.h"
#include "ops/fgemm_library.h"
#include "quant/packed.h"
#include "quant/quantize.h"
#include "runtime/model/model.h"
#include "runtime/session/session.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

using namespace ember;
using ember::test::TinyModelSpec;

namespace {

// n_embd and n_ff are multiples of 256, as K-quant rows must be.
TinyModelSpec KQuantSpec() {
  TinyModelSpec spec;
  spec.vocab_file = "ggml-vocab-llama-spm.gguf";  // 32000 tokens
  spec.n_embd = 256;
  spec.n_head = 4;
  spec.n_head_kv = 2;
  spec.n_ff = 512;
  spec.tied_output = false;
  spec.seed = 7;
  return spec;
}

std::unique_ptr<Model> Build(const TinyModelSpec& spec, const std::string& name,
                             FloatWeights float_weights = FloatWeights::kFloat) {
  const std::string path = test::TempPath(name);
  REQUIRE(test::BuildTinyModel(spec, path).ok());
  std::unique_ptr<Model> m;
  Status s = Model::Load(path, nullptr, &m, false, Numerics::kEmber, float_weights);
  INFO(name << ": " << s.message());
  REQUIRE(s.ok());
  return m;
}

std::vector<float> Logits(const Model& m, int threads) {
  SessionParams p;
  p.n_ctx = 16;
  p.n_threads = threads;
  std::unique_ptr<Session> s;
  REQUIRE(Session::Create(m, p, &s).ok());
  REQUIRE(s->Decode({1, 450, 4996, 17354, 1701}).ok());
  return s->logits();
}

// Max |a - b| relative to max |b|.
double RelErr(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double err = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    REQUIRE(std::isfinite(a[i]));
    err = std::max(err, double(std::fabs(a[i] - b[i])));
    norm = std::max(norm, double(std::fabs(b[i])));
  }
  return err / norm;
}

// True when p points into the model's file (mapped or read).
bool InFile(const Model& m, const void* p) {
  const uint8_t* b = m.gguf().file_data();
  const auto* q = static_cast<const uint8_t*>(p);
  return q >= b && q < b + m.gguf().file_size();
}

// Quantized matrices (and float ones loaded as int8) are repacked; float
// ones are otherwise used as stored, copied out of the file.
void CheckMatrices(const Model& m, FloatWeights float_weights = FloatWeights::kFloat) {
  auto check = [&](const WeightView* v) {
    INFO(GgmlTypeName(v->type));
    if (IsFloatWeight(v->type) && float_weights == FloatWeights::kFloat) {
      CHECK(v->packed == nullptr);
      CHECK(v->data != nullptr);
      CHECK_FALSE(InFile(m, v->data));
    } else {
      CHECK(v->packed != nullptr);
    }
  };
  check(&m.weights().output);
  for (const LayerWeights& L : m.weights().layers) {
    for (const WeightView* v : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down}) {
      check(v);
    }
  }
}

// Embedding rows as the model reads them equal the GGUF dequantized rows.
void CheckEmbeddingExact(const Model& m) {
  const WeightView& e = m.weights().token_embd;
  const GgufTensorInfo* t = m.gguf().FindTensor("token_embd.weight");
  REQUIRE(t != nullptr);
  std::vector<float> got(static_cast<size_t>(e.n_cols)), want(got.size());
  for (int64_t id : {0, 1, 4996, 31999}) {
    WeightRow(e, id, got.data());
    DequantizeRow(t->type, t->data + static_cast<size_t>(id) * e.row_bytes, want.data(), e.n_cols);
    INFO("token " << id);
    CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
  }
}

}  // namespace

TEST_CASE("model: Q5, K-quant and float matrices load and stay close to F32", "[model][quant]") {
  TinyModelSpec spec = KQuantSpec();
  spec.weight_type = GgmlType::kF32;
  const std::vector<float> ref = Logits(*Build(spec, "formats_f32.gguf"), 1);
  // Bound on the max logit error relative to the largest logit (of the F32
  // weights multiplied in float): measured F16 7.2e-4, BF16 4.0e-3 (0.016 and
  // 0.020 when they were requantized to int8), Q6_K 0.053, Q5_0 0.11, Q5_1
  // 0.092, Q5_K 0.090, Q4_K 0.23, IQ4_NL 0.22, IQ4_XS 0.21 (from the tests'
  // plain IQ4 quantizer; this random model amplifies weight noise). A wrong
  // layout gives errors near 1.
  for (auto [type, bound] : {std::pair{GgmlType::kF16, 0.003},
                             {GgmlType::kBF16, 0.015},
                             {GgmlType::kQ6_K, 0.1},
                             {GgmlType::kQ5_0, 0.2},
                             {GgmlType::kQ5_1, 0.2},
                             {GgmlType::kQ5_K, 0.2},
                             {GgmlType::kQ4_K, 0.4},
                             {GgmlType::kIQ4_NL, 0.4},
                             {GgmlType::kIQ4_XS, 0.4}}) {
    spec.weight_type = type;
    auto m = Build(spec, std::string("formats_") + GgmlTypeName(type) + ".gguf");
    INFO(GgmlTypeName(type));
    CheckMatrices(*m);
    // An untied embedding is never repacked: a row per token is read from the
    // GGUF rows where they are mapped.
    CHECK(m->weights().token_embd.packed == nullptr);
    CheckEmbeddingExact(*m);
    const std::vector<float> a = Logits(*m, 1);
    CHECK(RelErr(a, ref) < bound);
    const std::vector<float> b = Logits(*m, 2);
    CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("model: float matrices requantized to int8 when asked (--repack int8)",
          "[model][quant]") {
  TinyModelSpec spec = KQuantSpec();
  spec.weight_type = GgmlType::kF32;
  const std::vector<float> ref = Logits(*Build(spec, "int8_f32.gguf"), 1);
  // Measured (max logit error / largest logit): F32 0.0175, F16 0.0176, BF16
  // 0.0173: int8's rounding, 4 to 24 times F16's or BF16's own.
  for (auto [type, bound] :
       {std::pair{GgmlType::kF32, 0.03}, {GgmlType::kF16, 0.03}, {GgmlType::kBF16, 0.04}}) {
    spec.weight_type = type;
    auto m = Build(spec, std::string("int8_") + GgmlTypeName(type) + ".gguf", FloatWeights::kInt8);
    INFO(GgmlTypeName(type));
    CheckMatrices(*m, FloatWeights::kInt8);
    CHECK(m->weights().layers[0].wq.packed->layout == PackedLayout::kQ8x16);
    CheckEmbeddingExact(*m);
    const std::vector<float> a = Logits(*m, 1);
    CHECK(RelErr(a, ref) < bound);
    CHECK(RelErr(a, ref) > 0.0);  // requantized: not the float products
  }
}

TEST_CASE("model: mixed Q4_K / Q6_K / Q5_0 / F16 with a tied Q6_K embedding", "[model][quant]") {
  TinyModelSpec spec = KQuantSpec();
  spec.tied_output = true;
  spec.weight_type = GgmlType::kF32;
  const std::vector<float> ref = Logits(*Build(spec, "mixed_f32.gguf"), 1);

  spec.tensor_types["token_embd.weight"] = GgmlType::kQ6_K;
  for (int l = 0; l < spec.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    spec.tensor_types[p + "attn_q.weight"] = GgmlType::kQ4_K;
    spec.tensor_types[p + "attn_k.weight"] = GgmlType::kQ4_K;
    spec.tensor_types[p + "attn_v.weight"] = GgmlType::kF16;
    spec.tensor_types[p + "attn_output.weight"] = GgmlType::kQ5_0;
    spec.tensor_types[p + "ffn_gate.weight"] = GgmlType::kQ4_K;
    spec.tensor_types[p + "ffn_up.weight"] = GgmlType::kQ5_0;
    spec.tensor_types[p + "ffn_down.weight"] = GgmlType::kQ6_K;
  }
  auto m = Build(spec, "mixed.gguf");
  CHECK(m->config().tied_output);
  CHECK(m->weights().layers[0].wq.type == GgmlType::kQ4_K);
  CHECK(m->weights().layers[1].w_down.type == GgmlType::kQ6_K);
  CheckMatrices(*m);
  // Q6_K repacks exactly (Q6Kx16), so the tied embedding and output share one
  // packed copy, and lookups read their rows back from it, still exact.
  REQUIRE(m->weights().token_embd.packed != nullptr);
  CHECK(m->weights().token_embd.packed == m->weights().output.packed);
  CHECK(m->weights().token_embd.packed->layout == PackedLayout::kQ6Kx16);
  CheckEmbeddingExact(*m);
  const std::vector<float> a = Logits(*m, 2);
  CHECK(RelErr(a, ref) < 0.15);  // measured 0.037
  CHECK(RelErr(Logits(*m, 1), a) == 0.0);
}

TEST_CASE("model: float matrices copied out of the file and used in place give the same logits",
          "[model][quant]") {
  // A tied F16 embedding and output: one copy, which lookups read too. Where
  // the file and a copy would not both fit the address space (a 32-bit
  // process), the matrices are read where the file is mapped instead.
  TinyModelSpec spec = KQuantSpec();
  spec.tied_output = true;
  spec.weight_type = GgmlType::kF16;
  const std::string path = test::TempPath("f16_tied.gguf");
  REQUIRE(test::BuildTinyModel(spec, path).ok());
  std::unique_ptr<Model> copied, in_place;
  REQUIRE(Model::Load(path, nullptr, &copied).ok());
  CheckMatrices(*copied);
  const WeightView& e = copied->weights().token_embd;
  CHECK(e.data == copied->weights().output.data);
  CHECK_FALSE(InFile(*copied, e.data));
  CheckEmbeddingExact(*copied);
  LoadOptions o;
  o.address_limit = copied->gguf().file_size() + 4096;  // no room for a copy
  REQUIRE(Model::Load(path, o, nullptr, &in_place).ok());
  for (const WeightView* v : {&in_place->weights().token_embd, &in_place->weights().output,
                              &in_place->weights().layers[0].wq}) {
    CHECK(v->packed == nullptr);
    CHECK(InFile(*in_place, v->data));
  }
  CheckEmbeddingExact(*in_place);
  const std::vector<float> a = Logits(*copied, 2), b = Logits(*in_place, 2);
  CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

TEST_CASE("model: an F16 model's prompt in one batch and token by token", "[model][quant]") {
  // One batch of 40 tokens reaches a float library where the build has one
  // and the kernels leave F16 prefill to it (FloatLibraryFor); token by token
  // is ember's own kernel. They agree to f32 rounding; without a library bit
  // for bit.
  TinyModelSpec spec = KQuantSpec();
  spec.weight_type = GgmlType::kF16;
  auto m = Build(spec, "f16_batch.gguf");
  std::vector<int32_t> prompt;
  for (int i = 0; i < 40; ++i) prompt.push_back(100 + 37 * i);
  SessionParams p;
  p.n_ctx = 64;
  p.n_threads = 2;
  std::unique_ptr<Session> a, b;
  REQUIRE(Session::Create(*m, p, &a).ok());
  REQUIRE(Session::Create(*m, p, &b).ok());
  REQUIRE(a->Decode(prompt).ok());
  for (int32_t id : prompt) REQUIRE(b->Decode({id}).ok());
  const double err = RelErr(a->logits(), b->logits());
  CHECK(err < 1e-4);
  if (FloatLibraryFor(FloatWeight::kF16, 40, p.n_threads) == nullptr) CHECK(err == 0.0);
}

TEST_CASE("model: loading an F16 model reports the float copy's progress and can cancel it",
          "[model][quant]") {
  // Nothing is repacked in an F16 model: its loading is the copy of the
  // float matrices out of the file (CopyFloatWeights), one progress call
  // per matrix (2 layers x 7 and the output; the embedding of its own stays
  // mapped), rising, then Load's final 1.
  TinyModelSpec spec = KQuantSpec();
  spec.weight_type = GgmlType::kF16;
  const std::string path = test::TempPath("f16_progress.gguf");
  REQUIRE(test::BuildTinyModel(spec, path).ok());
  std::vector<float> seen;
  std::unique_ptr<Model> m;
  REQUIRE(Model::Load(
              path, [&](float f) { return seen.push_back(f), true; }, &m)
              .ok());
  const int64_t matrices = 7 * spec.n_layer + 1;
  REQUIRE(static_cast<int64_t>(seen.size()) == matrices);  // the last copy reaches 1: no call
  for (size_t i = 1; i < seen.size(); ++i) CHECK(seen[i] > seen[i - 1]);
  CHECK(seen.front() > 0.0f);
  CHECK(seen.back() == 1.0f);
  // Cancelled after the third matrix: no model, and the same error as a
  // cancelled repacking.
  int calls = 0;
  std::unique_ptr<Model> cancelled;
  const Status s = Model::Load(
      path, [&](float) { return ++calls < 3; }, &cancelled);
  CHECK(s.code() == Code::kCancelled);
  CHECK(s.message() == "model loading was cancelled");
  CHECK(calls == 3);
  CHECK(cancelled == nullptr);
}

TEST_CASE("model: IQ4_XS matrices with a tied IQ4_NL embedding", "[model][quant]") {
  // IQ4x16 keeps both at 4.5 bits per weight; IQ4_NL exactly, so the tied
  // embedding and output share one packed copy and lookups stay exact.
  TinyModelSpec spec = KQuantSpec();
  spec.tied_output = true;
  spec.weight_type = GgmlType::kF32;
  const std::vector<float> ref = Logits(*Build(spec, "iq4_f32.gguf"), 1);
  spec.weight_type = GgmlType::kIQ4_XS;
  spec.tensor_types["token_embd.weight"] = GgmlType::kIQ4_NL;
  auto m = Build(spec, "iq4_mixed.gguf");
  CheckMatrices(*m);
  CHECK(m->weights().layers[0].wq.type == GgmlType::kIQ4_XS);
  CHECK(m->weights().layers[0].wq.packed->layout == PackedLayout::kIQ4x16);
  REQUIRE(m->weights().token_embd.packed != nullptr);
  CHECK(m->weights().token_embd.packed == m->weights().output.packed);
  CHECK(m->weights().token_embd.packed->layout == PackedLayout::kIQ4x16);
  CheckEmbeddingExact(*m);
  const std::vector<float> a = Logits(*m, 2);
  CHECK(RelErr(a, ref) < 0.2);  // measured 0.085
  CHECK(RelErr(Logits(*m, 1), a) == 0.0);
}
