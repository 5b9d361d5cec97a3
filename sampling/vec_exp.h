// exp(x) for x <= 0 in vector lanes: the log-sum-exp of the log-probabilities
// (logprobs.cpp) and the softmax of the candidates (candidates.cpp) take one
// per logit of the vocabulary, where libm's expf, one call each, cost ~1 ms
// a token at 151936 logits.
#pragma once

#include <bit>
#include <cstdint>

#include "sampling/float_max.h"

namespace ember {

typedef uint32_t Uint4 __attribute__((vector_size(16)));  // Float4's bits

// exp(x) for x <= 0, on a float or on a Float4 (float_max.h) with the same
// operations lane by lane: x = k ln2 + r with |r| <= ln2 / 2, exp(r) by its
// Taylor polynomial to r^7 (relative error < 3e-7), times 2^k built in the
// exponent bits. Inputs below -87 count as -87 (exp(-87) = 1.6e-38, nothing
// next to the maximum's 1). Written on Float4 explicitly: GCC 12 kept the
// plain-float loop scalar (~650 µs a token at 151936 logits).
template <class F, class U>
inline F ExpNonPositive(F x) {
  const F lo = F{} - 87.0f;
  const F c = x < lo ? lo : x;  // std::max(x, -87.0f), NaN kept
  // Round to nearest by adding 1.5 * 2^23: the sum's low mantissa bits then
  // hold k as an integer (SSE2 has no vector round).
  const F t = c * 1.44269504f + 12582912.0f;
  const F k = t - 12582912.0f;
  const F r = (c - k * 0.693145751953125f) - k * 1.428606765330187e-06f;
  // Estrin's scheme: pairs, then pairs of pairs, so that the longest chain
  // is 4 multiply-adds instead of Horner's 7 (the loop is bound by that
  // chain's latency, not by the number of operations).
  const F r2 = r * r, r4 = r2 * r2;
  const F q0 = r + 1.0f, q1 = r * (1.0f / 6.0f) + 0.5f;
  const F q2 = r * (1.0f / 120.0f) + 1.0f / 24.0f, q3 = r * (1.0f / 5040.0f) + 1.0f / 720.0f;
  const F p = (q0 + q1 * r2) + (q2 + q3 * r2) * r4;
  // 2^k: k's bits (low mantissa of t, two's complement in 22 bits) shifted
  // into the exponent field.
  const U tb = std::bit_cast<U>(t);
  const U bits = (tb - 0x4B400000u + 127u) << 23;
  return p * std::bit_cast<F>(bits);
}

}  // namespace ember
