#include "runtime/model/llama.h"

#include <algorithm>
#include <cmath>

#include <omp.h>

#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/ggml_numerics.h"
#include "ops/kernels.h"
#include "ops/norm.h"
#include "quant/fp16.h"
#include "quant/quantize.h"

namespace ember {
namespace {

void Resize(std::vector<float>& v, int64_t n) {
  if (v.size() < static_cast<size_t>(n)) v.resize(static_cast<size_t>(n));
}

// True when each token's rows are a prefix of the next token's: one sequence,
// causal (a prompt chunk). A beam-search batch holds other sequences.
bool RowsChain(const TokenPlace* places, int64_t n) {
  for (int64_t t = 0; t + 1 < n; ++t) {
    const TokenPlace& a = places[t];
    const TokenPlace& b = places[t + 1];
    if (a.n_rows < 1 || a.n_rows > b.n_rows) return false;
    for (int r = 0; r < a.n_rows; ++r) {
      const RowRange &x = a.rows[r], &y = b.rows[r];
      const bool last = r + 1 == a.n_rows;
      if (x.begin != y.begin || (last ? x.n > y.n : x.n != y.n)) return false;
    }
  }
  return true;
}

// True when no token's rows hold the slot of a later token of the batch: then
// the batch may go through a layer in sub-chunks, each storing its keys and
// values before its attention (a prompt chunk, beams). O(n^2) checks of up to
// three ranges, next to a forward pass of n > 64 tokens.
bool LaterSlotsUnseen(const TokenPlace* places, int64_t n) {
  for (int64_t t = 0; t < n; ++t) {
    const TokenPlace& pl = places[t];
    for (int64_t u = t + 1; u < n; ++u) {
      for (int r = 0; r < pl.n_rows; ++r) {
        const RowRange& rr = pl.rows[r];
        if (places[u].slot >= rr.begin && places[u].slot < rr.begin + rr.n) return false;
      }
    }
  }
  return true;
}

int64_t RowsOf(const TokenPlace& pl) {
  int64_t n = 0;
  for (int r = 0; r < pl.n_rows; ++r) n += pl.rows[r].n;
  return n;
}

// Floats of attention scratch per thread.
int64_t ScoresPerThread(const Hparams& hp, const KvCache& kv) {
  return std::max<int64_t>(2 * kv.n_ctx(), AttendBlockScratch(kv.n_ctx(), hp.head_dim));
}

// Attention with llama.cpp's arithmetic (--numerics ggml), in the form
// llama.cpp's flash attention takes for a batch of n tokens
// (ops/ggml_numerics.h). Every query's result depends only on its own rows, so
// queries may be grouped and go to any thread: a prompt chunk of a sequence
// (chain) goes through the tiled form in blocks of tokens x the heads of a GQA
// group, which convert each tile of keys and values once; anything else one
// query per job.
void AttentionGgml(const Hparams& hp, KvCache& kv, LlamaScratch& s, int64_t l,
                   const TokenPlace* places, int64_t n, bool chain, int n_threads) {
  const int64_t Q = hp.q_dim(), hd = hp.head_dim;
  const int64_t group = hp.n_head / hp.n_head_kv;
  const int head_dim = static_cast<int>(hd);
  // llama.cpp: 1.0f / sqrtf(float(n_embd_head))
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  if (n >= kGgmlTileQ && chain) {
    constexpr int64_t kTokens = 32;  // per job
    const GgmlAttendTiledBlockFn block = Active().ggml_attend_tiled_block;
    const int64_t n_blocks = (n + kTokens - 1) / kTokens;
    const int64_t n_work = n_blocks * hp.n_head_kv;
#pragma omp parallel for num_threads(n_threads) schedule(static, 1) if (n_threads > 1)
    for (int64_t job = 0; job < n_work; ++job) {
      const int64_t t0 = job / hp.n_head_kv * kTokens, kvh = job % hp.n_head_kv;
      const int64_t t1 = std::min(n, t0 + kTokens);
      // Per-thread lists and scratch: no allocation per job once they have grown.
      thread_local std::vector<const float*> qs;
      thread_local std::vector<float*> outs;
      thread_local std::vector<int64_t> visible;
      thread_local std::vector<float> scratch;
      qs.clear();
      outs.clear();
      visible.clear();
      for (int64_t t = t0; t < t1; ++t) {
        for (int64_t h = kvh * group; h < (kvh + 1) * group; ++h) {
          qs.push_back(&s.q[t * Q + h * hd]);
          outs.push_back(&s.att[t * Q + h * hd]);
          visible.push_back(RowsOf(places[t]));
        }
      }
      const TokenPlace& last = places[t1 - 1];  // its rows hold every earlier token's
      KvSpan spans[3];
      for (int r = 0; r < last.n_rows; ++r) {
        spans[r] = kv.SpanF16(l, last.rows[r].begin, last.rows[r].n, kvh);
      }
      const int n_q = static_cast<int>(qs.size());
      scratch.resize(static_cast<size_t>(GgmlTiledScratch(head_dim, n_q)));
      block(qs.data(), visible.data(), n_q, spans, last.n_rows, kv.row_stride(), head_dim, scale,
            scratch.data(), outs.data());
    }
    return;
  }
  const int64_t n_work = n * hp.n_head;
#pragma omp parallel for num_threads(n_threads) schedule(static, 1) if (n_threads > 1)
  for (int64_t job = 0; job < n_work; ++job) {
    const int64_t t = job / hp.n_head, h = job % hp.n_head, kvh = h / group;
    const TokenPlace& pl = places[t];
    KvSpan spans[3];
    for (int r = 0; r < pl.n_rows; ++r)
      spans[r] = kv.SpanF16(l, pl.rows[r].begin, pl.rows[r].n, kvh);
    const float* q = &s.q[t * Q + h * hd];
    float* out = &s.att[t * Q + h * hd];
    const int64_t visible = RowsOf(pl);
    if (n >= kGgmlTileQ) {
      GgmlAttendTiled(q, spans, pl.n_rows, kv.row_stride(), head_dim, scale, visible, out);
    } else if (n == 1 && GgmlKvCells(visible) >= kGgmlSplitKvMin) {
      GgmlAttendSplit(q, spans, pl.n_rows, kv.row_stride(), head_dim, scale, visible,
                      GgmlKvCells(visible), n_threads, out);
    } else {
      GgmlAttendOneRow(q, spans, pl.n_rows, kv.row_stride(), head_dim, scale, visible, out);
    }
  }
}

// att[t, h] = attention of query head h of token t over the cache rows of its
// place (see TokenPlace), for layer l. chain: RowsChain(places, n), the same
// for every layer.
void Attention(const Hparams& hp, KvCache& kv, LlamaScratch& s, int64_t l, const TokenPlace* places,
               int64_t n, bool chain, int n_threads) {
  const int64_t Q = hp.q_dim(), hd = hp.head_dim;
  const int64_t group = hp.n_head / hp.n_head_kv;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const size_t per_thread = static_cast<size_t>(ScoresPerThread(hp, kv));
  const KvType type = kv.type();
  if (type == KvType::kF16 && chain && hd % kAttendBlockDimMultiple == 0) {
    // Blocks of consecutive tokens x heads of one GQA group (up to
    // kAttendBlockQueries queries) share each converted key and value row: a
    // prompt chunk, and a single decoded token (its group's heads). Every
    // query's result is AttendBlock_ref's whatever block it is in, so the
    // blocks may follow the thread count: a group's heads are split into
    // parts until every thread has a job (a decode step of a model with
    // fewer KV heads than threads).
    const AttendBlockFn attend_block = Active().attend_block;
    int64_t heads = std::min<int64_t>(group, kAttendBlockQueries);             // per job
    const int64_t tokens = std::max<int64_t>(1, kAttendBlockQueries / heads);  // per job
    const int64_t n_blocks = (n + tokens - 1) / tokens;
    while (heads > 1 && n_blocks * hp.n_head_kv * ((group + heads - 1) / heads) < n_threads) {
      heads = (heads + 1) / 2;
    }
    const int64_t head_parts = (group + heads - 1) / heads;
    const int64_t n_work = n_blocks * hp.n_head_kv * head_parts;
    // Jobs go round the threads one by one: later blocks see more rows.
#pragma omp parallel for num_threads(n_threads) schedule(static, 1) if (n_threads > 1)
    for (int64_t job = 0; job < n_work; ++job) {
      const int64_t t0 = job / (hp.n_head_kv * head_parts) * tokens;
      const int64_t kvh = job / head_parts % hp.n_head_kv;
      const int64_t h0 = kvh * group + job % head_parts * heads;
      const int64_t t1 = std::min(n, t0 + tokens), h1 = std::min((kvh + 1) * group, h0 + heads);
      const float* qs[kAttendBlockQueries];
      float* outs[kAttendBlockQueries];
      int64_t visible[kAttendBlockQueries];
      int n_q = 0;
      for (int64_t t = t0; t < t1; ++t) {
        for (int64_t h = h0; h < h1; ++h, ++n_q) {
          qs[n_q] = &s.q[t * Q + h * hd];
          outs[n_q] = &s.att[t * Q + h * hd];
          visible[n_q] = RowsOf(places[t]);
        }
      }
      const TokenPlace& last = places[t1 - 1];  // its rows hold every earlier token's
      KvSpan spans[3];
      for (int r = 0; r < last.n_rows; ++r) {
        spans[r] = kv.SpanF16(l, last.rows[r].begin, last.rows[r].n, kvh);
      }
      attend_block(qs, visible, n_q, spans, last.n_rows, kv.row_stride(), static_cast<int>(hd),
                   scale, &s.scores[static_cast<size_t>(omp_get_thread_num()) * per_thread], outs);
    }
    return;
  }
  // One query head per job (the int8 and f32 caches, batches of several
  // sequences), which balances the threads for a single token.
  const AttendHeadFn attend = Active().attend_head;
  const AttendHeadQ8Fn attend_q8 = Active().attend_head_q8;
  const AttendHeadF32Fn attend_f32 = Active().attend_head_f32;
  const int64_t n_work = n * hp.n_head;
#pragma omp parallel for num_threads(n_threads) schedule(static, 1) if (n_threads > 1)
  for (int64_t job = 0; job < n_work; ++job) {
    const int64_t t = job / hp.n_head, h = job % hp.n_head, kvh = h / group;
    float* scores = &s.scores[static_cast<size_t>(omp_get_thread_num()) * per_thread];
    const TokenPlace& pl = places[t];
    if (type == KvType::kQ8) {
      KvSpanQ8 spans[3];
      for (int r = 0; r < pl.n_rows; ++r) {
        spans[r] = kv.SpanQ8(l, pl.rows[r].begin, pl.rows[r].n, kvh);
      }
      attend_q8(&s.q[t * Q + h * hd], spans, pl.n_rows, kv.row_stride(), kv.scale_stride(),
                static_cast<int>(hd), scale, scores, &s.att[t * Q + h * hd]);
    } else if (type == KvType::kF32) {
      KvSpanF32 spans[3];
      for (int r = 0; r < pl.n_rows; ++r) {
        spans[r] = kv.SpanF32(l, pl.rows[r].begin, pl.rows[r].n, kvh);
      }
      attend_f32(&s.q[t * Q + h * hd], spans, pl.n_rows, kv.row_stride(), static_cast<int>(hd),
                 scale, scores, &s.att[t * Q + h * hd]);
    } else {
      KvSpan spans[3];
      for (int r = 0; r < pl.n_rows; ++r) {
        spans[r] = kv.SpanF16(l, pl.rows[r].begin, pl.rows[r].n, kvh);
      }
      attend(&s.q[t * Q + h * hd], spans, pl.n_rows, kv.row_stride(), static_cast<int>(hd), scale,
             scores, &s.att[t * Q + h * hd]);
    }
  }
}

}  // namespace

// Tokens of a forward batch that go through a layer together. Every
// per-token result is the same whatever the sub-chunk (each GEMM row, norm and
// RoPE is per token, and a query's attention is AttendBlock_ref's whatever
// block it is in), so the sub-chunk only bounds the activation buffers, to
// about 1/32 of the weights: 64 tokens (1.5 MB) for SmolLM2-135M, whose
// 256-token chunk took 6 MB, 6% of its weights plus KV cache; 192 for a
// TinyLlama-1.1B. A layer's weights stay in the caches between its sub-chunks
// (2.3 MB for SmolLM2), and 64 tokens still fill the GEMM's token groups and
// the attention blocks: prefill of SmolLM2 at 64 is within ~5% of 256.
int64_t SubChunkTokens(const Model& model) {
  const Hparams& hp = model.hparams();
  const int64_t per_token =  // bytes of x, xn, q, k, v, att, gate and up
      4 * (2 * hp.n_embd + 2 * hp.q_dim() + 2 * hp.kv_dim() + 2 * hp.n_ff);
  const int64_t budget = static_cast<int64_t>(model.loaded_weight_bytes() / 32);
  return std::max<int64_t>(64, budget / per_token / 64 * 64);
}

void LlamaForward(const Model& model, KvCache& kv, LlamaScratch& s, const int32_t* tokens,
                  const TokenPlace* places, int64_t n, int n_threads, LogitsFor which,
                  float* logits) {
  const Hparams& hp = model.hparams();
  const ModelWeights& w = model.weights();
  const int64_t E = hp.n_embd, Q = hp.q_dim(), KV = hp.kv_dim(), F = hp.n_ff;
  const int64_t hd = hp.head_dim;
  // ggml numerics: llama.cpp's arithmetic for every operation (RMSNorm_ref
  // is ggml's: the squares summed in double in order). Its attention form
  // depends on the batch size (the peer's n_ubatch), so the batch stays whole;
  // so does a traced pass (whole [n, width] activations per name), and a
  // batch whose tokens see the rows of later ones.
  const bool ggml = model.numerics() == Numerics::kGgml;
  const int64_t sub = ggml || s.trace || n <= 64 || !LaterSlotsUnseen(places, n)
                          ? n
                          : std::min(n, SubChunkTokens(model));
  Resize(s.x, n * E);
  Resize(s.xn, sub * E);
  Resize(s.q, sub * Q);
  Resize(s.k, sub * KV);
  Resize(s.v, sub * KV);
  Resize(s.att, sub * Q);
  Resize(s.gate, sub * F);
  Resize(s.up, sub * F);
  Resize(s.scores, n_threads * ScoresPerThread(hp, kv));
  Resize(s.rope, n * hp.n_rot);

  // Embedding rows, dequantized.
  for (int64_t t = 0; t < n; ++t) WeightRow(w.token_embd, tokens[t], &s.x[t * E]);
  const float* freq_factors = w.rope_freqs.empty() ? nullptr : w.rope_freqs.data();
  for (int64_t t = 0; t < n; ++t) {
    RopeCache(&s.rope[t * hp.n_rot], places[t].pos, hp.n_rot, hp.rope_freq_base, hp.rope_freq_scale,
              freq_factors);
  }
  const RmsNormFn rms_norm = ggml ? RmsNorm_ref : Active().rms_norm;
  const SwiGluFn swiglu = ggml ? GgmlSwiGlu : Active().swiglu;
  const RopeApplyFn rope_apply = ggml ? GgmlRopeApply : Active().rope_apply;

  for (int64_t l = 0; l < hp.n_layer; ++l) {
    const LayerWeights& L = w.layers[static_cast<size_t>(l)];
    // Sub-chunk [t0, t0 + m): its tokens' rows of x; the other buffers hold
    // its rows only. Its keys and values are stored before its attention, and
    // earlier sub-chunks' are in the cache already: causal as one batch.
    for (int64_t t0 = 0; t0 < n; t0 += sub) {
      const int64_t m = std::min(sub, n - t0);
      float* x = &s.x[t0 * E];
      const TokenPlace* pl = places + t0;
      // Per-token work (norms, RoPE, SwiGLU) runs on the threads for batches;
      // a single decode token is not worth waking them.
      const bool batch_parallel = m > 1 && n_threads > 1;
      // Attention block.
#pragma omp parallel for num_threads(n_threads) schedule(static) if (batch_parallel)
      for (int64_t t = 0; t < m; ++t) {
        rms_norm(&x[t * E], L.attn_norm.data(), &s.xn[t * E], E, hp.rms_eps);
      }
      if (s.trace) s.trace("attn_norm", l, s.xn.data(), m, E);
      {
        const WeightView* ws[3] = {&L.wq, &L.wk, &L.wv};
        float* ys[3] = {s.q.data(), s.k.data(), s.v.data()};
        const int64_t ldys[3] = {Q, KV, KV};
        MatMulShared(ws, ys, ldys, 3, s.xn.data(), m, n_threads, &s.mm);
      }
#pragma omp parallel for num_threads(n_threads) schedule(static) if (batch_parallel)
      for (int64_t t = 0; t < m; ++t) {  // each token writes its own cache row
        const float* rc = &s.rope[(t0 + t) * hp.n_rot];
        for (int64_t h = 0; h < hp.n_head; ++h) {
          rope_apply(&s.q[t * Q + h * hd], rc, hp.n_rot, hp.rope_mode);
        }
        for (int64_t h = 0; h < hp.n_head_kv; ++h) {
          rope_apply(&s.k[t * KV + h * hd], rc, hp.n_rot, hp.rope_mode);
        }
        kv.Store(l, pl[t].slot, &s.k[t * KV], &s.v[t * KV]);
      }
      if (s.trace) {
        s.trace("Qcur", l, s.q.data(), m, Q);
        s.trace("Kcur", l, s.k.data(), m, KV);
        s.trace("Vcur", l, s.v.data(), m, KV);
      }
      const bool chain = RowsChain(pl, m);
      if (ggml) {
        AttentionGgml(hp, kv, s, l, pl, m, chain, n_threads);
      } else {
        Attention(hp, kv, s, l, pl, m, chain, n_threads);
      }
      // xn is free: Q, K and V have read it. Projections land there (saves a buffer).
      MatMul(L.wo, s.att.data(), m, s.xn.data(), E, n_threads, &s.mm);
      if (s.trace) {
        s.trace("kqv_out", l, s.att.data(), m, Q);
        s.trace("attn_out", l, s.xn.data(), m, E);
      }
      for (int64_t i = 0; i < m * E; ++i) x[i] += s.xn[i];
      if (s.trace) s.trace("ffn_inp", l, x, m, E);

        // Feed-forward block (SwiGLU).
#pragma omp parallel for num_threads(n_threads) schedule(static) if (batch_parallel)
      for (int64_t t = 0; t < m; ++t) {
        rms_norm(&x[t * E], L.ffn_norm.data(), &s.xn[t * E], E, hp.rms_eps);
      }
      if (s.trace) s.trace("ffn_norm", l, s.xn.data(), m, E);
      {
        const WeightView* ws[2] = {&L.w_gate, &L.w_up};
        float* ys[2] = {s.gate.data(), s.up.data()};
        const int64_t ldys[2] = {F, F};
        MatMulShared(ws, ys, ldys, 2, s.xn.data(), m, n_threads, &s.mm);
      }
      if (s.trace) {
        s.trace("ffn_gate", l, s.gate.data(), m, F);
        s.trace("ffn_up", l, s.up.data(), m, F);
      }
#pragma omp parallel for num_threads(n_threads) schedule(static) if (batch_parallel)
      for (int64_t t = 0; t < m; ++t) swiglu(&s.gate[t * F], &s.up[t * F], F);
      if (s.trace) s.trace("ffn_swiglu", l, s.gate.data(), m, F);
      MatMul(L.w_down, s.gate.data(), m, s.xn.data(), E, n_threads, &s.mm);  // gate, up read xn
      if (s.trace) s.trace("ffn_out", l, s.xn.data(), m, E);
      for (int64_t i = 0; i < m * E; ++i) x[i] += s.xn[i];
      if (s.trace) s.trace("l_out", l, x, m, E);
    }
  }

  if (which == LogitsFor::kLast) {
    // The LM head runs for the last position only.
    rms_norm(&s.x[(n - 1) * E], w.output_norm.data(), s.xn.data(), E, hp.rms_eps);
    MatMul(w.output, s.xn.data(), 1, logits, hp.n_vocab, n_threads, &s.mm);
  } else if (which == LogitsFor::kAll) {
    for (int64_t t0 = 0; t0 < n; t0 += sub) {
      const int64_t m = std::min(sub, n - t0);
      for (int64_t t = 0; t < m; ++t) {
        rms_norm(&s.x[(t0 + t) * E], w.output_norm.data(), &s.xn[t * E], E, hp.rms_eps);
      }
      MatMul(w.output, s.xn.data(), m, logits + t0 * hp.n_vocab, hp.n_vocab, n_threads, &s.mm);
    }
  }
}

}  // namespace ember
