// ReadXor in plain C++: eight 64-bit accumulators, one word each per step
// (64 bytes).
// The compiler may widen the loop to the baseline vector width (SSE2 on
// x86-64); the per-ISA files do not leave that to chance.
#include <cstring>

#include "platform/read_xor.h"

namespace ember {

uint64_t ReadXor_ref(const void* p, size_t bytes, int streams) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  const size_t n = bytes / 8;
  // memcpy: any alignment, no aliasing question; it compiles to one load.
  auto word = [b](size_t i) {
    uint64_t w;
    std::memcpy(&w, b + 8 * i, 8);
    return w;
  };
  uint64_t a[8] = {};
  auto step = [&](size_t at) {  // the 8 words at byte `at`
    for (int j = 0; j < 8; ++j) a[j] ^= word(at / 8 + static_cast<size_t>(j));
  };
  size_t i = ForEachStep<64>(bytes, streams, step) / 8;  // words read
  uint64_t x = a[0] ^ a[1] ^ a[2] ^ a[3] ^ a[4] ^ a[5] ^ a[6] ^ a[7];
  for (; i < n; ++i) x ^= word(i);
  return x;
}

}  // namespace ember
