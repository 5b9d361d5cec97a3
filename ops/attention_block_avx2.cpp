// AttendBlock on AVX2 + FMA + F16C: the bits of AttendBlock_ref, faster by
// sharing every converted key and value row among up to 16 queries.
//
// Scores: for 8 or more queries they lie in the lanes (W = 8 or 16 of them,
// transposed into qt[d][m]); each key row is converted to f32 once and its
// dims broadcast, so a lane holds one query's fma chain over d in order — the
// reference's chain. For fewer (a decode step's GQA group) the keys lie in
// the lanes instead, 8 rows transposed per 8 dims as f16 (BlockScoresKeys):
// the same chain per lane, every lane used.
// Softmax: per lane over the rows (masked below n_first and from n_visible on),
// sums in double.
// Values: dims in the lanes, four queries' probabilities broadcast per row:
// again one fma chain per (query, dim) in row order. Rows a query must not see
// get p = 0, and fma(0, v, acc) = acc for the finite values of an f16 cache.
#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "ops/attention.h"
#include "ops/attention_value_tiles.h"
#include "ops/exp_poly_avx2.h"
#include "ops/kernels.h"

namespace ember {
namespace {

inline __m256 LoadF16(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

inline void Prefetch(const uint16_t* p) {
  _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0);
}

// Rows wider than this many f16 make a values tile (kValueTileRows rows)
// larger than L1: their values pass prefetches the next tile itself
// (ValuesIsa), and the split's scores stage leaves their value rows alone.
constexpr size_t kValuesAheadStride = 128;

// st[row][W] = scale * (q_m · k_row) for every row of the spans. qt: [hd][W]
// f16-rounded queries; kf: [12][hd] scratch for converted key rows.
template <int QV>
void BlockScores(const float* qt, const KvSpan* spans, int n_spans, size_t stride, int hd,
                 float scale, bool prefetch_v, float* kf, float* st) {
  constexpr int W = 8 * QV;
  constexpr int Kb = 12 / QV;  // keys per pass: Kb x QV accumulators + QV + 1 in 16 registers
  const __m256 vscale = _mm256_set1_ps(scale);
  int64_t row = 0;
  for (int i = 0; i < n_spans; ++i) {
    const KvSpan& sp = spans[i];
    for (int64_t j = 0; j < sp.n; j += Kb) {
      // The next block's keys and this block's values, as in BlockScoresKeys.
      for (int64_t b = j; b < std::min<int64_t>(j + 2 * Kb, sp.n); ++b) {
        for (int d = 0; d < hd; d += 32) {
          if (b >= j + Kb) Prefetch(sp.k + static_cast<size_t>(b) * stride + d);
          if (b < j + Kb && prefetch_v) Prefetch(sp.v + static_cast<size_t>(b) * stride + d);
        }
      }
      // A short last block repeats its last key; the extra scores are dropped.
      for (int b = 0; b < Kb; ++b) {
        const uint16_t* k = sp.k + static_cast<size_t>(std::min<int64_t>(j + b, sp.n - 1)) * stride;
        for (int d = 0; d < hd; d += 8) _mm256_storeu_ps(kf + b * hd + d, LoadF16(k + d));
      }
      __m256 acc[Kb][QV];
      for (int b = 0; b < Kb; ++b) {
        for (int v = 0; v < QV; ++v) acc[b][v] = _mm256_setzero_ps();
      }
      for (int d = 0; d < hd; ++d) {
        __m256 qv[QV];
        for (int v = 0; v < QV; ++v) qv[v] = _mm256_loadu_ps(qt + d * W + 8 * v);
        for (int b = 0; b < Kb; ++b) {
          const __m256 kb = _mm256_broadcast_ss(kf + b * hd + d);
          for (int v = 0; v < QV; ++v) acc[b][v] = _mm256_fmadd_ps(qv[v], kb, acc[b][v]);
        }
      }
      // Constant indices only: a loop to `take` would keep acc in memory.
      const int64_t take = std::min<int64_t>(Kb, sp.n - j);
      for (int b = 0; b < Kb; ++b) {
        if (b >= take) break;
        for (int v = 0; v < QV; ++v) {
          _mm256_storeu_ps(st + (row + b) * W + 8 * v, _mm256_mul_ps(acc[b][v], vscale));
        }
      }
      row += take;
    }
  }
}

// BlockScores for NQ <= 7 queries, keys in the lanes: the same st[row][8]
// (lanes from NQ on left unset). With the queries in the lanes a GQA group of
// 3 (SmolLM2) or 4 (Gemma 3, Llama 3) used 3 or 4 of 8 lanes of every fma;
// here 8 keys' rows are transposed (as f16) and converted once per 8 dims, and each
// query's chain over d stays in order in its key's lane (the reference's
// chain), one fma per query and 8 dims.
template <int NQ>
void BlockScoresKeys(const float* qt, const KvSpan* spans, int n_spans, size_t stride, int hd,
                     float scale, bool prefetch_v, float* st) {
  constexpr int W = 8;
  const __m256 vscale = _mm256_set1_ps(scale);
  int64_t row = 0;
  for (int i = 0; i < n_spans; ++i) {
    const KvSpan& sp = spans[i];
    for (int64_t j = 0; j < sp.n; j += 8) {
      // A short last block repeats its last key; the extra scores are dropped.
      const uint16_t* k[8];
      for (int b = 0; b < 8; ++b) {
        k[b] = sp.k + static_cast<size_t>(std::min<int64_t>(j + b, sp.n - 1)) * stride;
      }
      // The rows come from memory (the weights' stream evicts the cache
      // between steps). Loading 8 dims of 8 rows keeps only 8 lines in
      // flight: ask now for the rest of this block's keys, the next block's,
      // and this block's values (BlockValues reads them after the softmax).
      // A cold 160-row call of 3 queries went from ~15 to ~10 us.
      for (int b = 0; b < 8; ++b) {
        for (int d = 32; d < hd; d += 32) Prefetch(k[b] + d);
      }
      for (int64_t b = j; b < std::min<int64_t>(j + 16, sp.n); ++b) {
        for (int d = 0; d < hd; d += 32) {
          if (b >= j + 8) Prefetch(sp.k + static_cast<size_t>(b) * stride + d);
          if (b < j + 8 && prefetch_v) Prefetch(sp.v + static_cast<size_t>(b) * stride + d);
        }
      }
      __m256 acc[NQ];
      for (int m = 0; m < NQ; ++m) acc[m] = _mm256_setzero_ps();
      // Dims d0 .. d0 + 7 of the 8 keys, transposed as f16 (three rounds of
      // 128-bit unpacks: 24, where the f32 transpose of 8 ymm took 24 ymm
      // shuffles plus 8 widening loads), then widened two dims at a time:
      // c0, c1 hold dims e0, e0 + 1 of the 8 keys. ~5% of SmolLM2's decode at
      // depth 4096 (docs/PERFORMANCE.md, stop 44).
      for (int d0 = 0; d0 < hd; d0 += 8) {
        __m128i r[8], t[8], u[8];
        for (int b = 0; b < 8; ++b) {
          r[b] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(k[b] + d0));
        }
        for (int i = 0; i < 4; ++i) {  // t[2i]: dims 0-3 of keys 2i, 2i+1; t[2i+1]: 4-7
          t[2 * i] = _mm_unpacklo_epi16(r[2 * i], r[2 * i + 1]);
          t[2 * i + 1] = _mm_unpackhi_epi16(r[2 * i], r[2 * i + 1]);
        }
        for (int h = 0; h < 2;
             ++h) {  // u[4h + q]: dims 4h + 2q, +1 of keys 0-3; u[4h + 2 + q]: 4-7
          u[4 * h + 0] = _mm_unpacklo_epi32(t[h], t[2 + h]);
          u[4 * h + 1] = _mm_unpackhi_epi32(t[h], t[2 + h]);
          u[4 * h + 2] = _mm_unpacklo_epi32(t[4 + h], t[6 + h]);
          u[4 * h + 3] = _mm_unpackhi_epi32(t[4 + h], t[6 + h]);
        }
        for (int h = 0; h < 2; ++h) {
          for (int q = 0; q < 2; ++q) {
            const __m128i lo = u[4 * h + q], hi = u[4 * h + 2 + q];
            const int e0 = d0 + 4 * h + 2 * q;
            const __m256 c0 = _mm256_cvtph_ps(_mm_unpacklo_epi64(lo, hi));
            const __m256 c1 = _mm256_cvtph_ps(_mm_unpackhi_epi64(lo, hi));
            for (int m = 0; m < NQ; ++m) {
              acc[m] = _mm256_fmadd_ps(_mm256_broadcast_ss(qt + e0 * W + m), c0, acc[m]);
            }
            for (int m = 0; m < NQ; ++m) {
              acc[m] = _mm256_fmadd_ps(_mm256_broadcast_ss(qt + (e0 + 1) * W + m), c1, acc[m]);
            }
          }
        }
      }
      alignas(32) float sc[NQ][8];
      for (int m = 0; m < NQ; ++m) _mm256_store_ps(sc[m], _mm256_mul_ps(acc[m], vscale));
      const int64_t take = std::min<int64_t>(8, sp.n - j);
      for (int64_t b = 0; b < take; ++b) {
        for (int m = 0; m < NQ; ++m) st[(row + b) * W + m] = sc[m][b];
      }
      row += take;
    }
  }
}

// Which lanes of st[row][W] see row j: lane 8v + l is query min(8v + l,
// n_q - 1), which sees n_first <= j < n_visible (n_first may be null: 0).
template <int QV>
class Visibility {
 public:
  Visibility(const int64_t* n_first, const int64_t* n_visible, int n_q)
      : n_first_(n_first), n_visible_(n_visible), n_q_(n_q) {
    for (int v = 0; v < QV; ++v) {
      alignas(32) int32_t first[8], lanes[8];
      for (int l = 0; l < 8; ++l) {
        const int m = std::min(8 * v + l, n_q - 1);
        first[l] = n_first ? static_cast<int32_t>(n_first[m]) : 0;
        lanes[l] = static_cast<int32_t>(n_visible[m]);
      }
      nf_[v] = _mm256_load_si256(reinterpret_cast<const __m256i*>(first));
      nv_[v] = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes));
    }
  }
  // Whether every lane sees every row of [r0, r1) (ops/attention.h).
  bool All(int64_t r0, int64_t r1) const { return SeesAll(n_first_, n_visible_, n_q_, r0, r1); }
  int n_q() const { return n_q_; }
  // Lanes with n_first <= j < n_visible: not (n_first > j), and n_visible > j.
  __m256 At(int v, int64_t j) const {
    const __m256i row = _mm256_set1_epi32(static_cast<int>(j));
    return _mm256_castsi256_ps(
        _mm256_andnot_si256(_mm256_cmpgt_epi32(nf_[v], row), _mm256_cmpgt_epi32(nv_[v], row)));
  }

 private:
  __m256i nf_[QV], nv_[QV];
  const int64_t *n_first_, *n_visible_;
  int n_q_;
};

// mx[v] = max(mx[v], the visible scores of rows [r0, r1) in its lanes).
// kAll: every lane sees every row (no masks: ~4 instructions a row fewer).
template <int QV, bool kAll>
void RowMaxT(const Visibility<QV>& vis, int64_t r0, int64_t r1, const float* st, __m256* mx) {
  constexpr int W = 8 * QV;
  const __m256 neg_inf = _mm256_set1_ps(-__builtin_inff());
  for (int v = 0; v < QV; ++v) {
    __m256 m = mx[v];
    for (int64_t j = r0; j < r1; ++j) {
      const __m256 s = _mm256_loadu_ps(st + j * W + 8 * v);
      m = _mm256_max_ps(m, kAll ? s : _mm256_blendv_ps(neg_inf, s, vis.At(v, j)));
    }
    mx[v] = m;
  }
}

template <int QV>
void RowMax(const Visibility<QV>& vis, int64_t r0, int64_t r1, const float* st, __m256* mx) {
  if (vis.All(r0, r1)) {
    RowMaxT<QV, true>(vis, r0, r1, st, mx);
  } else {
    RowMaxT<QV, false>(vis, r0, r1, st, mx);
  }
}

// In place over rows [r0, r1): p = ExpPoly(s - mx) where visible, 0
// elsewhere; with sums (2 QV of them: lanes 0-3, 4-7 of each vector) the p
// are added in double, in row order. kAll as in RowMaxT.
template <int QV, bool kAll>
void RowExpT(const Visibility<QV>& vis, int64_t r0, int64_t r1, const __m256* mx, float* st,
             __m256d* sums) {
  constexpr int W = 8 * QV;
  for (int v = 0; v < QV; ++v) {
    __m256d sum_lo = _mm256_setzero_pd(), sum_hi = _mm256_setzero_pd();
    for (int64_t j = r0; j < r1; ++j) {
      float* s = st + j * W + 8 * v;
      const __m256 e = ExpPoly8(_mm256_sub_ps(_mm256_loadu_ps(s), mx[v]));
      const __m256 p = kAll ? e : _mm256_and_ps(e, vis.At(v, j));
      _mm256_storeu_ps(s, p);
      if (sums) {
        sum_lo = _mm256_add_pd(sum_lo, _mm256_cvtps_pd(_mm256_castps256_ps128(p)));
        sum_hi = _mm256_add_pd(sum_hi, _mm256_cvtps_pd(_mm256_extractf128_ps(p, 1)));
      }
    }
    if (sums) {
      sums[2 * v] = sum_lo;
      sums[2 * v + 1] = sum_hi;
    }
  }
}

// RowExpT<1, true> for 4 queries or fewer: two rows' lanes 0-3 in one ymm,
// so one ExpPoly8 serves two rows (a decode step of SmolLM2's or Gemma 3's
// GQA group, 3 and 4 queries, used to exponentiate 8 lanes a row for 3 or 4).
// The same exp per lane, and the sums take row j's lanes before row j + 1's:
// the bits of RowExpT. Lanes 4-7 of st are left as they are: no query reads
// them (ops/attention.h); sums[1], their sums, is 1.
void RowExpFour(int64_t r0, int64_t r1, __m256 mx, float* st, __m256d* sums) {
  const __m256 m2 = _mm256_permute2f128_ps(mx, mx, 0x00);  // lanes 0-3 in both halves
  __m256d sum = _mm256_setzero_pd();
  int64_t j = r0;
  for (; j + 2 <= r1; j += 2) {
    float* a = st + j * 8;
    const __m256 e = ExpPoly8(_mm256_sub_ps(_mm256_loadu2_m128(a + 8, a), m2));
    _mm256_storeu2_m128(a + 8, a, e);
    if (sums) {
      sum = _mm256_add_pd(sum, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
      sum = _mm256_add_pd(sum, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
    }
  }
  if (j < r1) {  // an odd last row
    float* a = st + j * 8;
    const __m128 x = _mm_loadu_ps(a);
    const __m256 e = ExpPoly8(_mm256_sub_ps(_mm256_set_m128(x, x), m2));
    _mm_storeu_ps(a, _mm256_castps256_ps128(e));
    if (sums) sum = _mm256_add_pd(sum, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
  }
  if (sums) {
    sums[0] = sum;
    sums[1] = _mm256_set1_pd(1.0);
  }
}

template <int QV>
void RowExp(const Visibility<QV>& vis, int64_t r0, int64_t r1, const __m256* mx, float* st,
            __m256d* sums) {
  if (QV == 1 && vis.n_q() <= 4 && vis.All(r0, r1)) {
    RowExpFour(r0, r1, mx[0], st, sums);
  } else if (vis.All(r0, r1)) {
    RowExpT<QV, true>(vis, r0, r1, mx, st, sums);
  } else {
    RowExpT<QV, false>(vis, r0, r1, mx, st, sums);
  }
}

// float(1 / sum) of four double sums, as _ref's static_cast<float>(1.0 / sum).
inline __m128 InvOf(__m256d sum) {
  return _mm256_cvtpd_ps(_mm256_div_pd(_mm256_set1_pd(1.0), sum));
}

// In place over st[n_rows][W]: p = ExpPoly(s - max) on the visible rows of
// each lane (n_first <= row < n_visible), 0 elsewhere; inv[m] = float(1 / sum
// p) with the sum in double. n_first may be null (0).
template <int QV>
void BlockSoftmax(const int64_t* n_first, const int64_t* n_visible, int n_q, int64_t n_rows,
                  float* st, float* inv) {
  const Visibility<QV> vis(n_first, n_visible, n_q);
  __m256 mx[QV];
  for (int v = 0; v < QV; ++v) mx[v] = _mm256_set1_ps(-__builtin_inff());
  RowMax<QV>(vis, 0, n_rows, st, mx);
  __m256d sums[2 * QV];
  RowExp<QV>(vis, 0, n_rows, mx, st, sums);
  for (int v = 0; v < 2 * QV; ++v) _mm_storeu_ps(inv + 4 * v, InvOf(sums[v]));
}

// ValuesInTiles' pass (ops/attention_value_tiles.h): a row's 16 dims are
// converted once for four queries, its probabilities broadcast; one fma chain
// per (query, dim) in row order. Inlined by force: out of line, g++ 12 kept
// acc on the stack, storing it after every fma (the block measured ~20%
// slower, stop 46).
struct ValuesIsa {
  // Where a tile outgrows L1 (rows of more than 128 f16: Gemma 3's 256),
  // the next tile's rows go into L2 meanwhile, a line per row every other
  // run (two 16-dim runs share a line). Gemma 3 at depth 4096: attention
  // -5%; for SmolLM2's and Qwen's 64 (16 KB tiles, their values already
  // asked for by the scores) it measured +-2%, so not there (stop 46).
  template <int W, bool kSum>
  [[gnu::always_inline]] static void Pass(const float* st, const KvSpan* spans, int n_spans,
                                          size_t stride, int m0, int n_out, int d0, bool carry,
                                          double* sum, float* const* out) {
    if (stride > kValuesAheadStride && d0 % 32 == 0) {
      Run<W, kSum, true>(st, spans, n_spans, stride, m0, n_out, d0, carry, sum, out);
    } else {
      Run<W, kSum, false>(st, spans, n_spans, stride, m0, n_out, d0, carry, sum, out);
    }
  }
  template <int W, bool kSum, bool kAhead>
  [[gnu::always_inline]] static void Run(const float* st, const KvSpan* spans, int n_spans,
                                         size_t stride, int m0, int n_out, int d0, bool carry,
                                         double* sum, float* const* out) {
    __m256 acc[4][2];
    for (int i = 0; i < 4; ++i) {
      const bool load = carry && i < n_out;
      acc[i][0] = load ? _mm256_loadu_ps(out[m0 + i] + d0) : _mm256_setzero_ps();
      acc[i][1] = load ? _mm256_loadu_ps(out[m0 + i] + d0 + 8) : _mm256_setzero_ps();
    }
    __m256d s4 = kSum ? _mm256_loadu_pd(sum) : _mm256_setzero_pd();
    const float* p = st + m0;
    const size_t next = kValueTileRows * stride;
    for (int s = 0; s < n_spans; ++s) {
      const uint16_t* v = spans[s].v + d0;
      for (int64_t r = 0; r < spans[s].n; ++r, v += stride, p += W) {
        if constexpr (kAhead) _mm_prefetch(reinterpret_cast<const char*>(v + next), _MM_HINT_T1);
        const __m256 v0 = LoadF16(v), v1 = LoadF16(v + 8);
        for (int i = 0; i < 4; ++i) {
          const __m256 pi = _mm256_broadcast_ss(p + i);
          acc[i][0] = _mm256_fmadd_ps(pi, v0, acc[i][0]);
          acc[i][1] = _mm256_fmadd_ps(pi, v1, acc[i][1]);
        }
        if constexpr (kSum) s4 = _mm256_add_pd(s4, _mm256_cvtps_pd(_mm_loadu_ps(p)));
      }
    }
    if constexpr (kSum) _mm256_storeu_pd(sum, s4);
    for (int i = 0; i < 4; ++i) {  // constant indices, as in BlockScores
      if (i >= n_out) break;
      _mm256_storeu_ps(out[m0 + i] + d0, acc[i][0]);
      _mm256_storeu_ps(out[m0 + i] + d0 + 8, acc[i][1]);
    }
  }
  static void Scale(float* o, int d0, int d1, float s) {
    const __m256 vs = _mm256_set1_ps(s);
    for (int d = d0; d < d1; d += 8) {
      _mm256_storeu_ps(o + d, _mm256_mul_ps(_mm256_loadu_ps(o + d), vs));
    }
  }
};

// Scores of up to 8 queries into st[row][8]: keys in the lanes for fewer
// than 8, queries in the lanes for 8. prefetch_v: ask for the rows' values
// too, for a values pass that follows on this thread.
void Scores8(const float* qt, int n_q, const KvSpan* spans, int n_spans, size_t stride, int hd,
             float scale, bool prefetch_v, float* kf, float* st) {
  using ScoresFn = void (*)(const float*, const KvSpan*, int, size_t, int, float, bool, float*);
  constexpr ScoresFn kKeysInLanes[8] = {nullptr,
                                        BlockScoresKeys<1>,
                                        BlockScoresKeys<2>,
                                        BlockScoresKeys<3>,
                                        BlockScoresKeys<4>,
                                        BlockScoresKeys<5>,
                                        BlockScoresKeys<6>,
                                        BlockScoresKeys<7>};
  if (n_q < 8) {
    kKeysInLanes[n_q](qt, spans, n_spans, stride, hd, scale, prefetch_v, st);
  } else {
    BlockScores<1>(qt, spans, n_spans, stride, hd, scale, prefetch_v, kf, st);
  }
}

template <int QV>
void AttendBlockW(const float* const* q, const int64_t* n_first, const int64_t* n_visible, int n_q,
                  const KvSpan* spans, int n_spans, size_t stride, int hd, float scale,
                  float* scratch, float* const* out) {
  constexpr int W = 8 * QV;
  int64_t n_rows = 0;
  for (int i = 0; i < n_spans; ++i) n_rows += spans[i].n;
  float* st = scratch;                            // [n_rows][W] scores, then probabilities
  float* qt = st + kAttendBlockQueries * n_rows;  // [hd][W] queries, f16-rounded
  float* kf = qt + kAttendBlockQueries * hd;      // [12][hd] converted key rows
  // Lanes past n_q repeat the last query; their results are not stored.
  for (int m = 0; m < W; ++m) {
    const float* src = q[std::min(m, n_q - 1)];
    for (int d = 0; d < hd; d += 8) {
      alignas(32) float r[8];
      _mm256_store_ps(
          r, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(src + d), _MM_FROUND_TO_NEAREST_INT)));
      for (int l = 0; l < 8; ++l) qt[(d + l) * W + m] = r[l];
    }
  }
  if constexpr (QV == 1) {
    Scores8(qt, n_q, spans, n_spans, stride, hd, scale, true, kf, st);
  } else {
    BlockScores<QV>(qt, spans, n_spans, stride, hd, scale, true, kf, st);
  }
  alignas(32) float inv[W];
  BlockSoftmax<QV>(n_first, n_visible, n_q, n_rows, st, inv);
  ValuesInTiles<W, ValuesIsa>(st, inv, n_q, spans, n_spans, stride, 0, hd, out);
}

}  // namespace

void AttendBlock_avx2(const float* const* q, const int64_t* n_first, const int64_t* n_visible,
                      int n_q, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                      float scale, float* scratch, float* const* out) {
  if (head_dim % kAttendBlockDimMultiple != 0 || n_q < 1 || n_q > kAttendBlockQueries) {
    AttendBlock_ref(q, n_first, n_visible, n_q, spans, n_spans, stride, head_dim, scale, scratch,
                    out);
    return;
  }
  if (n_q <= 8) {
    AttendBlockW<1>(q, n_first, n_visible, n_q, spans, n_spans, stride, head_dim, scale, scratch,
                    out);
  } else {
    AttendBlockW<2>(q, n_first, n_visible, n_q, spans, n_spans, stride, head_dim, scale, scratch,
                    out);
  }
}

// The stages (ops/attention.h) with the kernels above; head dims that are
// not a multiple of 16 take _ref's.
void AttendScores_avx2(const float* qt, int n_q, const KvSpan* spans, int n_spans, size_t stride,
                       int head_dim, float scale, float* kf, float* st) {
  if (head_dim % kAttendBlockDimMultiple != 0) {
    AttendScores_ref(qt, n_q, spans, n_spans, stride, head_dim, scale, kf, st);
    return;
  }
  // A split block's values are read by other threads, in runs of dims:
  // prefetched here, the rows would sit in this thread's caches. Rows wider
  // than kValuesAheadStride get no prefetch here (their values pass asks
  // for them): Gemma 3, attention per token on 2 threads, 9 of 9 runs
  // faster, -0.2% to -7% (stop 46). Narrower ones keep it (not measured:
  // they split only with more threads than KV heads).
  Scores8(qt, n_q, spans, n_spans, stride, head_dim, scale, stride <= kValuesAheadStride, kf, st);
}

void AttendMax_avx2(const int64_t* n_first, const int64_t* n_visible, int n_q, int64_t r0,
                    int64_t r1, const float* st, float* mx) {
  __m256 m = _mm256_set1_ps(-__builtin_inff());
  RowMax<1>(Visibility<1>(n_first, n_visible, n_q), r0, r1, st, &m);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, m);
  std::copy(lanes, lanes + n_q, mx);
}

void AttendExp_avx2(const int64_t* n_first, const int64_t* n_visible, int n_q, int64_t r0,
                    int64_t r1, const float* mx, float* st) {
  alignas(32) float lanes[8];
  for (int l = 0; l < 8; ++l) lanes[l] = mx[std::min(l, n_q - 1)];
  const __m256 m = _mm256_load_ps(lanes);
  RowExp<1>(Visibility<1>(n_first, n_visible, n_q), r0, r1, &m, st, nullptr);
}

void AttendValues_avx2(const float* st, int n_q, const KvSpan* spans, int n_spans, size_t stride,
                       int d0, int d1, float* const* out) {
  if (d0 % kAttendBlockDimMultiple != 0 || d1 % kAttendBlockDimMultiple != 0) {
    AttendValues_ref(st, n_q, spans, n_spans, stride, d0, d1, out);
    return;
  }
  ValuesInTiles<kAttendLanes, ValuesIsa>(st, nullptr, n_q, spans, n_spans, stride, d0, d1, out);
}

}  // namespace ember
#endif
