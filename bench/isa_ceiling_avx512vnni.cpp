// What one core of this machine can do with the AVX-512 VNNI instructions the
// int8 tiles are made of (ops/qgemm_avx512vnni.cpp): which other operations
// share vpdpbusd's execution pipes. A tile's group of 32 columns x 16 rows is
// 8 vpdpbusd a token, and its epilogue a multiply (the scales) and one or two
// fmas (the sum, Q4_1's min) a token; if those run on the same pipes as
// vpdpbusd, a batch's tiles are bound by vpdpbusd + multiplies + fmas, not by
// vpdpbusd alone (docs/PERFORMANCE.md "Stop 57"). Prints the clock (a chain of
// dependent adds, 1 cycle each) and, per cycle, how many of each mix run.
// Not a test: numbers vary with the host.
//
//   build/bin/ember_isa_ceiling_avx512
#include <immintrin.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "cpu_clock.h"

namespace {

using ember::bench::Clock;
using ember::bench::Seconds;
constexpr long kIters = 20'000'000;

// The loops are written in assembly: with intrinsics GCC kept the chains on
// the stack or copied them between registers every round, which measures
// something else. zmm0-11 are 12 vpdpbusd chains; zmm12-17 six chains of the
// other operation; zmm28-31 constant operands (1.0f, so that no chain drifts
// into denormals).
#define DP12                                                                   \
  "vpdpbusd %%zmm31, %%zmm30, %%zmm0\n\tvpdpbusd %%zmm31, %%zmm30, %%zmm1\n\t" \
  "vpdpbusd %%zmm31, %%zmm30, %%zmm2\n\tvpdpbusd %%zmm31, %%zmm30, %%zmm3\n\t" \
  "vpdpbusd %%zmm31, %%zmm30, %%zmm4\n\tvpdpbusd %%zmm31, %%zmm30, %%zmm5\n\t" \
  "vpdpbusd %%zmm31, %%zmm30, %%zmm6\n\tvpdpbusd %%zmm31, %%zmm30, %%zmm7\n\t" \
  "vpdpbusd %%zmm31, %%zmm30, %%zmm8\n\tvpdpbusd %%zmm31, %%zmm30, %%zmm9\n\t" \
  "vpdpbusd %%zmm31, %%zmm30, %%zmm10\n\tvpdpbusd %%zmm31, %%zmm30, %%zmm11\n\t"
// Six of an operation on zmm12-17, as "op SRC, DST, DST" (OP3), "op SRC,
// DST" (OP2) or "op $1, DST, DST" (IMM).
#define SIX_(f) f(12) f(13) f(14) f(15) f(16) f(17)
#define OP3(op, r) op " %%zmm29, %%zmm" #r ", %%zmm" #r "\n\t"
#define OP2(op, r) op " %%zmm29, %%zmm" #r "\n\t"
#define IMM(op, r) op " $1, %%zmm" #r ", %%zmm" #r "\n\t"
#define FMA_(r) OP3("vfmadd231ps", r)
#define MUL_(r) OP3("vmulps", r)
#define ADD_(r) OP3("vaddps", r)
#define AND_(r) OP3("vpandd", r)
#define CVT_(r) OP2("vcvtdq2ps", r)
#define SRL_(r) IMM("vpsrlw", r)
#define LOOP(body)                                                                                \
  asm volatile(                                                                                   \
      "vbroadcastss %1, %%zmm29\n\tvmovaps %%zmm29, %%zmm30\n\tvmovaps %%zmm29, %%zmm31\n\t"      \
      "vmovaps %%zmm29, %%zmm12\n\tvmovaps %%zmm29, %%zmm13\n\tvmovaps %%zmm29, %%zmm14\n\t"      \
      "vmovaps %%zmm29, %%zmm15\n\tvmovaps %%zmm29, %%zmm16\n\tvmovaps %%zmm29, %%zmm17\n\t"      \
      "1:\n\t" body "dec %0\n\tjnz 1b\n\t"                                                        \
      : "+r"(n)                                                                                   \
      : "m"(kOne)                                                                                 \
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",  \
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm29", "xmm30", "xmm31", \
        "cc")

const float kOne = 1.0f;

// The second kind of operation beside vpdpbusd, six a round.
enum class Mix { kNone, kFma, kMul, kAddPs, kCvt, kAnd, kShift };

// Cycles a round of 12 vpdpbusd (12 chains) and 6 operations kMix.
template <Mix kMix>
double Cycles(double ghz) {
  long n = kIters;
  const auto t0 = Clock::now();
  if constexpr (kMix == Mix::kNone) LOOP(DP12);
  if constexpr (kMix == Mix::kFma) LOOP(DP12 SIX_(FMA_));
  if constexpr (kMix == Mix::kMul) LOOP(DP12 SIX_(MUL_));
  if constexpr (kMix == Mix::kAddPs) LOOP(DP12 SIX_(ADD_));
  if constexpr (kMix == Mix::kCvt) LOOP(DP12 SIX_(CVT_));
  if constexpr (kMix == Mix::kAnd) LOOP(DP12 SIX_(AND_));
  if constexpr (kMix == Mix::kShift) LOOP(DP12 SIX_(SRL_));
  return Seconds(t0) * 1e9 * ghz / kIters;
}

template <Mix kMix>
void Report(const char* name, double ghz, double alone) {
  const double c = Cycles<kMix>(ghz);
  std::printf("12 vpdpbusd + 6 %-9s %5.2f cycles (%+.2f against vpdpbusd alone)\n", name, c,
              c - alone);
}

}  // namespace

int main() {
  if (!__builtin_cpu_supports("avx512vnni") || !__builtin_cpu_supports("avx512bw")) {
    std::printf("this CPU has no AVX-512 VNNI: nothing to measure\n");
    return 0;
  }
  const double ghz = ember::bench::MeasureClockGhz(kIters);
  std::printf("clock              ~%.2f GHz\n", ghz);
  const double alone = Cycles<Mix::kNone>(ghz);
  std::printf(
      "12 vpdpbusd zmm          %5.2f cycles: %.2f a cycle, %.0f int8 multiply-adds a cycle\n",
      alone, 12 / alone, 12 * 64 / alone);
  // 6 of each: if they share vpdpbusd's pipes the round takes ~6 cycles more.
  Report<Mix::kFma>("vfmadd", ghz, alone);
  Report<Mix::kMul>("vmulps", ghz, alone);
  Report<Mix::kAddPs>("vaddps", ghz, alone);
  Report<Mix::kCvt>("vcvtdq2ps", ghz, alone);
  Report<Mix::kAnd>("vpandd", ghz, alone);
  Report<Mix::kShift>("vpsrlw", ghz, alone);
  // A tile's group a token (ops/qgemm_avx512vnni.cpp): 512 multiply-adds in 8
  // vpdpbusd, then the scale's multiply and the sum's fma (Q4_1: and the
  // min's fma), if those share the pipes as measured above.
  const double fma_cost = (Cycles<Mix::kFma>(ghz) - alone) / 6;
  for (const int fmas : {2, 3}) {
    const double cycles = 8 * alone / 12 + fmas * fma_cost;
    std::printf("a tile's group a token with %d multiplies/fmas: >= %.1f cycles, <= %.0f GMAC/s\n",
                fmas, cycles, 512 / cycles * ghz);
  }
  return 0;
}
