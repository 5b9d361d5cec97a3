#include "sampling/logprobs.h"

#include <algorithm>
#include <cmath>
#include <queue>

namespace ember {

double LogSumExp(const float* logits, int64_t n) {
  float max = logits[0];
  for (int64_t i = 1; i < n; ++i) max = std::fmax(max, logits[i]);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(logits[i]) - max);
  return max + std::log(sum);
}

std::vector<TokenLogprob> TopLogprobs(const float* logits, int64_t n, int64_t k, double lse) {
  k = std::clamp<int64_t>(k, 0, n);
  // "a before b" when a is more likely, or equally likely with a lower id.
  auto better = [logits](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  // A heap of the k best so far, the worst of them on top.
  std::priority_queue<int32_t, std::vector<int32_t>, decltype(better)> heap(better);
  for (int32_t i = 0; i < n; ++i) {
    if (static_cast<int64_t>(heap.size()) < k) {
      heap.push(i);
    } else if (k > 0 && better(i, heap.top())) {
      heap.pop();
      heap.push(i);
    }
  }
  std::vector<TokenLogprob> out(heap.size());
  for (size_t i = out.size(); i-- > 0;) {
    const int32_t id = heap.top();
    heap.pop();
    out[i] = {id, static_cast<double>(logits[id]) - lse};
  }
  return out;
}

}  // namespace ember
