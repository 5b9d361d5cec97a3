// Top-p, nucleus sampling (Holtzman et al. 2020, "The Curious Case of Neural
// Text Degeneration"): keep the smallest prefix of the candidates, in
// descending probability, whose cumulative probability reaches p (and at least
// min_keep). The first candidate always stays, so the set is never empty; p = 1
// keeps all.
//
// Sorted candidates (after top-k): a walk down the prefix. Unsorted (top-p
// without top-k) the prefix is found without sorting the vocabulary, with a
// histogram: the logits from the maximum down to kRange below it are cut into
// kBuckets equal buckets (lower logits share the last one); one pass sums each
// bucket's probability; walking the buckets from the top finds the bucket
// where the cumulative probability reaches p; only that bucket's candidates
// are sorted, to find the exact last token kept (the "cut"); and one filter
// pass keeps every candidate that ranks at or before the cut, in the
// candidates' order (the result is not sorted), with p renormalized. The
// bucket index is a monotone function of the logit, so bucket order agrees
// with RanksBefore and the kept set is exactly the sorted prefix. Cost: the
// softmax, four passes and the sort of one bucket (a few hundred candidates at
// 150k), for peaked and flat distributions alike.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>

#include "sampling/sampler.h"

namespace ember {
namespace {

constexpr int kBuckets = 1024;
constexpr double kRange = 32.0;  // logits further below the maximum: the last bucket

class TopPSampler final : public Sampler {
 public:
  TopPSampler(float p, size_t min_keep) : p_(p), min_keep_(std::max<size_t>(min_keep, 1)) {}

  SamplerKind kind() const override { return SamplerKind::kTopP; }

  void Apply(Candidates& c, Rng& /*rng*/) override {
    if (p_ >= 1.0f || c.size() <= min_keep_) return;
    if (!c.has_probs()) c.ComputeProbs();
    if (c.sorted() || !ApplyBuckets(c)) {  // no histogram for +inf or all-equal logits
      c.Sort();
      ApplySorted(c);
    }
  }

  std::unique_ptr<Sampler> Clone() const override { return std::make_unique<TopPSampler>(*this); }

 private:
  void ApplySorted(Candidates& c) const {
    std::vector<Candidate>& v = c.items();
    double cum = 0.0;
    for (size_t i = 0; i < v.size(); ++i) {
      cum += v[i].p;
      if (cum >= p_ && i + 1 >= min_keep_) {
        if (i + 1 < v.size()) {
          v.erase(v.begin() + static_cast<std::ptrdiff_t>(i + 1), v.end());
          c.RenormalizeProbs();
        }
        return;
      }
    }
  }

  // False if the histogram cannot be built (the caller sorts instead).
  bool ApplyBuckets(Candidates& c) {
    std::vector<Candidate>& v = c.items();
    const size_t n = v.size();
    const auto [max, min] = MaxAndFiniteMin(v);
    if (max == INFINITY || !(max > min)) return false;  // +inf, all equal, or all -inf
    // Bucket of a logit: floor((max - logit) * scale), clamped to the last
    // bucket (-inf gives +inf there). Monotone in the logit, in float too.
    const float scale = static_cast<float>(kBuckets / std::min<double>(max - min, kRange));
    mass_.assign(kBuckets, 0.0);
    count_.assign(kBuckets, 0);
    bucket_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const float d = (max - v[i].logit) * scale;
      const int b = d < kBuckets - 1 ? static_cast<int>(d) : kBuckets - 1;
      bucket_[i] = static_cast<uint16_t>(b);
      mass_[b] += v[i].p;
      ++count_[b];
    }
    double cum = 0.0;
    size_t kept = 0;
    int b = 0;
    for (; b < kBuckets && cum + mass_[b] < p_; ++b) {
      cum += mass_[b];
      kept += count_[b];
    }
    // The cut is in bucket b, or (rounding) in a later one.
    for (; b < kBuckets; ++b) {
      if (count_[b] == 0) continue;
      in_bucket_.clear();
      ForEachInBuckets(b, b, [&](size_t i) { in_bucket_.push_back(v[i]); });
      std::sort(in_bucket_.begin(), in_bucket_.end(), RanksBefore);
      for (const Candidate& cut : in_bucket_) {
        cum += cut.p;
        ++kept;
        if (cum < p_) continue;
        if (kept < min_keep_) {
          c.KeepTop(min_keep_);
          return true;
        }
        // Keep what ranks at or before the cut, in order, renormalized by the
        // kept mass (the softmax over the survivors, without new exps).
        const double inv = 1.0 / cum;
        size_t m = 0;
        ForEachInBuckets(0, b, [&](size_t i) {
          if (bucket_[i] < b || !RanksBefore(cut, v[i])) {
            v[m] = v[i];
            v[m].p = static_cast<float>(v[m].p * inv);
            ++m;
          }
        });
        v.erase(v.begin() + static_cast<std::ptrdiff_t>(m), v.end());
        return true;
      }
    }
    return true;  // the mass never reached p (rounding): all kept
  }

  // The largest logit, and the smallest above -inf (+inf if none), four items
  // at a time in vector lanes.
  struct Extremes {
    float max, min;
  };
  static Extremes MaxAndFiniteMin(const std::vector<Candidate>& v) {
    const size_t n = v.size();
    Float4 hi = Float4{} - INFINITY, lo = Float4{} + INFINITY;
    const Float4 neg_inf = hi;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
      const Float4 l = {v[i].logit, v[i + 1].logit, v[i + 2].logit, v[i + 3].logit};
      hi = l > hi ? l : hi;
      lo = l < lo && l > neg_inf ? l : lo;
    }
    float max = -INFINITY, min = INFINITY;
    for (; i < n; ++i) {
      max = v[i].logit > max ? v[i].logit : max;
      if (v[i].logit > -INFINITY) min = v[i].logit < min ? v[i].logit : min;
    }
    for (int j = 0; j < 4; ++j) {
      max = hi[j] > max ? hi[j] : max;
      min = lo[j] < min ? lo[j] : min;
    }
    return {max, min};
  }

  // f(i) for each candidate i, in order, whose bucket is in [first, last]:
  // eight buckets at a time, skipping the eights with none there (most of
  // the vocabulary, below the cut).
  template <class F>
  void ForEachInBuckets(int first, int last, F f) const {
    typedef uint16_t U16x8 __attribute__((vector_size(16)));
    const size_t n = bucket_.size();
    const U16x8 lo = U16x8{} + static_cast<uint16_t>(first);
    const U16x8 span = U16x8{} + static_cast<uint16_t>(last - first);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      U16x8 x;
      std::memcpy(&x, &bucket_[i], sizeof x);
      // In [first, last] as one unsigned compare: x - first <= last - first.
      const U16x8 in = (x - lo) <= span;
      uint64_t any[2];
      std::memcpy(any, &in, sizeof any);
      if ((any[0] | any[1]) == 0) continue;
      for (size_t j = i; j < i + 8; ++j) {
        if (bucket_[j] >= first && bucket_[j] <= last) f(j);
      }
    }
    for (; i < n; ++i) {
      if (bucket_[i] >= first && bucket_[i] <= last) f(i);
    }
  }

  float p_;
  size_t min_keep_;
  // Scratch, kept to avoid allocations per token.
  std::vector<double> mass_;      // [kBuckets] probability per bucket
  std::vector<size_t> count_;     // [kBuckets] candidates per bucket
  std::vector<uint16_t> bucket_;  // [n] each candidate's bucket
  std::vector<Candidate> in_bucket_;
};

}  // namespace

std::unique_ptr<Sampler> NewTopPSampler(const SamplerSpec& spec) {
  return std::make_unique<TopPSampler>(spec.top_p, spec.min_keep);
}

}  // namespace ember
