// Draw from softmax(logits / T) with an explicit RNG (T > 0).
#pragma once

#include <cstdint>

#include "sampling/rng.h"

namespace ember {

// Inverse-CDF draw: u = rng.NextDouble(), return the first id whose
// cumulative probability exceeds u (summed in double, in id order).
int32_t DrawWithTemperature(const float* logits, int64_t n, float temperature, Rng& rng);

}  // namespace ember
