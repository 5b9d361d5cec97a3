#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "sampling/chain.h"

using namespace ember;

namespace {

std::unique_ptr<SamplerChain> DistChain(uint64_t seed, int32_t n_vocab) {
  SamplerSpec dist;
  dist.kind = SamplerKind::kDist;
  std::unique_ptr<SamplerChain> chain;
  REQUIRE(SamplerChain::Create({dist}, SamplerContext{n_vocab, nullptr}, seed, &chain).ok());
  return chain;
}

}  // namespace

TEST_CASE("dist: 100,000 draws follow softmax(logits) (chi-square)", "[sampling]") {
  const std::vector<float> l = {3.0f, 2.0f, 1.0f, 0.5f};
  std::vector<double> p(4);
  double z = 0;
  for (int i = 0; i < 4; ++i) z += p[i] = std::exp(l[i]);
  for (double& x : p) x /= z;  // [0.6439, 0.2369, 0.0871, 0.0321]
  auto chain = DistChain(20240601, 4);
  const int n = 100000;
  std::vector<int> count(4);
  for (int i = 0; i < n; ++i) ++count[static_cast<size_t>(chain->Sample(l.data()))];
  double chi2 = 0;
  for (int i = 0; i < 4; ++i) chi2 += std::pow(count[i] - n * p[i], 2) / (n * p[i]);
  // 3 degrees of freedom: P(chi2 > 16.27) = 0.001.
  CHECK(chi2 < 16.27);
  CHECK(chain->last_candidates().has_probs());
}

TEST_CASE("dist: the same seed gives the same sequence, another seed does not", "[sampling]") {
  std::vector<float> l(1000);
  for (size_t i = 0; i < l.size(); ++i) l[i] = static_cast<float>(std::sin(0.37 * i) * 3.0);
  auto a = DistChain(7, 1000), b = DistChain(7, 1000), c = DistChain(8, 1000);
  std::vector<int32_t> sa, sb, sc;
  for (int i = 0; i < 2000; ++i) {
    sa.push_back(a->Sample(l.data()));
    sb.push_back(b->Sample(l.data()));
    sc.push_back(c->Sample(l.data()));
  }
  CHECK(sa == sb);
  CHECK(sa != sc);
}

TEST_CASE("dist: one token with all the mass is always drawn", "[sampling]") {
  const std::vector<float> l = {-INFINITY, -INFINITY, 0.0f, -INFINITY};
  auto chain = DistChain(1, 4);
  for (int i = 0; i < 1000; ++i) REQUIRE(chain->Sample(l.data()) == 2);
}
