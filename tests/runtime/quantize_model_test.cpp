#include "runtime/model/quantize_model.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "ops/fgemm.h"
#include "runtime/model/model.h"
#include "runtime/session/session.h"
#include "support/loaders.h"
#include "support/model_builder.h"
#include "support/test_paths.h"

using namespace ember;

namespace {

const std::vector<int32_t> kTokens = {464, 2068, 7586, 21831};

std::vector<float> LastLogits(const std::string& path) {
  return test::LastLogitsOrFail(path, kTokens);
}

}  // namespace

TEST_CASE("quantize: F32 model to each type loads and stays close", "[quantize]") {
  test::TinyModelSpec spec;
  spec.weight_type = GgmlType::kF32;
  spec.tied_output = false;
  const std::string f32 = test::TempPath("q_f32.gguf");
  REQUIRE(test::BuildTinyModel(spec, f32).ok());
  const std::vector<float> ref = LastLogits(f32);
  double ref_norm = 0;
  for (float x : ref) ref_norm = std::max(ref_norm, double(std::fabs(x)));

  // Bound on the max logit error relative to the largest logit, per type:
  // a coarser type may not be closer than a finer one. F32 and F16 matrices
  // are both requantized to int8 groups at load (docs/FORMATS.md), so F16's
  // rounding moves some int8 roundings: measured 0.014.
  for (auto [name, bound] : {std::pair<const char*, double>{"F16", 0.03},
                             {"Q8_0", 0.05},
                             {"Q4_1", 0.35},
                             {"Q4_0", 0.35}}) {
    QuantizeOptions o;
    REQUIRE(ParseQuantizeOptions(name, &o).ok());
    const GgmlType t = DefaultType(o.type);
    const std::string out = test::TempPath(std::string("q_") + name + ".gguf");
    QuantizeReport r;
    Status s = QuantizeModel(f32, out, o, nullptr, &r);
    INFO(name << ": " << s.message());
    REQUIRE(s.ok());
    CHECK(r.n_quantized == 1 + 1 + 2 * 7);  // embedding, output, 7 matrices per layer
    CHECK(r.n_copied == 1 + 2 * 2);         // output norm, 2 norms per layer
    std::unique_ptr<GgufFile> f;
    REQUIRE(GgufFile::Open(out, &f).ok());
    CHECK(f->FindTensor("blk.1.ffn_up.weight")->type == t);
    CHECK(f->FindTensor("blk.1.ffn_norm.weight")->type == GgmlType::kF32);
    const std::vector<float> got = LastLogits(out);
    double err = 0;
    for (size_t i = 0; i < ref.size(); ++i) err = std::max(err, double(std::fabs(got[i] - ref[i])));
    CHECK(err / ref_norm < bound);
  }
}

TEST_CASE("quantize: bad requests are errors and leave no file", "[quantize][bad-input]") {
  QuantizeOptions o;
  CHECK_FALSE(ParseQuantizeOptions("Q3_K", &o).ok());
  REQUIRE(ParseQuantizeOptions("Q8_0", &o).ok());
  QuantizeReport r;
  const std::string out = test::TempPath("never.gguf");
  Status s = QuantizeModel("/nonexistent.gguf", out, o, nullptr, &r);
  CHECK(s.code() == Code::kIoError);
  CHECK_FALSE(test::FileExists(out));
  const std::string tiny = test::DefaultTinyModel();
  REQUIRE(ParseQuantizeOptions("Q4_0", &o).ok());
  s = QuantizeModel(tiny, tiny, o, nullptr, &r);
  CHECK(s.code() == Code::kInvalidArgument);
  int calls = 0;
  s = QuantizeModel(
      tiny, out, o, [&](float, const std::string&) { return ++calls < 3; }, &r);
  CHECK(s.code() == Code::kCancelled);
  CHECK_FALSE(test::FileExists(out));
  CHECK_FALSE(test::FileExists(out + ".part"));
}

TEST_CASE("quantize: native layouts load by mapping and give the same logits", "[quantize]") {
  // Tied and separate outputs; Q4_0, Q4_1, Q8_0, K-quants, and a K-quant / F16 mix
  // (the stored layout is what the loader would have made; the F16
  // matrix stays F16, which the loader multiplies as stored). The GPT-2
  // vocabulary has 50257 rows, not whole tiles: the embedding and output keep
  // their type and are repacked at load, beside mapped layer matrices.
  struct Case {
    GgmlType type;
    bool tied;
    std::map<std::string, GgmlType> mix;
    GgmlType down_native;  // the type blk.0.ffn_down is stored as
  };
  const Case cases[] = {
      {GgmlType::kQ4_0, true, {}, GgmlType::kEmberQ4x16},
      {GgmlType::kQ4_1, false, {}, GgmlType::kEmberQ4x16Min},
      {GgmlType::kQ8_0, false, {}, GgmlType::kEmberQ8x16},
      {GgmlType::kQ4_0,
       true,
       {{"blk.0.ffn_down.weight", GgmlType::kQ6_K}, {"blk.1.attn_v.weight", GgmlType::kF16}},
       GgmlType::kEmberQ6Kx16},
      // The 5-bit layouts: Q5_0 (no mins), Q5_1 (mins), Q5_K (Q5Kx16).
      {GgmlType::kQ5_0,
       false,
       {{"blk.0.ffn_down.weight", GgmlType::kQ5_1}, {"blk.1.attn_v.weight", GgmlType::kQ5_K}},
       GgmlType::kEmberQ5x16Min},
      // The K layouts: every layer matrix Q4_K (Q4Kx16), one Q5_K (Q5Kx16).
      {GgmlType::kQ4_K, true, {{"blk.1.attn_v.weight", GgmlType::kQ5_K}}, GgmlType::kEmberQ4Kx16},
      {GgmlType::kQ4_0,
       false,
       {{"blk.0.ffn_down.weight", GgmlType::kQ5_K}},
       GgmlType::kEmberQ5Kx16},
      // Q3_K and Q2_K (Q3Kx16, Q2Kx16), tied and not.
      {GgmlType::kQ3_K, true, {{"blk.1.attn_v.weight", GgmlType::kQ2_K}}, GgmlType::kEmberQ3Kx16},
      {GgmlType::kQ2_K, false, {{"blk.1.ffn_up.weight", GgmlType::kQ3_K}}, GgmlType::kEmberQ2Kx16},
      // Every layer matrix Q6_K (Q6Kx16, exact), with a Q8_0 one beside them.
      {GgmlType::kQ6_K, false, {{"blk.1.attn_v.weight", GgmlType::kQ8_0}}, GgmlType::kEmberQ6Kx16},
      // IQ4x16: IQ4_NL (exact) and IQ4_XS (near-exact), tied.
      {GgmlType::kIQ4_NL,
       true,
       {{"blk.0.ffn_down.weight", GgmlType::kIQ4_XS}},
       GgmlType::kEmberIQ4x16},
  };
  int i = 0;
  for (const Case& c : cases) {
    INFO("case " << i);
    test::TinyModelSpec spec;
    spec.weight_type = c.type;
    spec.tied_output = c.tied;
    spec.tensor_types = c.mix;
    spec.n_embd = 256;  // Q6_K blocks are 256 columns
    spec.n_ff = 256;
    const std::string src = test::TempPath("native_src_" + std::to_string(i) + ".gguf");
    const std::string dst = test::TempPath("native_" + std::to_string(i) + ".gguf");
    ++i;
    REQUIRE(test::BuildTinyModel(spec, src).ok());
    QuantizeOptions o;
    REQUIRE(ParseQuantizeOptions("native", &o).ok());
    QuantizeReport r;
    Status s = QuantizeModel(src, dst, o, nullptr, &r);
    INFO(s.message());
    REQUIRE(s.ok());
    // The layer matrices but float ones; embedding and output are 50257 rows.
    int n_float = 0;
    for (const auto& [name, type] : c.mix) n_float += IsFloatWeight(type) ? 1 : 0;
    CHECK(r.n_quantized == 2 * 7 - n_float);

    std::unique_ptr<Model> a, b;
    REQUIRE(Model::Load(src, nullptr, &a).ok());
    REQUIRE(Model::Load(dst, nullptr, &b).ok());
    CHECK(a->loaded_weight_bytes() == b->loaded_weight_bytes());
    const LayerWeights& L = b->weights().layers[1];
    for (const WeightView* v : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down}) {
      if (IsFloatWeight(v->type)) {
        CHECK(v->packed == nullptr);
        continue;
      }
      REQUIRE(v->packed != nullptr);
      // Mapped, not copied: the kernels read the file's pages.
      const uint8_t* p = v->packed->data.get();
      CHECK(p >= b->gguf().file_data());
      CHECK(p + v->packed->bytes() <= b->gguf().file_data() + b->gguf().file_size());
    }
    CHECK(IsNativeType(b->gguf().FindTensor("blk.0.ffn_down.weight")->type));
    CHECK(b->gguf().FindTensor("blk.0.ffn_down.weight")->type == c.down_native);
    CHECK_FALSE(IsNativeType(b->gguf().FindTensor("token_embd.weight")->type));
    // Bit for bit, from the models loaded above.
    CHECK(test::LastLogitsOrFail(*a, kTokens) == test::LastLogitsOrFail(*b, kTokens));
  }
}
