// The candidate array every sampler works on: {id, logit, p} for the tokens
// still in the running (docs/DESIGN.md §7).
//
// A chain starts with the whole vocabulary in id order; samplers remove
// candidates (top-k, top-p, ...), change logits (temperature, penalties, bias)
// or compute probabilities, and a terminal selector sets `selected`.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "sampling/float_max.h"

namespace ember {

struct Candidate {
  int32_t id;
  float logit;
  float p;  // probability; valid only while Candidates::has_probs()
};

// The order of a sorted Candidates: larger logit first; equal logits by lower id.
// A strict total order (ids are unique), so every sort and selection built on it
// is deterministic. Logits are never NaN (Reset turns NaN into -inf).
inline bool RanksBefore(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// logit + delta for the samplers that shift logits (bias, penalties, DRY),
// keeping them NaN-free: inf + -inf is -inf, so a ban or an infinite penalty
// wins over an infinite logit or bonus. (Extreme settings get there: a
// repetition penalty of 1e-40 makes a positive logit +inf, a DRY base of 1e30
// an infinite penalty; found by sampler_fuzz.)
inline float ShiftLogit(float logit, float delta) {
  const float r = logit + delta;
  return std::isnan(r) ? -INFINITY : r;
}

class Candidates {
 public:
  // All n_vocab tokens, in id order, with the given logits. Allocation-free
  // after the first call for the same n_vocab. A NaN logit becomes -inf (a
  // NaN would break the ordering every sort relies on).
  void Reset(const float* logits, int64_t n_vocab);

  // What Reset, then logit / temperature (temperature > 0) for every item,
  // then KeepTop(k) if k < n_vocab leave (the temperature and top-k
  // samplers), with the same items, bits and order, without
  // building the whole vocabulary's array (a chain that starts with
  // temperature and top-k, llama.cpp's default: candidates.cpp says how).
  void ResetTopK(const float* logits, int64_t n_vocab, float temperature, size_t k);

  std::vector<Candidate>& items() { return items_; }
  const std::vector<Candidate>& items() const { return items_; }
  size_t size() const { return items_.size(); }

  // Sorted by logit, descending; equal logits by id, ascending. Samplers that
  // reorder or drop items must keep this flag honest.
  bool sorted() const { return sorted_; }
  void set_sorted(bool s) { sorted_ = s; }
  // Sorts (descending logit, ascending id) if not already sorted.
  void Sort();
  // Keeps the k best (k >= 1), sorted, without sorting the whole array
  // (selection, then a sort of the k kept; candidates.cpp). k >= size()
  // keeps all, sorted.
  void KeepTop(size_t k);

  // Keeps the items for which keep(item) is true, in their order (so sorted()
  // stays true if it was). If fewer than min_keep (at least 1) would remain,
  // keeps the min_keep best instead (KeepTop).
  template <class Pred>
  void KeepIf(Pred keep, size_t min_keep);

  // Index in items() of the token `id`, or -1 if it is not a candidate. O(1)
  // while the items are still in id order (after Reset, until a sampler
  // reorders or drops them), else a linear search.
  int64_t IndexOf(int32_t id) const;

  // p = softmax(logit) over the current items (max-subtracted, summed in double).
  void ComputeProbs();
  bool has_probs() const { return has_probs_; }
  // Any change of logits or of the set invalidates p: samplers call this.
  void InvalidateProbs() { has_probs_ = false; }
  // For who fills items() with their probabilities already computed, as
  // ComputeProbs would have (the top-p fast path, top_p.h).
  void MarkProbsValid() { has_probs_ = true; }
  // After items were dropped (not changed): if p was valid, divides it by the
  // kept mass, which is the softmax over the rest up to rounding, without
  // recomputing exps. KeepTop and KeepIf call it.
  void RenormalizeProbs();

  // Set by the terminal selector: the chosen token id, or -1 before.
  int32_t selected = -1;

 private:
  std::vector<Candidate> items_;
  BlockMaxima blocks_;  // ResetTopK's
  bool sorted_ = false;
  bool has_probs_ = false;
};

template <class Pred>
void Candidates::KeepIf(Pred keep, size_t min_keep) {
  if (min_keep < 1) min_keep = 1;
  const size_t n_keep = static_cast<size_t>(std::count_if(items_.begin(), items_.end(), keep));
  if (n_keep == items_.size()) return;
  if (n_keep < min_keep) {
    KeepTop(min_keep);
    return;
  }
  items_.erase(std::remove_if(items_.begin(), items_.end(),
                              [&keep](const Candidate& c) { return !keep(c); }),
               items_.end());
  RenormalizeProbs();
}

}  // namespace ember
