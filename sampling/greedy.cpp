// Greedy selection: the largest logit; ties go to the lowest id. Two forms: on
// a raw logit array (SelectGreedy, used by the runtime's plain decoding) and as
// the chain's terminal sampler over the candidates, which need not be in id
// order (RanksBefore breaks ties by id). The sampler does not compute
// probabilities: greedy needs none, and a softmax over 150k logits would cost
// more than the selection.
#include "sampling/greedy.h"

#include <algorithm>
#include <limits>
#include <memory>

#include "sampling/float_max.h"
#include "sampling/sampler.h"

namespace ember {

// The first maximum in two passes over blocks of kBlock logits: the first
// takes each block's maximum in vector lanes (MaxOf; NaN never, as the
// scalar scan never takes one) and keeps the first block holding the
// largest; the second finds the first logit equal to it in that block. The
// same id as a scalar scan with a strict `>`: the first block whose maximum
// equals the overall one holds its first occurrence (+0 and -0 compare equal
// in both). At 49152 logits the scalar scan took ~56 µs a token (each
// compare waits on the previous maximum).
int32_t SelectGreedy(const float* logits, int64_t n) {
  constexpr int64_t kBlock = 1024;
  float best = -std::numeric_limits<float>::infinity();  // NaN counts as -inf
  int64_t best_block = -1;
  for (int64_t b0 = 0; b0 < n; b0 += kBlock) {
    const float block_max = MaxOf(logits + b0, std::min(kBlock, n - b0));
    if (block_max > best) {  // strict: the first block holding the maximum
      best = block_max;
      best_block = b0;
    }
  }
  if (best_block < 0) return 0;  // nothing above -inf: the scalar scan keeps id 0
  for (int64_t i = best_block;; ++i) {
    if (logits[i] == best) return static_cast<int32_t>(i);
  }
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
