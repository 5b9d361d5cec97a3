// Top-nσ (Tang et al. 2024, "Top-nσ: Not All Logits Are You Need"): keep the
// candidates whose logit is >= max - n * σ, where σ is the standard deviation
// (population: divided by the count) of the candidates' logits (and at least
// min_keep).
//
// Dividing every logit by a temperature T > 0 divides max and σ alike, so the
// kept set does not depend on where temperature runs; it does depend on what
// σ is taken over, so top-nσ belongs before any truncation (the paper's σ is
// over the whole vocabulary). Logits of -inf (banned tokens) are left out of
// the mean and σ (they would make σ infinite) and are dropped by the filter.
// Two passes (mean, then σ, in double), one filter pass; no sort.
#include <cmath>
#include <memory>

#include "sampling/sampler.h"

namespace ember {
namespace {

class TopNSigmaSampler final : public Sampler {
 public:
  TopNSigmaSampler(float n, size_t min_keep) : n_(n), min_keep_(min_keep) {}

  SamplerKind kind() const override { return SamplerKind::kTopNSigma; }

  void Apply(Candidates& c, Rng& /*rng*/) override {
    if (c.size() <= 1) return;
    float max = -INFINITY;
    double sum = 0.0;
    size_t count = 0;
    for (const Candidate& x : c.items()) {
      if (!std::isfinite(x.logit)) continue;
      max = x.logit > max ? x.logit : max;
      sum += x.logit;
      ++count;
    }
    if (count == 0) return;
    const double mean = sum / static_cast<double>(count);
    double sq = 0.0;
    for (const Candidate& x : c.items()) {
      if (std::isfinite(x.logit)) sq += (x.logit - mean) * (x.logit - mean);
    }
    const double sigma = std::sqrt(sq / static_cast<double>(count));
    const float threshold = static_cast<float>(max - n_ * sigma);
    c.KeepIf([threshold](const Candidate& x) { return x.logit >= threshold; }, min_keep_);
  }

  std::unique_ptr<Sampler> Clone() const override {
    return std::make_unique<TopNSigmaSampler>(*this);
  }

 private:
  float n_;
  size_t min_keep_;
};

}  // namespace

std::unique_ptr<Sampler> NewTopNSigmaSampler(const SamplerSpec& spec) {
  return std::make_unique<TopNSigmaSampler>(spec.top_n_sigma, spec.min_keep);
}

}  // namespace ember
