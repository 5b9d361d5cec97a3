// Locally typical sampling (Meister et al. 2022, "Locally Typical Sampling",
// TACL): keep the tokens whose information content is closest to the expected
// information content of the distribution. With p the softmax over the
// candidates and H = -sum p ln p its entropy, each token scores
// |-ln p - H|; the candidates are ranked by that score (ascending) and the
// smallest prefix whose cumulative probability reaches typical_p is kept (at
// least min_keep). typical_p = 1 keeps all. Unlike top-p, this can drop the
// most probable token when it is far more probable than typical.
//
// Ranking needs a sort by score, O(n log n) in the candidates: the default
// chain runs typical after top-k so that n is k. Ties in score go to the
// better-ranked candidate. The kept tokens are re-sorted by logit.
#include <algorithm>
#include <cmath>
#include <memory>

#include "sampling/sampler.h"

namespace ember {
namespace {

class TypicalPSampler final : public Sampler {
 public:
  TypicalPSampler(float p, size_t min_keep) : p_(p), min_keep_(std::max<size_t>(min_keep, 1)) {}

  SamplerKind kind() const override { return SamplerKind::kTypicalP; }

  void Apply(Candidates& c, Rng& /*rng*/) override {
    if (p_ >= 1.0f || c.size() <= min_keep_) return;
    if (!c.has_probs()) c.ComputeProbs();
    std::vector<Candidate>& v = c.items();
    double entropy = 0.0;
    for (const Candidate& x : v) {
      if (x.p > 0.0f) entropy -= x.p * std::log(static_cast<double>(x.p));
    }
    scored_.resize(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      const double surprise = v[i].p > 0.0f ? -std::log(static_cast<double>(v[i].p)) : INFINITY;
      scored_[i] = Scored{std::fabs(surprise - entropy), v[i]};
    }
    std::sort(scored_.begin(), scored_.end(), [](const Scored& a, const Scored& b) {
      return a.score < b.score || (a.score == b.score && RanksBefore(a.c, b.c));
    });
    double cum = 0.0;
    size_t keep = scored_.size();
    for (size_t i = 0; i < scored_.size(); ++i) {
      cum += scored_[i].c.p;
      if (cum >= p_ && i + 1 >= min_keep_) {
        keep = i + 1;
        break;
      }
    }
    v.resize(keep);
    for (size_t i = 0; i < keep; ++i) v[i] = scored_[i].c;
    std::sort(v.begin(), v.end(), RanksBefore);
    c.set_sorted(true);
    c.RenormalizeProbs();
  }

  std::unique_ptr<Sampler> Clone() const override {
    return std::make_unique<TypicalPSampler>(*this);
  }

 private:
  struct Scored {
    double score;
    Candidate c;
  };

  float p_;
  size_t min_keep_;
  std::vector<Scored> scored_;  // scratch, kept to avoid an allocation per token
};

}  // namespace

std::unique_ptr<Sampler> NewTypicalPSampler(const SamplerSpec& spec) {
  return std::make_unique<TypicalPSampler>(spec.typical_p, spec.min_keep);
}

}  // namespace ember
