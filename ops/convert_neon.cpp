// Fp32ToFp16Row with fcvtn: rounds as FPCR says, to nearest even by default
// as _ref does; NaN lanes (which keep part of their payload) are replaced
// with _ref's sign | 0x7E00.
#if defined(__aarch64__)
#include <arm_neon.h>

#include "ops/convert.h"
#include "quant/fp16.h"

namespace ember {

void Fp32ToFp16Row_neon(const float* x, uint16_t* y, int64_t n) {
  const uint16x4_t quiet = vdup_n_u16(0x7E00);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float32x4_t v = vld1q_f32(x + i);
    const uint16x4_t h = vreinterpret_u16_f16(vcvt_f16_f32(v));
    const uint16x4_t is_nan = vmovn_u32(vmvnq_u32(vceqq_f32(v, v)));
    const uint16x4_t sign =
        vshrn_n_u32(vandq_u32(vreinterpretq_u32_f32(v), vdupq_n_u32(0x80000000u)), 16);
    vst1_u16(y + i, vbsl_u16(is_nan, vorr_u16(quiet, sign), h));
  }
  for (; i < n; ++i) y[i] = Fp32ToFp16(x[i]);
}

}  // namespace ember
#endif  // __aarch64__
