// AVX2 + FMA variants of the ggml-numerics dot products (ops/ggml_numerics.h):
// the same lanes, the same fused multiply-adds and the same final sum as the
// _ref versions, so the same bits (tested).
#if defined(__x86_64__)
#include "ops/ggml_dot_x86.h"

namespace ember {
namespace {

// maddubs (u8 x s8 -> pairs of int16) and madd with ones: exact, as no pair
// sum reaches 2^15 for these operands.
struct MaddLanes {
  static __m256 Sums(__m256i u, __m256i s) {
    const __m256i pairs = _mm256_maddubs_epi16(u, s);
    return _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
};

}  // namespace

float GgmlVecDotQ4_1Q8_1_avx2(int64_t n, const void* w, const void* a) {
  return ggml_x86::DotQ4_1Q8_1<MaddLanes>(n, w, a);
}

float GgmlVecDotQ8_0Q8_0_avx2(int64_t n, const void* w, const void* a) {
  return ggml_x86::DotQ8_0Q8_0<MaddLanes>(n, w, a);
}

float GgmlVecDotQ4_0Q8_0_avx2(int64_t n, const void* w, const void* a) {
  return ggml_x86::DotQ4_0Q8_0<MaddLanes>(n, w, a);
}

float GgmlVecDotQ4_0Q8_0Repacked_avx2(int64_t n, const void* w, const void* a) {
  return ggml_x86::DotQ4_0Q8_0Repacked<MaddLanes>(n, w, a);
}

}  // namespace ember
#endif  // __x86_64__
