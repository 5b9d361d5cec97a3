// The GGUF keys every decoder-only architecture shares, read into a
// ModelConfig (runtime/arch/architecture.h).
#include <cmath>

#include "runtime/arch/architecture.h"

namespace ember {

Status ArchKeys::Int(std::string_view key, int64_t* out) const {
  const std::string name = Name(key);
  const GgufValue* v = f_.Find(name);
  if (v == nullptr) return BadFormat("GGUF key '" + name + "' is missing");
  if (v->type == GgufType::kArray) {
    return Unsupported("GGUF key '" + name + "' is an array (per-layer values are not supported)");
  }
  uint64_t u = 0;
  EMBER_RETURN_IF_ERROR(f_.GetUint(name, &u));
  if (u > (uint64_t{1} << 31)) return BadFormat("GGUF key '" + name + "' is out of range");
  *out = static_cast<int64_t>(u);
  return Status::Ok();
}

Status ArchKeys::IntOr(std::string_view key, int64_t fallback, int64_t* out) const {
  if (!Has(key)) {
    *out = fallback;
    return Status::Ok();
  }
  return Int(key, out);
}

Status ArchKeys::FloatOr(std::string_view key, double fallback, float* out) const {
  const std::string name = Name(key);
  double d = fallback;
  if (f_.Find(name) != nullptr) EMBER_RETURN_IF_ERROR(f_.GetFloat(name, &d));
  if (!std::isfinite(d)) return BadFormat("GGUF key '" + name + "' is not finite");
  *out = static_cast<float>(d);
  return Status::Ok();
}

Status ArchKeys::StringOr(std::string_view key, std::string fallback, std::string* out) const {
  const std::string name = Name(key);
  if (f_.Find(name) == nullptr) {
    *out = std::move(fallback);
    return Status::Ok();
  }
  return f_.GetString(name, out);
}

Status ReadDecoderKeys(const ArchKeys& k, RopeMode mode, ModelConfig* c) {
  EMBER_RETURN_IF_ERROR(k.Int("embedding_length", &c->n_embd));
  EMBER_RETURN_IF_ERROR(k.Int("block_count", &c->n_layer));
  EMBER_RETURN_IF_ERROR(k.Int("feed_forward_length", &c->n_ff));
  EMBER_RETURN_IF_ERROR(k.Int("attention.head_count", &c->n_head));
  EMBER_RETURN_IF_ERROR(k.IntOr("attention.head_count_kv", c->n_head, &c->n_head_kv));
  EMBER_RETURN_IF_ERROR(k.IntOr("context_length", 2048, &c->n_ctx_train));
  if (c->n_embd <= 0 || c->n_layer <= 0 || c->n_ff <= 0 || c->n_head <= 0 || c->n_head_kv <= 0 ||
      c->n_layer > 4096) {
    return BadFormat("inconsistent hyper-parameters: n_embd " + std::to_string(c->n_embd) +
                     ", n_layer " + std::to_string(c->n_layer) + ", n_head " +
                     std::to_string(c->n_head) + ", n_head_kv " + std::to_string(c->n_head_kv) +
                     ", n_ff " + std::to_string(c->n_ff));
  }
  if (c->n_head % c->n_head_kv != 0) {
    return BadFormat("GGUF key '" + k.Name("attention.head_count") +
                     "' = " + std::to_string(c->n_head) + " is not a multiple of '" +
                     k.Name("attention.head_count_kv") + "' = " + std::to_string(c->n_head_kv));
  }
  if (k.Has("attention.key_length")) {
    EMBER_RETURN_IF_ERROR(k.Int("attention.key_length", &c->head_dim));
  } else if (c->n_embd % c->n_head != 0) {
    return BadFormat("GGUF key '" + k.Name("embedding_length") +
                     "' = " + std::to_string(c->n_embd) + " is not a multiple of '" +
                     k.Name("attention.head_count") + "' = " + std::to_string(c->n_head) +
                     " (and there is no attention.key_length)");
  } else {
    c->head_dim = c->n_embd / c->n_head;
  }
  if (c->head_dim <= 0 || c->head_dim > 512 || c->head_dim % 2 != 0) {
    return Unsupported("head dimension " + std::to_string(c->head_dim) +
                       " is not supported (even, at most 512)");
  }
  int64_t value_length = c->head_dim;
  EMBER_RETURN_IF_ERROR(k.IntOr("attention.value_length", c->head_dim, &value_length));
  if (value_length != c->head_dim) {
    return Unsupported("GGUF key '" + k.Name("attention.value_length") +
                       "' = " + std::to_string(value_length) + " differs from the key length " +
                       std::to_string(c->head_dim) + " (not supported)");
  }
  EMBER_RETURN_IF_ERROR(k.IntOr("pooling_type", -1, &c->pooling_type));
  if (c->pooling_type > 4) {
    return BadFormat("GGUF key '" + k.Name("pooling_type") +
                     "' = " + std::to_string(c->pooling_type) + " is not a pooling type (0..4)");
  }
  RopeConfig rope;
  rope.mode = mode;
  int64_t n_rot = c->head_dim;
  EMBER_RETURN_IF_ERROR(k.IntOr("rope.dimension_count", c->head_dim, &n_rot));
  if (n_rot <= 0 || n_rot > c->head_dim || n_rot % 2 != 0) {
    return BadFormat("GGUF key '" + k.Name("rope.dimension_count") +
                     "' = " + std::to_string(n_rot) + " does not fit the head dimension " +
                     std::to_string(c->head_dim));
  }
  rope.n_rot = static_cast<int>(n_rot);
  EMBER_RETURN_IF_ERROR(k.FloatOr("rope.freq_base", 10000.0, &rope.freq_base));
  if (rope.freq_base <= 0) return BadFormat("GGUF key '" + k.Name("rope.freq_base") + "' <= 0");
  std::string scaling;
  EMBER_RETURN_IF_ERROR(k.StringOr("rope.scaling.type", "none", &scaling));
  if (scaling == "linear") {
    float factor = 1.0f;
    EMBER_RETURN_IF_ERROR(k.FloatOr("rope.scaling.factor", 1.0, &factor));
    if (factor <= 0) return BadFormat("GGUF key '" + k.Name("rope.scaling.factor") + "' <= 0");
    rope.freq_scale = 1.0f / factor;
  } else if (scaling != "none" && !scaling.empty()) {
    return Unsupported("GGUF key '" + k.Name("rope.scaling.type") + "' = '" + scaling +
                       "': this RoPE scaling is not supported (none, linear; Llama 3's "
                       "scaling comes as the rope_freqs tensor)");
  }
  // Llama 3.x ship their frequency factors as a tensor; the loader checks it.
  rope.freq_factors = k.file().FindTensor("rope_freqs.weight") != nullptr;
  c->ropes = {rope};
  EMBER_RETURN_IF_ERROR(k.FloatOr("attention.layer_norm_rms_epsilon", 1e-5, &c->rms_eps));
  if (!(c->rms_eps > 0)) {
    return BadFormat("GGUF key '" + k.Name("attention.layer_norm_rms_epsilon") + "' <= 0");
  }
  LayerConfig layer;
  layer.attn_scale = 1.0f / std::sqrt(static_cast<float>(c->head_dim));
  c->layers.assign(static_cast<size_t>(c->n_layer), layer);
  return Status::Ok();
}

}  // namespace ember
