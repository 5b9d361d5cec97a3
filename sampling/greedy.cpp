#include "sampling/greedy.h"

namespace ember {

int32_t SelectGreedy(const float* logits, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (logits[i] > logits[best]) best = i;  // strict: the first maximum wins
  }
  return static_cast<int32_t>(best);
}

}  // namespace ember
