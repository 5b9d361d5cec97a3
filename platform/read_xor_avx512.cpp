// ReadXor with 64-byte AVX-512 loads: eight accumulators, 512 bytes (eight
// cache lines) per step; on an aligned buffer each load is one whole line.
#if defined(__x86_64__)
#include <immintrin.h>

#include "platform/read_xor.h"

namespace ember {

uint64_t ReadXor_avx512(const void* p, size_t bytes, int streams) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  __m512i a[8];
  for (__m512i& v : a) v = _mm512_setzero_si512();
  size_t i = ForEachStep<512>(bytes, streams, [&](size_t at) {
    for (int j = 0; j < 8; ++j) a[j] = _mm512_xor_si512(a[j], _mm512_loadu_si512(b + at + 64 * j));
  });
  for (; i + 64 <= bytes; i += 64) a[0] = _mm512_xor_si512(a[0], _mm512_loadu_si512(b + i));
  for (int j = 1; j < 8; ++j) a[0] = _mm512_xor_si512(a[0], a[j]);
  alignas(64) uint64_t lanes[8];
  _mm512_store_si512(lanes, a[0]);
  uint64_t x = 0;
  for (uint64_t l : lanes) x ^= l;
  // The last whole words, fewer than eight.
  return x ^ ReadXor_ref(b + i, bytes - i, 1);
}

}  // namespace ember
#endif
