#include "support/model_builder.h"

#include <cmath>
#include <memory>
#include <random>

#include "quant/quantize.h"
#include "runtime/gguf.h"
#include "runtime/gguf_writer.h"
#include "support/test_paths.h"

namespace ember::test {
namespace {

class Builder {
 public:
  Builder(const TinyModelSpec& spec, GgufWriter& w) : spec_(spec), w_(w), rng_(spec.seed) {}

  // A tensor of GGUF dims {cols, rows} with N(0, scale) weights.
  Status Add(const std::string& name, std::vector<uint64_t> dims, GgmlType type, float scale,
             float mean = 0.0f) {
    if (auto it = spec_.dims_override.find(name); it != spec_.dims_override.end()) {
      dims = it->second;
    }
    uint64_t n = 1;
    for (uint64_t d : dims) n *= d;
    std::normal_distribution<float> dist(mean, scale);
    std::vector<float> x(n);
    for (float& v : x) v = dist(rng_);
    const size_t row_bytes = GgmlRowBytes(type, dims[0]);
    std::vector<uint8_t> bytes(row_bytes * (n / dims[0]));
    for (uint64_t r = 0; r < n / dims[0]; ++r) {
      QuantizeRow(type, &x[r * dims[0]], &bytes[r * row_bytes], static_cast<int64_t>(dims[0]));
    }
    if (auto it = spec_.type_override.find(name); it != spec_.type_override.end()) {
      // Keep the bytes, relabel the type: only for testing rejection paths.
      w_.AddRawTensor(name, it->second, dims, bytes);
      return Status::Ok();
    }
    return w_.AddTensor(name, type, dims, bytes.data(), bytes.size());
  }

 private:
  const TinyModelSpec& spec_;
  GgufWriter& w_;
  std::mt19937 rng_;
};

}  // namespace

Status BuildTinyModel(const TinyModelSpec& s, const std::string& path) {
  std::unique_ptr<GgufFile> vocab;
  EMBER_RETURN_IF_ERROR(GgufFile::Open(SharedDir() + "/vocab/" + s.vocab_file, &vocab));
  GgufWriter w;
  w.SetString("general.architecture", s.arch);
  w.SetString("general.name", "ember tiny test model");
  const std::string a = s.arch + ".";
  w.SetUint32(a + "context_length", static_cast<uint32_t>(s.n_ctx_train));
  w.SetUint32(a + "embedding_length", static_cast<uint32_t>(s.n_embd));
  w.SetUint32(a + "block_count", static_cast<uint32_t>(s.n_layer));
  w.SetUint32(a + "feed_forward_length", static_cast<uint32_t>(s.n_ff));
  w.SetUint32(a + "attention.head_count", static_cast<uint32_t>(s.n_head));
  w.SetUint32(a + "attention.head_count_kv", static_cast<uint32_t>(s.n_head_kv));
  w.SetFloat32(a + "rope.freq_base", 10000.0f);
  w.SetFloat32(a + "attention.layer_norm_rms_epsilon", 1e-5f);
  uint64_t n_vocab = 0;
  for (const GgufKv& kv : vocab->kvs()) {
    if (kv.key.rfind("tokenizer.", 0) == 0) w.CopyKv(kv);
    if (kv.key == "tokenizer.ggml.tokens") n_vocab = kv.value.items.size();
  }
  const uint64_t E = static_cast<uint64_t>(s.n_embd), F = static_cast<uint64_t>(s.n_ff);
  const uint64_t hd = E / static_cast<uint64_t>(s.n_head);
  const uint64_t KV = hd * static_cast<uint64_t>(s.n_head_kv);
  const GgmlType t = s.weight_type;
  const float ws = 1.0f / std::sqrt(static_cast<float>(E));
  Builder b(s, w);
  EMBER_RETURN_IF_ERROR(b.Add("token_embd.weight", {E, n_vocab}, t, 1.0f));
  EMBER_RETURN_IF_ERROR(b.Add("output_norm.weight", {E}, GgmlType::kF32, 0.1f, 1.0f));
  if (!s.tied_output) EMBER_RETURN_IF_ERROR(b.Add("output.weight", {E, n_vocab}, t, ws));
  for (int64_t l = 0; l < s.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    EMBER_RETURN_IF_ERROR(b.Add(p + "attn_norm.weight", {E}, GgmlType::kF32, 0.1f, 1.0f));
    EMBER_RETURN_IF_ERROR(b.Add(p + "attn_q.weight", {E, E}, t, ws));
    EMBER_RETURN_IF_ERROR(b.Add(p + "attn_k.weight", {E, KV}, t, ws));
    EMBER_RETURN_IF_ERROR(b.Add(p + "attn_v.weight", {E, KV}, t, ws));
    EMBER_RETURN_IF_ERROR(b.Add(p + "attn_output.weight", {E, E}, t, ws));
    EMBER_RETURN_IF_ERROR(b.Add(p + "ffn_norm.weight", {E}, GgmlType::kF32, 0.1f, 1.0f));
    EMBER_RETURN_IF_ERROR(b.Add(p + "ffn_gate.weight", {E, F}, t, ws));
    EMBER_RETURN_IF_ERROR(b.Add(p + "ffn_up.weight", {E, F}, t, ws));
    EMBER_RETURN_IF_ERROR(b.Add(p + "ffn_down.weight", {F, E}, t, 1.0f / std::sqrt(float(F))));
  }
  return w.WriteFile(path);
}

std::string DefaultTinyModel() {
  static const std::string path = [] {
    std::string p = TempPath("tiny_llama_q8_0.gguf");
    Status s = BuildTinyModel(TinyModelSpec(), p);
    if (!s.ok()) return std::string();
    return p;
  }();
  return path;
}

}  // namespace ember::test
