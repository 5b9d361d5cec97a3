#include "runtime/models/llama.h"

#include <cmath>

#include <omp.h>

#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/kernels.h"
#include "ops/norm.h"
#include "quant/fp16.h"
#include "quant/quantize.h"

namespace ember {
namespace {

void Resize(std::vector<float>& v, int64_t n) {
  if (v.size() < static_cast<size_t>(n)) v.resize(static_cast<size_t>(n));
}

}  // namespace

void LlamaForward(const Model& model, KvCache& kv, LlamaScratch& s, const int32_t* tokens,
                  const TokenPlace* places, int64_t n, int n_threads, LogitsFor which,
                  float* logits) {
  const Hparams& hp = model.hparams();
  const ModelWeights& w = model.weights();
  const int64_t E = hp.n_embd, Q = hp.q_dim(), KV = hp.kv_dim(), F = hp.n_ff;
  const int64_t hd = hp.head_dim;
  const int64_t group = hp.n_head / hp.n_head_kv;
  Resize(s.x, n * E);
  Resize(s.xn, n * E);
  Resize(s.q, n * Q);
  Resize(s.k, n * KV);
  Resize(s.v, n * KV);
  Resize(s.att, n * Q);
  Resize(s.gate, n * F);
  Resize(s.up, n * F);
  Resize(s.scores, 2 * static_cast<int64_t>(n_threads) * kv.n_ctx());  // two heads per job
  Resize(s.rope, n * hp.n_rot);

  // Embedding rows, dequantized.
  for (int64_t t = 0; t < n; ++t) WeightRow(w.token_embd, tokens[t], &s.x[t * E]);
  const float* freq_factors = w.rope_freqs.empty() ? nullptr : w.rope_freqs.data();
  for (int64_t t = 0; t < n; ++t) {
    RopeCache(&s.rope[t * hp.n_rot], places[t].pos, hp.n_rot, hp.rope_freq_base, hp.rope_freq_scale,
              freq_factors);
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const RmsNormFn rms_norm = Active().rms_norm;
  const SwiGluFn swiglu = Active().swiglu;
  const RopeApplyFn rope_apply = Active().rope_apply;
  // Per-token work (norms, RoPE, SwiGLU) runs on the threads for batches; a
  // single decode token is not worth waking them.
  const bool batch_parallel = n > 1 && n_threads > 1;

  for (int64_t l = 0; l < hp.n_layer; ++l) {
    const LayerWeights& L = w.layers[static_cast<size_t>(l)];
    // Attention block.
#pragma omp parallel for num_threads(n_threads) schedule(static) if (batch_parallel)
    for (int64_t t = 0; t < n; ++t) {
      rms_norm(&s.x[t * E], L.attn_norm.data(), &s.xn[t * E], E, hp.rms_eps);
    }
    {
      const WeightView* ws[3] = {&L.wq, &L.wk, &L.wv};
      float* ys[3] = {s.q.data(), s.k.data(), s.v.data()};
      const int64_t ldys[3] = {Q, KV, KV};
      MatMulShared(ws, ys, ldys, 3, s.xn.data(), n, n_threads, &s.mm);
    }
#pragma omp parallel for num_threads(n_threads) schedule(static) if (batch_parallel)
    for (int64_t t = 0; t < n; ++t) {  // each token writes its own cache row
      const float* rc = &s.rope[t * hp.n_rot];
      for (int64_t h = 0; h < hp.n_head; ++h) {
        rope_apply(&s.q[t * Q + h * hd], rc, hp.n_rot, hp.rope_mode);
      }
      for (int64_t h = 0; h < hp.n_head_kv; ++h) {
        rope_apply(&s.k[t * KV + h * hd], rc, hp.n_rot, hp.rope_mode);
      }
      kv.Store(l, places[t].slot, &s.k[t * KV], &s.v[t * KV]);
    }
    // Attention: token t sees the cache rows of its place (see TokenPlace).
    // For batches the query heads of a GQA group go in pairs (each key and
    // value row converted once for two heads, same results as one by one); a
    // single decode token keeps one job per head, which balances the threads.
    const AttendHeadFn attend = Active().attend_head;
    const AttendHeadPairFn attend_pair = Active().attend_head_pair;
    const AttendHeadQ8Fn attend_q8 = Active().attend_head_q8;
    const bool q8 = kv.type() == KvType::kQ8;
    const bool paired = !q8 && n > 1 && group >= 2;
    const int64_t per_group = paired ? (group + 1) / 2 : group;  // jobs per KV head
    const int64_t n_work = n * hp.n_head_kv * per_group;
    // Jobs go round the threads one by one: in causal prefill later tokens
    // attend to more rows, so contiguous blocks of tokens would leave the
    // thread with the first tokens waiting for the one with the last.
#pragma omp parallel for num_threads(n_threads) schedule(static, 1) if (n_threads > 1)
    for (int64_t job = 0; job < n_work; ++job) {
      const int64_t t = job / (hp.n_head_kv * per_group);
      const int64_t kvh = job / per_group % hp.n_head_kv, slot = job % per_group;
      float* scores = &s.scores[static_cast<size_t>(omp_get_thread_num()) * 2 *
                                static_cast<size_t>(kv.n_ctx())];
      const TokenPlace& pl = places[t];
      if (q8) {
        const int64_t h = kvh * group + slot;
        KvSpanQ8 spans[3];
        for (int r = 0; r < pl.n_rows; ++r) {
          spans[r] = kv.SpanQ8(l, pl.rows[r].begin, pl.rows[r].n, kvh);
        }
        attend_q8(&s.q[t * Q + h * hd], spans, pl.n_rows, kv.row_stride(), kv.scale_stride(),
                  static_cast<int>(hd), scale, scores, &s.att[t * Q + h * hd]);
        continue;
      }
      KvSpan spans[3];
      for (int r = 0; r < pl.n_rows; ++r) {
        spans[r] = kv.SpanF16(l, pl.rows[r].begin, pl.rows[r].n, kvh);
      }
      const int64_t h = kvh * group + (paired ? 2 * slot : slot);
      if (paired && 2 * slot + 1 < group) {
        attend_pair(&s.q[t * Q + h * hd], &s.q[t * Q + (h + 1) * hd], spans, pl.n_rows,
                    kv.row_stride(), static_cast<int>(hd), scale, scores, scores + kv.n_ctx(),
                    &s.att[t * Q + h * hd], &s.att[t * Q + (h + 1) * hd]);
      } else {
        attend(&s.q[t * Q + h * hd], spans, pl.n_rows, kv.row_stride(), static_cast<int>(hd), scale,
               scores, &s.att[t * Q + h * hd]);
      }
    }
    // xn is free: Q, K and V have read it. Projections land there (saves a buffer).
    MatMul(L.wo, s.att.data(), n, s.xn.data(), E, n_threads, &s.mm);
    for (int64_t i = 0; i < n * E; ++i) s.x[i] += s.xn[i];

      // Feed-forward block (SwiGLU).
#pragma omp parallel for num_threads(n_threads) schedule(static) if (batch_parallel)
    for (int64_t t = 0; t < n; ++t) {
      rms_norm(&s.x[t * E], L.ffn_norm.data(), &s.xn[t * E], E, hp.rms_eps);
    }
    {
      const WeightView* ws[2] = {&L.w_gate, &L.w_up};
      float* ys[2] = {s.gate.data(), s.up.data()};
      const int64_t ldys[2] = {F, F};
      MatMulShared(ws, ys, ldys, 2, s.xn.data(), n, n_threads, &s.mm);
    }
#pragma omp parallel for num_threads(n_threads) schedule(static) if (batch_parallel)
    for (int64_t t = 0; t < n; ++t) swiglu(&s.gate[t * F], &s.up[t * F], F);
    MatMul(L.w_down, s.gate.data(), n, s.xn.data(), E, n_threads, &s.mm);  // gate, up read xn
    for (int64_t i = 0; i < n * E; ++i) s.x[i] += s.xn[i];
  }

  if (which == LogitsFor::kLast) {
    // The LM head runs for the last position only.
    rms_norm(&s.x[(n - 1) * E], w.output_norm.data(), s.xn.data(), E, hp.rms_eps);
    MatMul(w.output, s.xn.data(), 1, logits, hp.n_vocab, n_threads, &s.mm);
  } else if (which == LogitsFor::kAll) {
    for (int64_t t = 0; t < n; ++t) {
      rms_norm(&s.x[t * E], w.output_norm.data(), &s.xn[t * E], E, hp.rms_eps);
    }
    MatMul(w.output, s.xn.data(), n, logits, hp.n_vocab, n_threads, &s.mm);
  }
}

}  // namespace ember
