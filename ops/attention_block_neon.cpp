// AttendBlock on AArch64 NEON: the bits of AttendBlock_ref, with every
// converted key and value row shared among up to 16 queries. The structure of
// ops/attention_block_avx2.cpp with 4 lanes:
// Scores: queries in the lanes (W = 4 QV of them, transposed into qt[d][m]);
// each key's dims are broadcast, so a lane is one query's fma chain over d.
// Softmax: per lane over the rows (masked below n_first and from n_visible on),
// sums in double.
// Values: dims in the lanes; a row's four probabilities are loaded once and
// taken by lane (fmla by element), one fma chain per (query, dim) in row order.
//
// AArch64 only (ExpPoly4, f64 lanes); armhf keeps AttendBlock_ref.
#if defined(__aarch64__)
#include <arm_neon.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "ops/attention.h"
#include "ops/attention_value_tiles.h"
#include "ops/exp_poly_neon.h"
#include "ops/kernels.h"

namespace ember {
namespace {

// 8 f16 values at p as two float32x4 (exact).
inline void LoadF16x8(const uint16_t* p, float32x4_t* lo, float32x4_t* hi) {
  const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(p));
  *lo = vcvt_f32_f16(vget_low_f16(h));
  *hi = vcvt_high_f32_f16(h);
}

// st[row][W] = scale * (q_m · k_row); qt: [hd][W]; kf: [8][hd] scratch.
template <int QV>
void BlockScores(const float* qt, const KvSpan* spans, int n_spans, size_t stride, int hd,
                 float scale, float* kf, float* st) {
  constexpr int W = 4 * QV;
  constexpr int Kb = QV == 4 ? 6 : 8;  // Kb x QV accumulators of 32 registers
  int64_t row = 0;
  for (int i = 0; i < n_spans; ++i) {
    const KvSpan& sp = spans[i];
    for (int64_t j = 0; j < sp.n; j += Kb) {
      // A short last block repeats its last key; the extra scores are dropped.
      for (int b = 0; b < Kb; ++b) {
        const uint16_t* k = sp.k + static_cast<size_t>(std::min<int64_t>(j + b, sp.n - 1)) * stride;
        for (int d = 0; d < hd; d += 8) {
          float32x4_t lo, hi;
          LoadF16x8(k + d, &lo, &hi);
          vst1q_f32(kf + b * hd + d, lo);
          vst1q_f32(kf + b * hd + d + 4, hi);
        }
      }
      float32x4_t acc[Kb][QV];
      for (int b = 0; b < Kb; ++b) {
        for (int v = 0; v < QV; ++v) acc[b][v] = vdupq_n_f32(0.0f);
      }
      for (int d = 0; d < hd; ++d) {
        float32x4_t qv[QV];
        for (int v = 0; v < QV; ++v) qv[v] = vld1q_f32(qt + d * W + 4 * v);
        for (int b = 0; b < Kb; ++b) {
          const float32x4_t kb = vld1q_dup_f32(kf + b * hd + d);
          for (int v = 0; v < QV; ++v) acc[b][v] = vfmaq_f32(acc[b][v], qv[v], kb);
        }
      }
      // Constant indices only: a loop to `take` would keep acc in memory.
      const int64_t take = std::min<int64_t>(Kb, sp.n - j);
      for (int b = 0; b < Kb; ++b) {
        if (b >= take) break;
        for (int v = 0; v < QV; ++v) {
          vst1q_f32(st + (row + b) * W + 4 * v, vmulq_n_f32(acc[b][v], scale));
        }
      }
      row += take;
    }
  }
}

// Which lanes of st[row][W] see row j: lane 4v + l is query min(4v + l,
// n_q - 1), which sees n_first <= j < n_visible (n_first may be null: 0).
template <int QV>
class Visibility {
 public:
  Visibility(const int64_t* n_first, const int64_t* n_visible, int n_q)
      : n_first_(n_first), n_visible_(n_visible), n_q_(n_q) {
    for (int v = 0; v < QV; ++v) {
      int32_t first[4], lanes[4];
      for (int l = 0; l < 4; ++l) {
        const int m = std::min(4 * v + l, n_q - 1);
        first[l] = n_first ? static_cast<int32_t>(n_first[m]) : 0;
        lanes[l] = static_cast<int32_t>(n_visible[m]);
      }
      nf_[v] = vld1q_s32(first);
      nv_[v] = vld1q_s32(lanes);
    }
  }
  // Whether every lane sees every row of [r0, r1) (ops/attention.h).
  bool All(int64_t r0, int64_t r1) const { return SeesAll(n_first_, n_visible_, n_q_, r0, r1); }
  uint32x4_t At(int v, int64_t j) const {
    const int32x4_t row = vdupq_n_s32(static_cast<int32_t>(j));
    return vandq_u32(vcleq_s32(nf_[v], row), vcgtq_s32(nv_[v], row));
  }

 private:
  int32x4_t nf_[QV], nv_[QV];
  const int64_t *n_first_, *n_visible_;
  int n_q_;
};

// mx[v] = max(mx[v], the visible scores of rows [r0, r1) in its lanes).
// kAll: every lane sees every row (no masks), as on AVX2.
template <int QV, bool kAll>
void RowMaxT(const Visibility<QV>& vis, int64_t r0, int64_t r1, const float* st, float32x4_t* mx) {
  constexpr int W = 4 * QV;
  const float32x4_t neg_inf = vdupq_n_f32(-std::numeric_limits<float>::infinity());
  for (int v = 0; v < QV; ++v) {
    float32x4_t m = mx[v];
    for (int64_t j = r0; j < r1; ++j) {
      const float32x4_t s = vld1q_f32(st + j * W + 4 * v);
      m = vmaxq_f32(m, kAll ? s : vbslq_f32(vis.At(v, j), s, neg_inf));
    }
    mx[v] = m;
  }
}

template <int QV>
void RowMax(const Visibility<QV>& vis, int64_t r0, int64_t r1, const float* st, float32x4_t* mx) {
  if (vis.All(r0, r1)) {
    RowMaxT<QV, true>(vis, r0, r1, st, mx);
  } else {
    RowMaxT<QV, false>(vis, r0, r1, st, mx);
  }
}

// In place over rows [r0, r1): p = ExpPoly(s - mx) where visible, 0
// elsewhere; with sums (2 QV of them: lanes 0-1, 2-3 of each vector) the p
// are added in double, in row order. kAll as in RowMaxT.
template <int QV, bool kAll>
void RowExpT(const Visibility<QV>& vis, int64_t r0, int64_t r1, const float32x4_t* mx, float* st,
             float64x2_t* sums) {
  constexpr int W = 4 * QV;
  for (int v = 0; v < QV; ++v) {
    float64x2_t sum_lo = vdupq_n_f64(0.0), sum_hi = vdupq_n_f64(0.0);
    for (int64_t j = r0; j < r1; ++j) {
      float* s = st + j * W + 4 * v;
      const float32x4_t e = ExpPoly4(vsubq_f32(vld1q_f32(s), mx[v]));
      const float32x4_t p =
          kAll ? e : vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(e), vis.At(v, j)));
      vst1q_f32(s, p);
      if (sums) {
        sum_lo = vaddq_f64(sum_lo, vcvt_f64_f32(vget_low_f32(p)));
        sum_hi = vaddq_f64(sum_hi, vcvt_high_f64_f32(p));
      }
    }
    if (sums) {
      sums[2 * v] = sum_lo;
      sums[2 * v + 1] = sum_hi;
    }
  }
}

template <int QV>
void RowExp(const Visibility<QV>& vis, int64_t r0, int64_t r1, const float32x4_t* mx, float* st,
            float64x2_t* sums) {
  if (vis.All(r0, r1)) {
    RowExpT<QV, true>(vis, r0, r1, mx, st, sums);
  } else {
    RowExpT<QV, false>(vis, r0, r1, mx, st, sums);
  }
}

// float(1 / sum) of two double sums each, as _ref's static_cast<float>(1.0 / sum).
inline float32x4_t InvOf(float64x2_t lo, float64x2_t hi) {
  const float64x2_t one = vdupq_n_f64(1.0);
  return vcombine_f32(vcvt_f32_f64(vdivq_f64(one, lo)), vcvt_f32_f64(vdivq_f64(one, hi)));
}

// In place over st[n_rows][W]: p = ExpPoly(s - max) on the visible rows of
// each lane (n_first <= row < n_visible), 0 elsewhere; inv[m] = float(1 / sum
// p) with the sum in double. n_first may be null (0).
template <int QV>
void BlockSoftmax(const int64_t* n_first, const int64_t* n_visible, int n_q, int64_t n_rows,
                  float* st, float* inv) {
  const Visibility<QV> vis(n_first, n_visible, n_q);
  float32x4_t mx[QV];
  for (int v = 0; v < QV; ++v) mx[v] = vdupq_n_f32(-std::numeric_limits<float>::infinity());
  RowMax<QV>(vis, 0, n_rows, st, mx);
  float64x2_t sums[2 * QV];
  RowExp<QV>(vis, 0, n_rows, mx, st, sums);
  for (int v = 0; v < QV; ++v) vst1q_f32(inv + 4 * v, InvOf(sums[2 * v], sums[2 * v + 1]));
}

// ValuesInTiles' pass (ops/attention_value_tiles.h): a row's 16 dims are
// converted once, its four probabilities loaded once and taken lane by lane;
// one fma chain per (query, dim) in row order. Inlined by force, as on AVX2.
struct ValuesIsa {
  template <int W, bool kSum>
  [[gnu::always_inline]] static void Pass(const float* st, const KvSpan* spans, int n_spans,
                                          size_t stride, int m0, int n_out, int d0, bool carry,
                                          double* sum, float* const* out) {
    float32x4_t acc[4][4];
    for (int i = 0; i < 4; ++i) {
      const bool load = carry && i < n_out;
      for (int c = 0; c < 4; ++c) {
        acc[i][c] = load ? vld1q_f32(out[m0 + i] + d0 + 4 * c) : vdupq_n_f32(0.0f);
      }
    }
    float64x2_t sum_lo = kSum ? vld1q_f64(sum) : vdupq_n_f64(0.0);
    float64x2_t sum_hi = kSum ? vld1q_f64(sum + 2) : vdupq_n_f64(0.0);
    const float* p = st + m0;
    for (int s = 0; s < n_spans; ++s) {
      const uint16_t* v = spans[s].v + d0;
      for (int64_t r = 0; r < spans[s].n; ++r, v += stride, p += W) {
        float32x4_t vv[4];
        LoadF16x8(v, &vv[0], &vv[1]);
        LoadF16x8(v + 8, &vv[2], &vv[3]);
        const float32x4_t p4 = vld1q_f32(p);
        for (int c = 0; c < 4; ++c) {
          acc[0][c] = vfmaq_laneq_f32(acc[0][c], vv[c], p4, 0);
          acc[1][c] = vfmaq_laneq_f32(acc[1][c], vv[c], p4, 1);
          acc[2][c] = vfmaq_laneq_f32(acc[2][c], vv[c], p4, 2);
          acc[3][c] = vfmaq_laneq_f32(acc[3][c], vv[c], p4, 3);
        }
        if constexpr (kSum) {
          sum_lo = vaddq_f64(sum_lo, vcvt_f64_f32(vget_low_f32(p4)));
          sum_hi = vaddq_f64(sum_hi, vcvt_high_f64_f32(p4));
        }
      }
    }
    if constexpr (kSum) {
      vst1q_f64(sum, sum_lo);
      vst1q_f64(sum + 2, sum_hi);
    }
    for (int i = 0; i < 4; ++i) {  // constant indices, as in BlockScores
      if (i >= n_out) break;
      for (int c = 0; c < 4; ++c) vst1q_f32(out[m0 + i] + d0 + 4 * c, acc[i][c]);
    }
  }
  static void Scale(float* o, int d0, int d1, float s) {
    for (int d = d0; d < d1; d += 4) vst1q_f32(o + d, vmulq_n_f32(vld1q_f32(o + d), s));
  }
};

template <int QV>
void AttendBlockW(const float* const* q, const int64_t* n_first, const int64_t* n_visible, int n_q,
                  const KvSpan* spans, int n_spans, size_t stride, int hd, float scale,
                  float* scratch, float* const* out) {
  constexpr int W = 4 * QV;
  int64_t n_rows = 0;
  for (int i = 0; i < n_spans; ++i) n_rows += spans[i].n;
  float* st = scratch;                            // [n_rows][W] scores, then probabilities
  float* qt = st + kAttendBlockQueries * n_rows;  // [hd][W] queries, f16-rounded
  float* kf = qt + kAttendBlockQueries * hd;      // [8][hd] converted key rows
  // Lanes past n_q repeat the last query; their results are not stored.
  for (int m = 0; m < W; ++m) {
    const float* src = q[std::min(m, n_q - 1)];
    for (int d = 0; d < hd; d += 4) {
      // f32 -> f16 rounds to nearest even (FPCR default), as Fp32ToFp16.
      const float32x4_t r = vcvt_f32_f16(vcvt_f16_f32(vld1q_f32(src + d)));
      float lanes[4];
      vst1q_f32(lanes, r);
      for (int l = 0; l < 4; ++l) qt[(d + l) * W + m] = lanes[l];
    }
  }
  BlockScores<QV>(qt, spans, n_spans, stride, hd, scale, kf, st);
  float inv[W];
  BlockSoftmax<QV>(n_first, n_visible, n_q, n_rows, st, inv);
  ValuesInTiles<W, ValuesIsa>(st, inv, n_q, spans, n_spans, stride, 0, hd, out);
}

using AttendBlockWFn = void (*)(const float* const*, const int64_t*, const int64_t*, int,
                                const KvSpan*, int, size_t, int, float, float*, float* const*);
constexpr AttendBlockWFn kByVectors[5] = {nullptr, AttendBlockW<1>, AttendBlockW<2>,
                                          AttendBlockW<3>, AttendBlockW<4>};

}  // namespace

void AttendBlock_neon(const float* const* q, const int64_t* n_first, const int64_t* n_visible,
                      int n_q, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                      float scale, float* scratch, float* const* out) {
  if (head_dim % kAttendBlockDimMultiple != 0 || n_q < 1 || n_q > kAttendBlockQueries) {
    AttendBlock_ref(q, n_first, n_visible, n_q, spans, n_spans, stride, head_dim, scale, scratch,
                    out);
    return;
  }
  kByVectors[(n_q + 3) / 4](q, n_first, n_visible, n_q, spans, n_spans, stride, head_dim, scale,
                            scratch, out);
}

// The stages (ops/attention.h) on two vectors of queries (kAttendLanes = 8);
// head dims that are not a multiple of 16 take _ref's.
static_assert(kAttendLanes == 8);

void AttendScores_neon(const float* qt, int n_q, const KvSpan* spans, int n_spans, size_t stride,
                       int head_dim, float scale, float* kf, float* st) {
  if (head_dim % kAttendBlockDimMultiple != 0) {
    AttendScores_ref(qt, n_q, spans, n_spans, stride, head_dim, scale, kf, st);
    return;
  }
  BlockScores<2>(qt, spans, n_spans, stride, head_dim, scale, kf, st);
}

void AttendMax_neon(const int64_t* n_first, const int64_t* n_visible, int n_q, int64_t r0,
                    int64_t r1, const float* st, float* mx) {
  float32x4_t m[2];
  m[0] = m[1] = vdupq_n_f32(-std::numeric_limits<float>::infinity());
  RowMax<2>(Visibility<2>(n_first, n_visible, n_q), r0, r1, st, m);
  float lanes[8];
  vst1q_f32(lanes, m[0]);
  vst1q_f32(lanes + 4, m[1]);
  std::copy(lanes, lanes + n_q, mx);
}

void AttendExp_neon(const int64_t* n_first, const int64_t* n_visible, int n_q, int64_t r0,
                    int64_t r1, const float* mx, float* st) {
  float lanes[8];
  for (int l = 0; l < 8; ++l) lanes[l] = mx[std::min(l, n_q - 1)];
  const float32x4_t m[2] = {vld1q_f32(lanes), vld1q_f32(lanes + 4)};
  RowExp<2>(Visibility<2>(n_first, n_visible, n_q), r0, r1, m, st, nullptr);
}

void AttendValues_neon(const float* st, int n_q, const KvSpan* spans, int n_spans, size_t stride,
                       int d0, int d1, float* const* out) {
  if (d0 % kAttendBlockDimMultiple != 0 || d1 % kAttendBlockDimMultiple != 0) {
    AttendValues_ref(st, n_q, spans, n_spans, stride, d0, d1, out);
    return;
  }
  ValuesInTiles<kAttendLanes, ValuesIsa>(st, nullptr, n_q, spans, n_spans, stride, d0, d1, out);
}

}  // namespace ember
#endif
