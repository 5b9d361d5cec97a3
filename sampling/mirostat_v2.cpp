// Mirostat 2.0 (after Basu et al. 2021, "Mirostat: A Neural Text Decoding
// Algorithm that Directly Controls Perplexity", ICLR): keeps the average
// surprise of the chosen tokens near a target tau (bits) with a feedback loop
// on a truncation level mu. Version 2.0 drops the paper's top-k estimate from a
// fitted Zipf exponent and truncates by surprise directly.
//
//   mu starts at 2 * tau.
//   Per token: p = softmax over the candidates; drop every token whose
//   surprise -log2 p exceeds mu (the most probable token always stays);
//   renormalize over the rest and draw (inverse CDF, as in dist.cpp);
//   e = -log2 p(chosen), with p the probability before truncation: the
//   model's surprise, which tau targets, as the authors' reference code for
//   the original algorithm measures it (llama.cpp takes the renormalized p, an
//   e smaller by -log2 of the kept mass);
//   mu -= eta * (e - tau).
//
// Surprise > mu is p < 2^-mu, a filter: no sort, the candidates' order kept.
// Reset restores mu = 2 * tau; Clone copies mu.
#include <cmath>
#include <memory>

#include "sampling/sampler.h"

namespace ember {
namespace {

class MirostatV2Sampler final : public Sampler {
 public:
  MirostatV2Sampler(float tau, float eta) : tau_(tau), eta_(eta), mu_(2.0 * tau) {}

  SamplerKind kind() const override { return SamplerKind::kMirostatV2; }

  void Apply(Candidates& c, Rng& rng) override {
    if (c.size() == 0) return;
    if (!c.has_probs()) c.ComputeProbs();
    // The most probable candidate (it stays whatever mu is).
    std::vector<Candidate>& v = c.items();
    size_t best = 0;
    for (size_t i = 1; i < v.size(); ++i) {
      if (RanksBefore(v[i], v[best])) best = i;
    }
    const int32_t best_id = v[best].id;
    const double min_p = std::exp2(-mu_);
    size_t n = 0;
    double kept_mass = 0.0;
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i].p >= min_p || v[i].id == best_id) {
        kept_mass += v[i].p;
        v[n++] = v[i];
      }
    }
    v.resize(n);
    // Draw over the survivors with their original p (target scaled by their
    // mass: the same as drawing from the renormalized p), then renormalize.
    const double target = rng.NextDouble() * kept_mass;
    double cum = 0.0;
    const Candidate* chosen = nullptr;
    for (const Candidate& x : v) {
      if (x.p <= 0.0f && chosen) continue;
      chosen = &x;
      cum += x.p;
      if (target < cum) break;
    }
    const double e = -std::log2(static_cast<double>(chosen->p));
    c.selected = chosen->id;
    mu_ -= eta_ * (e - tau_);
    const double inv = kept_mass > 0.0 ? 1.0 / kept_mass : 0.0;
    for (Candidate& x : v) x.p = static_cast<float>(x.p * inv);
  }

  void Reset() override { mu_ = 2.0 * tau_; }

  std::unique_ptr<Sampler> Clone() const override {
    return std::make_unique<MirostatV2Sampler>(*this);
  }

 private:
  double tau_, eta_;
  double mu_;  // the truncation level, in bits
};

}  // namespace

std::unique_ptr<Sampler> NewMirostatV2Sampler(const SamplerSpec& spec) {
  return std::make_unique<MirostatV2Sampler>(spec.mirostat_tau, spec.mirostat_eta);
}

}  // namespace ember
