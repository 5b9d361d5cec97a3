// ReadXor with 16-byte NEON loads: eight accumulators, 128 bytes per step
// (two cache lines on most ARM cores). Base NEON only: AArch64, and ARMv7
// built with NEON.
#if defined(__aarch64__) || (defined(__arm__) && defined(__ARM_NEON))
#include <arm_neon.h>

#include "platform/read_xor.h"

namespace ember {

uint64_t ReadXor_neon(const void* p, size_t bytes, int streams) {
  // Loaded as bytes: vld1q_u8 needs no alignment (vld1q_u64 may on ARMv7).
  const uint8_t* b = static_cast<const uint8_t*>(p);
  uint8x16_t a[8];
  for (uint8x16_t& v : a) v = vdupq_n_u8(0);
  size_t i = ForEachStep<128>(bytes, streams, [&](size_t at) {
    for (int j = 0; j < 8; ++j) a[j] = veorq_u8(a[j], vld1q_u8(b + at + 16 * j));
  });
  for (; i + 16 <= bytes; i += 16) a[0] = veorq_u8(a[0], vld1q_u8(b + i));
  for (int j = 1; j < 8; ++j) a[0] = veorq_u8(a[0], a[j]);
  const uint64x2_t w = vreinterpretq_u64_u8(a[0]);
  const uint64_t x = vgetq_lane_u64(w, 0) ^ vgetq_lane_u64(w, 1);
  // The last whole word, if any.
  return x ^ ReadXor_ref(b + i, bytes - i, 1);
}

}  // namespace ember
#endif
