// The largest of a run of logits, in vector lanes, the extremes of a run of
// items, and the maxima of a vocabulary's blocks: greedy's argmax, the fused
// top-k (candidates.cpp), the softmax (softmax.h), the fast top-p and min-p
// (plain_logits.h) and the log-probabilities (logprobs.cpp) scan the
// vocabulary with them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

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

// The largest logit of n items, and the smallest above -inf (+inf if none),
// four items at a time in vector lanes; View::logit(i) gives item i's
// (softmax.h's views, PlainLogits' array).
struct Extremes {
  float max, min;
};
template <class View>
Extremes MaxAndFiniteMin(const View& v, size_t n) {
  Float4 hi = Float4{} - INFINITY, lo = Float4{} + INFINITY;
  const Float4 neg_inf = hi;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const Float4 l = {v.logit(i), v.logit(i + 1), v.logit(i + 2), v.logit(i + 3)};
    hi = l > hi ? l : hi;
    lo = l < lo && l > neg_inf ? l : lo;
  }
  float max = -INFINITY, min = INFINITY;
  for (; i < n; ++i) {
    const float l = v.logit(i);
    max = l > max ? l : max;
    if (l > -INFINITY) min = l < min ? l : min;
  }
  for (int j = 0; j < 4; ++j) {
    max = hi[j] > max ? hi[j] : max;
    min = lo[j] < min ? lo[j] : min;
  }
  return {max, min};
}

// The maxima of a vocabulary's blocks of kBlock logits, to find the k largest
// without touching most of them (the fused top-k, Candidates::ResetTopK, and
// TopLogprobs): the k-th largest block maximum T has at least k logits >= T
// (one in each of those blocks), so the k largest logits are all >= T, in
// the blocks whose maximum reaches T (about k of them).
class BlockMaxima {
 public:
  static constexpr int64_t kBlock = 64;
  static int64_t Blocks(int64_t n) { return (n + kBlock - 1) / kBlock; }

  // Takes the maxima of x[0..n) (MaxOf: NaN never) and returns the k-th
  // largest; 1 <= k <= Blocks(n).
  float KthLargest(const float* x, int64_t n, size_t k) {
    const int64_t blocks = Blocks(n);
    max_.resize(static_cast<size_t>(blocks));
    for (int64_t b = 0; b < blocks; ++b) {
      max_[static_cast<size_t>(b)] = MaxOf(x + b * kBlock, std::min(kBlock, n - b * kBlock));
    }
    kth_ = max_;
    std::nth_element(kth_.begin(), kth_.begin() + static_cast<std::ptrdiff_t>(k - 1), kth_.end(),
                     std::greater<float>());
    return kth_[k - 1];
  }
  // Block b's maximum, after KthLargest.
  float max(int64_t b) const { return max_[static_cast<size_t>(b)]; }

 private:
  std::vector<float> max_, kth_;
};

}  // namespace ember
