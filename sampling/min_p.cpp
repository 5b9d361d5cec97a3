// Min-p (Nguyen et al. 2024, "Turning Up the Heat: Min-p Sampling for Creative
// and Coherent LLM Outputs"): keep the candidates with p >= min_p * p_max (and
// at least min_keep). min_p = 0 keeps all.
//
// Done on logits, without probabilities or sorting: p_i / p_max =
// exp(logit_i - logit_max), so the rule is logit_i >= logit_max + ln(min_p),
// one pass to find the maximum and one to filter. The filter keeps the
// candidates' order, so a sorted set stays sorted.
//
// A chain that reaches min-p with the whole vocabulary (no top-k or top-p
// before it) runs ResetMinP instead (min_p.h, chain.cpp): the logits as a
// plain array with their blocks' maxima, and only the blocks whose maximum
// reaches the threshold looked at.
#include "sampling/min_p.h"

#include <algorithm>
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

bool ResetMinP(const float* logits, int64_t n_vocab, float temperature, float min_p,
               size_t min_keep, PlainLogits* pl, Candidates* c) {
  const size_t n = static_cast<size_t>(n_vocab);
  if (min_p <= 0.0f || n <= 1) return false;  // the sampler keeps all
  pl->Set(logits, n, temperature);
  const float threshold = pl->max + std::log(min_p);  // the sampler's, from the same maximum
  std::vector<Candidate>& items = c->items();
  items.clear();
  constexpr size_t kBlock = PlainLogits::kBlock;
  for (size_t k = 0; k < pl->block_max.size(); ++k) {
    if (!(pl->block_max[k] >= threshold)) continue;
    for (size_t i = k * kBlock; i < std::min(n, (k + 1) * kBlock); ++i) {
      if (pl->x[i] >= threshold)
        items.push_back(Candidate{static_cast<int32_t>(i), pl->x[i], 0.0f});
    }
  }
  // All kept, or fewer than min_keep (KeepIf's cases that keep or sort the
  // whole set): the plain path.
  if (items.size() == n || items.size() < std::max<size_t>(min_keep, 1)) return false;
  c->set_sorted(false);
  c->InvalidateProbs();  // after the temperature, none; KeepIf renormalizes nothing
  c->selected = -1;
  return true;
}

std::unique_ptr<Sampler> NewMinPSampler(const SamplerSpec& spec) {
  return std::make_unique<MinPSampler>(spec.min_p, spec.min_keep);
}

}  // namespace ember
