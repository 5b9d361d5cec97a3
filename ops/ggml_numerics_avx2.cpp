// AVX2 + FMA variants of the ggml-numerics dot products (ops/ggml_numerics.h):
// the same lanes, the same fused multiply-adds and the same final sum as the
// _ref versions, so the same bits (tested), about twenty times faster.
#if defined(__x86_64__)
#include <immintrin.h>

#include "ops/ggml_numerics.h"
#include "quant/fp16.h"

namespace ember {
namespace {

// ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)), as HsumFloat8 in _ref.
float Hsum8(__m256 v) {
  __m128 r = _mm_add_ps(_mm256_extractf128_ps(v, 1), _mm256_castps256_ps128(v));
  r = _mm_add_ps(r, _mm_movehl_ps(r, r));
  r = _mm_add_ss(r, _mm_movehdup_ps(r));
  return _mm_cvtss_f32(r);
}

// Eight int32 lanes, lane j the sum of bytes 4j..4j+3 of u (unsigned) times s
// (signed); exact, as every |pair sum| stays below 2^15 for these operands.
__m256 LaneSums(__m256i u, __m256i s) {
  const __m256i pairs = _mm256_maddubs_epi16(u, s);
  return _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
}

}  // namespace

float GgmlVecDotQ4_1Q8_1_avx2(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ4_1*>(w);
  const auto* y = static_cast<const BlockQ8_1*>(a);
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  __m256 acc = _mm256_setzero_ps();
  float summs = 0.0f;
  for (int64_t b = 0; b < n / kQK; ++b) {
    summs = _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(Fp16ToFp32(x[b].m)),
                                       _mm_set_ss(Fp16ToFp32(y[b].s)), _mm_set_ss(summs)));
    const __m256 d0d1 = _mm256_set1_ps(Fp16ToFp32(x[b].d) * Fp16ToFp32(y[b].d));
    // Columns 0..15 are the low nibbles, 16..31 the high ones.
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x[b].qs));
    const __m256i q = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(packed, 4), packed), low4);
    const __m256i qa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[b].qs));
    acc = _mm256_fmadd_ps(d0d1, LaneSums(q, qa), acc);
  }
  return Hsum8(acc) + summs;
}

float GgmlVecDotQ8_0Q8_0_avx2(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ8_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQK; ++b) {
    const __m256 d = _mm256_set1_ps(Fp16ToFp32(x[b].d) * Fp16ToFp32(y[b].d));
    const __m256i qx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].qs));
    const __m256i qy = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[b].qs));
    // |x| times y with x's sign: maddubs wants an unsigned operand (|-128|
    // is 0x80, still right as unsigned); the activations are in [-127, 127],
    // so no pair of products (at most 2 * 128 * 127) saturates.
    acc = _mm256_fmadd_ps(d, LaneSums(_mm256_sign_epi8(qx, qx), _mm256_sign_epi8(qy, qx)), acc);
  }
  return Hsum8(acc);
}

}  // namespace ember
#endif  // __x86_64__
