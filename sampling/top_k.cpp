// Top-k (Fan et al. 2018, "Hierarchical Neural Story Generation"): keep the k
// candidates with the largest logits (at least min_keep; k = 0 keeps all).
//
// Candidates::KeepTop selects the k before sorting them (heap selection or
// nth_element), so k = 40 over a 150k vocabulary costs about one pass over the
// vocabulary, never a full sort. The survivors are sorted, which the samplers
// after top-k (top-p, typical) rely on to stay cheap.
#include <algorithm>
#include <memory>

#include "sampling/sampler.h"

namespace ember {
namespace {

class TopKSampler final : public Sampler {
 public:
  TopKSampler(int32_t k, size_t min_keep) : k_(k), min_keep_(min_keep) {}

  SamplerKind kind() const override { return SamplerKind::kTopK; }

  void Apply(Candidates& c, Rng& /*rng*/) override {
    if (k_ <= 0) return;
    const size_t k = std::max(static_cast<size_t>(k_), min_keep_);
    if (k >= c.size()) return;  // keeps all: nothing to do, and no sort needed
    c.KeepTop(k);
  }

  std::unique_ptr<Sampler> Clone() const override { return std::make_unique<TopKSampler>(*this); }

 private:
  int32_t k_;
  size_t min_keep_;
};

}  // namespace

std::unique_ptr<Sampler> NewTopKSampler(const SamplerSpec& spec) {
  return std::make_unique<TopKSampler>(spec.top_k, spec.min_keep);
}

}  // namespace ember
