// Candidates: the {id, logit, p} array the samplers work on.
//
// Sorting uses RanksBefore (logit descending, then id ascending), a strict
// total order, so every selection is deterministic whatever the standard
// library's algorithm does with ties. KeepTop selects before it sorts, so a
// top-k of 40 over a 150k vocabulary never sorts the vocabulary.
#include "sampling/candidates.h"

#include <algorithm>
#include <cmath>

namespace ember {

void Candidates::Reset(const float* logits, int64_t n_vocab) {
  items_.resize(static_cast<size_t>(n_vocab));
  for (int64_t i = 0; i < n_vocab; ++i) {
    const float l = logits[i];
    items_[i] = Candidate{static_cast<int32_t>(i), std::isnan(l) ? -INFINITY : l, 0.0f};
  }
  sorted_ = false;
  has_probs_ = false;
  selected = -1;
}

void Candidates::Sort() {
  if (sorted_) return;
  std::sort(items_.begin(), items_.end(), RanksBefore);
  sorted_ = true;
}

void Candidates::KeepTop(size_t k) {
  if (k < 1) k = 1;
  if (k >= items_.size()) {
    Sort();
    return;
  }
  if (!sorted_) {
    const auto kth = items_.begin() + static_cast<std::ptrdiff_t>(k);
    // Small k: heap selection (std::partial_sort) looks at each item once
    // against the worst of the k kept, about one comparison per item for
    // random logits; larger k: nth_element (expected O(n)) and a sort of the k.
    // (Measured at 150k logits: heap selection of 40 is ~5x faster than
    // nth_element, and a sampled-threshold prefilter pass gained nothing.)
    if (k <= items_.size() / 64) {
      std::partial_sort(items_.begin(), kth, items_.end(), RanksBefore);
    } else {
      std::nth_element(items_.begin(), kth - 1, items_.end(), RanksBefore);
      std::sort(items_.begin(), kth, RanksBefore);
    }
  }
  items_.resize(k);
  sorted_ = true;
  RenormalizeProbs();
}

int64_t Candidates::IndexOf(int32_t id) const {
  const size_t n = items_.size();
  if (id >= 0 && static_cast<size_t>(id) < n && items_[static_cast<size_t>(id)].id == id) return id;
  for (size_t i = 0; i < n; ++i) {
    if (items_[i].id == id) return static_cast<int64_t>(i);
  }
  return -1;
}

void Candidates::ComputeProbs() {
  float max = -INFINITY;  // (not std::fmax: a libm call per item; logits are never NaN)
  for (const Candidate& c : items_) max = c.logit > max ? c.logit : max;
  // exp in float (within an ulp or two), the sum in double. `logit == max`
  // gives exactly 0 also when max is +-inf (inf - inf would be NaN): all -inf
  // is a uniform distribution, and +inf logits share all the mass.
  double sum = 0.0;
  for (Candidate& c : items_) {
    c.p = c.logit == max ? 1.0f : std::exp(c.logit - max);
    sum += c.p;
  }
  const double inv = 1.0 / sum;  // sum >= 1: the maximum contributes 1
  for (Candidate& c : items_) c.p = static_cast<float>(c.p * inv);
  has_probs_ = true;
}

void Candidates::RenormalizeProbs() {
  if (!has_probs_) return;
  double kept = 0.0;
  for (const Candidate& c : items_) kept += c.p;
  if (!(kept > 0.0)) {
    has_probs_ = false;  // nothing left to scale: the next user recomputes
    return;
  }
  const double inv = 1.0 / kept;
  for (Candidate& c : items_) c.p = static_cast<float>(c.p * inv);
}

}  // namespace ember
