// AttendBlock on AVX-512 (F + DQ + BW + VL): the bits of AttendBlock_ref, as
// AttendBlock_avx2 computes them, with 16 lanes.
//
// Scores: the 16 queries lie in the lanes of one zmm (transposed into
// qt[d][16]); each key row is converted to f32 once and its dims broadcast
// (an embedded-broadcast fma), so a lane holds one query's fma chain over d in
// order — the reference's chain. Softmax: per lane over the rows (masked past
// n_visible), sums in double. Values: dims in the lanes, 32 per pass, eight
// queries' probabilities broadcast per row: one fma chain per (query, dim) in
// row order. Rows a query must not see get p = 0, and fma(0, v, acc) = acc for
// the finite values of an f16 cache.
#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ops/attention.h"
#include "ops/exp_poly.h"
#include "ops/kernels.h"

namespace ember {
namespace {

constexpr int W = 16;    // queries per block (lanes)
constexpr int kKb = 16;  // keys per pass: 16 accumulators; kf holds 16 rows

static_assert(kAttendBlockQueries == W, "one zmm of queries per block");

inline __m512 LoadF16(const uint16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

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

// In place: s[0..16) = ExpPoly(s - mx) in the lanes of vis, 0 elsewhere.
inline __m512 ExpVisible(float* s, __mmask16 vis, __m512 mx) {
  const __m512 p = _mm512_maskz_mov_ps(vis, ExpPoly16(_mm512_sub_ps(_mm512_loadu_ps(s), mx)));
  _mm512_storeu_ps(s, p);
  return p;
}

// Lanes 0-7 and 8-15 of p, widened to double.
inline __m512d LowPd(__m512 p) { return _mm512_cvtps_pd(_mm512_castps512_ps256(p)); }
inline __m512d HighPd(__m512 p) {
  return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(p), 1)));
}

// qt[d][16] = the block's queries rounded to f16, transposed: with kCopies 1
// lane m holds query m (16 queries), with 2 lanes 2m and 2m + 1 both hold
// query m (8 queries). Lanes past n_q repeat the last query; their results
// are not stored.
template <int kCopies>
void TransposeQueries(const float* const* q, int n_q, int hd, float* qt) {
  for (int m = 0; m < 16 / kCopies; ++m) {
    const float* src = q[std::min(m, n_q - 1)];
    for (int d = 0; d < hd; d += 16) {
      alignas(64) float r[16];
      _mm512_store_ps(
          r, _mm512_cvtph_ps(_mm512_cvtps_ph(_mm512_loadu_ps(src + d), _MM_FROUND_TO_NEAREST_INT)));
      for (int l = 0; l < 16; ++l) {
        for (int c = 0; c < kCopies; ++c) qt[(d + l) * 16 + kCopies * m + c] = r[l];
      }
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

// st[row][16] = scale * (q_m · k_row) for every row of the spans. qt: [hd][16]
// f16-rounded queries; kf: [16][hd] scratch for converted key rows. HD > 0
// fixes hd at compile time, so the 16 rows are constant offsets from one
// pointer (a run-time hd needs 16 pointers, more than the registers hold).
template <int HD>
void BlockScores(const float* qt, const KvSpan* spans, int n_spans, size_t stride, int hd_runtime,
                 float scale, float* kf, float* st) {
  const int hd = HD > 0 ? HD : hd_runtime;
  const __m512 vscale = _mm512_set1_ps(scale);
  int64_t row = 0;
  for (int i = 0; i < n_spans; ++i) {
    const KvSpan& sp = spans[i];
    for (int64_t j = 0; j < sp.n; j += kKb) {
      // A short last block repeats its last key; the extra scores are dropped.
      for (int b = 0; b < kKb; ++b) {
        const uint16_t* k = sp.k + static_cast<size_t>(std::min<int64_t>(j + b, sp.n - 1)) * stride;
        for (int d = 0; d < hd; d += 16) _mm512_storeu_ps(kf + b * hd + d, LoadF16(k + d));
      }
      __m512 acc[kKb];
      for (int b = 0; b < kKb; ++b) acc[b] = _mm512_setzero_ps();
      for (int d = 0; d < hd; ++d) {
        const __m512 qv = _mm512_loadu_ps(qt + d * W);
        for (int b = 0; b < kKb; ++b) {
          acc[b] = _mm512_fmadd_ps(qv, _mm512_set1_ps(kf[b * hd + d]), acc[b]);
        }
      }
      // Constant indices only: a loop to `take` would keep acc in memory.
      const int64_t take = std::min<int64_t>(kKb, sp.n - j);
      for (int b = 0; b < kKb; ++b) {
        if (b >= take) break;
        _mm512_storeu_ps(st + (row + b) * W, _mm512_mul_ps(acc[b], vscale));
      }
      row += take;
    }
  }
}

// In place over st[n_rows][16]: p = ExpPoly(s - max) on the visible rows of
// each lane, 0 elsewhere; inv[m] = float(1 / sum p) with the sum in double.
void BlockSoftmax(const int64_t* n_visible, int n_q, int64_t n_rows, float* st, float* inv) {
  alignas(64) int32_t lanes[W];
  for (int l = 0; l < W; ++l) lanes[l] = static_cast<int32_t>(n_visible[std::min(l, n_q - 1)]);
  const __m512i nv = _mm512_load_si512(lanes);
  const __m512 neg_inf = _mm512_set1_ps(-__builtin_inff());
  __m512 mx = neg_inf;
  for (int64_t j = 0; j < n_rows; ++j) {
    const __mmask16 vis = _mm512_cmpgt_epi32_mask(nv, _mm512_set1_epi32(static_cast<int>(j)));
    mx = _mm512_max_ps(mx, _mm512_mask_mov_ps(neg_inf, vis, _mm512_loadu_ps(st + j * W)));
  }
  __m512d sum_lo = _mm512_setzero_pd(), sum_hi = _mm512_setzero_pd();
  for (int64_t j = 0; j < n_rows; ++j) {
    const __mmask16 vis = _mm512_cmpgt_epi32_mask(nv, _mm512_set1_epi32(static_cast<int>(j)));
    const __m512 p = ExpVisible(st + j * W, vis, mx);
    sum_lo = _mm512_add_pd(sum_lo, LowPd(p));
    sum_hi = _mm512_add_pd(sum_hi, HighPd(p));
  }
  const __m512d one = _mm512_set1_pd(1.0);
  _mm256_storeu_ps(inv, _mm512_cvtpd_ps(_mm512_div_pd(one, sum_lo)));
  _mm256_storeu_ps(inv + 8, _mm512_cvtpd_ps(_mm512_div_pd(one, sum_hi)));
}

// out[m0 + i][d0, d0 + 32) for up to eight queries: the probabilities of a
// row are broadcast, its 32 dims converted once for all of them.
template <int W, int NQ>
void BlockValues(const float* st, const float* inv, const KvSpan* spans, int n_spans, size_t stride,
                 int m0, int n_out, int d0, float* const* out) {
  __m512 acc[NQ][2];
  for (int i = 0; i < NQ; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  const float* p = st + m0;
  for (int s = 0; s < n_spans; ++s) {
    const uint16_t* v = spans[s].v + d0;
    for (int64_t r = 0; r < spans[s].n; ++r, v += stride, p += W) {
      const __m512 v0 = LoadF16(v), v1 = LoadF16(v + 16);
      for (int i = 0; i < NQ; ++i) {
        const __m512 pi = _mm512_set1_ps(p[i]);
        acc[i][0] = _mm512_fmadd_ps(pi, v0, acc[i][0]);
        acc[i][1] = _mm512_fmadd_ps(pi, v1, acc[i][1]);
      }
    }
  }
  for (int i = 0; i < NQ; ++i) {  // constant indices, as in BlockScores
    if (i >= n_out) break;
    const __m512 s = _mm512_set1_ps(inv[m0 + i]);
    _mm512_storeu_ps(out[m0 + i] + d0, _mm512_mul_ps(acc[i][0], s));
    _mm512_storeu_ps(out[m0 + i] + d0 + 16, _mm512_mul_ps(acc[i][1], s));
  }
}

// Eight queries or fewer (a decode step's GQA group): two keys per register.
// Query i sits in lanes 2i and 2i + 1 (qt2[d][16]); a key pair's dims are
// interleaved (kf2[pair][d][2]) and broadcast as one 64-bit element, so lane
// 2i holds q_i · k_a and lane 2i + 1 q_i · k_b, each one fma chain over d.
// st rows then hold 8 floats.
constexpr int W8 = 8;
constexpr int kPairs = 8;  // key pairs per pass: kf2 holds 16 rows

template <int HD>
void BlockScores8(const float* qt2, const KvSpan* spans, int n_spans, size_t stride, int hd_runtime,
                  float scale, float* kf2, float* st) {
  const int hd = HD > 0 ? HD : hd_runtime;
  const __m512 vscale = _mm512_set1_ps(scale);
  // (a0 b0 a1 b1 ...) from a = dims d..d+15 of key a and b of key b.
  const __m512i lo_idx = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i hi_idx =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  // Scores of the pair: lanes (q0 a, q0 b, q1 a, ...) -> (a: q0..q7, b: q0..q7).
  const __m512i rows_idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
  int64_t row = 0;
  for (int i = 0; i < n_spans; ++i) {
    const KvSpan& sp = spans[i];
    for (int64_t j = 0; j < sp.n; j += 2 * kPairs) {
      // A short last block repeats its last key; the extra scores are dropped.
      for (int p = 0; p < kPairs; ++p) {
        const uint16_t* ka =
            sp.k + static_cast<size_t>(std::min<int64_t>(j + 2 * p, sp.n - 1)) * stride;
        const uint16_t* kb =
            sp.k + static_cast<size_t>(std::min<int64_t>(j + 2 * p + 1, sp.n - 1)) * stride;
        float* dst = kf2 + p * 2 * hd;
        for (int d = 0; d < hd; d += 16) {
          const __m512 a = LoadF16(ka + d), b = LoadF16(kb + d);
          _mm512_storeu_ps(dst + 2 * d, _mm512_permutex2var_ps(a, lo_idx, b));
          _mm512_storeu_ps(dst + 2 * d + 16, _mm512_permutex2var_ps(a, hi_idx, b));
        }
      }
      __m512 acc[kPairs];
      for (int p = 0; p < kPairs; ++p) acc[p] = _mm512_setzero_ps();
      for (int d = 0; d < hd; ++d) {
        const __m512 qv = _mm512_loadu_ps(qt2 + d * 16);
        for (int p = 0; p < kPairs; ++p) {
          double pair;
          std::memcpy(&pair, kf2 + p * 2 * hd + 2 * d, sizeof(pair));
          acc[p] = _mm512_fmadd_ps(qv, _mm512_castpd_ps(_mm512_set1_pd(pair)), acc[p]);
        }
      }
      const int64_t take = std::min<int64_t>(2 * kPairs, sp.n - j);
      for (int p = 0; p < kPairs; ++p) {  // constant indices, as in BlockScores
        if (2 * p >= take) break;
        const __m512 rows = _mm512_permutexvar_ps(rows_idx, _mm512_mul_ps(acc[p], vscale));
        if (2 * p + 1 < take) {
          _mm512_storeu_ps(st + (row + 2 * p) * W8, rows);
        } else {
          _mm256_storeu_ps(st + (row + 2 * p) * W8, _mm512_castps512_ps256(rows));
        }
      }
      row += take;
    }
  }
}

// BlockSoftmax over st[n_rows][8], two rows per register.
void BlockSoftmax8(const int64_t* n_visible, int n_q, int64_t n_rows, float* st, float* inv) {
  alignas(64) int32_t lanes[16];
  for (int l = 0; l < 16; ++l) {
    lanes[l] = static_cast<int32_t>(n_visible[std::min(l % 8, n_q - 1)]) - l / 8;
  }
  // Lane l of the pair starting at row j is visible when j < lanes[l].
  const __m512i nv = _mm512_load_si512(lanes);
  const __m512 neg_inf = _mm512_set1_ps(-__builtin_inff());
  const int64_t pairs = n_rows / 2;
  __m512 mx2 = neg_inf;
  for (int64_t j = 0; j < 2 * pairs; j += 2) {
    const __mmask16 vis = _mm512_cmpgt_epi32_mask(nv, _mm512_set1_epi32(static_cast<int>(j)));
    mx2 = _mm512_max_ps(mx2, _mm512_mask_mov_ps(neg_inf, vis, _mm512_loadu_ps(st + j * W8)));
  }
  __m256 mx = _mm256_max_ps(_mm512_castps512_ps256(mx2),
                            _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(mx2), 1)));
  const __m256i nv8 = _mm512_castsi512_si256(nv);
  if (n_rows % 2 != 0) {
    const int64_t j = n_rows - 1;
    const __mmask8 vis = _mm256_cmpgt_epi32_mask(nv8, _mm256_set1_epi32(static_cast<int>(j)));
    mx = _mm256_max_ps(
        mx, _mm256_mask_mov_ps(_mm512_castps512_ps256(neg_inf), vis, _mm256_loadu_ps(st + j * W8)));
  }
  const __m512 mx16 = _mm512_insertf32x8(_mm512_castps256_ps512(mx), mx, 1);
  // Sums in row order: the even row's half, then the odd row's.
  __m512d sum = _mm512_setzero_pd();
  for (int64_t j = 0; j < 2 * pairs; j += 2) {
    const __mmask16 vis = _mm512_cmpgt_epi32_mask(nv, _mm512_set1_epi32(static_cast<int>(j)));
    const __m512 p = ExpVisible(st + j * W8, vis, mx16);
    sum = _mm512_add_pd(sum, LowPd(p));
    sum = _mm512_add_pd(sum, HighPd(p));
  }
  if (n_rows % 2 != 0) {
    const int64_t j = n_rows - 1;
    const __mmask16 vis = static_cast<__mmask16>(
        _mm512_cmpgt_epi32_mask(nv, _mm512_set1_epi32(static_cast<int>(j))) & 0xFF);
    float* s = st + j * W8;
    // The row's 8 floats in the low half (the high half is past st's end).
    const __m512 x = _mm512_castps256_ps512(_mm256_loadu_ps(s));
    const __m512 p = _mm512_maskz_mov_ps(vis, ExpPoly16(_mm512_sub_ps(x, mx16)));
    _mm256_storeu_ps(s, _mm512_castps512_ps256(p));
    sum = _mm512_add_pd(sum, LowPd(p));
  }
  _mm256_storeu_ps(inv, _mm512_cvtpd_ps(_mm512_div_pd(_mm512_set1_pd(1.0), sum)));
}

void AttendBlock8(const float* const* q, const int64_t* n_visible, int n_q, const KvSpan* spans,
                  int n_spans, size_t stride, int hd, float scale, float* scratch,
                  float* const* out) {
  int64_t n_rows = 0;
  for (int i = 0; i < n_spans; ++i) n_rows += spans[i].n;
  float* st = scratch;                             // [n_rows][8] scores, then probabilities
  float* qt2 = st + kAttendBlockQueries * n_rows;  // [hd][16] queries, each twice, f16-rounded
  float* kf2 = qt2 + kAttendBlockQueries * hd;     // [8][hd][2] converted key pairs
  TransposeQueries<2>(q, n_q, hd, qt2);
  WithHeadDim(hd, [&](auto HD) {
    BlockScores8<decltype(HD)::value>(qt2, spans, n_spans, stride, hd, scale, kf2, st);
  });
  alignas(64) float inv[W8];
  BlockSoftmax8(n_visible, n_q, n_rows, st, inv);
  for (int d0 = 0; d0 < hd; d0 += 32) {
    BlockValues<W8, 8>(st, inv, spans, n_spans, stride, 0, n_q, d0, out);
  }
}

}  // namespace

void AttendBlock_avx512(const float* const* q, const int64_t* n_visible, int n_q,
                        const KvSpan* spans, int n_spans, size_t stride, int head_dim, float scale,
                        float* scratch, float* const* out) {
  if (head_dim % 32 != 0 || n_q < 1 || n_q > kAttendBlockQueries) {
    AttendBlock_avx2(q, n_visible, n_q, spans, n_spans, stride, head_dim, scale, scratch, out);
    return;
  }
  if (n_q <= W8) {
    AttendBlock8(q, n_visible, n_q, spans, n_spans, stride, head_dim, scale, scratch, out);
    return;
  }
  const int hd = head_dim;
  int64_t n_rows = 0;
  for (int i = 0; i < n_spans; ++i) n_rows += spans[i].n;
  float* st = scratch;                            // [n_rows][16] scores, then probabilities
  float* qt = st + kAttendBlockQueries * n_rows;  // [hd][16] queries, f16-rounded
  float* kf = qt + kAttendBlockQueries * hd;      // [16][hd] converted key rows
  TransposeQueries<1>(q, n_q, hd, qt);
  WithHeadDim(hd, [&](auto HD) {
    BlockScores<decltype(HD)::value>(qt, spans, n_spans, stride, hd, scale, kf, st);
  });
  alignas(64) float inv[W];
  BlockSoftmax(n_visible, n_q, n_rows, st, inv);
  for (int m0 = 0; m0 < n_q; m0 += 8) {
    for (int d0 = 0; d0 < hd; d0 += 32) {
      BlockValues<W, 8>(st, inv, spans, n_spans, stride, m0, std::min(8, n_q - m0), d0, out);
    }
  }
}

}  // namespace ember
#endif
