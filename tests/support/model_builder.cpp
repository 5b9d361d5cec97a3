#include "support/model_builder.h"

#include <cmath>
#include <memory>
#include <random>
#include <set>

#include "quant/quantize.h"
#include "runtime/gguf/gguf.h"
#include "runtime/gguf/gguf_writer.h"
#include "support/test_paths.h"

namespace ember::test {
namespace {

class Builder {
 public:
  Builder(const TinyModelSpec& spec, GgufWriter& w) : spec_(spec), w_(w), rng_(spec.seed) {}

  // A tensor of GGUF dims {cols, rows} with N(0, scale) weights.
  Status Add(const std::string& name, std::vector<uint64_t> dims, GgmlType type, float scale,
             float mean = 0.0f) {
    if (spec_.omit.count(name)) return Status::Ok();
    if (auto it = spec_.dims_override.find(name); it != spec_.dims_override.end()) {
      dims = it->second;
    }
    if (auto it = spec_.tensor_types.find(name); it != spec_.tensor_types.end()) {
      type = it->second;
    }
    uint64_t n = 1;
    for (uint64_t d : dims) n *= d;
    const size_t row_bytes = GgmlRowBytes(type, dims[0]);
    std::vector<uint8_t> bytes(row_bytes * (n / dims[0]));
    if (spec_.parallel_fill) {
      if (spec_.value_scale.count(name)) {
        return InvalidArgument("value_scale needs the default fill, not parallel_fill");
      }
      FillParallel(dims[0], n / dims[0], type, scale, mean, bytes.data(), row_bytes);
    } else {
      std::normal_distribution<float> dist(mean, scale);
      std::vector<float> x(n);
      for (float& v : x) v = dist(rng_);
      if (auto it = spec_.value_scale.find(name); it != spec_.value_scale.end()) {
        for (float& v : x) v *= it->second;
      }
      for (uint64_t r = 0; r < n / dims[0]; ++r) {
        QuantizeRow(type, &x[r * dims[0]], &bytes[r * row_bytes], static_cast<int64_t>(dims[0]));
      }
    }
    ++n_added_;
    if (auto it = spec_.type_override.find(name); it != spec_.type_override.end()) {
      // Keep the bytes, relabel the type: only for testing rejection paths.
      w_.AddRawTensor(name, it->second, dims, bytes);
      return Status::Ok();
    }
    return w_.AddTensor(name, type, dims, bytes.data(), bytes.size());
  }

 private:
  static uint64_t SplitMix64(uint64_t& state) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // Row r of tensor number n_added_ gets its own stream, so the result does
  // not depend on the thread count. Each value is a scaled sum of four 16-bit
  // uniforms (variance 1 before scaling): cheap and close enough to normal.
  void FillParallel(uint64_t cols, uint64_t rows, GgmlType type, float scale, float mean,
                    uint8_t* out, size_t row_bytes) const {
    const uint64_t base = spec_.seed * 0xD1B54A32D192ED03ull + n_added_ * 0x8CB92BA72F3D8DD7ull;
    const float k = std::sqrt(3.0f) / 65536.0f;
#pragma omp parallel
    {
      std::vector<float> x(cols);
#pragma omp for schedule(static)
      for (int64_t r = 0; r < static_cast<int64_t>(rows); ++r) {
        uint64_t state = base ^ (static_cast<uint64_t>(r) * 0x9E3779B97F4A7C15ull);
        SplitMix64(state);
        for (uint64_t c = 0; c < cols; ++c) {
          const uint64_t u = SplitMix64(state);
          const float s = static_cast<float>((u & 0xFFFF) + ((u >> 16) & 0xFFFF) +
                                             ((u >> 32) & 0xFFFF) + (u >> 48)) +
                          2.0f;  // four (k + 0.5) terms
          x[c] = mean + scale * (s * k - 2.0f * std::sqrt(3.0f));
        }
        QuantizeRow(type, x.data(), out + static_cast<size_t>(r) * row_bytes,
                    static_cast<int64_t>(cols));
      }
    }
  }

  const TinyModelSpec& spec_;
  GgufWriter& w_;
  std::mt19937 rng_;
  uint64_t n_added_ = 0;
};

}  // namespace

Status BuildTinyModel(const TinyModelSpec& s, const std::string& path) {
  std::unique_ptr<GgufFile> vocab;
  const std::string vocab_path =
      s.vocab_path.empty() ? SharedDir() + "/vocab/" + s.vocab_file : s.vocab_path;
  EMBER_RETURN_IF_ERROR(GgufFile::Open(vocab_path, &vocab));
  GgufWriter w;
  // Keys go through the spec's hooks: left out, or another value.
  std::set<std::string> written;
  auto set_uint = [&](const std::string& key, uint32_t v) {
    written.insert(key);
    if (s.omit.count(key)) return;
    if (const auto str = s.string_keys.find(key); str != s.string_keys.end()) {
      w.SetString(key, str->second);  // a key of the wrong type
      return;
    }
    const auto it = s.uint_keys.find(key);
    w.SetUint32(key, it == s.uint_keys.end() ? v : it->second);
  };
  auto set_string = [&](const std::string& key, const std::string& v) {
    written.insert(key);
    if (s.omit.count(key)) return;
    const auto it = s.string_keys.find(key);
    w.SetString(key, it == s.string_keys.end() ? v : it->second);
  };
  auto set_float = [&](const std::string& key, float v) {
    if (!s.omit.count(key)) w.SetFloat32(key, v);
  };
  set_string("general.architecture", s.arch);
  set_string("general.name", s.name);
  const std::string a = s.arch + ".";
  set_uint(a + "context_length", static_cast<uint32_t>(s.n_ctx_train));
  set_uint(a + "embedding_length", static_cast<uint32_t>(s.n_embd));
  set_uint(a + "block_count", static_cast<uint32_t>(s.n_layer));
  set_uint(a + "feed_forward_length", static_cast<uint32_t>(s.n_ff));
  set_uint(a + "attention.head_count", static_cast<uint32_t>(s.n_head));
  set_uint(a + "attention.head_count_kv", static_cast<uint32_t>(s.n_head_kv));
  set_float(a + "rope.freq_base", s.rope_freq_base);
  set_float(a + "attention.layer_norm_rms_epsilon", 1e-5f);
  if (s.head_dim > 0) {
    set_uint(a + "attention.key_length", static_cast<uint32_t>(s.head_dim));
    set_uint(a + "attention.value_length", static_cast<uint32_t>(s.head_dim));
  }
  if (s.sliding_window > 0) {
    set_uint(a + "attention.sliding_window", static_cast<uint32_t>(s.sliding_window));
  }
  uint64_t n_vocab = 0;
  for (const GgufKv& kv : vocab->kvs()) {
    if (kv.key == "tokenizer.ggml.tokens") n_vocab = kv.value.items.size();
    if (kv.key.rfind("tokenizer.", 0) != 0 || s.omit.count(kv.key)) continue;
    if (s.string_keys.count(kv.key)) {
      set_string(kv.key, "");
    } else {
      w.CopyKv(kv);
    }
  }
  for (const auto& [key, v] : s.uint_keys) {
    if (!written.count(key)) w.SetUint32(key, v);
  }
  for (const auto& [key, v] : s.string_keys) {
    if (!written.count(key)) w.SetString(key, v);
  }
  const uint64_t E = static_cast<uint64_t>(s.n_embd), F = static_cast<uint64_t>(s.n_ff);
  const uint64_t hd =
      s.head_dim > 0 ? static_cast<uint64_t>(s.head_dim) : E / static_cast<uint64_t>(s.n_head);
  const uint64_t Q = hd * static_cast<uint64_t>(s.n_head);
  const uint64_t KV = hd * static_cast<uint64_t>(s.n_head_kv);
  const bool biases = s.arch == "qwen2";
  const bool qk_norm = s.arch == "qwen3" || s.arch == "gemma3";
  const bool post_norms = s.arch == "gemma3";
  const GgmlType t = s.weight_type;
  const float ws = 1.0f / std::sqrt(static_cast<float>(E));
  Builder b(s, w);
  EMBER_RETURN_IF_ERROR(b.Add("token_embd.weight", {E, n_vocab}, t, s.embd_std));
  EMBER_RETURN_IF_ERROR(b.Add("output_norm.weight", {E}, GgmlType::kF32, 0.1f, 1.0f));
  if (!s.tied_output) EMBER_RETURN_IF_ERROR(b.Add("output.weight", {E, n_vocab}, t, ws));
  for (int64_t l = 0; l < s.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    EMBER_RETURN_IF_ERROR(b.Add(p + "attn_norm.weight", {E}, GgmlType::kF32, 0.1f, 1.0f));
    EMBER_RETURN_IF_ERROR(b.Add(p + "attn_q.weight", {E, Q}, t, ws));
    EMBER_RETURN_IF_ERROR(b.Add(p + "attn_k.weight", {E, KV}, t, ws));
    EMBER_RETURN_IF_ERROR(b.Add(p + "attn_v.weight", {E, KV}, t, ws));
    EMBER_RETURN_IF_ERROR(
        b.Add(p + "attn_output.weight", {Q, E}, t, 1.0f / std::sqrt(static_cast<float>(Q))));
    EMBER_RETURN_IF_ERROR(b.Add(p + "ffn_norm.weight", {E}, GgmlType::kF32, 0.1f, 1.0f));
    EMBER_RETURN_IF_ERROR(b.Add(p + "ffn_gate.weight", {E, F}, t, ws));
    EMBER_RETURN_IF_ERROR(b.Add(p + "ffn_up.weight", {E, F}, t, ws));
    EMBER_RETURN_IF_ERROR(b.Add(p + "ffn_down.weight", {F, E}, t, 1.0f / std::sqrt(float(F))));
    // The architectures' own tensors come after llama's, so that a llama
    // model's values do not depend on them.
    if (biases) {
      EMBER_RETURN_IF_ERROR(b.Add(p + "attn_q.bias", {Q}, GgmlType::kF32, 0.5f));
      EMBER_RETURN_IF_ERROR(b.Add(p + "attn_k.bias", {KV}, GgmlType::kF32, 0.5f));
      EMBER_RETURN_IF_ERROR(b.Add(p + "attn_v.bias", {KV}, GgmlType::kF32, 0.5f));
    }
    if (qk_norm) {
      EMBER_RETURN_IF_ERROR(b.Add(p + "attn_q_norm.weight", {hd}, GgmlType::kF32, 0.2f, 1.0f));
      EMBER_RETURN_IF_ERROR(b.Add(p + "attn_k_norm.weight", {hd}, GgmlType::kF32, 0.2f, 1.0f));
    }
    if (post_norms) {
      EMBER_RETURN_IF_ERROR(
          b.Add(p + "post_attention_norm.weight", {E}, GgmlType::kF32, 0.1f, 1.0f));
      EMBER_RETURN_IF_ERROR(b.Add(p + "post_ffw_norm.weight", {E}, GgmlType::kF32, 0.1f, 1.0f));
    }
  }
  if (!s.rope_freqs.empty()) {
    EMBER_RETURN_IF_ERROR(w.AddTensor("rope_freqs.weight", GgmlType::kF32, {s.rope_freqs.size()},
                                      reinterpret_cast<const uint8_t*>(s.rope_freqs.data()),
                                      s.rope_freqs.size() * sizeof(float)));
  } else if (s.llama3_rope) {
    // Llama 3's "llama3" RoPE scaling as the converter writes it: per frequency
    // pair i, the factor its wavelength gets (1 for short wavelengths, `factor`
    // for long ones, a smooth blend between).
    const double factor = 32, low = 1, high = 4, orig = 8192, pi = 3.14159265358979323846;
    const uint64_t n_rot = hd;
    std::vector<float> ff(n_rot / 2);
    for (uint64_t i = 0; i < n_rot / 2; ++i) {
      const double freq = 1.0 / std::pow(s.rope_freq_base, 2.0 * static_cast<double>(i) / n_rot);
      const double wavelen = 2 * pi / freq;
      if (wavelen < orig / high) {
        ff[i] = 1.0f;
      } else if (wavelen > orig / low) {
        ff[i] = static_cast<float>(factor);
      } else {
        const double smooth = (orig / wavelen - low) / (high - low);
        ff[i] = static_cast<float>(1.0 / ((1 - smooth) / factor + smooth));
      }
    }
    EMBER_RETURN_IF_ERROR(w.AddTensor("rope_freqs.weight", GgmlType::kF32, {n_rot / 2},
                                      reinterpret_cast<const uint8_t*>(ff.data()),
                                      ff.size() * sizeof(float)));
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

TinyModelSpec ArchSpec(const std::string& which) {
  TinyModelSpec s;
  s.name = "tiny " + which;
  s.n_ctx_train = 512;
  // An LM head of its own, 1/sqrt(n_embd) scaled: logits of about unit spread,
  // so that every position's distribution weighs in a KL, not just near-ties
  // (a tied head of N(0, 1) embeddings gives a spread of 8: mostly one-hot).
  s.tied_output = false;
  if (which == "llama3") {
    s.vocab_file = "ggml-vocab-llama-bpe.gguf";
    s.llama3_rope = true;
    s.rope_freq_base = 500000.0f;
  } else if (which == "llama-factors") {
    // Frequency factors below 1 speed the slow pairs up, so that 40 positions
    // show whether the decoder divides by them (Llama 3's only touch pairs
    // whose wavelength passes 2048 positions).
    s.rope_freqs = {1.0f, 0.5f, 0.1f, 0.05f, 0.02f, 0.01f, 0.005f, 0.002f};
  } else if (which == "qwen2") {
    s.arch = "qwen2";
    s.vocab_file = "ggml-vocab-qwen2.gguf";
    s.rope_freq_base = 1000000.0f;
  } else if (which == "qwen3") {
    s.arch = "qwen3";
    s.vocab_file = "ggml-vocab-qwen35.gguf";
    s.head_dim = 32;
    s.rope_freq_base = 1000000.0f;
  } else if (which == "gemma3") {
    s.arch = "gemma3";
    s.vocab_file = "ggml-vocab-llama-spm.gguf";  // a SentencePiece vocabulary, as Gemma's
    s.n_layer = 6;
    s.head_dim = 32;
    s.n_head_kv = 1;
    s.sliding_window = 8;
    s.rope_freq_base = 1000000.0f;
  }
  return s;
}

std::string BuildArchModel(const std::string& which) {
  static std::map<std::string, std::string> built;
  if (auto it = built.find(which); it != built.end()) return it->second;
  const std::string path = TempPath("arch_" + which + ".gguf");
  if (!BuildTinyModel(ArchSpec(which), path).ok()) return "";
  built[which] = path;
  return path;
}

}  // namespace ember::test
