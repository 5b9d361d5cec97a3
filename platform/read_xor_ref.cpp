// ReadXor in plain C++: eight 64-bit accumulators, one word each per step.
// The compiler may widen the loop to the baseline vector width (SSE2 on
// x86-64); the per-ISA files do not leave that to chance.
#include <cstring>

#include "platform/read_xor.h"

namespace ember {

uint64_t ReadXor_ref(const void* p, size_t bytes) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  const size_t n = bytes / 8;
  // memcpy: any alignment, no aliasing question; it compiles to one load.
  auto word = [b](size_t i) {
    uint64_t w;
    std::memcpy(&w, b + 8 * i, 8);
    return w;
  };
  uint64_t a[8] = {};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) a[j] ^= word(i + static_cast<size_t>(j));
  }
  uint64_t x = a[0] ^ a[1] ^ a[2] ^ a[3] ^ a[4] ^ a[5] ^ a[6] ^ a[7];
  for (; i < n; ++i) x ^= word(i);
  return x;
}

}  // namespace ember
