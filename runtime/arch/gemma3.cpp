// gemma3: Gemma 3 (text). Differences from llama:
//  - the embedding rows are scaled by sqrt(n_embd);
//  - "sandwich" norms: the attention and feed-forward outputs are normed
//    again before their residual adds (post_attention_norm, post_ffw_norm);
//  - q and k heads are RMS-normed before RoPE (NeoX order);
//  - GeGLU feed-forward (GELU, tanh approximation);
//  - 5 of every 6 layers attend over a sliding window (attention.sliding_window)
//    with their own RoPE base (rope.freq_base_swa, default 10000); every 6th
//    layer (5, 11, 17, ...) is global with rope.freq_base. The pattern is
//    attention.sliding_window_pattern when the file has it.
// GGUF norm weights already hold Gemma's (1 + w).
#include <cmath>
#include <vector>

#include "runtime/arch/architecture.h"

namespace ember {

Status ConfigureGemma3(const ArchKeys& keys, ModelConfig* config) {
  EMBER_RETURN_IF_ERROR(ReadDecoderKeys(keys, RopeMode::kNeox, config));
  ModelConfig& c = *config;
  c.embd_scale = std::sqrt(static_cast<float>(c.n_embd));
  EMBER_RETURN_IF_ERROR(keys.FloatOr("final_logit_softcapping", 0.0, &c.logit_softcap));
  if (c.logit_softcap < 0) {
    return BadFormat("GGUF key '" + keys.Name("final_logit_softcapping") + "' < 0");
  }
  // Gemma's query scaling: 1/sqrt(head_dim), except the 27B model (62
  // layers), which was trained with 1/sqrt(n_embd / n_head).
  const float scale = c.n_layer == 62 ? 1.0f / std::sqrt(static_cast<float>(c.n_embd / c.n_head))
                                      : 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  int64_t window = 0, pattern = 6;
  EMBER_RETURN_IF_ERROR(keys.IntOr("attention.sliding_window", 0, &window));
  if (window > c.n_ctx_train) {
    return BadFormat("GGUF key '" + keys.Name("attention.sliding_window") +
                     "' = " + std::to_string(window) + " is larger than the training context " +
                     std::to_string(c.n_ctx_train));
  }
  // The pattern is a period (every pattern-th layer is global) or, in newer
  // files, one flag per layer (true = sliding window).
  std::vector<bool> local_flags;
  const GgufValue* p = keys.file().Find(keys.Name("attention.sliding_window_pattern"));
  if (p != nullptr && p->type == GgufType::kArray) {
    if (p->items.size() != static_cast<size_t>(c.n_layer)) {
      return BadFormat("GGUF key '" + keys.Name("attention.sliding_window_pattern") + "' has " +
                       std::to_string(p->items.size()) + " entries for " +
                       std::to_string(c.n_layer) + " layers");
    }
    for (const GgufValue& v : p->items) local_flags.push_back(v.u != 0 || v.i != 0);
  } else {
    EMBER_RETURN_IF_ERROR(keys.IntOr("attention.sliding_window_pattern", 6, &pattern));
    if (pattern < 1) {
      return BadFormat("GGUF key '" + keys.Name("attention.sliding_window_pattern") + "' < 1");
    }
  }
  if (window > 0) {
    RopeConfig local = c.ropes[0];
    local.freq_scale = 1.0f;
    EMBER_RETURN_IF_ERROR(keys.FloatOr("rope.freq_base_swa", 10000.0, &local.freq_base));
    if (local.freq_base <= 0) {
      return BadFormat("GGUF key '" + keys.Name("rope.freq_base_swa") + "' <= 0");
    }
    c.ropes.push_back(local);
  }
  for (int64_t l = 0; l < c.n_layer; ++l) {
    LayerConfig& L = c.layers[static_cast<size_t>(l)];
    L.qk_norm = true;
    L.post_attn_norm = true;
    L.post_ffn_norm = true;
    L.ffn = FfnKind::kGeGlu;
    L.attn_scale = scale;
    const bool local = window > 0 && (local_flags.empty() ? l % pattern < pattern - 1
                                                          : local_flags[static_cast<size_t>(l)]);
    L.window = local ? window : 0;
    L.rope = local ? 1 : 0;
  }
  return Status::Ok();
}

}  // namespace ember
