// Logit bias: logit[id] += bias for each (id, bias) given; a bias of -inf bans
// the token (its probability becomes 0; it stays a candidate so the set is
// never emptied by a ban). Several entries for one id add up. Ids were checked
// against n_vocab when the sampler was built (MakeSampler).
//
// O(number of entries) while the candidates are in id order (the bias runs
// first in the default chain), else a search per entry (Candidates::IndexOf).
#include <cmath>
#include <memory>

#include "sampling/sampler.h"

namespace ember {
namespace {

class LogitBiasSampler final : public Sampler {
 public:
  explicit LogitBiasSampler(std::vector<std::pair<int32_t, float>> bias) : bias_(std::move(bias)) {}

  SamplerKind kind() const override { return SamplerKind::kLogitBias; }

  void Apply(Candidates& c, Rng& /*rng*/) override {
    bool changed = false;
    for (const auto& [id, bias] : bias_) {
      if (bias == 0.0f) continue;
      const int64_t i = c.IndexOf(id);
      if (i < 0) continue;  // already removed by an earlier sampler
      float& logit = c.items()[static_cast<size_t>(i)].logit;
      logit = ShiftLogit(logit, bias);
      changed = true;
    }
    if (changed) {
      c.set_sorted(false);
      c.InvalidateProbs();
    }
  }

  bool EditsLogitsSparsely() const override { return true; }
  void ApplyToLogits(float* logits, int64_t n_vocab) override {
    for (const auto& [id, bias] : bias_) {
      if (bias == 0.0f || id < 0 || id >= n_vocab) continue;
      const float logit = logits[id];
      logits[id] = ShiftLogit(std::isnan(logit) ? -INFINITY : logit, bias);
    }
  }

  std::unique_ptr<Sampler> Clone() const override {
    return std::make_unique<LogitBiasSampler>(*this);
  }

 private:
  std::vector<std::pair<int32_t, float>> bias_;
};

}  // namespace

std::unique_ptr<Sampler> NewLogitBiasSampler(const SamplerSpec& spec) {
  return std::make_unique<LogitBiasSampler>(spec.logit_bias);
}

}  // namespace ember
