// The largest of a run of logits, in vector lanes: greedy's argmax and the
// fused top-k (candidates.cpp) scan the vocabulary with it.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

namespace ember {

// Four floats in one vector register (SSE, NEON), through the compilers'
// vector extension: GCC and Clang turn `v > m ? v : m` on it into maxps on
// x86 and a compare and a select on ARM, where on plain floats they keep the
// scalar compare chain (a float max is not reassociable: NaN, -0).
typedef float Float4 __attribute__((vector_size(16)));

// max(x[0..n)) with NaN never taken (as if -inf); -inf when n is 0 or every
// value is NaN or -inf. Of equal +0 and -0 either may come back.
inline float MaxOf(const float* x, int64_t n) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  constexpr int64_t kVecs = 4, kLanes = 4 * kVecs;  // 16 independent maxima
  Float4 m[kVecs];
  for (Float4& v : m) v = Float4{kNegInf, kNegInf, kNegInf, kNegInf};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t j = 0; j < kVecs; ++j) {
      Float4 v;
      std::memcpy(&v, x + i + 4 * j, sizeof v);  // unaligned load
      m[j] = v > m[j] ? v : m[j];
    }
  }
  float r = kNegInf;
  for (; i < n; ++i) r = x[i] > r ? x[i] : r;
  for (const Float4& v : m) {
    for (int k = 0; k < 4; ++k) r = v[k] > r ? v[k] : r;
  }
  return r;
}

}  // namespace ember
