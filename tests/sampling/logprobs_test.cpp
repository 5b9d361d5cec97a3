#include "sampling/logprobs.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>
#include <vector>

#include "sampling/rng.h"

using namespace ember;

namespace {

std::vector<float> Logits(int64_t n, int mode, Rng& rng) {
  std::vector<float> l(static_cast<size_t>(n));
  for (float& x : l) {
    const uint64_t r = rng.Next();
    if (mode == 0) {  // few values: ties everywhere
      x = static_cast<float>(static_cast<int>(r % 7) - 3);
    } else if (mode == 1) {  // mostly -inf: the heap's way
      x = r % 40 == 0 ? static_cast<float>(r % 5) : -INFINITY;
    } else {  // spread, with some -inf
      x = r % 97 == 0 ? -INFINITY : static_cast<float>(static_cast<int64_t>(r % 40001) - 20000) * 1e-3f;
    }
  }
  return l;
}

}  // namespace

TEST_CASE("logprobs: LogSumExp is log(sum(exp)) to float precision", "[sampling]") {
  Rng rng(5);
  for (int64_t n : {1, 7, 8, 15, 16, 17, 1000, 49152}) {
    for (int mode = 0; mode < 3; ++mode) {
      const std::vector<float> l = Logits(n, mode, rng);
      double max = -INFINITY;
      for (float x : l) max = std::max<double>(max, x);
      if (!(max > -INFINITY)) continue;
      double sum = 0.0;
      for (float x : l) sum += std::exp(static_cast<double>(x) - max);
      const double want = max + std::log(sum);
      INFO("n " << n << " mode " << mode);
      CHECK(LogSumExp(l.data(), n) == Approx(want).epsilon(1e-6).margin(1e-6));
    }
  }
  const std::vector<float> big = {80.0f, 80.0f, -100.0f};  // exp(80) overflows a float
  CHECK(LogSumExp(big.data(), 3) == Approx(80.0 + std::log(2.0)).epsilon(1e-6));
}

TEST_CASE("logprobs: TopLogprobs gives a full sort's first k, ties by id", "[sampling]") {
  Rng rng(9);
  for (int64_t n : {1, 5, 64, 65, 640, 5000, 49152}) {
    for (int mode = 0; mode < 3; ++mode) {
      const std::vector<float> l = Logits(n, mode, rng);
      std::vector<int32_t> order(static_cast<size_t>(n));
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](int32_t a, int32_t b) { return l[a] > l[b]; });
      const double lse = LogSumExp(l.data(), n);
      for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{5}, int64_t{20}, int64_t{100}, n}) {
        const std::vector<TokenLogprob> top = TopLogprobs(l.data(), n, k, lse);
        INFO("n " << n << " mode " << mode << " k " << k);
        REQUIRE(static_cast<int64_t>(top.size()) == std::min(k, n));
        bool same = true;
        for (size_t i = 0; i < top.size(); ++i) {
          const double want = static_cast<double>(l[static_cast<size_t>(order[i])]) - lse;
          same = same && top[i].id == order[i] &&
                 (top[i].logprob == want || (std::isnan(want) && std::isnan(top[i].logprob)));
        }
        CHECK(same);
      }
    }
  }
}
