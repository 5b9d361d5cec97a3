// ReadXor with 32-byte AVX2 loads: eight accumulators, 256 bytes (four cache
// lines) per step.
#if defined(__x86_64__)
#include <immintrin.h>

#include "platform/read_xor.h"

namespace ember {

uint64_t ReadXor_avx2(const void* p, size_t bytes, int streams) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  __m256i a[8];
  for (__m256i& v : a) v = _mm256_setzero_si256();
  size_t i = ForEachStep<256>(bytes, streams, [&](size_t at) {
    for (int j = 0; j < 8; ++j) {
      a[j] = _mm256_xor_si256(
          a[j], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + at + 32 * j)));
    }
  });
  for (; i + 32 <= bytes; i += 32) {
    a[0] = _mm256_xor_si256(a[0], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i)));
  }
  for (int j = 1; j < 8; ++j) a[0] = _mm256_xor_si256(a[0], a[j]);
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), a[0]);
  uint64_t x = lanes[0] ^ lanes[1] ^ lanes[2] ^ lanes[3];
  // The last whole words, fewer than four.
  return x ^ ReadXor_ref(b + i, bytes - i, 1);
}

}  // namespace ember
#endif
