// Min-p (Nguyen et al. 2024, "Turning Up the Heat: Min-p Sampling for Creative
// and Coherent LLM Outputs"): keep the candidates with p >= min_p * p_max (and
// at least min_keep). min_p = 0 keeps all.
//
// Done on logits, without probabilities or sorting: p_i / p_max =
// exp(logit_i - logit_max), so the rule is logit_i >= logit_max + ln(min_p),
// one pass to find the maximum and one to filter. The filter keeps the
// candidates' order, so a sorted set stays sorted.
#include <cmath>
#include <memory>

#include "sampling/sampler.h"

namespace ember {
namespace {

class MinPSampler final : public Sampler {
 public:
  MinPSampler(float min_p, size_t min_keep) : min_p_(min_p), min_keep_(min_keep) {}

  SamplerKind kind() const override { return SamplerKind::kMinP; }

  void Apply(Candidates& c, Rng& /*rng*/) override {
    if (min_p_ <= 0.0f || c.size() <= 1) return;
    float max = -INFINITY;
    if (c.sorted()) {
      max = c.items()[0].logit;
    } else {
      for (const Candidate& x : c.items()) max = x.logit > max ? x.logit : max;
    }
    const float threshold = max + std::log(min_p_);
    c.KeepIf([threshold](const Candidate& x) { return x.logit >= threshold; }, min_keep_);
  }

  std::unique_ptr<Sampler> Clone() const override { return std::make_unique<MinPSampler>(*this); }

 private:
  float min_p_;
  size_t min_keep_;
};

}  // namespace

std::unique_ptr<Sampler> NewMinPSampler(const SamplerSpec& spec) {
  return std::make_unique<MinPSampler>(spec.min_p, spec.min_keep);
}

}  // namespace ember
