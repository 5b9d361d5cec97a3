// qwen3: Qwen 3 (dense). Qwen 2's block without the biases, with an RMSNorm
// of every query and key head before RoPE; the head dimension (128) is given
// by attention.key_length, so q_dim may differ from n_embd.
#include "runtime/arch/architecture.h"

namespace ember {

Status ConfigureQwen3(const ArchKeys& keys, ModelConfig* config) {
  EMBER_RETURN_IF_ERROR(ReadDecoderKeys(keys, RopeMode::kNeox, config));
  for (LayerConfig& layer : config->layers) layer.qk_norm = true;
  return Status::Ok();
}

}  // namespace ember
