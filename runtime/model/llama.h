// The llama architecture's forward pass (Llama 2/3, SmolLM2, TinyLlama, ...).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "ops/matmul.h"
#include "runtime/kv/kv_cache.h"
#include "runtime/kv/kv_ring.h"
#include "runtime/model/model.h"

namespace ember {

// Activations for a chunk of up to n_batch tokens. The residual stream and
// the RoPE table hold the whole chunk; the rest hold one sub-chunk of at most
// SubChunkTokens (runtime/model/llama.cpp) tokens, m below, which go
// through a layer together (all n with --numerics ggml or a trace).
struct LlamaScratch {
  std::vector<float> x;       // [n, n_embd]   residual stream
  std::vector<float> xn;      // [m, n_embd]   normed input of a sub-layer; once the
                              //               sub-layer's input matrices have read it, it
                              //               takes the output of wo / w_down (no own buffer)
  std::vector<float> q;       // [m, q_dim]
  std::vector<float> k;       // [m, kv_dim]
  std::vector<float> v;       // [m, kv_dim]
  std::vector<float> att;     // [m, q_dim]    attention output per head
  std::vector<float> gate;    // [m, n_ff]
  std::vector<float> up;      // [m, n_ff]
  std::vector<float> scores;  // [n_threads, ScoresPerThread] attention scratch
  std::vector<float> rope;    // [n, n_rot]    cos/sin per position
  MatMulScratch mm;
  // Debugging aid (bench/forward_trace.cpp): when set, called with each
  // per-layer activation of a forward pass (the whole chunk), named as llama.cpp's graph names
  // them ("attn_norm", "Qcur", ... "l_out", with the layer), as [n_tokens,
  // width] row-major floats.
  std::function<void(const char* name, int64_t layer, const float* data, int64_t n_tokens,
                     int64_t width)>
      trace;
};

// Where one token of a forward batch goes in the KV cache and what it sees:
// its key and value are written to row `slot`, and it attends to the rows in
// rows[0..n_rows) (its own slot included), in context order. A plain sequence
// in a linear cache: one range [0, slot]. A sequence in a ring (KvRing): the
// pinned rows, then the ring region, which may wrap. Beam b of beam search: a
// shared prompt, then the beam's own rows.
struct TokenPlace {
  int64_t pos;   // position (RoPE)
  int64_t slot;  // cache row its key and value are written to
  RowRange rows[3];
  int n_rows;
};

// Which rows of the batch get logits.
enum class LogitsFor { kNone, kLast, kAll };

// Runs tokens[0..n) placed by places[0..n): writes their keys and values into
// `kv` and the logits (kLast: [n_vocab] of the last token; kAll: [n, n_vocab]).
// Every token attends to rows written earlier in the same batch only through
// its ranges (causal when places follow each other). A batch of more than 64
// tokens in which no token's ranges hold a later token's slot goes through each
// layer in sub-chunks (SubChunkTokens); any other batch goes whole, so a token
// may see every row the batch writes. Preconditions (checked by
// Session): valid ids, every slot < kv.n_ctx().
void LlamaForward(const Model& model, KvCache& kv, LlamaScratch& s, const int32_t* tokens,
                  const TokenPlace* places, int64_t n, int n_threads, LogitsFor which,
                  float* logits);

}  // namespace ember
