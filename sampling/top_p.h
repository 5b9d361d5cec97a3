// Top-p's fast path for a chain that reaches it with the whole vocabulary
// (top-p without top-k: sampling/chain.cpp). The sampler itself is made by
// NewTopPSampler (sampler.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sampling/candidates.h"
#include "sampling/plain_logits.h"

namespace ember {

// Scratch of the top-p histogram (top_p.cpp), kept to avoid allocations per
// token.
struct TopPScratch {
  std::vector<double> mass;          // [kBuckets] probability per bucket
  std::vector<size_t> count;         // [kBuckets] candidates per bucket
  std::vector<uint16_t> bucket;      // [n] each candidate's bucket
  std::vector<Candidate> in_bucket;  // the cut's bucket, sorted
  PlainLogits logits;                // ResetTopP: the logits after the temperature
  std::vector<float> e;              // ResetTopP: [n] exp(x - max)
};

// What Reset(logits, n), then logit / temperature for every item
// (temperature > 0; 1 divides nothing), then the top-p sampler (p, min_keep)
// leave in *c: the same items, bits, order and flags, without making the
// vocabulary's items: the softmax and the histogram run on plain arrays, and
// only the survivors become items. False, with *c unspecified, where the
// sampler would take one of its rarer branches (p >= 1, n <= min_keep, +inf or
// all-equal logits, the min_keep floor, the mass short of p by rounding): the
// caller then takes the plain path.
bool ResetTopP(const float* logits, int64_t n, float temperature, float p, size_t min_keep,
               TopPScratch* s, Candidates* c);

}  // namespace ember
