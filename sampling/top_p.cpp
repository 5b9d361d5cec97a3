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
//
// A chain that reaches top-p with the whole vocabulary (no top-k before it)
// runs ResetTopP instead (top_p.h, chain.cpp): the same steps on the logits
// as plain arrays, the histogram first only over the 64-logit blocks whose
// maximum is within kNearLogits of the vocabulary's (FindCut), and only the
// survivors made into candidates. Real logits, µs a token (ember_sampler_bench
// --logits): Gemma 3 (262144) 3300 -> 720, Qwen2.5 (151936) 1670 -> 430.
//
// The histogram's steps are written once, over a view of the items
// (softmax.h): the sampler runs them on the candidates, ResetTopP on the
// vocabulary's plain arrays before any candidate exists, with the same
// arithmetic in the same order, so both keep the same tokens with the same p.
#include "sampling/top_p.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>

#include "sampling/sampler.h"
#include "sampling/softmax.h"

namespace ember {
namespace {

constexpr int kBuckets = 1024;
constexpr double kRange = 32.0;  // logits further below the maximum: the last bucket
constexpr size_t kBlock = PlainLogits::kBlock;  // ResetTopP's blocks (FindCut)

// f(i) for each candidate i, in order, whose bucket is in [first, last]:
// eight buckets at a time, skipping the eights with none there (most of the
// vocabulary, below the cut).
template <class F>
void ForEachInBuckets(const std::vector<uint16_t>& bucket, int first, int last, F f) {
  typedef uint16_t U16x8 __attribute__((vector_size(16)));
  const size_t n = bucket.size();
  const U16x8 lo = U16x8{} + static_cast<uint16_t>(first);
  const U16x8 span = U16x8{} + static_cast<uint16_t>(last - first);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    U16x8 x;
    std::memcpy(&x, &bucket[i], sizeof x);
    // In [first, last] as one unsigned compare: x - first <= last - first.
    const U16x8 in = (x - lo) <= span;
    uint64_t any[2];
    std::memcpy(any, &in, sizeof any);
    if ((any[0] | any[1]) == 0) continue;
    for (size_t j = i; j < i + 8; ++j) {
      if (bucket[j] >= first && bucket[j] <= last) f(j);
    }
  }
  for (; i < n; ++i) {
    if (bucket[i] >= first && bucket[i] <= last) f(i);
  }
}

// Where the histogram puts the cut: kCut with the last token kept (`cut`, in
// bucket `bucket`) and 1 / the kept mass; or one of the rarer outcomes.
struct Cut {
  enum Kind { kCut, kNoHistogram, kMinKeep, kAll, kNotNear } kind;
  int bucket = 0;
  Candidate cut{};
  double inv = 1.0;
};

// The bucket of a logit: floor((max - logit) * scale), clamped to the last
// bucket (-inf gives +inf there). Monotone in the logit, in float too.
struct Buckets {
  float max, scale;
  int Of(float logit) const {
    const float d = (max - logit) * scale;
    return d < kBuckets - 1 ? static_cast<int>(d) : kBuckets - 1;
  }
};

// Items [begin, end) of v into the histogram: each one's bucket into
// s->bucket, and the mass and count of those in buckets below `near`.
template <class View>
void AddItems(const View& v, size_t begin, size_t end, const Buckets& bk, int near,
              TopPScratch* s) {
  for (size_t i = begin; i < end; ++i) {
    const int b = bk.Of(v.logit(i));
    s->bucket[i] = static_cast<uint16_t>(b);
    if (b < near) {
      s->mass[b] += v.p(i);
      ++s->count[b];
    }
  }
}

// Walks the histogram's buckets from the top while the cumulative
// probability stays below p; sorts the items of the bucket where it reaches p
// and finds the cut there (or, by rounding, in a later bucket). kNotNear when
// it is not reached below `near` (< kBuckets); kAll when never (rounding).
template <class View>
Cut Walk(const View& v, float p, size_t min_keep, int near, TopPScratch* s) {
  double cum = 0.0;
  size_t kept = 0;
  int b = 0;
  for (; b < near && cum + s->mass[b] < p; ++b) {
    cum += s->mass[b];
    kept += s->count[b];
  }
  for (; b < near; ++b) {
    if (s->count[b] == 0) continue;
    s->in_bucket.clear();
    ForEachInBuckets(s->bucket, b, b, [&](size_t i) { s->in_bucket.push_back(v.item(i)); });
    std::sort(s->in_bucket.begin(), s->in_bucket.end(), RanksBefore);
    for (const Candidate& cut : s->in_bucket) {
      cum += cut.p;
      ++kept;
      if (cum < p) continue;
      if (kept < min_keep) return {Cut::kMinKeep};
      return {Cut::kCut, b, cut, 1.0 / cum};
    }
  }
  return {near < kBuckets ? Cut::kNotNear : Cut::kAll};
}

// Logits further than this below the maximum are first left out of the
// histogram (FindCut): in a trained model's distribution the tokens above
// hold p's mass.
constexpr float kNearLogits = 8.0f;

// The histogram over the n items of v, whose p is the softmax (the file's
// comment says how). kNoHistogram: +inf, all equal or all -inf logits;
// kMinKeep: fewer than min_keep would be kept; kAll: the mass never reached p
// (rounding). Fills s->bucket for the filter (ForEachKept).
//
// With block_max (the maxima of the items' blocks of kBlock), first only the
// buckets within kNearLogits of the maximum, from the blocks whose maximum
// lies there (at 262144 Gemma 3 logits, the histogram of every item was
// most of top-p's time): those buckets get the same items in the same order
// as in the whole histogram, so a cut found there is the whole histogram's;
// if p is not reached there, the whole histogram.
template <class View>
Cut FindCut(const View& v, size_t n, float p, size_t min_keep, TopPScratch* s,
            const std::vector<float>* block_max, Extremes e) {
  if (e.max == INFINITY || !(e.max > e.min)) return {Cut::kNoHistogram};
  const Buckets bk{e.max, static_cast<float>(kBuckets / std::min<double>(e.max - e.min, kRange))};
  s->bucket.resize(n);
  const int near = static_cast<int>(std::min<float>(kBuckets, kNearLogits * bk.scale));
  size_t near_blocks = 0;
  if (block_max != nullptr) {
    for (float m : *block_max) near_blocks += bk.Of(m) < near;
  }
  // Where most blocks reach near the maximum (a flat distribution), the
  // first pass would be most of the whole one, and p often not reached.
  if (block_max != nullptr && near_blocks <= block_max->size() / 2) {
    s->mass.assign(kBuckets, 0.0);
    s->count.assign(kBuckets, 0);
    for (size_t k = 0; k < block_max->size(); ++k) {
      const size_t begin = k * kBlock, end = std::min(n, begin + kBlock);
      if (bk.Of((*block_max)[k]) >= near) {  // every item of the block is further
        std::fill(s->bucket.begin() + begin, s->bucket.begin() + end, kBuckets - 1);
      } else {
        AddItems(v, begin, end, bk, near, s);
      }
    }
    const Cut cut = Walk(v, p, min_keep, near, s);
    if (cut.kind != Cut::kNotNear) return cut;
  }
  s->mass.assign(kBuckets, 0.0);
  s->count.assign(kBuckets, 0);
  AddItems(v, 0, n, bk, kBuckets, s);
  return Walk(v, p, min_keep, kBuckets, s);
}

// Calls keep(i, p) for each item that ranks at or before the cut, in order,
// with its p renormalized by the kept mass (the softmax over the survivors,
// without new exps).
template <class View, class Keep>
void ForEachKept(const View& v, const Cut& cut, const TopPScratch& s, Keep keep) {
  const int b = cut.bucket;
  ForEachInBuckets(s.bucket, 0, b, [&](size_t i) {
    if (s.bucket[i] < b || !RanksBefore(cut.cut, v.item(i))) {
      keep(i, static_cast<float>(v.p(i) * cut.inv));
    }
  });
}

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
    const ItemsView view{v.data()};
    const Cut cut =
        FindCut(view, v.size(), p_, min_keep_, &s_, nullptr, MaxAndFiniteMin(view, v.size()));
    switch (cut.kind) {
      case Cut::kNoHistogram:
        return false;
      case Cut::kMinKeep:
        c.KeepTop(min_keep_);
        return true;
      case Cut::kAll:
      case Cut::kNotNear:  // (only with block maxima)
        return true;
      case Cut::kCut:
        break;
    }
    size_t m = 0;
    ForEachKept(view, cut, s_, [&](size_t i, float p) {
      v[m] = v[i];  // m <= i
      v[m].p = p;
      ++m;
    });
    v.erase(v.begin() + static_cast<std::ptrdiff_t>(m), v.end());
    return true;
  }

  float p_;
  size_t min_keep_;
  TopPScratch s_;
};

}  // namespace

bool ResetTopP(const float* logits, int64_t n_vocab, float temperature, float p, size_t min_keep,
               TopPScratch* s, Candidates* c) {
  const size_t n = static_cast<size_t>(n_vocab);
  min_keep = std::max<size_t>(min_keep, 1);  // as the sampler's
  if (p >= 1.0f || n <= min_keep) return false;
  PlainLogits& pl = s->logits;
  pl.Set(logits, n, temperature);
  const Extremes e{pl.max, pl.min};
  s->e.resize(n);
  // The softmax's exps and their sum (softmax.h); each p normalized when read.
  const double sum = SumExps(ArraysView{pl.x.data(), s->e.data()}, n, e.max);
  const ScaledArraysView view{pl.x.data(), s->e.data(), 1.0 / sum};
  const Cut cut = FindCut(view, n, p, min_keep, s, &pl.block_max, e);
  if (cut.kind != Cut::kCut) return false;
  std::vector<Candidate>& items = c->items();
  items.clear();
  ForEachKept(view, cut, *s, [&](size_t i, float q) {
    items.push_back(Candidate{static_cast<int32_t>(i), pl.x[i], q});
  });
  c->set_sorted(false);
  c->MarkProbsValid();
  c->selected = -1;
  return true;
}

std::unique_ptr<Sampler> NewTopPSampler(const SamplerSpec& spec) {
  return std::make_unique<TopPSampler>(spec.top_p, spec.min_keep);
}

}  // namespace ember
