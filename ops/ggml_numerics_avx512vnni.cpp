// AVX-512 VNNI variants of the ggml-numerics dot products (ops/ggml_numerics.h):
// the lane sums in one vpdpbusd, as llama.cpp's build for such a CPU forms
// them; the same bits as _ref (tested).
#if defined(__x86_64__)
#include "ops/ggml_dot_x86.h"

namespace ember {
namespace {

struct DpbusdLanes {
  static __m256 Sums(__m256i u, __m256i s) {
    return _mm256_cvtepi32_ps(_mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s));
  }
};

}  // namespace

float GgmlVecDotQ4_1Q8_1_avx512vnni(int64_t n, const void* w, const void* a) {
  return ggml_x86::DotQ4_1Q8_1<DpbusdLanes>(n, w, a);
}

float GgmlVecDotQ8_0Q8_0_avx512vnni(int64_t n, const void* w, const void* a) {
  return ggml_x86::DotQ8_0Q8_0<DpbusdLanes>(n, w, a);
}

float GgmlVecDotQ4_0Q8_0_avx512vnni(int64_t n, const void* w, const void* a) {
  return ggml_x86::DotQ4_0Q8_0<DpbusdLanes>(n, w, a);
}

float GgmlVecDotQ4_0Q8_0Repacked_avx512vnni(int64_t n, const void* w, const void* a) {
  return ggml_x86::DotQ4_0Q8_0Repacked<DpbusdLanes>(n, w, a);
}

}  // namespace ember
#endif  // __x86_64__
