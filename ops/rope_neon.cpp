// RoPE on AArch64 NEON, bit for bit RopeApply_ref: each product rounded on
// its own, then one add or subtract (this file is compiled with
// -ffp-contract=off -fno-tree-vectorize, so the compiler cannot fuse a
// vmulq_f32 into the add; see ops/rope.h). Pairs that do not fill a vector go
// through the same scalar expressions. AArch64 only: ARMv7 NEON flushes subnormal products to zero,
// which would break the bit-for-bit promise, so armhf keeps RopeApply_ref.
#if defined(__aarch64__)
#include <arm_neon.h>

#include "ops/rope.h"

namespace ember {

namespace {

// kNormal: x = (x0, x1) pairs side by side, cache = (c, s) pairs side by side;
// ld2/st2 split and rejoin the pairs.
void RopeNormal(float* x, const float* cache, int half) {
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
  for (; p < half; ++p) {
    const float c = cache[2 * p], s = cache[2 * p + 1];
    const float x0 = x[2 * p], x1 = x[2 * p + 1];
    x[2 * p] = x0 * c - x1 * s;
    x[2 * p + 1] = x0 * s + x1 * c;
  }
}

// kNeox: x0 in the first half of the rotated part, x1 in the second.
void RopeNeox(float* x, const float* cache, int half) {
  int i = 0;
  for (; i + 4 <= half; i += 4) {
    const float32x4x2_t cs = vld2q_f32(cache + 2 * i);
    const float32x4_t c = cs.val[0], s = cs.val[1];
    const float32x4_t x0 = vld1q_f32(x + i), x1 = vld1q_f32(x + half + i);
    vst1q_f32(x + i, vsubq_f32(vmulq_f32(x0, c), vmulq_f32(x1, s)));
    vst1q_f32(x + half + i, vaddq_f32(vmulq_f32(x0, s), vmulq_f32(x1, c)));
  }
  for (; i < half; ++i) {
    const float c = cache[2 * i], s = cache[2 * i + 1];
    const float x0 = x[i], x1 = x[half + i];
    x[i] = x0 * c - x1 * s;
    x[half + i] = x0 * s + x1 * c;
  }
}

}  // namespace

void RopeApply_neon(float* x, const float* cache, int n_dims, RopeMode mode) {
  if (mode == RopeMode::kNormal) {
    RopeNormal(x, cache, n_dims / 2);
  } else {
    RopeNeox(x, cache, n_dims / 2);
  }
}

}  // namespace ember
#endif
