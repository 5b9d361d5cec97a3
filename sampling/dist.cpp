// Dist: a random draw from p = softmax(logits) over the candidates.
//
// Inverse CDF: u = rng.NextDouble() in [0, 1), target = u * sum(p) (the sum in
// double, so rounding of the float p cannot push the target past the last
// token), and the chosen token is the first, in the candidates' current order,
// whose cumulative probability exceeds the target. The order matters for which
// token a given u selects, not for the distribution; it is whatever the earlier
// samplers left (id order if none reordered, descending logit after top-k), and
// is deterministic, so the same seed and logits give the same token. One
// NextDouble per token.
#include <memory>

#include "sampling/sampler.h"

namespace ember {
namespace {

class DistSampler final : public Sampler {
 public:
  SamplerKind kind() const override { return SamplerKind::kDist; }

  void Apply(Candidates& c, Rng& rng) override {
    if (c.size() == 0) return;
    if (!c.has_probs()) c.ComputeProbs();
    const std::vector<Candidate>& v = c.items();
    double total = 0.0;
    for (const Candidate& x : v) total += x.p;
    const double target = rng.NextDouble() * total;
    double cum = 0.0;
    int32_t chosen = -1;
    for (const Candidate& x : v) {
      if (x.p <= 0.0f) continue;
      chosen = x.id;  // the last token with p > 0 if target rounds up to the total
      cum += x.p;
      if (target < cum) break;
    }
    c.selected = chosen;
  }

  std::unique_ptr<Sampler> Clone() const override { return std::make_unique<DistSampler>(); }
};

}  // namespace

std::unique_ptr<Sampler> NewDistSampler() { return std::make_unique<DistSampler>(); }

}  // namespace ember
