// Forced in front of an AVX-512 kernel source (ops/*_avx512*.cpp,
// platform/*_avx512*.cpp) to build it for a CPU without AVX-512: every
// _mm512_* / __mmask intrinsic becomes SIMDe's portable version (Debian
// libsimde-dev), so ember_kernel_tests_avx512emu runs the AVX-512 kernels
// against their _ref twins on any x86-64 host with AVX2 (tests/CMakeLists.txt,
// docs/TESTING.md "AVX-512 without an AVX-512 host"). The kernels' code is
// unchanged: only what an intrinsic computes comes from elsewhere.
//
// SIMDe 0.7.4 (Debian 12) lacks some intrinsics the kernels use, and aliases
// _mm512_madd_epi16 to the masked form's four arguments. Those are defined
// below from their documented lane semantics (Intel's intrinsics guide),
// through two 256-bit halves or a lane loop: slow and plain, for tests only.
// A missing one fails the build ("inlining failed ... target specific
// option mismatch"), never a test.
#pragma once

#if !defined(__x86_64__) || defined(__AVX512F__)
#error "avx512_emulated.h is for x86-64 builds without AVX-512 flags"
#endif

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>

namespace ember::avx512_emulated {

// A 512-bit value as two 256-bit halves (lanes 0-7 / 8-15 of 32 bits), and back.
inline __m256i LowI(simde__m512i v) { return simde_mm512_extracti64x4_epi64(v, 0); }
inline __m256i HighI(simde__m512i v) { return simde_mm512_extracti64x4_epi64(v, 1); }
inline __m256 HalfF(simde__m512 v, int i) {
  alignas(64) float f[16];
  simde_mm512_storeu_ps(f, v);
  return _mm256_load_ps(f + 8 * (i & 1));
}
inline simde__m512i JoinI(__m256i lo, __m256i hi) {
  alignas(64) int32_t t[16];
  _mm256_store_si256(reinterpret_cast<__m256i*>(t), lo);
  _mm256_store_si256(reinterpret_cast<__m256i*>(t + 8), hi);
  return simde_mm512_loadu_si512(t);
}
inline simde__m512 JoinF(__m256 lo, __m256 hi) {
  alignas(64) float t[16];
  _mm256_store_ps(t, lo);
  _mm256_store_ps(t + 8, hi);
  return simde_mm512_loadu_ps(t);
}

// Conversions: per half with the AVX2 / F16C instruction of the same
// rounding (cvtps_epi32 and cvtps_ph round as MXCSR / imm say, as AVX-512's).
inline simde__m512 CvtPhPs(__m256i h) {
  return JoinF(_mm256_cvtph_ps(_mm256_castsi256_si128(h)),
               _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1)));
}
template <int kImm>
inline __m256i CvtPsPh(simde__m512 v) {
  return _mm256_setr_m128i(_mm256_cvtps_ph(HalfF(v, 0), kImm), _mm256_cvtps_ph(HalfF(v, 1), kImm));
}
inline simde__m512 CvtEpi32Ps(simde__m512i v) {
  return JoinF(_mm256_cvtepi32_ps(LowI(v)), _mm256_cvtepi32_ps(HighI(v)));
}
inline simde__m512i CvtPsEpi32(simde__m512 v) {
  return JoinI(_mm256_cvtps_epi32(HalfF(v, 0)), _mm256_cvtps_epi32(HalfF(v, 1)));
}
inline simde__m512i CvtEpu8Epi32(__m128i v) {
  return JoinI(_mm256_cvtepu8_epi32(v), _mm256_cvtepu8_epi32(_mm_srli_si128(v, 8)));
}
inline simde__m512i CvtEpi8Epi32(__m128i v) {
  return JoinI(_mm256_cvtepi8_epi32(v), _mm256_cvtepi8_epi32(_mm_srli_si128(v, 8)));
}
inline simde__m512i CvtEpu16Epi32(__m256i v) {
  return JoinI(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(v)),
               _mm256_cvtepu16_epi32(_mm256_extracti128_si256(v, 1)));
}
inline simde__m512i CvtEpu8Epi16(__m256i v) {  // 32 bytes -> 32 words
  return JoinI(_mm256_cvtepu8_epi16(_mm256_castsi256_si128(v)),
               _mm256_cvtepu8_epi16(_mm256_extracti128_si256(v, 1)));
}
inline simde__m512d CvtPsPd(__m256 v) {
  alignas(32) float f[8];
  _mm256_store_ps(f, v);
  alignas(64) double d[8];
  for (int i = 0; i < 8; ++i) d[i] = f[i];
  return simde_mm512_loadu_pd(d);
}
inline __m256 MaskzCvtPdPs(uint8_t k, simde__m512d v) {  // unselected lanes 0
  alignas(64) double d[8];
  simde_mm512_storeu_pd(d, v);
  alignas(32) float f[8];
  for (int i = 0; i < 8; ++i) f[i] = ((k >> i) & 1) ? static_cast<float>(d[i]) : 0.0f;
  return _mm256_load_ps(f);
}

// Masked loads and stores: only the selected elements are read or written
// (as the instructions, which do not fault on the others).
inline simde__m512 MaskLoaduPs(simde__m512 src, uint16_t k, const void* p) {
  alignas(64) float f[16];
  simde_mm512_storeu_ps(f, src);
  for (int i = 0; i < 16; ++i) {
    if ((k >> i) & 1) std::memcpy(f + i, static_cast<const char*>(p) + 4 * i, 4);
  }
  return simde_mm512_loadu_ps(f);
}
inline void MaskStoreuPs(void* p, uint16_t k, simde__m512 v) {
  alignas(64) float f[16];
  simde_mm512_storeu_ps(f, v);
  for (int i = 0; i < 16; ++i) {
    if ((k >> i) & 1) std::memcpy(static_cast<char*>(p) + 4 * i, f + i, 4);
  }
}
inline __m256i MaskzLoaduEpi16(uint16_t k, const void* p) {
  alignas(32) uint16_t t[16] = {};
  for (int i = 0; i < 16; ++i) {
    if ((k >> i) & 1) std::memcpy(t + i, static_cast<const char*>(p) + 2 * i, 2);
  }
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(t));
}
inline void MaskStoreuEpi16(void* p, uint16_t k, __m256i v) {
  alignas(32) uint16_t t[16];
  _mm256_store_si256(reinterpret_cast<__m256i*>(t), v);
  for (int i = 0; i < 16; ++i) {
    if ((k >> i) & 1) std::memcpy(static_cast<char*>(p) + 2 * i, t + i, 2);
  }
}

// Shuffles and reductions.
// 128-bit lanes 0-1 of the result from a, 2-3 from b, each picked by 2 bits of imm.
inline simde__m512 ShuffleF32x4(simde__m512 a, simde__m512 b, int imm) {
  alignas(64) float fa[16], fb[16], r[16];
  simde_mm512_storeu_ps(fa, a);
  simde_mm512_storeu_ps(fb, b);
  for (int l = 0; l < 4; ++l) {
    std::memcpy(r + 4 * l, (l < 2 ? fa : fb) + 4 * ((imm >> (2 * l)) & 3), 16);
  }
  return simde_mm512_loadu_ps(r);
}
inline float ReduceMaxPs(simde__m512 v) {
  alignas(64) float f[16];
  simde_mm512_storeu_ps(f, v);
  float m = f[0];
  for (int i = 1; i < 16; ++i) m = f[i] > m ? f[i] : m;
  return m;
}

}  // namespace ember::avx512_emulated

#undef _mm512_madd_epi16  // SIMDe 0.7.4 defines it with the masked form's arguments
#define _mm512_madd_epi16(a, b) simde_mm512_madd_epi16(a, b)
#define _mm512_extractf32x8_ps(v, i) ember::avx512_emulated::HalfF(v, i)
#define _mm512_cvtph_ps(h) ember::avx512_emulated::CvtPhPs(h)
#define _mm512_cvtps_ph(v, imm) ember::avx512_emulated::CvtPsPh<(imm)>(v)
#define _mm512_cvtepi32_ps(v) ember::avx512_emulated::CvtEpi32Ps(v)
#define _mm512_cvtps_epi32(v) ember::avx512_emulated::CvtPsEpi32(v)
#define _mm512_cvtepu8_epi32(v) ember::avx512_emulated::CvtEpu8Epi32(v)
#define _mm512_cvtepi8_epi32(v) ember::avx512_emulated::CvtEpi8Epi32(v)
#define _mm512_cvtepu16_epi32(v) ember::avx512_emulated::CvtEpu16Epi32(v)
#define _mm512_cvtepu8_epi16(v) ember::avx512_emulated::CvtEpu8Epi16(v)
#define _mm512_cvtps_pd(v) ember::avx512_emulated::CvtPsPd(v)
#define _mm512_maskz_cvtpd_ps(k, v) ember::avx512_emulated::MaskzCvtPdPs(k, v)
#define _mm512_mask_loadu_ps(s, k, p) ember::avx512_emulated::MaskLoaduPs(s, k, p)
#define _mm512_maskz_loadu_ps(k, p) \
  ember::avx512_emulated::MaskLoaduPs(simde_mm512_setzero_ps(), k, p)
#define _mm512_mask_storeu_ps(p, k, v) ember::avx512_emulated::MaskStoreuPs(p, k, v)
#define _mm256_maskz_loadu_epi16(k, p) ember::avx512_emulated::MaskzLoaduEpi16(k, p)
#define _mm256_mask_storeu_epi16(p, k, v) ember::avx512_emulated::MaskStoreuEpi16(p, k, v)
#define _mm512_shuffle_f32x4(a, b, imm) ember::avx512_emulated::ShuffleF32x4(a, b, imm)
#define _mm512_reduce_max_ps(v) ember::avx512_emulated::ReduceMaxPs(v)
