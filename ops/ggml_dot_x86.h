// The x86 ggml-numerics dot products (ops/ggml_numerics.h), shared by the AVX2
// and AVX-512 VNNI variants: they differ only in how the eight int32 lane sums
// of a block are formed (exact either way), the rest is ggml's float order.
// Included by ops/ggml_numerics_avx2.cpp and ops/ggml_numerics_avx512vnni.cpp,
// each compiled with its ISA's flags.
#pragma once

#include <immintrin.h>

#include "ops/ggml_numerics.h"

namespace ember::ggml_x86 {

// ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)), as HsumFloat8 in _ref.
inline float Hsum8(__m256 v) {
  __m128 r = _mm_add_ps(_mm256_extractf128_ps(v, 1), _mm256_castps256_ps128(v));
  r = _mm_add_ps(r, _mm_movehl_ps(r, r));
  r = _mm_add_ss(r, _mm_movehdup_ps(r));
  return _mm_cvtss_f32(r);
}

// Lanes::Sums(u, s): eight int32 lanes as floats, lane j the sum of bytes
// 4j..4j+3 of u (unsigned) times s (signed).
template <class Lanes>
float DotQ4_1Q8_1(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ4_1*>(w);
  const auto* y = static_cast<const BlockQ8_1*>(a);
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  __m256 acc = _mm256_setzero_ps();
  float summs = 0.0f;
  for (int64_t b = 0; b < n / kQK; ++b) {
    summs = _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(_cvtsh_ss(x[b].m)), _mm_set_ss(_cvtsh_ss(y[b].s)),
                                       _mm_set_ss(summs)));
    const __m256 d0d1 = _mm256_set1_ps(_cvtsh_ss(x[b].d) * _cvtsh_ss(y[b].d));
    // Columns 0..15 are the low nibbles, 16..31 the high ones.
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x[b].qs));
    const __m256i q = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(packed, 4), packed), low4);
    const __m256i qa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[b].qs));
    acc = _mm256_fmadd_ps(d0d1, Lanes::Sums(q, qa), acc);
  }
  return Hsum8(acc) + summs;
}

template <class Lanes>
float DotQ8_0Q8_0(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ8_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQK; ++b) {
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(x[b].d) * _cvtsh_ss(y[b].d));
    const __m256i qx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].qs));
    const __m256i qy = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[b].qs));
    // |x| times y with x's sign: the lane sums want an unsigned operand
    // (|-128| is 0x80, still right as unsigned); the activations are in
    // [-127, 127], so no maddubs pair (at most 2 * 128 * 127) saturates.
    acc = _mm256_fmadd_ps(d, Lanes::Sums(_mm256_sign_epi8(qx, qx), _mm256_sign_epi8(qy, qx)), acc);
  }
  return Hsum8(acc);
}

// Q4_0 nibbles as signed bytes (q - 8), columns 0..15 low, 16..31 high.
inline __m256i Q4_0Bytes(const uint8_t* qs) {
  const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m256i q =
      _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(packed, 4), packed), _mm256_set1_epi8(0x0F));
  return _mm256_sub_epi8(q, _mm256_set1_epi8(8));
}

template <class Lanes>
float DotQ4_0Q8_0(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ4_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQK; ++b) {
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(x[b].d) * _cvtsh_ss(y[b].d));
    const __m256i qx = Q4_0Bytes(x[b].qs);
    const __m256i qy = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[b].qs));
    acc = _mm256_fmadd_ps(d, Lanes::Sums(_mm256_sign_epi8(qx, qx), _mm256_sign_epi8(qy, qx)), acc);
  }
  return Hsum8(acc);
}

// The repacked form: one integer sum per block (the lanes added exactly).
template <class Lanes>
float DotQ4_0Q8_0Repacked(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const BlockQ4_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  __m128 acc = _mm_setzero_ps();
  for (int64_t b = 0; b < n / kQK; ++b) {
    const __m256i qx = Q4_0Bytes(x[b].qs);
    const __m256i qy = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[b].qs));
    const __m256i lanes =
        _mm256_cvtps_epi32(Lanes::Sums(_mm256_sign_epi8(qx, qx), _mm256_sign_epi8(qy, qx)));
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(lanes), _mm256_extracti128_si256(lanes, 1));
    s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 1));
    const float d = _cvtsh_ss(x[b].d) * _cvtsh_ss(y[b].d);
    acc = _mm_fmadd_ss(_mm_cvtepi32_ps(s), _mm_set_ss(d), acc);
  }
  return _mm_cvtss_f32(acc);
}

}  // namespace ember::ggml_x86
