// What one core of this machine can do with the AVX2 instructions the int8
// GEMM is made of: the ceilings behind docs/PERFORMANCE.md "Bounds". Prints
// the clock (from a chain of dependent adds, 1 cycle each) and, per cycle,
// how many maddubs / madd / fma run, and the cost of the Q4 inner step
// (broadcast + maddubs + add16) and of the int8 step (broadcast + sign +
// maddubs + madd + add32). Not a test: numbers vary with the host.
//
//   build/bin/ember_isa_ceiling
#include <immintrin.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "cpu_clock.h"

namespace {

using ember::bench::Clock;
using ember::bench::Seconds;
constexpr long kIters = 50'000'000;

// Eight named registers (an array would live on the stack and turn each line
// into a store-reload chain), kept opaque so each line is its own chain.
#define KEEP8(a0, a1, a2, a3, a4, a5, a6, a7) \
  asm volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5), "+x"(a6), "+x"(a7))
#define EACH8(F) F(a0, 0) F(a1, 1) F(a2, 2) F(a3, 3) F(a4, 4) F(a5, 5) F(a6, 6) F(a7, 7)

alignas(64) int8_t g_acts[64] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

__m256i Bcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

}  // namespace

int main() {
  const double ghz = ember::bench::MeasureClockGhz(kIters);
  std::printf("clock              ~%.2f GHz\n", ghz);
  auto per_cycle = [&](double ops, double s) { return ops / s / 1e9 / ghz; };

  __m256i a0 = _mm256_set1_epi8(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
  const __m256i w = _mm256_set1_epi8(3);
  auto t0 = Clock::now();
  for (long i = 0; i < kIters; ++i) {
#define MADDUBS(r, j) r = _mm256_maddubs_epi16(r, w);
    EACH8(MADDUBS)
    KEEP8(a0, a1, a2, a3, a4, a5, a6, a7);
  }
  std::printf("maddubs / cycle     %.2f\n", per_cycle(8.0 * kIters, Seconds(t0)));
  t0 = Clock::now();
  for (long i = 0; i < kIters; ++i) {
#define MADD(r, j) r = _mm256_madd_epi16(r, w);
    EACH8(MADD)
    KEEP8(a0, a1, a2, a3, a4, a5, a6, a7);
  }
  std::printf("madd / cycle        %.2f\n", per_cycle(8.0 * kIters, Seconds(t0)));
  __m256 f0 = _mm256_set1_ps(1.0f), f1 = f0, f2 = f0, f3 = f0, f4 = f0, f5 = f0, f6 = f0, f7 = f0;
  const __m256 fw = _mm256_set1_ps(0.999f);
  t0 = Clock::now();
  for (long i = 0; i < kIters; ++i) {
    f0 = _mm256_fmadd_ps(f0, fw, fw);
    f1 = _mm256_fmadd_ps(f1, fw, fw);
    f2 = _mm256_fmadd_ps(f2, fw, fw);
    f3 = _mm256_fmadd_ps(f3, fw, fw);
    f4 = _mm256_fmadd_ps(f4, fw, fw);
    f5 = _mm256_fmadd_ps(f5, fw, fw);
    f6 = _mm256_fmadd_ps(f6, fw, fw);
    f7 = _mm256_fmadd_ps(f7, fw, fw);
    KEEP8(f0, f1, f2, f3, f4, f5, f6, f7);
  }
  std::printf("fma / cycle         %.2f\n", per_cycle(8.0 * kIters, Seconds(t0)));

  // Q4 step: 32 multiply-adds per broadcast + maddubs + add16.
  const int8_t* p = g_acts;
  t0 = Clock::now();
  for (long i = 0; i < kIters; ++i) {
    asm volatile("" : "+r"(p));
#define Q4STEP(r, j) r = _mm256_add_epi16(r, _mm256_maddubs_epi16(w, Bcast4(p + 4 * j)));
    EACH8(Q4STEP)
    KEEP8(a0, a1, a2, a3, a4, a5, a6, a7);
  }
  double s = Seconds(t0);
  std::printf("q4 step (bcast+maddubs+add16): %.2f cycles per 8 -> %.1f MACs/cycle\n",
              s * 1e9 * ghz / kIters, per_cycle(8.0 * 32 * kIters, s));
  // Int8 step: the sign trick needs the int32 widening after every maddubs.
  const __m256i ones = _mm256_set1_epi16(1);
  t0 = Clock::now();
  for (long i = 0; i < kIters; ++i) {
    asm volatile("" : "+r"(p));
#define Q8STEP(r, j)    \
  r = _mm256_add_epi32( \
      r,                \
      _mm256_madd_epi16(_mm256_maddubs_epi16(w, _mm256_sign_epi8(Bcast4(p + 4 * j), w)), ones));
    EACH8(Q8STEP)
    KEEP8(a0, a1, a2, a3, a4, a5, a6, a7);
  }
  s = Seconds(t0);
  std::printf("q8 step (bcast+sign+maddubs+madd+add32): %.2f cycles per 8 -> %.1f MACs/cycle\n",
              s * 1e9 * ghz / kIters, per_cycle(8.0 * 32 * kIters, s));
  return static_cast<int>(_mm256_extract_epi32(a0, 0) & 0) +
         static_cast<int>(_mm256_cvtss_f32(f0) * 0.0f);
}
