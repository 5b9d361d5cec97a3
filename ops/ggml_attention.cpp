// ggml's flash attention (ggml_compute_forward_flash_attn_ext_f16) for one
// query, in its three forms; see ops/ggml_numerics.h. Compiled with
// -ffp-contract=off: every fused multiply-add is an explicit std::fma.
#include <algorithm>
#include <cmath>
#include <vector>

#include "ops/ggml_numerics.h"
#include "ops/kernels.h"
#include "quant/fp16.h"

namespace ember {
namespace {

// Row j (context order) of the spans.
struct RowRef {
  const uint16_t* k;
  const uint16_t* v;
};

class Rows {
 public:
  Rows(const KvSpan* spans, int n_spans, size_t stride)
      : spans_(spans), n_spans_(n_spans), stride_(stride) {}
  RowRef At(int64_t j) const {
    for (int s = 0; s < n_spans_; ++s) {
      if (j < spans_[s].n) {
        const size_t off = static_cast<size_t>(j) * stride_;
        return {spans_[s].k + off, spans_[s].v + off};
      }
      j -= spans_[s].n;
    }
    return {nullptr, nullptr};  // callers stay below the visible count
  }

 private:
  const KvSpan* spans_;
  int n_spans_;
  size_t stride_;
};

// _mm512_reduce_add_ps as GCC 12 expands it: halves, quarters, then pairs.
float ReduceAdd16(const float v[16]) {
  float a[8], b[4];
  for (int i = 0; i < 8; ++i) a[i] = v[i + 8] + v[i];
  for (int i = 0; i < 4; ++i) b[i] = a[i + 4] + a[i];
  const float c0 = b[0] + b[2], c1 = b[1] + b[3];
  return c0 + c1;
}

// The one-row loop over cells [begin, end): running max M, sum S and the f16
// accumulator vkq16 (all of which the caller initialises), with the kernel
// table's f16 primitives.
void OneRowLoop(const uint16_t* q16, const Rows& rows, int64_t begin, int64_t end, int head_dim,
                float scale, float* M, float* S, uint16_t* vkq16) {
  const Kernels& k = Active();
  for (int64_t j = begin; j < end; ++j) {
    const RowRef r = rows.At(j);
    const float s = k.ggml_dot_f16(r.k, q16, head_dim) * scale + 0.0f;  // + the mask's 0
    const float m_old = *M;
    float ms = 1.0f, vs = 1.0f;
    if (s > *M) {
      *M = s;
      ms = std::exp(m_old - *M);
      k.ggml_scale_f16(vkq16, ms, head_dim);
    } else {
      vs = std::exp(s - *M);
    }
    k.ggml_mad_f16(vkq16, r.v, vs, head_dim);
    *S = std::fma(*S, ms, vs);
  }
}

// Per-thread buffers of the one-row forms (they run once per query, head and
// layer: no allocation there): the query in f16, the f16 accumulator, a chunk's
// result in f32.
struct RowBuffers {
  std::vector<uint16_t> q16, vkq16;
  std::vector<float> chunk;
};

RowBuffers& BuffersFor(const float* q, int head_dim) {
  thread_local RowBuffers b;
  const size_t n = static_cast<size_t>(head_dim);
  b.q16.resize(n);
  b.vkq16.resize(n);
  b.chunk.resize(n);
  for (size_t d = 0; d < n; ++d) b.q16[d] = Fp32ToFp16(q[d]);
  return b;
}

void ScaleOut(float* out, int head_dim, float S) {
  const float s_inv = S == 0.0f ? 0.0f : 1.0f / S;
  for (int d = 0; d < head_dim; ++d) out[d] *= s_inv;
}

// ggml_vec_soft_max_f32 on one tile row (n a multiple of 16): y = exp(x - max)
// per 16 lanes, the sum of each register reduced and added in double.
double SoftMaxTile(float* x, int n, float max) {
  double sum = 0.0;
  for (int i = 0; i < n; i += 16) {
    for (int l = 0; l < 16; ++l) x[i + l] = GgmlExpAvx512(x[i + l] - max);
    sum += static_cast<double>(ReduceAdd16(x + i));
  }
  return sum;
}

}  // namespace

float GgmlDotF16_ref(const uint16_t* x, const uint16_t* y, int n) {
  const int np = n & ~63;
  float sum[4][16] = {};
  for (int i = 0; i < np; i += 64) {
    for (int r = 0; r < 4; ++r) {
      for (int l = 0; l < 16; ++l) {
        const int e = i + 16 * r + l;
        sum[r][l] = std::fma(Fp16ToFp32(x[e]), Fp16ToFp32(y[e]), sum[r][l]);
      }
    }
  }
  for (int l = 0; l < 16; ++l) {
    sum[0][l] = sum[0][l] + sum[2][l];
    sum[1][l] = sum[1][l] + sum[3][l];
    sum[0][l] = sum[0][l] + sum[1][l];
  }
  double sumf = ReduceAdd16(sum[0]);
  for (int i = np; i < n; ++i) {
    sumf += static_cast<double>(Fp16ToFp32(x[i]) * Fp16ToFp32(y[i]));
  }
  return static_cast<float>(sumf);
}

void GgmlScaleF16_ref(uint16_t* y, float v, int n) {
  for (int i = 0; i < n; ++i) y[i] = Fp32ToFp16(Fp16ToFp32(y[i]) * v);
}

void GgmlMadF16_ref(uint16_t* y, const uint16_t* x, float v, int n) {
  // The vector loop and ggml's scalar tail (contracted by GCC) are both fused.
  for (int i = 0; i < n; ++i) y[i] = Fp32ToFp16(std::fma(Fp16ToFp32(x[i]), v, Fp16ToFp32(y[i])));
}

void GgmlAttendTiledBlock_ref(const float* const* q, const int64_t* n_visible, int n_q,
                              const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                              float scale, float* /*scratch*/, float* const* out) {
  for (int m = 0; m < n_q; ++m) {
    GgmlAttendTiled(q[m], spans, n_spans, stride, head_dim, scale, n_visible[m], out[m]);
  }
}

void GgmlAttendOneRow(const float* q, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                      float scale, int64_t n_visible, float* out) {
  RowBuffers& b = BuffersFor(q, head_dim);
  std::fill(b.vkq16.begin(), b.vkq16.end(), uint16_t{0});
  float M = -INFINITY, S = 0.0f;
  OneRowLoop(b.q16.data(), Rows(spans, n_spans, stride), 0, n_visible, head_dim, scale, &M, &S,
             b.vkq16.data());
  for (int d = 0; d < head_dim; ++d) out[d] = Fp16ToFp32(b.vkq16[static_cast<size_t>(d)]);
  ScaleOut(out, head_dim, S);
}

void GgmlAttendTiled(const float* q, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                     float scale, int64_t n_visible, float* out) {
  const Rows rows(spans, n_spans, stride);
  float kq[kGgmlTileKv];
  std::fill(out, out + head_dim, 0.0f);
  float M = -INFINITY, S = 0.0f;
  for (int64_t ic = 0; ic < n_visible; ic += kGgmlTileKv) {
    const int64_t n_tile = std::min<int64_t>(kGgmlTileKv, n_visible - ic);
    // Scores: a chain of fused multiply-adds from 0 over the head dims (the
    // simd_gemm micro-kernel), scaled; masked and padded cells are -inf.
    for (int t = 0; t < kGgmlTileKv; ++t) {
      if (t >= n_tile) {
        kq[t] = -INFINITY;
        continue;
      }
      const uint16_t* k = rows.At(ic + t).k;
      float acc = 0.0f;
      for (int d = 0; d < head_dim; ++d) acc = std::fma(Fp16ToFp32(k[d]), q[d], acc);
      kq[t] = acc * scale + 0.0f;  // + the mask's 0
    }
    float tile_max = -INFINITY;
    for (int t = 0; t < kGgmlTileKv; ++t) tile_max = std::max(tile_max, kq[t]);
    const float m_new = std::fmax(M, tile_max);
    if (m_new > M) {
      const float ms = std::exp(M - m_new);
      for (int d = 0; d < head_dim; ++d) out[d] *= ms;
      S *= ms;
    }
    M = m_new;
    S = static_cast<float>(static_cast<double>(S) + SoftMaxTile(kq, kGgmlTileKv, m_new));
    // Values: per dim a chain of fused multiply-adds over the tile's cells,
    // continuing the accumulator (cells of weight 0 leave it unchanged).
    for (int t = 0; t < n_tile; ++t) {
      const uint16_t* v = rows.At(ic + t).v;
      for (int d = 0; d < head_dim; ++d) out[d] = std::fma(Fp16ToFp32(v[d]), kq[t], out[d]);
    }
  }
  ScaleOut(out, head_dim, S);
}

void GgmlAttendSplit(const float* q, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                     float scale, int64_t n_visible, int64_t n_kv, int n_threads, float* out) {
  const Rows rows(spans, n_spans, stride);
  RowBuffers& b = BuffersFor(q, head_dim);
  std::vector<uint16_t>& vkq16 = b.vkq16;
  std::vector<float>& chunk = b.chunk;
  const int64_t chunk_size = (n_kv + n_threads - 1) / n_threads;
  std::fill(out, out + head_dim, 0.0f);
  float m_final = -INFINITY, s_final = 0.0f;
  for (int c = 0; c < n_threads; ++c) {
    const int64_t begin = c * chunk_size;
    if (begin >= n_kv) continue;
    const int64_t end = std::min({begin + chunk_size, n_kv, n_visible});
    float M = -INFINITY, S = 0.0f;
    std::fill(vkq16.begin(), vkq16.end(), uint16_t{0});
    OneRowLoop(b.q16.data(), rows, begin, end, head_dim, scale, &M, &S, vkq16.data());
    if (S == 0.0f) continue;
    for (int d = 0; d < head_dim; ++d) chunk[static_cast<size_t>(d)] = Fp16ToFp32(vkq16[d]);
    const float m_new = std::fmax(m_final, M);
    const float scale_old = std::exp(m_final - m_new);
    const float scale_new = std::exp(M - m_new);
    for (int d = 0; d < head_dim; ++d) {
      out[d] = std::fma(out[d], scale_old, chunk[static_cast<size_t>(d)] * scale_new);
    }
    s_final = std::fma(s_final, scale_old, S * scale_new);
    m_final = m_new;
  }
  if (s_final != 0.0f) ScaleOut(out, head_dim, s_final);
}

int64_t GgmlKvCells(int64_t n_used) { return std::max<int64_t>(256, (n_used + 255) / 256 * 256); }

}  // namespace ember
