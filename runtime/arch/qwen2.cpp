// qwen2: Qwen 2 and 2.5 (and their Coder / Math variants). Llama's block with
// biases on the q, k and v projections, and RoPE on the two halves of each
// head (GPT-NeoX order).
#include "runtime/arch/architecture.h"

namespace ember {

Status ConfigureQwen2(const ArchKeys& keys, ModelConfig* config) {
  EMBER_RETURN_IF_ERROR(ReadDecoderKeys(keys, RopeMode::kNeox, config));
  for (LayerConfig& layer : config->layers) layer.attn_bias = true;
  return Status::Ok();
}

}  // namespace ember
