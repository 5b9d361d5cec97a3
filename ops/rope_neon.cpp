// RoPE on AArch64 NEON, bit for bit RopeApply_ref: each product rounded on
// its own, then one add or subtract (this file is compiled with
// -ffp-contract=off -fno-tree-vectorize, so the compiler cannot fuse a
// vmulq_f32 into the add; see ops/rope.h). Pairs that do not fill a vector go
// through RopeApplyFrom_ref. AArch64 only: ARMv7 NEON flushes subnormal products to zero,
// which would break the bit-for-bit promise, so armhf keeps RopeApply_ref.
#if defined(__aarch64__)
#include <arm_neon.h>

#include "ops/rope.h"

namespace ember {

namespace {

// kNormal: x = (x0, x1) pairs side by side, cache = (c, s) pairs side by side;
// ld2/st2 split and rejoin the pairs.
int RopeNormal(float* x, const float* cache, int half) {
  int p = 0;  // the first pair not yet rotated
  for (; p + 4 <= half; p += 4) {
    const float32x4x2_t v = vld2q_f32(x + 2 * p);
    const float32x4x2_t cs = vld2q_f32(cache + 2 * p);
    const float32x4_t x0 = v.val[0], x1 = v.val[1], c = cs.val[0], s = cs.val[1];
    float32x4x2_t out;
    out.val[0] = vsubq_f32(vmulq_f32(x0, c), vmulq_f32(x1, s));
    out.val[1] = vaddq_f32(vmulq_f32(x0, s), vmulq_f32(x1, c));
    vst2q_f32(x + 2 * p, out);
  }
  return p;
}

// kNeox: x0 in the first half of the rotated part, x1 in the second.
int RopeNeox(float* x, const float* cache, int half) {
  int i = 0;
  for (; i + 4 <= half; i += 4) {
    const float32x4x2_t cs = vld2q_f32(cache + 2 * i);
    const float32x4_t c = cs.val[0], s = cs.val[1];
    const float32x4_t x0 = vld1q_f32(x + i), x1 = vld1q_f32(x + half + i);
    vst1q_f32(x + i, vsubq_f32(vmulq_f32(x0, c), vmulq_f32(x1, s)));
    vst1q_f32(x + half + i, vaddq_f32(vmulq_f32(x0, s), vmulq_f32(x1, c)));
  }
  return i;
}

}  // namespace

void RopeApply_neon(float* x, const float* cache, int n_dims, RopeMode mode) {
  // Vectors while pairs fill them, then _ref's scalar steps for the rest.
  const int done =
      mode == RopeMode::kNormal ? RopeNormal(x, cache, n_dims / 2) : RopeNeox(x, cache, n_dims / 2);
  RopeApplyFrom_ref(x, cache, n_dims, mode, done);
}

}  // namespace ember
#endif
