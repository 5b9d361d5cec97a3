// The llama architecture's forward pass (Llama 2/3, SmolLM2, TinyLlama, ...).
#pragma once

#include <cstdint>
#include <vector>

#include "ops/matmul.h"
#include "runtime/kv_cache.h"
#include "runtime/model.h"

namespace ember {

// Activations for a chunk of up to n_batch tokens.
struct LlamaScratch {
  std::vector<float> x;       // [n, n_embd]   residual stream
  std::vector<float> xn;      // [n, n_embd]   normed input of a sub-layer
  std::vector<float> q;       // [n, q_dim]
  std::vector<float> k;       // [n, kv_dim]
  std::vector<float> v;       // [n, kv_dim]
  std::vector<float> att;     // [n, q_dim]    attention output per head
  std::vector<float> proj;    // [n, n_embd]   output of wo / w_down
  std::vector<float> gate;    // [n, n_ff]
  std::vector<float> up;      // [n, n_ff]
  std::vector<float> scores;  // [n_threads, n_ctx] attention scratch
  std::vector<float> rope;    // [n, n_rot]    cos/sin per position
  MatMulScratch mm;
};

// Runs tokens[0..n) at positions pos0..pos0+n-1: writes their keys and values
// into `kv` and, if logits != nullptr, the last token's logits [n_vocab].
// Preconditions (checked by Session): valid ids, pos0 + n <= kv.n_ctx().
void LlamaForward(const Model& model, KvCache& kv, LlamaScratch& s, const int32_t* tokens,
                  int64_t n, int64_t pos0, int n_threads, float* logits);

}  // namespace ember
