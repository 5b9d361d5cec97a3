// The vocabulary's logits as the chain's fast paths take them (top-p,
// min-p without top-k: top_p.h, min_p.h): what Reset and the temperature
// sampler would leave in the candidates' logits, as one plain array, with the
// maximum of each block of kBlock, the largest and the smallest above -inf.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sampling/float_max.h"

namespace ember {

// The largest logit of n items, and the smallest above -inf (+inf if none),
// four items at a time in vector lanes; View::logit(i) gives item i's
// (softmax.h's views, or PlainLogits' array).
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

struct PlainLogits {
  static constexpr size_t kBlock = 64;
  std::vector<float> x;          // [n] NaN -> -inf, then / temperature (1: as is)
  std::vector<float> block_max;  // [ceil(n / kBlock)] the maximum of each block of x
  float max = -INFINITY;         // the largest of x
  float min = INFINITY;          // the smallest of x above -inf (+inf if none)

  // From logits[n], a block at a time (the block still in L1 for its extremes).
  void Set(const float* logits, size_t n, float temperature) {
    struct Run {
      const float* x;
      float logit(size_t i) const { return x[i]; }
    };
    x.resize(n);
    block_max.resize((n + kBlock - 1) / kBlock);
    max = -INFINITY;
    min = INFINITY;
    for (size_t k = 0; k < block_max.size(); ++k) {
      const size_t begin = k * kBlock, end = std::min(n, begin + kBlock);
      // Reset's NaN -> -inf, then the temperature sampler's division.
      for (size_t i = begin; i < end; ++i) {
        const float l = std::isnan(logits[i]) ? -INFINITY : logits[i];
        x[i] = temperature == 1.0f ? l : l / temperature;
      }
      const Extremes e = MaxAndFiniteMin(Run{&x[begin]}, end - begin);
      block_max[k] = e.max;
      max = e.max > max ? e.max : max;
      min = e.min < min ? e.min : min;
    }
  }
};

}  // namespace ember
