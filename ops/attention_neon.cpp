// Attention of one head (decode) on AArch64 NEON: 4 dims per register, keys
// and values converted from f16 with fcvtl (or loaded as they are from an f32
// cache). Same math as AttendHead_ref / AttendHeadF32_ref; the
// dot products sum in 4 lanes and then across them, so results agree with the
// reference to float rounding (not bit for bit). Prefill blocks of queries go
// through AttendBlock (ops/attention_block_neon.cpp).
//
// AArch64 only (Softmax_neon needs f64 lanes); armhf keeps AttendHead_ref.
#if defined(__aarch64__)
#include <arm_neon.h>

#include <algorithm>
#include <cstring>

#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/kernels.h"

namespace ember {
namespace {

inline float32x4_t Load4(const uint16_t* p) {
  return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)));
}
inline float32x4_t Load4(const float* p) { return vld1q_f32(p); }
inline float32x4_t Load4(const int8_t* p) {
  int32_t w;  // exactly 4 bytes: the last dims of the last row end the buffer
  std::memcpy(&w, p, 4);
  const int16x8_t h = vmovl_s8(vreinterpret_s8_s32(vdup_n_s32(w)));
  return vcvtq_f32_s32(vmovl_s16(vget_low_s16(h)));
}

// Scores of one query against four keys at a time (four independent fma
// chains), each reduced across its lanes in the same order: a key's score does
// not depend on which keys share its block. Span is KvSpan (f16), KvSpanF32 or
// KvSpanQ8.
template <class Span>
void Scores(const float* q, const Span* spans, int n_spans, size_t stride, size_t scale_stride,
            int head_dim, float scale, float* scores) {
  int64_t n_kv = 0;
  for (int i = 0; i < n_spans; ++i) {
    const Span& sp = spans[i];
    for (int64_t j = 0; j < sp.n; j += 4) {
      // A short last block repeats its last key; the extra scores are dropped.
      decltype(sp.k) k[4];
      for (int b = 0; b < 4; ++b) {
        k[b] = sp.k + static_cast<size_t>(std::min<int64_t>(j + b, sp.n - 1)) * stride;
      }
      float32x4_t acc[4];
      for (int b = 0; b < 4; ++b) acc[b] = vdupq_n_f32(0.0f);
      for (int d = 0; d < head_dim; d += 4) {
        const float32x4_t qv = vld1q_f32(q + d);
        for (int b = 0; b < 4; ++b) acc[b] = vfmaq_f32(acc[b], qv, Load4(k[b] + d));
      }
      // Pairwise adds: lane b of s4 is the sum of acc[b]'s lanes.
      const float32x4_t s4 = vpaddq_f32(vpaddq_f32(acc[0], acc[1]), vpaddq_f32(acc[2], acc[3]));
      float out4[4];
      vst1q_f32(out4, vmulq_n_f32(s4, scale));
      const int64_t take = std::min<int64_t>(4, sp.n - j);
      for (int b = 0; b < take; ++b) {
        float sc = out4[b];
        if constexpr (kRowScaled<Span>) sc *= sp.k_scale[static_cast<size_t>(j + b) * scale_stride];
        scores[n_kv + b] = sc;
      }
      n_kv += take;
    }
  }
}

// out[d0, d0 + 4 ND) = sum_j p[j] v_j[d0, d0 + 4 ND) over the rows of all
// spans, each lane adding the rows in order, as the reference does.
template <int ND, class Span>
void WeightedRows(const float* p, const Span* spans, int n_spans, size_t stride,
                  size_t scale_stride, int d0, float* out) {
  float32x4_t acc[ND];
  for (int c = 0; c < ND; ++c) acc[c] = vdupq_n_f32(0.0f);
  for (int i = 0; i < n_spans; ++i) {
    auto v = spans[i].v + d0;
    for (int64_t j = 0; j < spans[i].n; ++j, ++p, v += stride) {
      float w = *p;
      if constexpr (kRowScaled<Span>) w *= spans[i].v_scale[static_cast<size_t>(j) * scale_stride];
      for (int c = 0; c < ND; ++c) acc[c] = vfmaq_n_f32(acc[c], Load4(v + 4 * c), w);
    }
  }
  for (int c = 0; c < ND; ++c) vst1q_f32(out + d0 + 4 * c, acc[c]);
}

template <class Span>
using WeightedRowsFn = void (*)(const float*, const Span*, int, size_t, size_t, int, float*);
// By the number of 4-dim registers per pass: 64 dims (16 accumulators), fewer
// for the last pass of a head.
template <class Span>
constexpr WeightedRowsFn<Span> kWeightedRows[17] = {nullptr,
                                                    WeightedRows<1, Span>,
                                                    WeightedRows<2, Span>,
                                                    WeightedRows<3, Span>,
                                                    WeightedRows<4, Span>,
                                                    WeightedRows<5, Span>,
                                                    WeightedRows<6, Span>,
                                                    WeightedRows<7, Span>,
                                                    WeightedRows<8, Span>,
                                                    WeightedRows<9, Span>,
                                                    WeightedRows<10, Span>,
                                                    WeightedRows<11, Span>,
                                                    WeightedRows<12, Span>,
                                                    WeightedRows<13, Span>,
                                                    WeightedRows<14, Span>,
                                                    WeightedRows<15, Span>,
                                                    WeightedRows<16, Span>};

constexpr int kMaxHeadDim = 512;

// Scores, softmax, weighted rows: q as the kernel should see it.
template <class Span>
void Attend(const float* q, const Span* spans, int n_spans, size_t stride, size_t scale_stride,
            int head_dim, float scale, float* scores, float* out) {
  Scores(q, spans, n_spans, stride, scale_stride, head_dim, scale, scores);
  int64_t n_kv = 0;
  for (int i = 0; i < n_spans; ++i) n_kv += spans[i].n;
  Softmax_neon(scores, n_kv);
  for (int d0 = 0; d0 < head_dim; d0 += 64) {
    kWeightedRows<Span>[std::min(64, head_dim - d0) / 4](scores, spans, n_spans, stride,
                                                         scale_stride, d0, out);
  }
}

}  // namespace

void AttendHead_neon(const float* q, const KvSpan* spans, int n_spans, size_t stride, int head_dim,
                     float scale, float* scores, float* out) {
  if (head_dim % 4 != 0 || head_dim > kMaxHeadDim) {
    AttendHead_ref(q, spans, n_spans, stride, head_dim, scale, scores, out);
    return;
  }
  float qh[kMaxHeadDim];
  for (int d = 0; d < head_dim; d += 4) {  // q rounded to f16, as the reference does
    vst1q_f32(qh + d, vcvt_f32_f16(vcvt_f16_f32(vld1q_f32(q + d))));
  }
  Attend(qh, spans, n_spans, stride, 0, head_dim, scale, scores, out);
}

void AttendHeadF32_neon(const float* q, const KvSpanF32* spans, int n_spans, size_t stride,
                        int head_dim, float scale, float* scores, float* out) {
  if (head_dim % 4 != 0 || head_dim > kMaxHeadDim) {
    AttendHeadF32_ref(q, spans, n_spans, stride, head_dim, scale, scores, out);
    return;
  }
  Attend(q, spans, n_spans, stride, 0, head_dim, scale, scores, out);
}

void AttendHeadQ8_neon(const float* q, const KvSpanQ8* spans, int n_spans, size_t stride,
                       size_t scale_stride, int head_dim, float scale, float* scores, float* out) {
  if (head_dim % 4 != 0 || head_dim > kMaxHeadDim) {
    AttendHeadQ8_ref(q, spans, n_spans, stride, scale_stride, head_dim, scale, scores, out);
    return;
  }
  Attend(q, spans, n_spans, stride, scale_stride, head_dim, scale, scores, out);
}

}  // namespace ember
#endif
