#include "sampling/logprobs.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <queue>

#include "sampling/float_max.h"

namespace ember {

namespace {

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

}  // namespace

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
