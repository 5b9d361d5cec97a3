#include "sampling/logprobs.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <queue>

#include "sampling/float_max.h"
#include "sampling/vec_exp.h"

namespace ember {

double LogSumExp(const float* logits, int64_t n) {
  const float max = MaxOf(logits, n);  // in vector lanes (float_max.h)
  // Summed in 8 float lanes (logit i + j in lane j), then in double; every
  // term is in [0, 1], so the relative error of the sum stays near 1e-6.
  constexpr int kLanes = 8;
  Float4 lane[2] = {};
  const Float4 max4 = Float4{} + max;
  auto exp4 = [&](int64_t at) {
    Float4 v;
    std::memcpy(&v, logits + at, sizeof v);  // unaligned load
    return ExpNonPositive<Float4, Uint4>(v - max4);
  };
  int64_t i = 0;
  // Two rounds of 8 at once: four independent polynomials in flight (one
  // round's two are bound by their latency), added in the rounds' order.
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    const Float4 e0 = exp4(i), e1 = exp4(i + 4), e2 = exp4(i + 8), e3 = exp4(i + 12);
    lane[0] += e0;
    lane[1] += e1;
    lane[0] += e2;
    lane[1] += e3;
  }
  for (; i + kLanes <= n; i += kLanes) {
    lane[0] += exp4(i);
    lane[1] += exp4(i + 4);
  }
  double sum = 0.0;
  for (; i < n; ++i) sum += ExpNonPositive<float, uint32_t>(logits[i] - max);
  for (int j = 0; j < kLanes; ++j) sum += lane[j / 4][j % 4];
  return max + std::log(sum);
}

std::vector<TokenLogprob> TopLogprobs(const float* logits, int64_t n, int64_t k, double lse) {
  k = std::clamp<int64_t>(k, 0, n);
  // "a before b" when a is more likely, or equally likely with a lower id.
  auto better = [logits](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  // With more blocks than k, the k best are among the logits >= the k-th
  // largest block maximum (BlockMaxima, float_max.h). Otherwise, or when that
  // is -inf, the heap over every id.
  constexpr int64_t kBlock = BlockMaxima::kBlock;
  const int64_t n_blocks = BlockMaxima::Blocks(n);
  std::vector<int32_t> ids;
  if (k > 0 && k < n_blocks) {
    BlockMaxima blocks;
    const float T = blocks.KthLargest(logits, n, static_cast<size_t>(k));
    if (T > -INFINITY) {
      for (int64_t b = 0; b < n_blocks; ++b) {
        if (!(blocks.max(b) >= T)) continue;
        for (int64_t i = b * kBlock; i < std::min(n, (b + 1) * kBlock); ++i) {
          if (logits[i] >= T) ids.push_back(static_cast<int32_t>(i));
        }
      }
    }
  }
  std::vector<TokenLogprob> out;
  if (!ids.empty()) {
    std::partial_sort(ids.begin(), ids.begin() + k, ids.end(), better);
    for (int64_t i = 0; i < k; ++i) {
      out.push_back({ids[static_cast<size_t>(i)], static_cast<double>(logits[ids[i]]) - lse});
    }
    return out;
  }
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
  out.resize(heap.size());
  for (size_t i = out.size(); i-- > 0;) {
    const int32_t id = heap.top();
    heap.pop();
    out[i] = {id, static_cast<double>(logits[id]) - lse};
  }
  return out;
}

}  // namespace ember
