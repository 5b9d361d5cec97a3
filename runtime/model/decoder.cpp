#include "runtime/model/decoder.h"

#include <algorithm>
#include <cmath>

#include "ops/activation.h"
#include "ops/ggml_numerics.h"
#include "ops/kernels.h"
#include "ops/norm.h"

namespace ember {
namespace {

void Resize(std::vector<float>& v, int64_t n) {
  if (v.size() < static_cast<size_t>(n)) v.resize(static_cast<size_t>(n));
}

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
  const ModelConfig& c = model.config();
  const int64_t per_token =  // bytes of x, xn, q, k, v, att, gate and up
      4 * (2 * c.n_embd + 2 * c.q_dim() + 2 * c.kv_dim() + 2 * c.n_ff);
  const int64_t budget = static_cast<int64_t>(model.loaded_weight_bytes() / 32);
  return std::max<int64_t>(64, budget / per_token / 64 * 64);
}

// The element-wise functions of a pass: ember's kernels, or llama.cpp's
// arithmetic with --numerics ggml (RmsNorm_ref is ggml's: the squares summed
// in double in order).
struct PassKernels {
  RmsNormFn rms_norm;
  SwiGluFn swiglu;
  GeGluFn geglu;
  RopeApplyFn rope_apply;
};

// What a sub-chunk's layer step needs besides the layer.
struct Step {
  const ModelConfig& c;
  const PassKernels& k;
  const ForwardSeq* seqs;  // [n_seqs] the pass's sequences (one, but for ForwardMany)
  int64_t n_seqs;
  const int64_t* begin;  // [n_seqs + 1] the first row of each sequence in the pass
  DecoderScratch& s;
  int n_threads;
  bool ggml;

  // The sequence that row t of the pass belongs to (passes hold a few).
  int64_t SeqOf(int64_t t) const {
    int64_t i = 0;
    while (begin[i + 1] <= t) ++i;
    return i;
  }
};

// y[t] = x[t] + b for m rows of width n (a projection's bias).
void AddBias(float* y, const std::vector<float>& b, int64_t m, int64_t n) {
  for (int64_t t = 0; t < m; ++t) {
    for (int64_t i = 0; i < n; ++i) y[t * n + i] += b[static_cast<size_t>(i)];
  }
}

// The attention sub-layer for tokens t0..t0+m of the chunk: x[t0..] gains
// the attention output. pl: the m tokens' places as layer l sees them; rope:
// this layer's [n, n_rot] RoPE table for the whole chunk.
void AttentionBlock(const Step& st, int64_t l, const LayerWeights& L, float* x,
                    const TokenPlace* pl, int64_t t0, int64_t m, const float* rope) {
  const ModelConfig& c = st.c;
  const LayerConfig& cfg = c.layer(l);
  DecoderScratch& s = st.s;
  const int64_t E = c.n_embd, Q = c.q_dim(), KV = c.kv_dim(), hd = c.head_dim;
  const int n_rot = c.rope_of(l).n_rot;
  // Per-token work (norms, RoPE) runs on the threads for batches; a single
  // decode token is not worth waking them.
  const bool batch_parallel = m > 1 && st.n_threads > 1;
#pragma omp parallel for num_threads(st.n_threads) schedule(static) if (batch_parallel)
  for (int64_t t = 0; t < m; ++t) {
    st.k.rms_norm(&x[t * E], L.attn_norm.data(), &s.xn[t * E], E, c.rms_eps);
  }
  if (s.trace) s.trace("attn_norm", l, s.xn.data(), m, E);
  {
    const WeightView* ws[3] = {&L.wq, &L.wk, &L.wv};
    float* ys[3] = {s.q.data(), s.k.data(), s.v.data()};
    const int64_t ldys[3] = {Q, KV, KV};
    MatMulShared(ws, ys, ldys, 3, s.xn.data(), m, st.n_threads, &s.mm);
  }
  if (cfg.attn_bias) {
    AddBias(s.q.data(), L.bq, m, Q);
    AddBias(s.k.data(), L.bk, m, KV);
    AddBias(s.v.data(), L.bv, m, KV);
  }
#pragma omp parallel for num_threads(st.n_threads) schedule(static) if (batch_parallel)
  for (int64_t t = 0; t < m; ++t) {  // each token writes its own cache row
    const float* rc = &rope[(t0 + t) * n_rot];
    for (int64_t h = 0; h < c.n_head; ++h) {
      float* q = &s.q[t * Q + h * hd];
      if (cfg.qk_norm) st.k.rms_norm(q, L.q_norm.data(), q, hd, c.rms_eps);
      st.k.rope_apply(q, rc, n_rot, c.rope_of(l).mode);
    }
    for (int64_t h = 0; h < c.n_head_kv; ++h) {
      float* k = &s.k[t * KV + h * hd];
      if (cfg.qk_norm) st.k.rms_norm(k, L.k_norm.data(), k, hd, c.rms_eps);
      st.k.rope_apply(k, rc, n_rot, c.rope_of(l).mode);
    }
    st.seqs[st.SeqOf(t0 + t)].kv->Store(l, pl[t].slot, &s.k[t * KV], &s.v[t * KV]);
  }
  if (s.trace) {
    s.trace("Qcur", l, s.q.data(), m, Q);
    s.trace("Kcur", l, s.k.data(), m, KV);
    s.trace("Vcur", l, s.v.data(), m, KV);
  }
  // Each sequence's tokens attend to its own cache, as they would alone; the
  // sequences' jobs share one parallel region.
  std::vector<AttentionArgs>& attn = s.attn_args;
  attn.clear();
  for (int64_t i = st.SeqOf(t0); i < st.n_seqs && st.begin[i] < t0 + m; ++i) {
    const int64_t lo = std::max(st.begin[i], t0) - t0, hi = std::min(st.begin[i + 1], t0 + m) - t0;
    attn.push_back({st.seqs[i].kv, l, pl + lo, hi - lo, &s.q[lo * Q], &s.att[lo * Q], c.n_head,
                    c.n_head_kv, hd, cfg.attn_scale, st.n_threads, s.scores.data()});
  }
  if (st.ggml) {
    for (const AttentionArgs& args : attn) AttendGgml(args);
  } else {
    AttendMany(attn.data(), static_cast<int64_t>(attn.size()));
  }
  // xn is free: Q, K and V have read it. Projections land there (saves a buffer).
  MatMul(L.wo, s.att.data(), m, s.xn.data(), E, st.n_threads, &s.mm);
  if (s.trace) {
    s.trace("kqv_out", l, s.att.data(), m, Q);
    s.trace("attn_out", l, s.xn.data(), m, E);
  }
  if (cfg.post_attn_norm) {
    for (int64_t t = 0; t < m; ++t) {
      st.k.rms_norm(&s.xn[t * E], L.post_attn_norm.data(), &s.xn[t * E], E, c.rms_eps);
    }
    if (s.trace) s.trace("attn_post_norm", l, s.xn.data(), m, E);
  }
  for (int64_t i = 0; i < m * E; ++i) x[i] += s.xn[i];
  if (s.trace) s.trace("ffn_inp", l, x, m, E);
}

// The feed-forward sub-layer for m tokens: x gains down(act(gate) * up).
void FeedForwardBlock(const Step& st, int64_t l, const LayerWeights& L, float* x, int64_t m) {
  const ModelConfig& c = st.c;
  const LayerConfig& cfg = c.layer(l);
  DecoderScratch& s = st.s;
  const int64_t E = c.n_embd, F = c.n_ff;
  const bool batch_parallel = m > 1 && st.n_threads > 1;
#pragma omp parallel for num_threads(st.n_threads) schedule(static) if (batch_parallel)
  for (int64_t t = 0; t < m; ++t) {
    st.k.rms_norm(&x[t * E], L.ffn_norm.data(), &s.xn[t * E], E, c.rms_eps);
  }
  if (s.trace) s.trace("ffn_norm", l, s.xn.data(), m, E);
  {
    const WeightView* ws[2] = {&L.w_gate, &L.w_up};
    float* ys[2] = {s.gate.data(), s.up.data()};
    const int64_t ldys[2] = {F, F};
    MatMulShared(ws, ys, ldys, 2, s.xn.data(), m, st.n_threads, &s.mm);
  }
  if (s.trace) {
    s.trace("ffn_gate", l, s.gate.data(), m, F);
    s.trace("ffn_up", l, s.up.data(), m, F);
  }
  const SwiGluFn act = cfg.ffn == FfnKind::kGeGlu ? st.k.geglu : st.k.swiglu;
#pragma omp parallel for num_threads(st.n_threads) schedule(static) if (batch_parallel)
  for (int64_t t = 0; t < m; ++t) act(&s.gate[t * F], &s.up[t * F], F);
  if (s.trace)
    s.trace(cfg.ffn == FfnKind::kGeGlu ? "ffn_geglu" : "ffn_swiglu", l, s.gate.data(), m, F);
  MatMul(L.w_down, s.gate.data(), m, s.xn.data(), E, st.n_threads, &s.mm);  // gate, up read xn
  if (s.trace) s.trace("ffn_out", l, s.xn.data(), m, E);
  if (cfg.post_ffn_norm) {
    for (int64_t t = 0; t < m; ++t) {
      st.k.rms_norm(&s.xn[t * E], L.post_ffn_norm.data(), &s.xn[t * E], E, c.rms_eps);
    }
    if (s.trace) s.trace("ffn_post_norm", l, s.xn.data(), m, E);
  }
  for (int64_t i = 0; i < m * E; ++i) x[i] += s.xn[i];
  if (s.trace) s.trace("l_out", l, x, m, E);
}

// logits[i] = cap * tanh(logits[i] / cap), as ggml computes it.
void SoftCap(float* logits, int64_t n, float cap) {
  const float inv = 1.0f / cap;
  for (int64_t i = 0; i < n; ++i) logits[i] = std::tanh(logits[i] * inv) * cap;
}

}  // namespace

void Forward(const Model& model, KvCache& kv, DecoderScratch& s, const int32_t* tokens,
             const TokenPlace* places, int64_t n, int n_threads, LogitsFor which, float* logits) {
  const ForwardSeq seq{&kv, tokens, places, n, which, logits};
  ForwardMany(model, s, &seq, 1, n_threads);
}

void ForwardMany(const Model& model, DecoderScratch& s, const ForwardSeq* seqs, int64_t n_seqs,
                 int n_threads) {
  const ModelConfig& c = model.config();
  const ModelWeights& w = model.weights();
  const int64_t E = c.n_embd, Q = c.q_dim(), KV = c.kv_dim(), F = c.n_ff;
  // The pass's rows: each sequence's tokens, one sequence after another.
  std::vector<int64_t>& begin = s.seq_begin;  // kept in the scratch: no allocation per step
  begin.assign(static_cast<size_t>(n_seqs) + 1, 0);
  for (int64_t i = 0; i < n_seqs; ++i) begin[i + 1] = begin[i] + seqs[i].n;
  const int64_t n = begin[n_seqs];
  const TokenPlace* places = seqs[0].places;
  if (n_seqs > 1) {
    s.places.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n_seqs; ++i) {
      std::copy(seqs[i].places, seqs[i].places + seqs[i].n, s.places.begin() + begin[i]);
    }
    places = s.places.data();
  }
  // Windowed layers see the places' win_* fields.
  const TokenPlace* win = places;
  if (c.max_window() > 0) {
    s.win_places.resize(static_cast<size_t>(n));
    for (int64_t t = 0; t < n; ++t) s.win_places[static_cast<size_t>(t)] = WindowView(places[t]);
    win = s.win_places.data();
  }
  // ggml numerics: llama.cpp's arithmetic for every operation. Its attention
  // form depends on the batch size (the peer's n_ubatch), so the batch stays
  // whole; so does a traced pass (whole [n, width] activations per name), and
  // a batch whose tokens see the rows of later ones. A pass over several
  // sequences stays whole too (it is a few tokens of each).
  const bool ggml = model.numerics() == Numerics::kGgml;
  const bool split = n_seqs == 1 && !ggml && !s.trace && n > 64 && LaterSlotsUnseen(places, n) &&
                     (win == places || LaterSlotsUnseen(win, n));
  const int64_t sub = split ? std::min(n, SubChunkTokens(model)) : n;
  int n_rot = 0;
  for (const RopeConfig& r : c.ropes) n_rot = std::max(n_rot, r.n_rot);
  int64_t scores = 0;
  for (int64_t i = 0; i < n_seqs; ++i) {
    for (int64_t l = 0; l < c.n_layer; ++l) {
      scores = std::max(scores, AttentionScratchPerThread(*seqs[i].kv, l));
    }
  }
  Resize(s.x, n * E);
  Resize(s.xn, sub * E);
  Resize(s.q, sub * Q);
  Resize(s.k, sub * KV);
  Resize(s.v, sub * KV);
  Resize(s.att, sub * Q);
  Resize(s.gate, sub * F);
  Resize(s.up, sub * F);
  Resize(s.scores, n_threads * scores);
  Resize(s.rope, static_cast<int64_t>(c.ropes.size()) * n * n_rot);

  // Embedding rows, dequantized (and scaled, for Gemma).
  for (int64_t i = 0; i < n_seqs; ++i) {
    for (int64_t t = 0; t < seqs[i].n; ++t) {
      WeightRow(w.token_embd, seqs[i].tokens[t], &s.x[(begin[i] + t) * E]);
    }
  }
  if (c.embd_scale != 1.0f) {
    for (int64_t i = 0; i < n * E; ++i) s.x[i] *= c.embd_scale;
  }
  // RoPE tables: cos/sin per position, one table per RoPE config (n_rot apart).
  for (size_t r = 0; r < c.ropes.size(); ++r) {
    const RopeConfig& rc = c.ropes[r];
    const float* factors = rc.freq_factors ? w.rope_freqs.data() : nullptr;
    for (int64_t t = 0; t < n; ++t) {
      RopeCache(&s.rope[static_cast<int64_t>(r) * n * n_rot + t * rc.n_rot], places[t].pos,
                rc.n_rot, rc.freq_base, rc.freq_scale, factors);
    }
  }
  const PassKernels k =
      ggml ? PassKernels{RmsNorm_ref, GgmlSwiGlu, nullptr, GgmlRopeApply}
           : PassKernels{Active().rms_norm, Active().swiglu, Active().geglu, Active().rope_apply};
  const Step st{c, k, seqs, n_seqs, begin.data(), s, n_threads, ggml};

  for (int64_t l = 0; l < c.n_layer; ++l) {
    const LayerWeights& L = w.layers[static_cast<size_t>(l)];
    const LayerConfig& cfg = c.layer(l);
    const float* rope = &s.rope[static_cast<int64_t>(cfg.rope) * n * n_rot];
    const TokenPlace* pl = cfg.window > 0 ? win : places;
    // Sub-chunk [t0, t0 + m): its tokens' rows of x; the other buffers hold
    // its rows only. Its keys and values are stored before its attention, and
    // earlier sub-chunks' are in the cache already: causal as one batch.
    for (int64_t t0 = 0; t0 < n; t0 += sub) {
      const int64_t m = std::min(sub, n - t0);
      float* x = &s.x[t0 * E];
      AttentionBlock(st, l, L, x, pl + t0, t0, m, rope);
      FeedForwardBlock(st, l, L, x, m);
    }
  }

  // Hidden states asked for instead of logits: the final norm of every row
  // of those sequences, and no LM head for them.
  for (int64_t i = 0; i < n_seqs; ++i) {
    if (seqs[i].which != LogitsFor::kHidden) continue;
    for (int64_t t = 0; t < seqs[i].n; ++t) {
      k.rms_norm(&s.x[(begin[i] + t) * E], w.output_norm.data(), seqs[i].logits + t * E, E,
                 c.rms_eps);
    }
  }
  // The LM head: the final norm, then logits for the rows asked for.
  if (n_seqs == 1) {
    const LogitsFor which = seqs[0].which;
    float* logits = seqs[0].logits;
    if (which == LogitsFor::kLast) {
      k.rms_norm(&s.x[(n - 1) * E], w.output_norm.data(), s.xn.data(), E, c.rms_eps);
      MatMul(w.output, s.xn.data(), 1, logits, c.n_vocab, n_threads, &s.mm);
      if (c.logit_softcap > 0) SoftCap(logits, c.n_vocab, c.logit_softcap);
    } else if (which == LogitsFor::kAll) {
      for (int64_t t0 = 0; t0 < n; t0 += sub) {
        const int64_t m = std::min(sub, n - t0);
        for (int64_t t = 0; t < m; ++t) {
          k.rms_norm(&s.x[(t0 + t) * E], w.output_norm.data(), &s.xn[t * E], E, c.rms_eps);
        }
        float* out = logits + t0 * c.n_vocab;
        MatMul(w.output, s.xn.data(), m, out, c.n_vocab, n_threads, &s.mm);
        if (c.logit_softcap > 0) SoftCap(out, m * c.n_vocab, c.logit_softcap);
      }
    }
    return;
  }
  // Several sequences: the rows that want logits go through the head
  // together (it is read once; for Gemma 3 it is most of the weights), in
  // groups of at most 16 rows, and are copied to their sequences.
  std::vector<std::pair<int64_t, float*>>& rows = s.head_rows;
  rows.clear();
  for (int64_t i = 0; i < n_seqs; ++i) {
    const ForwardSeq& q = seqs[i];
    if (q.which == LogitsFor::kLast) rows.emplace_back(begin[i + 1] - 1, q.logits);
    if (q.which == LogitsFor::kAll) {
      for (int64_t t = 0; t < q.n; ++t) rows.emplace_back(begin[i] + t, q.logits + t * c.n_vocab);
    }
  }
  const int64_t group = std::min<int64_t>(16, sub);
  Resize(s.head_out, group * c.n_vocab);
  const int64_t n_rows = static_cast<int64_t>(rows.size());
  for (int64_t r0 = 0; r0 < n_rows; r0 += group) {
    const int64_t m = std::min(group, n_rows - r0);
    for (int64_t r = 0; r < m; ++r) {
      k.rms_norm(&s.x[rows[r0 + r].first * E], w.output_norm.data(), &s.xn[r * E], E, c.rms_eps);
    }
    MatMul(w.output, s.xn.data(), m, s.head_out.data(), c.n_vocab, n_threads, &s.mm);
    if (c.logit_softcap > 0) SoftCap(s.head_out.data(), m * c.n_vocab, c.logit_softcap);
    for (int64_t r = 0; r < m; ++r) {
      std::copy_n(&s.head_out[r * c.n_vocab], c.n_vocab, rows[r0 + r].second);
    }
  }
}

}  // namespace ember
