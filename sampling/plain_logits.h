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

struct PlainLogits {
  static constexpr size_t kBlock = BlockMaxima::kBlock;  // the blocks of the fused top-k
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
    block_max.resize(static_cast<size_t>(BlockMaxima::Blocks(static_cast<int64_t>(n))));
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
