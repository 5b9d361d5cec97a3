// The decoder loop: one forward pass of a batch of tokens through any
// architecture ember runs, driven by the model's config (runtime/model/config.h)
// (docs/DESIGN.md §3, §10). Per layer:
//
//   x += [post_attn_norm] o  attention(RoPE(qk_norm(norm(x) W_qkv + b)))  W_o
//   x += [post_ffn_norm]  o  (act(norm(x) W_gate) * (norm(x) W_up)) W_down
//
// then the final norm and the LM head for the positions asked for.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "ops/matmul.h"
#include "runtime/kv/kv_cache.h"
#include "runtime/model/attention.h"
#include "runtime/model/model.h"

namespace ember {

// Activations for a chunk of up to n_batch tokens. The residual stream and
// the RoPE tables hold the whole chunk; the rest hold one sub-chunk of at most
// SubChunkTokens (runtime/model/decoder.cpp) tokens, m below, which go
// through a layer together (all n with --numerics ggml or a trace).
struct DecoderScratch {
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
  std::vector<float> scores;  // [n_threads, AttentionScratchPerThread] attention scratch
  std::vector<float> rope;    // [n_ropes, n, n_rot]  cos/sin per RoPE config and position
  std::vector<TokenPlace> win_places;  // [n] the places as windowed layers see them
  // Passes over several sequences (ForwardMany) only:
  std::vector<int64_t> seq_begin;  // [n_seqs + 1] each sequence's first row in the pass
  std::vector<TokenPlace> places;  // [n] every sequence's places, one after another
  std::vector<std::pair<int64_t, float*>> head_rows;  // (row, where its logits go)
  std::vector<float> head_out;           // [rows, n_vocab] logits before they go to each sequence
  std::vector<AttentionArgs> attn_args;  // [sequences in a sub-chunk] one layer's attention
  MatMulScratch mm;
  // Debugging aid (bench/forward_trace.cpp): when set, called with each
  // per-layer activation of a forward pass (the whole chunk), named as llama.cpp's graph names
  // them ("attn_norm", "Qcur", ... "l_out", with the layer), as [n_tokens,
  // width] row-major floats.
  std::function<void(const char* name, int64_t layer, const float* data, int64_t n_tokens,
                     int64_t width)>
      trace;
};

// Which rows of the batch get logits; kHidden: instead of logits, every row's
// hidden state after the final norm ([n, n_embd]: what an embedding pools).
enum class LogitsFor { kNone, kLast, kAll, kHidden };

// Runs tokens[0..n) placed by places[0..n): writes their keys and values into
// `kv` and the logits (kLast: [n_vocab] of the last token; kAll: [n, n_vocab];
// kHidden: [n, n_embd], no logits).
// Every token attends to rows written earlier in the same batch only through
// its ranges (causal when places follow each other). A batch of more than 64
// tokens in which no token's ranges hold a later token's slot goes through each
// layer in sub-chunks (SubChunkTokens); any other batch goes whole, so a token
// may see every row the batch writes. Preconditions (checked by
// Session): valid ids, every slot < kv.n_rows(layer).
void Forward(const Model& model, KvCache& kv, DecoderScratch& s, const int32_t* tokens,
             const TokenPlace* places, int64_t n, int n_threads, LogitsFor which, float* logits);

// One sequence of a pass over several (continuous batching,
// runtime/session/batcher.h): its tokens, their places in its own cache, and
// where its logits go (kLast: [n_vocab]; kAll: [n, n_vocab]; kHidden: [n, n_embd]).
struct ForwardSeq {
  KvCache* kv;
  const int32_t* tokens;
  const TokenPlace* places;
  int64_t n;
  LogitsFor which;
  float* logits;
};

// Forward for several sequences at once: their tokens go through every
// matrix together (each weight is read once for all of them), and each
// token's attention reads its own sequence's cache. Every row's result is
// bit for bit the one Forward gives that sequence alone (GEMM rows, norms
// and RoPE are per token; attention runs per sequence as it would alone).
// Sequences must not share a cache. Not for --numerics ggml, whose arithmetic
// depends on the batch (Forward with one sequence is the same as Forward).
void ForwardMany(const Model& model, DecoderScratch& s, const ForwardSeq* seqs, int64_t n_seqs,
                 int n_threads);

}  // namespace ember
