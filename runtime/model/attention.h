// One layer's attention for a forward batch: which cache rows each query
// reads (TokenPlace), which kernel runs (blocked prefill, one head per job,
// int8 and f32 caches, llama.cpp's arithmetic) and how the work is split over
// threads. The kernels themselves are ops/attention.h's.
#pragma once

#include <cstdint>

#include "runtime/kv/kv_cache.h"
#include "runtime/kv/kv_ring.h"

namespace ember {

// Where one token of a forward batch goes in the KV cache and what it sees:
// its key and value are written to row `slot`, and it attends to the rows in
// rows[0..n_rows) (its own slot included), in context order. A plain sequence
// in a linear cache: one range [0, slot]. A sequence in a ring (KvRing): the
// pinned rows, then the ring region, which may wrap. Beam b of beam search: a
// shared prompt, then the beam's own rows.
//
// Layers with a sliding window (LayerConfig::window) use the win_* fields
// instead: their caches may be rings of the window's size (the session's
// WindowRing), and a token sees only the last `window` tokens. The session
// sets them for models that have such layers.
struct TokenPlace {
  int64_t pos;   // position (RoPE)
  int64_t slot;  // cache row its key and value are written to
  RowRange rows[3];
  int n_rows;
  int64_t win_slot = 0;
  RowRange win_rows[3] = {};
  int n_win_rows = 0;
};

// The window fields as the main ones (the view a windowed layer uses).
inline TokenPlace WindowView(const TokenPlace& p) {
  TokenPlace w = p;
  w.slot = p.win_slot;
  for (int r = 0; r < 3; ++r) w.rows[r] = p.win_rows[r];
  w.n_rows = p.n_win_rows;
  return w;
}

// True when each token's rows are a prefix of the next token's: one sequence,
// causal (a prompt chunk). A beam-search batch holds other sequences, and a
// sliding window drops rows at the front.
bool RowsChain(const TokenPlace* places, int64_t n);
// True when no token's rows hold the slot of a later token of the batch: then
// the batch may go through a layer in sub-chunks, each storing its keys and
// values before its attention.
bool LaterSlotsUnseen(const TokenPlace* places, int64_t n);
// The number of rows a token sees.
int64_t RowsOf(const TokenPlace& pl);

struct AttentionArgs {
  const KvCache* kv;
  int64_t layer;
  const TokenPlace* places;  // [n]
  int64_t n;
  const float* q;  // [n, n_head * head_dim], RoPE applied
  float* out;      // [n, n_head * head_dim]: per head, the attention output
  int64_t n_head, n_head_kv, head_dim;
  float scale;  // multiplies q·k before the softmax
  int n_threads;
  float* scores;  // [n_threads, AttentionScratchPerThread(kv, layer)]
};

// Floats of scratch each thread needs for a layer's attention.
int64_t AttentionScratchPerThread(const KvCache& kv, int64_t layer);

// out[t, h] = softmax(scale * q[t, h] · K) V over the rows of places[t], for
// query head h of every token t (KV head h / (n_head / n_head_kv)), for each
// of the pass's sequences args[0..count) (one layer, the same n_threads and
// scores buffer, sized for the largest of their AttentionScratchPerThread):
// all their jobs in one parallel region, each query's result as it would be
// for its sequence alone.
void AttendMany(const AttentionArgs* args, int64_t count);
// One sequence's attention with llama.cpp's arithmetic (--numerics ggml), in the form its
// flash attention takes for a batch of n tokens (ops/ggml_numerics.h).
void AttendGgml(const AttentionArgs& a);

}  // namespace ember
