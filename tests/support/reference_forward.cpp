#include "support/reference_forward.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "quant/fp16.h"
#include "quant/quantize.h"

namespace ember::test {
namespace {

using Vec = std::vector<double>;

// A tensor of the file as doubles, row-major [rows, cols] (cols = ne[0]).
struct Tensor {
  int64_t rows = 0, cols = 0;
  GgmlType type = GgmlType::kF32;
  std::vector<float> data;
};

Status Read(const GgufFile& f, const std::string& name, Tensor* t) {
  const GgufTensorInfo* info = f.FindTensor(name);
  if (info == nullptr) return BadFormat("reference: tensor '" + name + "' is missing");
  t->type = info->type;
  t->cols = static_cast<int64_t>(info->ne[0]);
  t->rows = static_cast<int64_t>(info->n_elements()) / t->cols;
  t->data.resize(info->n_elements());
  const size_t row_bytes = GgmlRowBytes(info->type, info->ne[0]);
  for (int64_t r = 0; r < t->rows; ++r) {
    DequantizeRow(info->type, info->data + static_cast<size_t>(r) * row_bytes,
                  &t->data[static_cast<size_t>(r * t->cols)], t->cols);
  }
  return Status::Ok();
}

// x rounded as an int8 activation group of 32 (ReferenceOptions::int8_acts).
Vec Int8Acts(const Vec& x) {
  Vec y(x.size());
  for (size_t g = 0; g + 32 <= x.size(); g += 32) {
    float amax = 0;
    for (size_t j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(static_cast<float>(x[g + j])));
    const float id = amax != 0 ? 127.0f / amax : 0.0f;
    const double d = Fp16ToFp32(Fp32ToFp16(amax / 127.0f));
    for (size_t j = 0; j < 32; ++j) {
      y[g + j] = std::nearbyint(static_cast<float>(x[g + j]) * id) * d;
    }
  }
  return y;
}

// x rounded as ggml's Q8_K activation blocks of 256 (K-quant dot products).
Vec Q8KActs(const Vec& x) {
  Vec y(x.size());
  for (size_t g = 0; g + 256 <= x.size(); g += 256) {
    float amax = 0, max = 0;
    for (size_t j = 0; j < 256; ++j) {
      const float v = static_cast<float>(x[g + j]);
      if (std::fabs(v) > amax) {
        amax = std::fabs(v);
        max = v;
      }
    }
    if (amax == 0) continue;
    const float iscale = -128.0f / max;
    for (size_t j = 0; j < 256; ++j) {
      const float q = std::min(127.0f, std::nearbyint(iscale * static_cast<float>(x[g + j])));
      y[g + j] = static_cast<double>(q) * static_cast<double>(1.0f / iscale);
    }
  }
  return y;
}

bool IsKQuant(GgmlType t) {
  return t == GgmlType::kQ4_K || t == GgmlType::kQ5_K || t == GgmlType::kQ6_K;
}

bool g_int8_acts = false;  // set for one ReferenceForward call (tests run it on one thread)
bool g_ggml_acts = false;

// y = W x for W [rows, cols].
Vec MatVec(const Tensor& w, const Vec& x_in) {
  const Vec x = g_ggml_acts   ? (IsKQuant(w.type) ? Q8KActs(x_in) : Int8Acts(x_in))
                : g_int8_acts ? Int8Acts(x_in)
                              : x_in;
  Vec y(static_cast<size_t>(w.rows));
  for (int64_t r = 0; r < w.rows; ++r) {
    const float* row = &w.data[static_cast<size_t>(r * w.cols)];
    double acc = 0;
    for (int64_t c = 0; c < w.cols; ++c)
      acc += static_cast<double>(row[c]) * x[static_cast<size_t>(c)];
    y[static_cast<size_t>(r)] = acc;
  }
  return y;
}

// RMSNorm of x[off, off + n) in place, times weight.
void RmsNorm(Vec& x, size_t off, size_t n, const Tensor& w, double eps) {
  double ss = 0;
  for (size_t i = 0; i < n; ++i) ss += x[off + i] * x[off + i];
  const double inv = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
  for (size_t i = 0; i < n; ++i) x[off + i] = x[off + i] * inv * w.data[i];
}

// Rotates head vector x[off, off + head_dim) to position pos.
void Rope(Vec& x, size_t off, int64_t pos, const RopeConfig& rc,
          const std::vector<float>& factors) {
  const int half = rc.n_rot / 2;
  for (int i = 0; i < half; ++i) {
    double theta = static_cast<double>(pos) *
                   std::pow(static_cast<double>(rc.freq_base), -2.0 * i / rc.n_rot) * rc.freq_scale;
    if (rc.freq_factors) theta /= factors[static_cast<size_t>(i)];
    const size_t a = off + (rc.mode == RopeMode::kNeox ? i : 2 * i);
    const size_t b = rc.mode == RopeMode::kNeox ? a + half : a + 1;
    const double x0 = x[a], x1 = x[b], c = std::cos(theta), s = std::sin(theta);
    x[a] = x0 * c - x1 * s;
    x[b] = x0 * s + x1 * c;
  }
}

bool g_f16_gelu = false;  // ReferenceOptions::f16_gelu, set for one call

double Act(FfnKind kind, double g) {
  if (kind == FfnKind::kGeGlu && g_f16_gelu) {
    if (g <= -10.0) return 0.0;
    if (g >= 10.0) return g;
    const float h = Fp16ToFp32(Fp32ToFp16(static_cast<float>(g)));
    const float k = 0.7978845608028654f;  // sqrt(2 / pi), as ggml's GELU_COEF
    const float v = 0.5f * h * (1.0f + std::tanh(k * h * (1.0f + 0.044715f * h * h)));
    return Fp16ToFp32(Fp32ToFp16(v));
  }
  if (kind == FfnKind::kGeGlu) {
    const double k = std::sqrt(2.0 / 3.14159265358979323846);
    return 0.5 * g * (1.0 + std::tanh(k * (g + 0.044715 * g * g * g)));
  }
  return g / (1.0 + std::exp(-g));
}

struct Layer {
  Tensor attn_norm, wq, wk, wv, bq, bk, bv, q_norm, k_norm, wo, post_attn_norm;
  Tensor ffn_norm, w_gate, w_up, w_down, post_ffn_norm;
};

}  // namespace

Status ReferenceForward(const Model& model, const std::vector<int32_t>& tokens,
                        std::vector<float>* logits, const ReferenceOptions& options,
                        std::vector<float>* hidden) {
  g_int8_acts = options.int8_acts;
  g_f16_gelu = options.f16_gelu;
  g_ggml_acts = options.ggml_acts;
  const ModelConfig& c = model.config();
  const GgufFile& f = model.gguf();
  const int64_t n = static_cast<int64_t>(tokens.size());
  const size_t E = static_cast<size_t>(c.n_embd), hd = static_cast<size_t>(c.head_dim);
  const size_t Q = static_cast<size_t>(c.q_dim()), KV = static_cast<size_t>(c.kv_dim());
  Tensor embd, out_norm, out, rope_freqs;
  EMBER_RETURN_IF_ERROR(Read(f, "token_embd.weight", &embd));
  EMBER_RETURN_IF_ERROR(Read(f, "output_norm.weight", &out_norm));
  EMBER_RETURN_IF_ERROR(
      Read(f, f.FindTensor("output.weight") ? "output.weight" : "token_embd.weight", &out));
  if (f.FindTensor("rope_freqs.weight"))
    EMBER_RETURN_IF_ERROR(Read(f, "rope_freqs.weight", &rope_freqs));
  std::vector<Layer> layers(static_cast<size_t>(c.n_layer));
  for (int64_t l = 0; l < c.n_layer; ++l) {
    const LayerConfig& cfg = c.layer(l);
    Layer& L = layers[static_cast<size_t>(l)];
    const std::string p = "blk." + std::to_string(l) + ".";
    EMBER_RETURN_IF_ERROR(Read(f, p + "attn_norm.weight", &L.attn_norm));
    EMBER_RETURN_IF_ERROR(Read(f, p + "attn_q.weight", &L.wq));
    EMBER_RETURN_IF_ERROR(Read(f, p + "attn_k.weight", &L.wk));
    EMBER_RETURN_IF_ERROR(Read(f, p + "attn_v.weight", &L.wv));
    if (cfg.attn_bias) {
      EMBER_RETURN_IF_ERROR(Read(f, p + "attn_q.bias", &L.bq));
      EMBER_RETURN_IF_ERROR(Read(f, p + "attn_k.bias", &L.bk));
      EMBER_RETURN_IF_ERROR(Read(f, p + "attn_v.bias", &L.bv));
    }
    if (cfg.qk_norm) {
      EMBER_RETURN_IF_ERROR(Read(f, p + "attn_q_norm.weight", &L.q_norm));
      EMBER_RETURN_IF_ERROR(Read(f, p + "attn_k_norm.weight", &L.k_norm));
    }
    EMBER_RETURN_IF_ERROR(Read(f, p + "attn_output.weight", &L.wo));
    if (cfg.post_attn_norm)
      EMBER_RETURN_IF_ERROR(Read(f, p + "post_attention_norm.weight", &L.post_attn_norm));
    EMBER_RETURN_IF_ERROR(Read(f, p + "ffn_norm.weight", &L.ffn_norm));
    EMBER_RETURN_IF_ERROR(Read(f, p + "ffn_gate.weight", &L.w_gate));
    EMBER_RETURN_IF_ERROR(Read(f, p + "ffn_up.weight", &L.w_up));
    EMBER_RETURN_IF_ERROR(Read(f, p + "ffn_down.weight", &L.w_down));
    if (cfg.post_ffn_norm)
      EMBER_RETURN_IF_ERROR(Read(f, p + "post_ffw_norm.weight", &L.post_ffn_norm));
  }

  // The residual stream of every position.
  std::vector<Vec> x(static_cast<size_t>(n), Vec(E));
  for (int64_t t = 0; t < n; ++t) {
    for (size_t i = 0; i < E; ++i) {
      x[static_cast<size_t>(t)][i] =
          static_cast<double>(
              embd.data[static_cast<size_t>(tokens[static_cast<size_t>(t)]) * E + i]) *
          c.embd_scale;
    }
  }
  const double eps = c.rms_eps;
  for (int64_t l = 0; l < c.n_layer; ++l) {
    const LayerConfig& cfg = c.layer(l);
    const Layer& L = layers[static_cast<size_t>(l)];
    const RopeConfig& rc = c.rope_of(l);
    std::vector<Vec> q(static_cast<size_t>(n)), k(static_cast<size_t>(n)),
        v(static_cast<size_t>(n));
    for (int64_t t = 0; t < n; ++t) {
      Vec h = x[static_cast<size_t>(t)];
      RmsNorm(h, 0, E, L.attn_norm, eps);
      Vec& qt = q[static_cast<size_t>(t)] = MatVec(L.wq, h);
      Vec& kt = k[static_cast<size_t>(t)] = MatVec(L.wk, h);
      Vec& vt = v[static_cast<size_t>(t)] = MatVec(L.wv, h);
      if (cfg.attn_bias) {
        for (size_t i = 0; i < Q; ++i) qt[i] += L.bq.data[i];
        for (size_t i = 0; i < KV; ++i) kt[i] += L.bk.data[i];
        for (size_t i = 0; i < KV; ++i) vt[i] += L.bv.data[i];
      }
      for (size_t h0 = 0; h0 < Q; h0 += hd) {
        if (cfg.qk_norm) RmsNorm(qt, h0, hd, L.q_norm, eps);
        Rope(qt, h0, t, rc, rope_freqs.data);
      }
      for (size_t h0 = 0; h0 < KV; h0 += hd) {
        if (cfg.qk_norm) RmsNorm(kt, h0, hd, L.k_norm, eps);
        Rope(kt, h0, t, rc, rope_freqs.data);
      }
    }
    const size_t group = static_cast<size_t>(c.n_head / c.n_head_kv);
    for (int64_t t = 0; t < n; ++t) {
      Vec att(Q, 0.0);
      const int64_t first = cfg.window > 0 ? std::max<int64_t>(0, t - cfg.window + 1) : 0;
      for (size_t h = 0; h < static_cast<size_t>(c.n_head); ++h) {
        const size_t qo = h * hd, ko = (h / group) * hd;
        Vec s(static_cast<size_t>(t - first + 1));
        double mx = -1e300;
        for (int64_t u = first; u <= t; ++u) {
          double d = 0;
          for (size_t i = 0; i < hd; ++i)
            d += q[static_cast<size_t>(t)][qo + i] * k[static_cast<size_t>(u)][ko + i];
          s[static_cast<size_t>(u - first)] = d * cfg.attn_scale;
          mx = std::max(mx, s[static_cast<size_t>(u - first)]);
        }
        double sum = 0;
        for (double& e : s) sum += (e = std::exp(e - mx));
        for (int64_t u = first; u <= t; ++u) {
          const double p = s[static_cast<size_t>(u - first)] / sum;
          for (size_t i = 0; i < hd; ++i) att[qo + i] += p * v[static_cast<size_t>(u)][ko + i];
        }
      }
      Vec o = MatVec(L.wo, att);
      if (cfg.post_attn_norm) RmsNorm(o, 0, E, L.post_attn_norm, eps);
      for (size_t i = 0; i < E; ++i) x[static_cast<size_t>(t)][i] += o[i];
    }
    for (int64_t t = 0; t < n; ++t) {
      Vec h = x[static_cast<size_t>(t)];
      RmsNorm(h, 0, E, L.ffn_norm, eps);
      Vec g = MatVec(L.w_gate, h), u = MatVec(L.w_up, h);
      for (size_t i = 0; i < g.size(); ++i) g[i] = Act(cfg.ffn, g[i]) * u[i];
      Vec d = MatVec(L.w_down, g);
      if (cfg.post_ffn_norm) RmsNorm(d, 0, E, L.post_ffn_norm, eps);
      for (size_t i = 0; i < E; ++i) x[static_cast<size_t>(t)][i] += d[i];
    }
  }
  logits->assign(static_cast<size_t>(n * c.n_vocab), 0.0f);
  if (hidden) hidden->assign(static_cast<size_t>(n) * E, 0.0f);
  for (int64_t t = 0; t < n; ++t) {
    Vec h = x[static_cast<size_t>(t)];
    RmsNorm(h, 0, E, out_norm, eps);
    if (hidden) {
      for (size_t i = 0; i < E; ++i)
        (*hidden)[static_cast<size_t>(t) * E + i] = static_cast<float>(h[i]);
    }
    const Vec y = MatVec(out, h);
    for (int64_t i = 0; i < c.n_vocab; ++i) {
      double z = y[static_cast<size_t>(i)];
      if (c.logit_softcap > 0) z = c.logit_softcap * std::tanh(z / c.logit_softcap);
      (*logits)[static_cast<size_t>(t * c.n_vocab + i)] = static_cast<float>(z);
    }
  }
  return Status::Ok();
}

}  // namespace ember::test
