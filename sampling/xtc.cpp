// XTC, "Exclude Top Choices" (p-e-w, text-generation-webui pull request #6335,
// 2024): with probability xtc_probability, remove every candidate whose
// probability is >= xtc_threshold except the least probable of them. At least
// one viable token therefore stays, and when fewer than two candidates reach
// the threshold nothing changes (so a threshold > 0.5 never acts). Nothing is
// removed either if fewer than min_keep candidates would remain.
//
// The coin is one rng.NextDouble() per token, drawn whenever
// xtc_probability > 0 (so the stream of draws does not depend on the logits).
// One softmax (no sort) and one filter pass that keeps the candidates' order.
#include <memory>

#include "sampling/sampler.h"

namespace ember {
namespace {

class XtcSampler final : public Sampler {
 public:
  XtcSampler(float probability, float threshold, size_t min_keep)
      : probability_(probability), threshold_(threshold), min_keep_(min_keep) {}

  SamplerKind kind() const override { return SamplerKind::kXtc; }

  void Apply(Candidates& c, Rng& rng) override {
    if (probability_ <= 0.0f) return;
    if (rng.NextDouble() >= probability_ || c.size() < 2) return;
    if (!c.has_probs()) c.ComputeProbs();
    const std::vector<Candidate>& v = c.items();
    size_t above = 0;
    const Candidate* last = nullptr;  // the least probable candidate with p >= threshold
    for (const Candidate& x : v) {
      if (x.p < threshold_) continue;
      ++above;
      if (!last || RanksBefore(*last, x)) last = &x;
    }
    if (above < 2 || v.size() - (above - 1) < min_keep_) return;
    const int32_t keep_id = last->id;
    const float threshold = threshold_;
    c.KeepIf([=](const Candidate& x) { return x.p < threshold || x.id == keep_id; }, 1);
  }

  std::unique_ptr<Sampler> Clone() const override { return std::make_unique<XtcSampler>(*this); }

 private:
  float probability_, threshold_;
  size_t min_keep_;
};

}  // namespace

std::unique_ptr<Sampler> NewXtcSampler(const SamplerSpec& spec) {
  return std::make_unique<XtcSampler>(spec.xtc_probability, spec.xtc_threshold, spec.min_keep);
}

}  // namespace ember
