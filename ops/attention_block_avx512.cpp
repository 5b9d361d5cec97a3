// AttendBlock on AVX-512 (F + DQ + BW + VL): the bits of AttendBlock_ref.
//
// Scores: for up to 8 queries (a decode step's GQA group) the keys lie in the
// lanes: 16 key rows are transposed as f16 per 16 dims and widened, and each
// query's broadcast dims meet 16 keys per fma (BlockScoresKeys); score rows
// hold W = 4 or 8 floats. For 9 to 16 queries (prefill: tokens x heads) the
// queries lie in the lanes, transposed into qt[d][16]; each key row is
// converted to f32 once and its dims broadcast (BlockScores); W = 16. Either
// way a lane holds one (query, key) fma chain over d in order — the
// reference's chain.
// Softmax: per query over the rows (masked below n_first and from n_visible
// on), 16 / W rows per register, sums in double in row order. Values: dims in
// the lanes, 32 or 64 per pass, the queries' probabilities broadcast per row:
// one fma chain per (query, dim) in row order. Rows a query must not see get
// p = 0, and fma(0, v, acc) = acc for the finite values of an f16 cache.
#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "ops/attention.h"
#include "ops/exp_poly.h"
#include "ops/kernels.h"

namespace ember {
namespace {

static_assert(kAttendBlockQueries == 16, "one zmm of queries per block");
static_assert(kAttendBlockKeyRows >= 16, "BlockScores converts 16 key rows per pass");

inline __m512 LoadF16(const uint16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// One line into L1, or into L2.
inline void Prefetch(const uint16_t* p) {
  _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0);
}
inline void PrefetchL2(const uint16_t* p) {
  _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T1);
}

// Cache rows of at most this many dims (128 bytes) are read by
// BlockScoresKeys with the next block's keys and the block's values asked
// for into L1; wider ones with the keys asked for further ahead, into L2.
constexpr int kNearRowDims = 64;

// ExpPoly_ref (ops/exp_poly.h) for 16 floats: the operations of ExpPoly8.
inline __m512 ExpPoly16(__m512 x) {
  using namespace exp_poly;
  const __m512 v = _mm512_min_ps(_mm512_set1_ps(kMax), x);  // NaN x stays NaN
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(v, _mm512_set1_ps(kLog2e)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-kLn2Hi), v);
  r = _mm512_fmadd_ps(n, _mm512_set1_ps(-kLn2Lo), r);
  __m512 y = _mm512_set1_ps(kC0);
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(kC1));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(kC2));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(kC3));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(kC4));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(kC5));
  y = _mm512_fmadd_ps(y, _mm512_mul_ps(r, r), r);
  y = _mm512_add_ps(y, _mm512_set1_ps(1.0f));
  const __m512i e =
      _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
  const __m512 out = _mm512_mul_ps(y, _mm512_castsi512_ps(e));
  // Below kMin (and -inf) the exponent field would not hold 2^n: +0 there.
  const __mmask16 below = _mm512_cmp_ps_mask(x, _mm512_set1_ps(kMin), _CMP_LT_OQ);
  return _mm512_maskz_mov_ps(static_cast<__mmask16>(~below), out);
}

// The first min(n, 16) lanes.
// 8 doubles -> 8 floats. _mm512_cvtpd_ps passes _mm256_undefined_ps() as the
// merge source, whose self-initialisation GCC 12 reports as -Wuninitialized
// once inlined (an error under EMBER_WERROR); the zero-masked form with a
// full mask is the same instruction without it.
inline __m256 CvtPdPs(__m512d x) { return _mm512_maskz_cvtpd_ps(0xFF, x); }

inline __mmask16 Prefix(int64_t n) {
  return n >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << n) - 1);
}

// qt[d][16] = the block's queries rounded to f16, transposed (lane m: query
// m). Lanes past n_q repeat the last query; their results are not stored.
void TransposeQueries(const float* const* q, int n_q, int hd, float* qt) {
  for (int m = 0; m < 16; ++m) {
    const float* src = q[std::min(m, n_q - 1)];
    for (int d = 0; d < hd; d += 16) {
      alignas(64) float r[16];
      _mm512_store_ps(
          r, _mm512_cvtph_ps(_mm512_cvtps_ph(_mm512_loadu_ps(src + d), _MM_FROUND_TO_NEAREST_INT)));
      for (int l = 0; l < 16; ++l) qt[(d + l) * 16 + m] = r[l];
    }
  }
}

// f(std::integral_constant<int, HD>) with HD = hd for the common head dims
// (so the key rows are constant offsets from one pointer), else HD = 0.
template <class F>
void WithHeadDim(int hd, F&& f) {
  switch (hd) {
    case 64:
      f(std::integral_constant<int, 64>{});
      break;
    case 128:
      f(std::integral_constant<int, 128>{});
      break;
    default:
      f(std::integral_constant<int, 0>{});
      break;
  }
}

// st[row][16] = scale * (q_m · k_row) for every row of the spans, the queries
// in the lanes. qt: [hd][16] from TransposeQueries; kf: scratch of
// kAttendBlockKeyRows key rows, each converted to f32 once and its dims
// broadcast. HD > 0 fixes hd at compile time.
template <int HD>
void BlockScores(const float* qt, const KvSpan* spans, int n_spans, size_t stride, int hd_runtime,
                 float scale, float* kf, float* st) {
  constexpr int kKeys = 16;  // key rows (accumulators) per pass
  const int hd = HD > 0 ? HD : hd_runtime;
  const __m512 vscale = _mm512_set1_ps(scale);
  int64_t row = 0;
  for (int i = 0; i < n_spans; ++i) {
    const KvSpan& sp = spans[i];
    for (int64_t j = 0; j < sp.n; j += kKeys) {
      // A short last pass repeats its last key; the extra scores are dropped.
      for (int g = 0; g < kKeys; ++g) {
        const uint16_t* k = sp.k + static_cast<size_t>(std::min<int64_t>(j + g, sp.n - 1)) * stride;
        for (int d = 0; d < hd; d += 16) _mm512_storeu_ps(kf + g * hd + d, LoadF16(k + d));
      }
      __m512 acc[kKeys];
      for (int g = 0; g < kKeys; ++g) acc[g] = _mm512_setzero_ps();
      for (int d = 0; d < hd; ++d) {
        const __m512 qv = _mm512_loadu_ps(qt + d * 16);
        for (int g = 0; g < kKeys; ++g) {  // kf[g * hd + d]: an embedded-broadcast operand
          acc[g] = _mm512_fmadd_ps(qv, _mm512_set1_ps(kf[g * hd + d]), acc[g]);
        }
      }
      const int64_t take = std::min<int64_t>(kKeys, sp.n - j);
      for (int g = 0; g < kKeys; ++g) {  // constant indices: a loop to `take` keeps acc in memory
        if (g >= take) break;
        _mm512_storeu_ps(st + (row + g) * 16, _mm512_mul_ps(acc[g], vscale));
      }
      row += take;
    }
  }
}

// In place over st[n_rows][W], W = 16 / C: p = ExpPoly(s - max) on the visible
// rows of each query (n_first <= row < n_visible), 0 elsewhere; inv[m] =
// float(1 / sum p), the sum in double in row order. C rows per register; a
// last partial register is masked. n_first may be null (0).
template <int C>
void BlockSoftmax(const int64_t* n_first, const int64_t* n_visible, int n_q, int64_t n_rows,
                  float* st, float* inv) {
  constexpr int W = 16 / C;
  // Lane l of the register starting at row j is row j + l / W of query l % W:
  // visible when n_first - l / W <= j < n_visible - l / W.
  alignas(64) int32_t first[16], lanes[16];
  for (int l = 0; l < 16; ++l) {
    const int m = std::min(l % W, n_q - 1);
    first[l] = (n_first ? static_cast<int32_t>(n_first[m]) : 0) - l / W;
    lanes[l] = static_cast<int32_t>(n_visible[m]) - l / W;
  }
  const __m512i nf = _mm512_load_si512(first), nv = _mm512_load_si512(lanes);
  const __m512 neg_inf = _mm512_set1_ps(-__builtin_inff());
  const auto visible = [&](int64_t j) {  // and inside st: rows j .. n_rows - 1
    const __m512i row = _mm512_set1_epi32(static_cast<int>(j));
    return static_cast<__mmask16>(_mm512_cmple_epi32_mask(nf, row) &
                                  _mm512_cmpgt_epi32_mask(nv, row) & Prefix((n_rows - j) * W));
  };
  __m512 mx = neg_inf;
  for (int64_t j = 0; j < n_rows; j += C) {
    mx = _mm512_max_ps(mx, _mm512_mask_loadu_ps(neg_inf, visible(j), st + j * W));
  }
  // The max over the C rows of each query, in every copy.
  if constexpr (C >= 2)
    mx = _mm512_max_ps(mx, _mm512_shuffle_f32x4(mx, mx, _MM_SHUFFLE(1, 0, 3, 2)));
  if constexpr (C == 4)
    mx = _mm512_max_ps(mx, _mm512_shuffle_f32x4(mx, mx, _MM_SHUFFLE(2, 3, 0, 1)));
  __m512d sum_lo = _mm512_setzero_pd(), sum_hi = _mm512_setzero_pd();  // W == 16
  __m512d sum8 = _mm512_setzero_pd();                                  // W == 8
  __m256d sum4 = _mm256_setzero_pd();                                  // W == 4
  for (int64_t j = 0; j < n_rows; j += C) {
    const __mmask16 vis = visible(j);
    float* s = st + j * W;
    const __m512 x = _mm512_maskz_loadu_ps(vis, s);
    const __m512 p = _mm512_maskz_mov_ps(vis, ExpPoly16(_mm512_sub_ps(x, mx)));
    _mm512_mask_storeu_ps(s, Prefix((n_rows - j) * W), p);
    const __m256 p_lo = _mm512_castps512_ps256(p);
    const __m256 p_hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(p), 1));
    if constexpr (W == 16) {
      sum_lo = _mm512_add_pd(sum_lo, _mm512_cvtps_pd(p_lo));
      sum_hi = _mm512_add_pd(sum_hi, _mm512_cvtps_pd(p_hi));
    } else if constexpr (W == 8) {  // rows j, j + 1 in order (a row past the end adds +0)
      sum8 = _mm512_add_pd(sum8, _mm512_cvtps_pd(p_lo));
      sum8 = _mm512_add_pd(sum8, _mm512_cvtps_pd(p_hi));
    } else {  // rows j .. j + 3
      sum4 = _mm256_add_pd(sum4, _mm256_cvtps_pd(_mm256_castps256_ps128(p_lo)));
      sum4 = _mm256_add_pd(sum4, _mm256_cvtps_pd(_mm256_extractf128_ps(p_lo, 1)));
      sum4 = _mm256_add_pd(sum4, _mm256_cvtps_pd(_mm256_castps256_ps128(p_hi)));
      sum4 = _mm256_add_pd(sum4, _mm256_cvtps_pd(_mm256_extractf128_ps(p_hi, 1)));
    }
  }
  if constexpr (W == 16) {
    _mm256_storeu_ps(inv, CvtPdPs(_mm512_div_pd(_mm512_set1_pd(1.0), sum_lo)));
    _mm256_storeu_ps(inv + 8, CvtPdPs(_mm512_div_pd(_mm512_set1_pd(1.0), sum_hi)));
  } else if constexpr (W == 8) {
    _mm256_storeu_ps(inv, CvtPdPs(_mm512_div_pd(_mm512_set1_pd(1.0), sum8)));
  } else {
    _mm_storeu_ps(inv, _mm256_cvtpd_ps(_mm256_div_pd(_mm256_set1_pd(1.0), sum4)));
  }
}

// Queries m < n_q rounded to f16: qr[m][hd].
void RoundQueries(const float* const* q, int n_q, int hd, float* qr) {
  for (int m = 0; m < n_q; ++m) {
    for (int d = 0; d < hd; d += 16) {
      _mm512_storeu_ps(qr + m * hd + d, _mm512_cvtph_ps(_mm512_cvtps_ph(
                                            _mm512_loadu_ps(q[m] + d), _MM_FROUND_TO_NEAREST_INT)));
    }
  }
}

// Floats per score row of NQ <= 8 queries with the keys in the lanes.
constexpr int KeysRowWidth(int nq) { return nq <= 4 ? 4 : 8; }

// Scores of NQ <= 8 queries with the keys in the lanes: st[row][W], W =
// KeysRowWidth(NQ) (lanes from NQ on repeat query NQ - 1). 16 rows' dims d0 ..
// d0 + 15 are transposed as f16 and widened, so that one fma per query and
// dim serves 16 keys, each lane one (query, key) chain over d in order: the
// reference's. Before, with the queries in the lanes, each repeated 16 / 4 or
// 16 / 8 times (4 keys per fma), a decode step's GQA group (SmolLM2 3, Gemma 3
// and Llama 3 4, Qwen 3 2, Qwen 2.5 7, TinyLlama 8) left lanes idle, and its
// keys' interleaving cost about as much as the fmas. One call of 3 queries
// over 160 rows of 64 dims (a step of 4 SmolLM2 sequences) took 3.0 us in
// cache and 4.3 after a 64 MiB read that way, 2.1-2.4 and 3.0 this way; 7
// queries 4.9 / 5.8 -> 4.4 / 4.7 (docs/PERFORMANCE.md, stop 53).
// qr: [NQ][hd] from RoundQueries. kNear: hd <= kNearRowDims.
template <int NQ, bool kNear>
void BlockScoresKeys(const float* qr, const KvSpan* spans, int n_spans, size_t stride, int hd,
                     float scale, float* st) {
  constexpr int W = KeysRowWidth(NQ);
  const __m512 vscale = _mm512_set1_ps(scale);
  // (row i dims 0-7, row i + 8 dims 0-7, row i dims 8-15, row i + 8 dims
  // 8-15) from the two rows' 16 dims (the low 256 bits of each operand; the
  // casts' upper halves are never read): after the three rounds of in-lane
  // unpacks below, the low half of a result holds one dim of the 16 keys.
  const __m512i pair = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11);
  int64_t row = 0;
  for (int i = 0; i < n_spans; ++i) {
    const KvSpan& sp = spans[i];
    for (int64_t j = 0; j < sp.n; j += 16) {
      // A short last block repeats its last key; the extra scores are dropped.
      const uint16_t* k[16];
      for (int b = 0; b < 16; ++b) {
        k[b] = sp.k + static_cast<size_t>(std::min<int64_t>(j + b, sp.n - 1)) * stride;
      }
      // The rows come from memory (the weights' pass evicts the caches
      // between steps). Rows of up to 64 dims: the next block's keys into L1
      // and this block's values too (the values pass reads them after the
      // softmax). Wider rows: the keys two blocks ahead into L2 and the
      // block's own into L1, the values left to the hardware. Measured, one
      // call from memory: 3 x 160 rows x 64 dims 3.5 -> 2.8 us the first
      // way, 3.3 the second; 4 x 4096 x 256 650 the first way, 407-447 the
      // second (docs/PERFORMANCE.md, stop 53).
      if constexpr (kNear) {
        for (int64_t b = j + 16; b < std::min<int64_t>(j + 32, sp.n); ++b) {
          for (int d = 0; d < hd; d += 32) Prefetch(sp.k + static_cast<size_t>(b) * stride + d);
        }
        for (int64_t b = j; b < std::min<int64_t>(j + 16, sp.n); ++b) {
          for (int d = 0; d < hd; d += 32) Prefetch(sp.v + static_cast<size_t>(b) * stride + d);
        }
      } else {
        for (int64_t b = j + 32; b < std::min<int64_t>(j + 48, sp.n); ++b) {
          for (int d = 0; d < hd; d += 32) PrefetchL2(sp.k + static_cast<size_t>(b) * stride + d);
        }
        // The block's own key rows past their first line, into L1 from L2:
        // the dims loop below reaches them a line per 32 dims.
        for (int64_t b = j; b < std::min<int64_t>(j + 16, sp.n); ++b) {
          for (int d = 32; d < hd; d += 32) Prefetch(sp.k + static_cast<size_t>(b) * stride + d);
        }
      }
      __m512 acc[NQ];
      for (int m = 0; m < NQ; ++m) acc[m] = _mm512_setzero_ps();
      for (int d0 = 0; d0 < hd; d0 += 16) {
        __m512i z[8], t[8], u[8];
        for (int b = 0; b < 8; ++b) {
          const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(k[b] + d0));
          const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(k[b + 8] + d0));
          z[b] = _mm512_permutex2var_epi64(_mm512_castsi256_si512(lo), pair,
                                           _mm512_castsi256_si512(hi));
        }
        // In each 128-bit lane, the 8 x 8 transpose of the AVX2 kernel's
        // BlockScoresKeys: t[2a] dims 0-3 of keys 2a, 2a + 1 (t[2a + 1]: 4-7);
        // u[4h + q] dims 4h + 2q, + 1 of keys 0-3 (u[4h + 2 + q]: keys 4-7).
        for (int a = 0; a < 4; ++a) {
          t[2 * a] = _mm512_unpacklo_epi16(z[2 * a], z[2 * a + 1]);
          t[2 * a + 1] = _mm512_unpackhi_epi16(z[2 * a], z[2 * a + 1]);
        }
        for (int h = 0; h < 2; ++h) {
          u[4 * h + 0] = _mm512_unpacklo_epi32(t[h], t[2 + h]);
          u[4 * h + 1] = _mm512_unpackhi_epi32(t[h], t[2 + h]);
          u[4 * h + 2] = _mm512_unpacklo_epi32(t[4 + h], t[6 + h]);
          u[4 * h + 3] = _mm512_unpackhi_epi32(t[4 + h], t[6 + h]);
        }
        // c[e] (e = 0 .. 7): dim d0 + e of the 16 keys in its low half,
        // dim d0 + 8 + e in its high half.
        __m512i c[8];
        for (int h = 0; h < 2; ++h) {
          for (int q = 0; q < 2; ++q) {
            const int e = 4 * h + 2 * q;
            c[e] = _mm512_unpacklo_epi64(u[4 * h + q], u[4 * h + 2 + q]);
            c[e + 1] = _mm512_unpackhi_epi64(u[4 * h + q], u[4 * h + 2 + q]);
          }
        }
        for (int e = 0; e < 8; ++e) {
          const __m512 kd = _mm512_cvtph_ps(_mm512_castsi512_si256(c[e]));
          for (int m = 0; m < NQ; ++m) {
            acc[m] = _mm512_fmadd_ps(_mm512_set1_ps(qr[m * hd + d0 + e]), kd, acc[m]);
          }
        }
        for (int e = 0; e < 8; ++e) {
          const __m512 kd = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(c[e], 1));
          for (int m = 0; m < NQ; ++m) {
            acc[m] = _mm512_fmadd_ps(_mm512_set1_ps(qr[m * hd + d0 + 8 + e]), kd, acc[m]);
          }
        }
      }
      // NQ queries x 16 rows -> 16 rows x W queries: in-lane 4 x 4
      // transposes (r[x] holds rows x, x + 4, x + 8, x + 12 of queries 0-3,
      // r[4 + x] of queries 4-7), then the lanes in row order.
      __m512 a[W];
      for (int m = 0; m < W; ++m) a[m] = _mm512_mul_ps(acc[std::min(m, NQ - 1)], vscale);
      __m512 r[W];
      for (int g = 0; g < W; g += 4) {
        const __m512 t0 = _mm512_unpacklo_ps(a[g], a[g + 1]),
                     t1 = _mm512_unpackhi_ps(a[g], a[g + 1]);
        const __m512 t2 = _mm512_unpacklo_ps(a[g + 2], a[g + 3]),
                     t3 = _mm512_unpackhi_ps(a[g + 2], a[g + 3]);
        const auto pd = [](__m512 x) { return _mm512_castps_pd(x); };
        r[g + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(pd(t0), pd(t2)));
        r[g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(pd(t0), pd(t2)));
        r[g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(pd(t1), pd(t3)));
        r[g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(pd(t1), pd(t3)));
      }
      const int64_t take = std::min<int64_t>(16, sp.n - j);
      if constexpr (W == 4) {  // a register holds 4 rows
        const __m512 x0 = _mm512_shuffle_f32x4(r[0], r[1], _MM_SHUFFLE(1, 0, 1, 0));  // 0 4 1 5
        const __m512 x1 = _mm512_shuffle_f32x4(r[2], r[3], _MM_SHUFFLE(1, 0, 1, 0));  // 2 6 3 7
        const __m512 y0 = _mm512_shuffle_f32x4(r[0], r[1], _MM_SHUFFLE(3, 2, 3, 2));  // 8 12 9 13
        const __m512 y1 = _mm512_shuffle_f32x4(r[2], r[3], _MM_SHUFFLE(3, 2, 3, 2));  // 10 14 11 15
        const __m512 rows[4] = {_mm512_shuffle_f32x4(x0, x1, _MM_SHUFFLE(2, 0, 2, 0)),
                                _mm512_shuffle_f32x4(x0, x1, _MM_SHUFFLE(3, 1, 3, 1)),
                                _mm512_shuffle_f32x4(y0, y1, _MM_SHUFFLE(2, 0, 2, 0)),
                                _mm512_shuffle_f32x4(y0, y1, _MM_SHUFFLE(3, 1, 3, 1))};
        for (int x = 0; x < 4; ++x) {
          if (4 * x >= take) break;
          _mm512_mask_storeu_ps(st + (row + 4 * x) * 4, Prefix((take - 4 * x) * 4), rows[x]);
        }
      } else {  // 2 rows: rows 4l + x and 4l + x + 1 (x = 0, 2) from lane l of
                // r[x], r[4 + x], r[x + 1], r[5 + x], in that order. The lane
                // is an immediate: l a template argument, not a loop variable
                // (at -O1 the loop is not unrolled).
        const auto lane = [&](auto l) {
          constexpr int kSel = decltype(l)::value * 0x55;  // lane l in all four
          for (int x = 0; x < 4; x += 2) {
            const int at = 4 * decltype(l)::value + x;  // the first of the two rows
            if (at >= take) continue;
            const __m512 p1 = _mm512_shuffle_f32x4(r[x], r[4 + x], kSel);
            const __m512 p2 = _mm512_shuffle_f32x4(r[x + 1], r[5 + x], kSel);
            _mm512_mask_storeu_ps(st + (row + at) * 8, Prefix((take - at) * 8),
                                  _mm512_shuffle_f32x4(p1, p2, _MM_SHUFFLE(2, 0, 2, 0)));
          }
        };
        lane(std::integral_constant<int, 0>{});
        lane(std::integral_constant<int, 1>{});
        lane(std::integral_constant<int, 2>{});
        lane(std::integral_constant<int, 3>{});
      }
      row += take;
    }
  }
}

// out[m0 + i][0, hd) for the n_out <= NQ queries from m0 on, DV x 16 dims per
// pass: a row's dims converted once for all, the NQ probabilities of its st
// row (W floats, from m0) broadcast.
template <int W, int NQ, int DV>
void BlockValues(const float* st, const float* inv, const KvSpan* spans, int n_spans, size_t stride,
                 int hd, int m0, int n_out, float* const* out) {
  for (int d0 = 0; d0 < hd; d0 += 16 * DV) {
    __m512 acc[NQ][DV];
    for (int i = 0; i < NQ; ++i) {
      for (int x = 0; x < DV; ++x) acc[i][x] = _mm512_setzero_ps();
    }
    const float* p = st + m0;
    for (int s = 0; s < n_spans; ++s) {
      const uint16_t* v = spans[s].v + d0;
      for (int64_t r = 0; r < spans[s].n; ++r, v += stride, p += W) {
        __m512 vx[DV];
        for (int x = 0; x < DV; ++x) vx[x] = LoadF16(v + 16 * x);
        for (int i = 0; i < NQ; ++i) {
          const __m512 pi = _mm512_set1_ps(p[i]);
          for (int x = 0; x < DV; ++x) acc[i][x] = _mm512_fmadd_ps(pi, vx[x], acc[i][x]);
        }
      }
    }
    for (int i = 0; i < NQ; ++i) {  // constant indices: a loop to n_out keeps acc in memory
      if (i >= n_out) break;
      const __m512 sc = _mm512_set1_ps(inv[m0 + i]);
      for (int x = 0; x < DV; ++x) {
        _mm512_storeu_ps(out[m0 + i] + d0 + 16 * x, _mm512_mul_ps(acc[i][x], sc));
      }
    }
  }
}

// A block of NQ <= 8 queries (a decode step's GQA group): keys in the lanes,
// the softmax of BlockSoftmax over W = KeysRowWidth(NQ) floats a row, values
// for exactly NQ queries (64 dims a pass for up to 4, 32 for more: the
// accumulators stay in registers).
template <int NQ>
void AttendBlockKeys(const float* const* q, const int64_t* n_first, const int64_t* n_visible,
                     const KvSpan* spans, int n_spans, size_t stride, int hd, float scale,
                     float* scratch, float* const* out) {
  constexpr int W = KeysRowWidth(NQ);
  int64_t n_rows = 0;
  for (int i = 0; i < n_spans; ++i) n_rows += spans[i].n;
  float* st = scratch;                            // [n_rows][W] scores, then probabilities
  float* qr = st + kAttendBlockQueries * n_rows;  // [NQ][hd] queries, f16-rounded
  RoundQueries(q, NQ, hd, qr);
  if (hd <= kNearRowDims) {
    BlockScoresKeys<NQ, true>(qr, spans, n_spans, stride, hd, scale, st);
  } else {
    BlockScoresKeys<NQ, false>(qr, spans, n_spans, stride, hd, scale, st);
  }
  alignas(64) float inv[W];
  BlockSoftmax<16 / W>(n_first, n_visible, NQ, n_rows, st, inv);
  if (NQ <= 4 && hd % 64 == 0) {
    BlockValues<W, NQ, 4>(st, inv, spans, n_spans, stride, hd, 0, NQ, out);
  } else {
    BlockValues<W, NQ, 2>(st, inv, spans, n_spans, stride, hd, 0, NQ, out);
  }
}

// A block of 9 to 16 queries (prefill: tokens x heads of a GQA group), the
// queries in the lanes.
void AttendBlockQueries(const float* const* q, const int64_t* n_first, const int64_t* n_visible,
                        int n_q, const KvSpan* spans, int n_spans, size_t stride, int hd,
                        float scale, float* scratch, float* const* out) {
  constexpr int NQ = 8;  // queries per values pass
  int64_t n_rows = 0;
  for (int i = 0; i < n_spans; ++i) n_rows += spans[i].n;
  float* st = scratch;                            // [n_rows][16] scores, then probabilities
  float* qt = st + kAttendBlockQueries * n_rows;  // [hd][16] queries, f16-rounded
  float* kf = qt + kAttendBlockQueries * hd;      // converted key rows
  TransposeQueries(q, n_q, hd, qt);
  WithHeadDim(hd, [&](auto HD) {
    BlockScores<decltype(HD)::value>(qt, spans, n_spans, stride, hd, scale, kf, st);
  });
  alignas(64) float inv[16];
  BlockSoftmax<1>(n_first, n_visible, n_q, n_rows, st, inv);
  for (int m0 = 0; m0 < n_q; m0 += NQ) {
    BlockValues<16, NQ, 2>(st, inv, spans, n_spans, stride, hd, m0, std::min(NQ, n_q - m0), out);
  }
}

}  // namespace

void AttendBlock_avx512(const float* const* q, const int64_t* n_first, const int64_t* n_visible,
                        int n_q, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                        float scale, float* scratch, float* const* out) {
  if (head_dim % 32 != 0 || n_q < 1 || n_q > kAttendBlockQueries) {
    AttendBlock_avx2(q, n_first, n_visible, n_q, spans, n_spans, stride, head_dim, scale, scratch,
                     out);
  } else if (n_q <= 8) {
    using Fn = void (*)(const float* const*, const int64_t*, const int64_t*, const KvSpan*, int,
                        size_t, int, float, float*, float* const*);
    constexpr Fn kKeys[9] = {nullptr,
                             AttendBlockKeys<1>,
                             AttendBlockKeys<2>,
                             AttendBlockKeys<3>,
                             AttendBlockKeys<4>,
                             AttendBlockKeys<5>,
                             AttendBlockKeys<6>,
                             AttendBlockKeys<7>,
                             AttendBlockKeys<8>};
    kKeys[n_q](q, n_first, n_visible, spans, n_spans, stride, head_dim, scale, scratch, out);
  } else {
    AttendBlockQueries(q, n_first, n_visible, n_q, spans, n_spans, stride, head_dim, scale, scratch,
                       out);
  }
}

}  // namespace ember
#endif
