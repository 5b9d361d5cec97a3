// What a decoder-only transformer is, as data (docs/DESIGN.md §10): global
// dimensions plus one LayerConfig per layer. Every difference between the
// architectures ember runs (llama, qwen2, qwen3, gemma3, ...) is a field here,
// filled from the GGUF keys by the architecture's file (runtime/arch/), and
// read by the one decoder loop (runtime/model/decoder.cpp) and by the
// plain-float reference forward of the tests (tests/support/reference_forward).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/rope.h"

namespace ember {

// The feed-forward block: down(act(gate(x)) * up(x)).
enum class FfnKind {
  kSwiGlu,  // act = SiLU (llama, Qwen)
  kGeGlu,   // act = GELU, tanh approximation (Gemma)
};

// One rotary embedding: layers with different bases (Gemma 3's local and
// global layers) point at different entries of ModelConfig::ropes.
struct RopeConfig {
  RopeMode mode = RopeMode::kNormal;
  int n_rot = 0;  // rotated dims per head (even, <= head_dim)
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;  // 1 / linear scaling factor
  // Divide each frequency by the model's rope_freqs tensor (Llama 3.x's
  // "llama3" scaling is shipped that way).
  bool freq_factors = false;

  bool operator==(const RopeConfig&) const = default;
};

struct LayerConfig {
  bool attn_bias = false;       // q, k and v projections add a bias (Qwen2)
  bool qk_norm = false;         // RMSNorm of every q and k head before RoPE (Qwen3, Gemma 3)
  bool post_attn_norm = false;  // RMSNorm of the attention output before the residual add (Gemma)
  bool post_ffn_norm = false;   // the same for the feed-forward output (Gemma)
  FfnKind ffn = FfnKind::kSwiGlu;
  int rope = 0;  // index into ModelConfig::ropes
  // Sliding-window attention: a token sees the last `window` positions (itself
  // included); 0 = every earlier position (a global layer).
  int64_t window = 0;
  float attn_scale = 0.0f;  // multiplies q·k before the softmax (1/sqrt(head_dim) mostly)
};

struct ModelConfig {
  std::string arch;  // general.architecture
  std::string name;  // general.name
  int64_t n_vocab = 0;
  int64_t n_embd = 0;  // model width
  int64_t n_layer = 0;
  int64_t n_head = 0;     // query heads
  int64_t n_head_kv = 0;  // key/value heads (GQA: n_head % n_head_kv == 0)
  int64_t head_dim = 0;   // n_embd / n_head unless the file says otherwise
  int64_t n_ff = 0;       // feed-forward width
  int64_t n_ctx_train = 0;
  float rms_eps = 1e-5f;
  float embd_scale = 1.0f;     // the embedding rows are multiplied by it (Gemma: sqrt(n_embd))
  float logit_softcap = 0.0f;  // > 0: logits = c * tanh(logits / c) (Gemma 2)
  bool tied_output = false;    // the LM head reuses token_embd
  // How an embedding pools a sequence's rows, if the file says (GGUF
  // `<arch>.pooling_type`, llama.cpp's numbers: 0 none, 1 mean, 2 first
  // ("cls"), 3 last, 4 rank); -1: it does not (a generative model).
  int64_t pooling_type = -1;
  std::vector<RopeConfig> ropes;    // at least one; ropes[0] is the global layers'
  std::vector<LayerConfig> layers;  // [n_layer]

  int64_t q_dim() const { return n_head * head_dim; }
  int64_t kv_dim() const { return n_head_kv * head_dim; }
  const LayerConfig& layer(int64_t l) const { return layers[static_cast<size_t>(l)]; }
  const RopeConfig& rope_of(int64_t l) const { return ropes[static_cast<size_t>(layer(l).rope)]; }
  // The largest sliding window of any layer (0: no windowed layer).
  int64_t max_window() const {
    int64_t w = 0;
    for (const LayerConfig& L : layers) w = L.window > w ? L.window : w;
    return w;
  }
};

}  // namespace ember
