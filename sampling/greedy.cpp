// Greedy selection: the largest logit; ties go to the lowest id. Two forms: on
// a raw logit array (SelectGreedy, used by the runtime's plain decoding) and as
// the chain's terminal sampler over the candidates, which need not be in id
// order (RanksBefore breaks ties by id). The sampler does not compute
// probabilities: greedy needs none, and a softmax over 150k logits would cost
// more than the selection.
#include "sampling/greedy.h"

#include <limits>
#include <memory>

#include "sampling/sampler.h"

namespace ember {

int32_t SelectGreedy(const float* logits, int64_t n) {
  // NaN counts as -inf, as in Candidates::Reset: never above anything.
  int64_t best = 0;
  float best_logit = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) {
    if (logits[i] > best_logit) {  // strict: the first maximum wins
      best = i;
      best_logit = logits[i];
    }
  }
  return static_cast<int32_t>(best);
}

namespace {

class GreedySampler final : public Sampler {
 public:
  SamplerKind kind() const override { return SamplerKind::kGreedy; }

  void Apply(Candidates& c, Rng& /*rng*/) override {
    const std::vector<Candidate>& v = c.items();
    if (v.empty()) return;
    if (c.sorted()) {
      c.selected = v[0].id;
      return;
    }
    size_t best = 0;
    for (size_t i = 1; i < v.size(); ++i) {
      if (RanksBefore(v[i], v[best])) best = i;
    }
    c.selected = v[best].id;
  }

  std::unique_ptr<Sampler> Clone() const override { return std::make_unique<GreedySampler>(); }
};

}  // namespace

std::unique_ptr<Sampler> NewGreedySampler() { return std::make_unique<GreedySampler>(); }

}  // namespace ember
