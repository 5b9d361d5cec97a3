// Attention of one head, or two heads of one GQA group, on AVX2 + F16C: 8 dims
// per register, keys and values converted from f16 with vcvtph2ps. Same math
// as AttendHead_ref; the dot products sum in 8 lanes and then across them, so
// results agree with the reference to float rounding (not bit for bit), and a
// paired head gives exactly what it gives alone.
#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/avx2_common.h"

namespace ember {
namespace {

inline __m256 LoadF16(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// Scores of H query heads (H = 1, or 2 heads of one GQA group) against four
// keys at a time: 4 H independent fma chains (one chain per key waited on the
// fma latency every 8 dims), each key row loaded and converted once for all
// H heads, reduced by hadd. A key's score does not depend on which keys share
// its block or on H: the lanes and the reduction order are the same for every
// slot, so prefill, decode, any split of the rows and paired or single heads
// agree bit for bit.
template <int H>
void Scores(const float* const* qh, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
            float scale, float* const* scores) {
  int64_t n_kv = 0;
  for (int i = 0; i < n_spans; ++i) {
    const KvSpan& sp = spans[i];
    for (int64_t j = 0; j < sp.n; j += 4) {
      // A short last block repeats its last key; the extra scores are dropped.
      const uint16_t* k[4];
      for (int b = 0; b < 4; ++b) {
        k[b] = sp.k + static_cast<size_t>(std::min<int64_t>(j + b, sp.n - 1)) * stride;
      }
      __m256 acc[H][4];
      for (int h = 0; h < H; ++h) {
        for (int b = 0; b < 4; ++b) acc[h][b] = _mm256_setzero_ps();
      }
      for (int d = 0; d < head_dim; d += 8) {
        __m256 kv[4];
        for (int b = 0; b < 4; ++b) kv[b] = LoadF16(k[b] + d);
        for (int h = 0; h < H; ++h) {
          const __m256 qv = _mm256_load_ps(qh[h] + d);
          for (int b = 0; b < 4; ++b) acc[h][b] = _mm256_fmadd_ps(qv, kv[b], acc[h][b]);
        }
      }
      const int64_t take = std::min<int64_t>(4, sp.n - j);
      for (int h = 0; h < H; ++h) {
        const __m256 s8 = _mm256_hadd_ps(_mm256_hadd_ps(acc[h][0], acc[h][1]),
                                         _mm256_hadd_ps(acc[h][2], acc[h][3]));
        const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
        alignas(16) float out4[4];
        _mm_store_ps(out4, _mm_mul_ps(s4, _mm_set1_ps(scale)));
        for (int b = 0; b < take; ++b) scores[h][n_kv + b] = out4[b];
      }
      n_kv += take;
    }
  }
}

// out_h[d0, d0 + 8 ND) = sum_j p_h[j] v_j[d0, d0 + 8 ND) over the rows of all
// spans, for H heads sharing each converted value row. Each lane adds the
// rows in order whatever ND and H are, as the reference does.
template <int H, int ND>
void WeightedRows(const float* const* p, const KvSpan* spans, int n_spans, size_t stride, int d0,
                  float* const* out) {
  __m256 acc[H][ND];
  for (int h = 0; h < H; ++h) {
    for (int c = 0; c < ND; ++c) acc[h][c] = _mm256_setzero_ps();
  }
  int64_t j_all = 0;
  for (int i = 0; i < n_spans; ++i) {
    const uint16_t* v = spans[i].v + d0;
    for (int64_t j = 0; j < spans[i].n; ++j, ++j_all, v += stride) {
      __m256 vv[ND];
      for (int c = 0; c < ND; ++c) vv[c] = LoadF16(v + 8 * c);
      for (int h = 0; h < H; ++h) {
        const __m256 pj = _mm256_set1_ps(p[h][j_all]);
        for (int c = 0; c < ND; ++c) acc[h][c] = _mm256_fmadd_ps(pj, vv[c], acc[h][c]);
      }
    }
  }
  for (int h = 0; h < H; ++h) {
    for (int c = 0; c < ND; ++c) _mm256_storeu_ps(out[h] + d0 + 8 * c, acc[h][c]);
  }
}

// H heads: 64 dims per pass over the rows for one head (8 accumulators), 32
// for two (2 x 4), so the accumulators and a row stay in 16 registers.
constexpr int kMaxHeadDim = 512;

template <int H>
void AttendHeads(const float* const* q, const KvSpan* spans, int n_spans, size_t stride,
                 int head_dim, float scale, float* const* scores, float* const* out) {
  alignas(32) float qbuf[H][kMaxHeadDim];
  const float* qh[H];
  for (int h = 0; h < H; ++h) {
    for (int d = 0; d < head_dim; d += 8) {
      // q rounded to f16, as the reference does.
      const __m256 x = _mm256_loadu_ps(q[h] + d);
      _mm256_store_ps(qbuf[h] + d, _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT)));
    }
    qh[h] = qbuf[h];
  }
  Scores<H>(qh, spans, n_spans, stride, head_dim, scale, scores);
  int64_t n_kv = 0;
  for (int i = 0; i < n_spans; ++i) n_kv += spans[i].n;
  for (int h = 0; h < H; ++h) Softmax_avx2(scores[h], n_kv);
  const float* const* p = scores;
  constexpr int kChunk = H == 1 ? 8 : 4;  // ymm per head per pass
  for (int d0 = 0; d0 < head_dim; d0 += 8 * kChunk) {
    switch (std::min(8 * kChunk, head_dim - d0) / 8) {
      case 8:
        WeightedRows<H, 8>(p, spans, n_spans, stride, d0, out);
        break;
      case 7:
        WeightedRows<H, 7>(p, spans, n_spans, stride, d0, out);
        break;
      case 6:
        WeightedRows<H, 6>(p, spans, n_spans, stride, d0, out);
        break;
      case 5:
        WeightedRows<H, 5>(p, spans, n_spans, stride, d0, out);
        break;
      case 4:
        WeightedRows<H, 4>(p, spans, n_spans, stride, d0, out);
        break;
      case 3:
        WeightedRows<H, 3>(p, spans, n_spans, stride, d0, out);
        break;
      case 2:
        WeightedRows<H, 2>(p, spans, n_spans, stride, d0, out);
        break;
      default:
        WeightedRows<H, 1>(p, spans, n_spans, stride, d0, out);
        break;
    }
  }
}

}  // namespace

void AttendHead_avx2(const float* q, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                     float scale, float* scores, float* out) {
  if (head_dim % 8 != 0 || head_dim > kMaxHeadDim) {
    AttendHead_ref(q, spans, n_spans, stride, head_dim, scale, scores, out);
    return;
  }
  AttendHeads<1>(&q, spans, n_spans, stride, head_dim, scale, &scores, &out);
}

void AttendHeadPair_avx2(const float* q0, const float* q1, const KvSpan* spans, int n_spans,
                         size_t stride, int head_dim, float scale, float* scores0, float* scores1,
                         float* out0, float* out1) {
  if (head_dim % 8 != 0 || head_dim > kMaxHeadDim) {
    AttendHeadPair_ref(q0, q1, spans, n_spans, stride, head_dim, scale, scores0, scores1, out0,
                       out1);
    return;
  }
  const float* q[2] = {q0, q1};
  float* scores[2] = {scores0, scores1};
  float* out[2] = {out0, out1};
  AttendHeads<2>(q, spans, n_spans, stride, head_dim, scale, scores, out);
}

}  // namespace ember
#endif
