// Greedy selection: the id of the largest logit; ties go to the lowest id, and
// NaN counts as -inf (the chain's greedy sampler picks the same id).
#pragma once

#include <cstdint>

namespace ember {

int32_t SelectGreedy(const float* logits, int64_t n);

}  // namespace ember
