// llama: Llama 1-3.x, SmolLM, TinyLlama, Mistral 7B and the like. Pre-norm
// (RMSNorm), RoPE on adjacent pairs, grouped-query attention, SwiGLU, no
// biases; Llama 3.x adds its frequency factors as the rope_freqs tensor.
#include "runtime/arch/architecture.h"

namespace ember {

Status ConfigureLlama(const ArchKeys& keys, ModelConfig* config) {
  return ReadDecoderKeys(keys, RopeMode::kNormal, config);
}

}  // namespace ember
