// Temperature: logit / T, so p ∝ exp(logit / T) (T < 1 sharpens, T > 1
// flattens). T = 0 is the limit: only the largest logit stays (ties: the
// lowest id), which makes any later draw deterministic.
//
// Dividing by T > 0 keeps the order, except that two close logits can round to
// the same quotient; a sorted set is checked for that (O(n)) so that sorted()
// stays true only when it is.
#include <memory>

#include "sampling/sampler.h"

namespace ember {
namespace {

class TemperatureSampler final : public Sampler {
 public:
  explicit TemperatureSampler(float t) : t_(t) {}

  SamplerKind kind() const override { return SamplerKind::kTemperature; }

  void Apply(Candidates& c, Rng& /*rng*/) override {
    std::vector<Candidate>& v = c.items();
    if (v.empty() || t_ == 1.0f) return;
    if (t_ == 0.0f) {
      size_t best = 0;
      for (size_t i = 1; i < v.size(); ++i) {
        if (RanksBefore(v[i], v[best])) best = i;
      }
      v[0] = v[best];
      v.erase(v.begin() + 1, v.end());  // (resize(1) trips GCC 12's -Warray-bounds)
      c.set_sorted(true);
      c.InvalidateProbs();
      return;
    }
    for (Candidate& x : v) x.logit /= t_;
    if (c.sorted()) {
      for (size_t i = 1; i < v.size(); ++i) {
        if (RanksBefore(v[i], v[i - 1])) {
          c.set_sorted(false);
          break;
        }
      }
    }
    c.InvalidateProbs();
  }

  std::unique_ptr<Sampler> Clone() const override {
    return std::make_unique<TemperatureSampler>(*this);
  }

 private:
  float t_;
};

}  // namespace

std::unique_ptr<Sampler> NewTemperatureSampler(const SamplerSpec& spec) {
  return std::make_unique<TemperatureSampler>(spec.temperature);
}

}  // namespace ember
