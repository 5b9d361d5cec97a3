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
  auto step = [&](const unsigned char* q) {
    for (int j = 0; j < 8; ++j) a[j] = _mm512_xor_si512(a[j], _mm512_loadu_si512(q + 64 * j));
  };
  const size_t ns = static_cast<size_t>(streams > 1 ? streams : 1);
  const size_t part = bytes / 512 / ns * 512;  // bytes per stream, whole steps
  for (size_t i = 0; i < part; i += 512) {
    for (size_t s = 0; s < ns; ++s) step(b + s * part + i);
  }
  size_t i = ns * part;
  for (; i + 512 <= bytes; i += 512) step(b + i);
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
