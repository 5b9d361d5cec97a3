// Float GEMM with NEON: the contract's 16 lanes are four q registers (lanes
// 4j .. 4j + 3 in register j). AArch64 has 32 of them: a block is 4 rows x 1
// token (decode) or 2 rows x 2 tokens (16 accumulators). ARMv7 has 16: 1 row
// x 1 token. f16 widens with vcvt_f32_f16 (AArch64; ARMv7 with VFPv4, the
// file built with -mfp16-format=ieee), bf16 with a shift.
#if defined(__aarch64__) || (defined(__arm__) && defined(__ARM_NEON))
#include <arm_neon.h>

#include "ops/fgemm_driver.h"

namespace ember {
namespace {

// The 16 weights at p (a chunk of a row), widened.
template <FloatWeight W>
inline void Load16(const uint8_t* p, float32x4_t v[4]) {
  if constexpr (W == FloatWeight::kF32) {
    const float* f = reinterpret_cast<const float*>(p);
    for (int j = 0; j < 4; ++j) v[j] = vld1q_f32(f + 4 * j);
  } else {
    const uint16_t* h16 = reinterpret_cast<const uint16_t*>(p);
    for (int j = 0; j < 4; ++j) {
      const uint16x4_t h = vld1_u16(h16 + 4 * j);
      if constexpr (W == FloatWeight::kF16) {
        v[j] = vcvt_f32_f16(vreinterpret_f16_u16(h));
      } else {
        v[j] = vreinterpretq_f32_u32(vshll_n_u16(h, 16));
      }
    }
  }
}

// h8 = s[0..7] + s[8..15] (registers 0, 1 plus 2, 3), h4 = h8[0..3] + h8[4..7],
// then h2 and h2[0] + h2[1].
inline float Reduce(const float32x4_t s[4]) {
  const float32x4_t h8a = vaddq_f32(s[0], s[2]), h8b = vaddq_f32(s[1], s[3]);
  const float32x4_t h4 = vaddq_f32(h8a, h8b);
  const float32x2_t h2 = vadd_f32(vget_low_f32(h4), vget_high_f32(h4));
  return vget_lane_f32(h2, 0) + vget_lane_f32(h2, 1);
}

template <int kR, int kT>
struct Neon {
  static constexpr int kRows = kR;
  static constexpr int kTokens = kT;

  template <FloatWeight W>
  static void Widen16(const uint8_t* p, float* out) {
    float32x4_t v[4];
    Load16<W>(p, v);
    for (int j = 0; j < 4; ++j) vst1q_f32(out + 4 * j, v[j]);
  }

  template <FloatWeight W, int R, int T>
  static void Block(const FloatMatrix& w, int64_t r0, const float* x, int64_t t0, float* y,
                    int64_t ldy) {
    const int64_t k = w.n_cols, k16 = k - k % 16;
    const fgemm::BlockRows<R> rows(w, r0);
    const float* xs[T];
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) xs[t] = x + (t0 + t) * k;
    float32x4_t acc[R][T][4];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        for (int j = 0; j < 4; ++j) acc[r][t][j] = vdupq_n_f32(0.0f);
      }
    }
    int64_t off = 0;  // chunk i / 16 of each row
    for (int64_t i = 0; i < k16; i += 16, off += rows.stride) {
      float32x4_t xv[T][4];
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        for (int j = 0; j < 4; ++j) xv[t][j] = vld1q_f32(xs[t] + i + 4 * j);
      }
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        float32x4_t wv[4];
        Load16<W>(rows.start[r] + off, wv);
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) {
          for (int j = 0; j < 4; ++j) acc[r][t][j] = vfmaq_f32(acc[r][t][j], wv[j], xv[t][j]);
        }
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        y[(t0 + t) * ldy + r0 + r] = fgemm::Tail<W>(Reduce(acc[r][t]), rows.tail[r], xs[t], k16, k);
      }
    }
  }
};

}  // namespace

void FloatRow_neon(const FloatMatrix& w, int64_t r, float* out) {
  fgemm::WidenRow<Neon<1, 1>>(w, r, out);
}

void FGemm_neon(const FloatMatrix& w, int64_t row_begin, int64_t row_end, const float* x, int64_t m,
                float* y, int64_t ldy) {
#if defined(__aarch64__)
  // As on AVX2 (ops/fgemm_avx2.cpp): row groups read by the group's block for
  // every m, so each pass over a group is one stream (not measured on ARM).
  if (m == 1 || w.group != 1) {
    return fgemm::Dispatch<Neon<kFloatGroupNeon64, 1>>(w, row_begin, row_end, x, m, y, ldy);
  }
  fgemm::Dispatch<Neon<2, 2>>(w, row_begin, row_end, x, m, y, ldy);
#else
  fgemm::Dispatch<Neon<1, 1>>(w, row_begin, row_end, x, m, y, ldy);
#endif
}

}  // namespace ember
#endif
