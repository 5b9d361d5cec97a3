// Candidates: the {id, logit, p} array the samplers work on.
//
// Sorting uses RanksBefore (logit descending, then id ascending), a strict
// total order, so every selection is deterministic whatever the standard
// library's algorithm does with ties. KeepTop selects before it sorts, so a
// top-k of 40 over a 150k vocabulary never sorts the vocabulary.
#include "sampling/candidates.h"

#include "sampling/softmax.h"

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

// ResetTopK in two passes over the logits, never writing the vocabulary's
// 12-byte items (1.8 MB at 151936 logits, which with the division and the
// heap selection took ~340 µs a token):
//  1. the maximum of each block of kBlock logits (NaN never wins, as -inf);
//     the k-th largest block maximum T has at least k logits >= T (one in
//     each of those blocks), so every one of the k best is >= T / temperature
//     after the division;
//  2. the logits of the blocks whose maximum reaches x_min, the least float
//     whose quotient is still >= T / temperature (dividing is monotone but
//     can map several floats to one quotient, and a tie with a lower id ranks
//     first), become items, divided as the temperature sampler divides; KeepTop
//     of those is KeepTop of all.
// With fewer blocks than k, logits that are mostly -inf or NaN (T = -inf), or
// a temperature so large that x_min is many floats below T, the plain path.
void Candidates::ResetTopK(const float* logits, int64_t n_vocab, float temperature, size_t k) {
  constexpr int64_t kBlock = BlockMaxima::kBlock;
  constexpr int kMaxSteps = 64;  // floats below T that may share its quotient
  const float t = temperature;
  auto plain = [&] {
    Reset(logits, n_vocab);
    if (t != 1.0f) {
      for (Candidate& c : items_) c.logit /= t;
    }
    if (k < items_.size()) KeepTop(k);  // as the top-k sampler: all kept, nothing sorted
  };
  const int64_t n_blocks = BlockMaxima::Blocks(n_vocab);
  if (k < 1 || !(t > 0.0f) || static_cast<int64_t>(k) >= n_blocks) return plain();
  const float T = blocks_.KthLargest(logits, n_vocab, k);
  if (!(T > -INFINITY)) return plain();
  const float yT = T / t;
  float x_min = T;
  for (int step = 0;; ++step) {
    const float below = std::nextafter(x_min, -INFINITY);
    if (!(below / t >= yT)) break;
    if (step == kMaxSteps) return plain();
    x_min = below;
  }
  items_.clear();
  for (int64_t b = 0; b < n_blocks; ++b) {
    if (!(blocks_.max(b) >= x_min)) continue;
    const int64_t end = std::min(n_vocab, (b + 1) * kBlock);
    for (int64_t i = b * kBlock; i < end; ++i) {
      if (logits[i] >= x_min) {  // (false for NaN)
        items_.push_back(Candidate{static_cast<int32_t>(i), logits[i] / t, 0.0f});
      }
    }
  }
  sorted_ = false;
  has_probs_ = false;
  selected = -1;
  KeepTop(k);
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
  SoftmaxOf(ItemsView{items_.data()}, items_.size());  // softmax.h
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
