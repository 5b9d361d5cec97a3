// The K kernels' request for a token's next activations
// (qgemm_kquant_avx512vnni.cpp): internal linkage, as the kernels' common
// headers, and no ISA of its own (__builtin_prefetch). The AVX2 K kernels go
// without: forced onto the Zen 4 host of stop 52 (EMBER_ISA=avx2) they gained
// 0-10% (Q4_K, Q6_K) and lost 1-4% (Q3_K at 8192), but there they are bound by
// their arithmetic (36-38 GB/s in cache, Q3_K 15-18), so that host cannot say
// what an AVX2 machine's memory does with it.
#pragma once

#include <cstdint>

#include "ops/qgemm.h"
#include "quant/packed.h"

namespace ember {
namespace {

// Which of a token's per-group sums a K kernel reads beside its quants and
// scales d: the 6-bit mins' d * qsum (Q4_K, Q5_K) or the sums per 16 columns
// (Q6_K's and Q3_K's offsets, Q2_K's mins).
enum class ActSums { kDqsum, kQsum16 };

// One token's activations of K super-group s: 256 int8 quants (4 lines), and
// the groups' scales d and sums (a line or less each), asked for into L1 a
// super-group ahead by the K kernels that run without the weights' prefetch
// (one token on Zen 4, two for Q4_K, Q5_K and Q6_K: UnprefetchedTokens in
// qgemm_avx512vnni_common.h), for each of their tokens. Their weights stream
// through L1 on the way (a tile's row at k = 4864 is 64 KB of Q6_K) and evict
// the activations, which then came from L2 for every tile at a large k: one token
// of Q6_K read 28-31 GB/s at k = 2048 but 23-25 at 8192, where confining the
// activations to 2048 columns (wrong results) read 29 (docs/PERFORMANCE.md,
// stop 51). With this, `ember_gemv_rate 8192 0.3 1`, medians of 5
// alternating rounds: Q6_K 24.2 -> 29.2 GB/s, Q4_K 26.0 -> 30.3, Q5_K 24.5 ->
// 28.3, Q3_K 22.5 -> 26.0; Q2_K unchanged (stop 52). The Q4_0 / Q5_0 / Q8_0 /
// IQ4_NL kernels read 29-31 GB/s at every k with or without it, so they go
// without. A function made of prefetches alone must be inlined: GCC otherwise
// finds it free of side effects and drops the call.
template <ActSums kSums>
[[gnu::always_inline]] inline void PrefetchActs(const QuantizedActs& a, int64_t t, int64_t s) {
  if (s * kSuperGroups >= a.k / 32) return;  // past the last super-group
  const char* q = reinterpret_cast<const char*>(a.q_row(t) + s * kSuperGroups * 32);
  for (int line = 0; line < 4; ++line) __builtin_prefetch(q + 64 * line, 0, 3);
  __builtin_prefetch(a.d_row(t) + s * kSuperGroups, 0, 3);
  const void* sums = kSums == ActSums::kDqsum
                         ? static_cast<const void*>(a.dqsum_row(t) + s * kSuperGroups)
                         : static_cast<const void*>(a.qsum16_row(t) + 2 * s * kSuperGroups);
  __builtin_prefetch(sums, 0, 3);
}

}  // namespace
}  // namespace ember
