// QuantizeActRows on AArch64 NEON: the bytes of QuantizeActRows_ref.
//
// Why: ARM builds quantized every matrix product's input with the scalar
// _ref, whose loop of fmax / isfinite / nearbyint per activation the compiler
// does not vectorize: ~200 ns a group of 32 on a Zen 4 core against the AVX2
// kernel's 12 (ops/quantize_act_avx512.cpp), so on a Pi-class core a few ms
// of each decoded token of a 0.5B model and a large share of prefill. Here a
// group is 8 vectors of 4: the max of |x| by vmaxq / vmaxvq, q by FCVTNS
// (round to nearest, ties to even: std::nearbyint's default), the sums by
// vaddvq; the scalars per group (the two divisions, the fp16 round trips)
// are _ref's own expressions.
//
// Same bytes: the max of |x| over finite values is exact in any order; x * id
// is one IEEE product per lane as in _ref (AArch64's default FPCR keeps
// subnormals); |q| <= 127, so the narrowing is exact. A group holding a NaN
// or an infinity is SetNonFinite's, as in _ref.
//
// AArch64 only: ARMv7 NEON has no round-to-nearest conversion and flushes
// subnormals to zero (armhf keeps _ref, as for the other kernels in
// ops/kernels.cpp).
#if defined(__aarch64__)
#include <arm_neon.h>

#include <cstdint>

#include "ops/kernels.h"
#include "ops/qgemm.h"
#include "quant/fp16.h"

namespace ember {

void QuantizeActRows_neon(const float* x, int64_t t0, int64_t t1, QuantizedActs* a) {
  const int64_t k = a->k, groups = k / 32;
  for (int64_t t = t0; t < t1; ++t) {
    for (int64_t g = 0; g < groups; ++g) {
      const float* xg = x + t * k + g * 32;
      float32x4_t v[8];
      float32x4_t amax4 = vdupq_n_f32(0.0f);
      // x - x is 0 for a finite x and NaN for a NaN or an infinity; NaN
      // stays NaN through the sum.
      float32x4_t nonfinite = vdupq_n_f32(0.0f);
      for (int i = 0; i < 8; ++i) {
        v[i] = vld1q_f32(xg + 4 * i);
        amax4 = vmaxq_f32(amax4, vabsq_f32(v[i]));
        nonfinite = vaddq_f32(nonfinite, vsubq_f32(v[i], v[i]));
      }
      // All four lanes equal to themselves (none NaN): the group is finite.
      if (vminvq_u32(vceqq_f32(nonfinite, nonfinite)) == 0) {
        a->SetNonFinite(t, g);
        continue;
      }
      const float amax = vmaxvq_f32(amax4);
      const float d_exact = amax / 127.0f;
      const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
      const float d = Fp16ToFp32(Fp32ToFp16(d_exact));
      const float32x4_t idv = vdupq_n_f32(id);
      int32x4_t q[8];
      for (int i = 0; i < 8; ++i) q[i] = vcvtnq_s32_f32(vmulq_f32(v[i], idv));
      int8_t* qg = a->q.data() + t * k + g * 32;
      for (int h = 0; h < 2; ++h) {  // columns 16h .. 16h + 15
        const int16x8_t lo = vcombine_s16(vqmovn_s32(q[4 * h]), vqmovn_s32(q[4 * h + 1]));
        const int16x8_t hi = vcombine_s16(vqmovn_s32(q[4 * h + 2]), vqmovn_s32(q[4 * h + 3]));
        vst1q_s8(qg + 16 * h, vcombine_s8(vqmovn_s16(lo), vqmovn_s16(hi)));
      }
      const int32_t sum0 = vaddvq_s32(vaddq_s32(vaddq_s32(q[0], q[1]), vaddq_s32(q[2], q[3])));
      const int32_t sum1 = vaddvq_s32(vaddq_s32(vaddq_s32(q[4], q[5]), vaddq_s32(q[6], q[7])));
      const int32_t sum = sum0 + sum1;
      a->qsum16[t * (k / 16) + 2 * g] = sum0;
      a->qsum16[t * (k / 16) + 2 * g + 1] = sum1;
      a->d[t * groups + g] = d;
      a->qsum[t * groups + g] = sum;
      a->dqsum[t * groups + g] = d * static_cast<float>(sum);
      a->sm[t * groups + g] = Fp16ToFp32(Fp32ToFp16(d_exact * static_cast<float>(sum)));
    }
  }
}

}  // namespace ember
#endif  // __aarch64__
