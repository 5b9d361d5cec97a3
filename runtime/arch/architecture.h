// Architectures ember runs: each maps its GGUF keys to a ModelConfig
// (runtime/model/config.h) in one file of this folder, and is registered by
// one line in registry.cpp. The weights follow from the config
// (runtime/model/model.cpp loads the tensors each layer's config asks for,
// under GGUF's standard names), and the one decoder loop runs them all.
// docs/ARCHITECTURES.md says how to add one.
#pragma once

#include <string>
#include <string_view>

#include "platform/status.h"
#include "runtime/gguf/gguf.h"
#include "runtime/model/config.h"

namespace ember {

// Reads `<arch>.<key>` metadata with errors that name the key.
class ArchKeys {
 public:
  ArchKeys(const GgufFile& f, std::string arch) : f_(f), prefix_(std::move(arch) + ".") {}

  const GgufFile& file() const { return f_; }
  std::string Name(std::string_view key) const { return prefix_ + std::string(key); }
  bool Has(std::string_view key) const { return f_.Find(Name(key)) != nullptr; }
  // A non-negative integer that fits 31 bits; Int fails when the key is missing.
  Status Int(std::string_view key, int64_t* out) const;
  Status IntOr(std::string_view key, int64_t fallback, int64_t* out) const;
  Status FloatOr(std::string_view key, double fallback, float* out) const;
  Status StringOr(std::string_view key, std::string fallback, std::string* out) const;

 private:
  const GgufFile& f_;
  std::string prefix_;
};

// The keys every decoder-only architecture shares (llama.cpp's names):
// embedding_length, block_count, feed_forward_length, attention.head_count(_kv),
// attention.key_length, context_length, rope.dimension_count, rope.freq_base,
// rope.scaling.{type,factor}, attention.layer_norm_rms_epsilon. Fills the
// global fields, ropes[0] with `mode`, and n_layer default layers (SwiGLU, no
// biases or extra norms, global attention scaled by 1/sqrt(head_dim)).
Status ReadDecoderKeys(const ArchKeys& k, RopeMode mode, ModelConfig* c);

struct Architecture {
  const char* name;  // general.architecture
  // Fills a config from the file's keys (general.name and n_vocab are set by
  // the loader). Errors name the key.
  Status (*configure)(const ArchKeys& keys, ModelConfig* config);
};

// The registered architecture called `name`, or nullptr.
const Architecture* FindArchitecture(std::string_view name);
// "gemma3, llama, qwen2, qwen3": for error messages and `ember info`.
std::string SupportedArchitectures();

// The configure functions, one per file of runtime/arch/.
Status ConfigureLlama(const ArchKeys& keys, ModelConfig* config);
Status ConfigureQwen2(const ArchKeys& keys, ModelConfig* config);
Status ConfigureQwen3(const ArchKeys& keys, ModelConfig* config);
Status ConfigureGemma3(const ArchKeys& keys, ModelConfig* config);

}  // namespace ember
